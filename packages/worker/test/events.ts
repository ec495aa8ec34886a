/**
 * Fabricated, well-formed Group Event logs for the Worker's tests: envelopes as spec/src/documents/
 * event.ts defines them, payloads as spec/src/payloads/events.ts types them, sequences contiguous
 * per Group and aggregate revisions counted per aggregate. The Worker never imports the authority,
 * not even in tests, so these logs stand in for a real run.
 *
 * Signatures (of the Events and of the Evidence they carry) are placeholders: the inbox and the
 * projection do not verify signatures; the feed delivers Events the Group Authority accepted.
 */
import type { CheckpointRecord, Event, EventKind, EventPayload, Evidence, Lease, WorkContract } from '@weft/spec'
import { groupGenesis } from '@weft/testkit/genesis'
import { CAPABILITY, contract as testContract } from '@weft/testkit/work-contract'

export const T0_MS = Date.parse('2026-07-15T00:00:00.000Z')
export const SELF = 'urn:weft:test:agent:worker-1'
export const OTHER = 'urn:weft:test:agent:worker-2'
export const COORDINATOR = 'urn:weft:test:agent:coordinator'
const OWNER = 'urn:weft:test:human:owner'
const AUTHORITY = { type: 'service', id: 'urn:weft:test:service:authority' } as const
const SIGNATURE = { algorithm: 'Ed25519', keyId: 'urn:weft:test:key:authority', createdAt: '2026-07-15T00:00:00.000Z', value: 'placeholder' } as const
const HASH = `sha256:${'ab'.repeat(32)}`

/** An RFC 3339 instant `seconds` after T0. */
export const at = (seconds: number): string => new Date(T0_MS + seconds * 1000).toISOString()

/** The test Work Contract (§10.1) at `version`, depending on `dependencyIds`. */
export function contract(dependencyIds: readonly string[] = [], version = 1): WorkContract {
  return testContract({ contractVersion: version, dependencyWorkItemIds: [...dependencyIds] })
}

/** What a reducer-facing helper emits: the Event with its typed payload. */
type Emit = <K extends EventKind>(kind: K, payload: EventPayload<K>, options?: { readonly actor?: string; readonly aggregate?: string }) => Event

/** One Group's log under construction, with the lifecycle steps as methods. */
export interface GroupLog {
  readonly groupId: string
  readonly missionId: string
  /** Every Event emitted so far, in sequence order. */
  readonly events: Event[]
  readonly emit: Emit
  /** The WorkItem ID of a short name in this Group. */
  id(name: string): string
  genesis(parent?: { readonly missionId: string; readonly workItemId: string }): this
  authorize(name: string, dependsOn?: readonly string[]): this
  offer(name: string, candidates?: readonly string[]): this
  accept(name: string, agent?: string, leaseSeconds?: number): this
  start(name: string): this
  renew(name: string): this
  checkpoint(name: string): this
  block(name: string): this
  unblock(name: string, next: 'queued' | 'open'): this
  submit(name: string): this
  verify(name: string): this
  fail(name: string): this
  cancel(name: string): this
  revokeLease(name: string): this
  usage(name: string): this
  approveExecution(name: string): this
  addDependency(name: string, dependsOn: string): this
  message(text: string): this
  promote(name: string, child: GroupLog): this
  missionCancelled(unfinished: readonly string[]): this
}

/** Starts the log of Group `name` (its Mission is `urn:weft:test:mission:<name>`). */
export function groupLog(name: string): GroupLog {
  const groupId = `urn:weft:test:group:${name}`
  const missionId = `urn:weft:test:mission:${name}`
  const events: Event[] = []
  const revisions = new Map<string, number>()
  const epochs = new Map<string, number>()
  const leases = new Map<string, number>()
  const contracts = new Map<string, WorkContract>()
  const id = (item: string): string => `urn:weft:test:work:${name}:${item}`
  const now = (): number => events.length * 10

  const emit: Emit = (kind, payload, options = {}) => {
    const sequence = events.length + 1
    const p = payload as { readonly workItemId?: string; readonly parentWorkItemId?: string }
    const workItemId = p.workItemId ?? p.parentWorkItemId
    const aggregate = options.aggregate ?? (workItemId === undefined ? `mission:${missionId}` : `work:${workItemId}`)
    const revision = (revisions.get(aggregate) ?? 0) + 1
    revisions.set(aggregate, revision)
    const eventId = `urn:weft:test:event:${name}:${sequence}`
    const event: Event = {
      protocolVersion: '0.1',
      eventId,
      groupId,
      sequence,
      aggregateRevision: revision,
      kind,
      actor: options.actor === undefined ? AUTHORITY : { type: 'agent', id: options.actor },
      cause: { type: 'command', id: `urn:weft:test:action:${name}:${sequence}` },
      correlationId: `urn:weft:test:correlation:${name}`,
      ...(workItemId === undefined ? {} : { workItemId }),
      occurredAt: at(now()),
      payload,
      acceptedBy: AUTHORITY,
      signature: SIGNATURE,
    }
    events.push(event)
    return event
  }

  const lease = (item: string, type: 'execution', n: number): Lease => ({
    leaseId: `${id(item)}:lease:${n}`,
    leaseType: type,
    missionId,
    groupId,
    workItemId: id(item),
    holderAgentId: SELF,
    sessionEpoch: 1,
    ownershipEpoch: epochs.get(item) ?? 1,
    issuedAt: at(now()),
    startsAt: at(now()),
    expiresAt: at(now() + 600),
    state: 'active',
    renewalCount: 0,
  })
  const leaseId = (item: string): string => `${id(item)}:lease:${leases.get(item) ?? 0}`
  const epoch = (item: string): number => epochs.get(item) ?? 1
  const checkpointRecord = (): CheckpointRecord => ({ phase: 'build', completedMilestones: ['parsed'], nextStep: 'test', stateArtifactHash: HASH, createdAt: at(now()) })
  const evidence = (item: string): Evidence => ({
    evidenceId: `${id(item)}:evidence:${events.length}`,
    missionId,
    groupId,
    workItemId: id(item),
    type: 'deterministic_test',
    subject: { type: 'work_item', id: id(item) },
    criterionIds: ['tests-pass'],
    method: 'Ran the test suite.',
    result: 'passed',
    artifactHashes: [HASH],
    generatedBy: { type: 'agent', id: SELF },
    createdAt: at(now()),
    signature: SIGNATURE,
  })

  const log: GroupLog = {
    groupId,
    missionId,
    events,
    emit,
    id,
    genesis(parent) {
      emit(
        'mission.created',
        groupGenesis({
          groupId,
          missionId,
          owner: { type: 'human', id: OWNER },
          coordinator: { agentId: COORDINATOR, agentCardVersion: 1, coordinatorEpoch: 1, leaseId: `${groupId}:lease:coordinator` },
          createdAt: at(0),
          leaseExpiresAt: at(86_400),
          budget: { currency: 'USD', financialLimit: 1000, modelTokenLimit: 1_000_000, toolCallLimit: 10_000 },
          objective: `Ship ${name}.`,
          ...(parent === undefined ? {} : { parent: { ...parent, depth: 1 } }),
          membershipId: (_member, role) => `${groupId}:membership:${role}`,
        }),
      )
      return log
    },
    authorize(item, dependsOn = []) {
      const deps = dependsOn.map(id)
      const terms = contract(deps)
      contracts.set(item, terms)
      emit(
        'work.authorized',
        {
          workItem: {
            workItemId: id(item),
            missionId,
            groupId,
            conversationId: `${id(item)}:conversation`,
            revision: 1,
            state: 'open',
            exclusive: true,
            contract: terms,
            createdBy: { type: 'agent', id: COORDINATOR },
            createdAt: at(now()),
          },
          dependencyIds: deps,
        },
        { actor: COORDINATOR },
      )
      return log
    },
    offer(item, candidates = [SELF]) {
      emit(
        'work.offer.created',
        {
          workItemId: id(item),
          candidateAgentIds: [...candidates],
          offers: candidates.map((agentId) => ({ offerId: `${id(item)}:offer:${agentId}`, agentId, agentCardVersion: 1, expiresAt: at(now() + 600), status: 'pending' as const })),
          offerExpiresAt: at(now() + 600),
          selectionBasis: {
            requiredCapabilities: [CAPABILITY],
            verifiedMatches: [CAPABILITY],
            authorizationEligible: true,
            availabilityEstimate: at(now()),
            expectedCost: 1,
            reliabilityEvidence: [],
            policyRulesApplied: ['default'],
          },
        },
        { actor: COORDINATOR },
      )
      return log
    },
    accept(item, agent = SELF, leaseSeconds = 3600) {
      const next = (epochs.has(item) ? epoch(item) : 0) + 1
      epochs.set(item, next)
      emit(
        'work.offer.accepted',
        {
          workItemId: id(item),
          assigneeId: agent,
          sessionEpoch: 1,
          ownershipEpoch: next,
          ownershipLeaseId: `${id(item)}:ownership:${next}`,
          ownershipLeaseExpiresAt: at(now() + leaseSeconds),
          startBy: at(now() + leaseSeconds / 2),
          agentCardVersion: 1,
          capabilityPins: [CAPABILITY],
          withdrawnAgentIds: [],
        },
        { actor: agent },
      )
      return log
    },
    start(item) {
      const n = (leases.get(item) ?? 0) + 1
      leases.set(item, n)
      const executionLease = lease(item, 'execution', n)
      emit('work.started', { workItemId: id(item), ownershipEpoch: epoch(item), executionLease, executionLeaseExpiresAt: executionLease.expiresAt }, { actor: SELF })
      return log
    },
    renew(item) {
      const executionLease = { ...lease(item, 'execution', leases.get(item) ?? 1), renewalCount: 1, lastRenewedAt: at(now()), expiresAt: at(now() + 900) }
      emit('work.progressed', { workItemId: id(item), ownershipEpoch: epoch(item), executionLease, executionLeaseExpiresAt: executionLease.expiresAt }, { actor: SELF })
      return log
    },
    checkpoint(item) {
      emit('work.checkpointed', { workItemId: id(item), ownershipEpoch: epoch(item), executionLeaseId: leaseId(item), checkpoint: checkpointRecord(), resumeBy: at(now() + 1200) }, { actor: SELF })
      return log
    },
    block(item) {
      emit(
        'work.blocked',
        {
          workItemId: id(item),
          ownershipEpoch: epoch(item),
          executionLeaseId: leaseId(item),
          checkpoint: checkpointRecord(),
          reason: 'Waiting for credentials.',
          blockedLeaseExpiresAt: at(now() + 2400),
        },
        { actor: SELF },
      )
      return log
    },
    unblock(item, next) {
      emit('work.unblocked', { workItemId: id(item), nextState: next, ...(next === 'queued' ? { ownershipEpoch: epoch(item) } : {}) }, { actor: COORDINATOR })
      return log
    },
    submit(item) {
      emit(
        'work.submitted',
        { workItemId: id(item), ownershipEpoch: epoch(item), executionLeaseId: leaseId(item), artifactIds: [`${id(item)}:artifact`], artifactHashes: [HASH], evidence: [evidence(item)] },
        { actor: SELF },
      )
      return log
    },
    verify(item) {
      emit('work.result.accepted', { workItemId: id(item), evidence: [evidence(item)] }, { actor: COORDINATOR })
      return log
    },
    fail(item) {
      emit('work.failed', { workItemId: id(item), reason: 'The tests kept failing.', ownershipEpoch: epoch(item), executionLeaseId: leaseId(item), evidence: [evidence(item)] }, { actor: SELF })
      return log
    },
    cancel(item) {
      emit('work.cancelled', { workItemId: id(item), reason: 'No longer needed.' }, { actor: COORDINATOR })
      return log
    },
    revokeLease(item) {
      emit('ext.missionweaveprotocol.core.work_execution_lease_revoked', {
        workItemId: id(item),
        ownershipEpoch: epoch(item),
        executionLeaseId: leaseId(item),
        agentId: SELF,
        revokedSessionEpoch: 1,
        reason: 'A replacement session was opened.',
      })
      return log
    },
    usage(item) {
      emit(
        'ext.missionweaveprotocol.core.resource_usage_recorded',
        {
          workItemId: id(item),
          executionLeaseId: leaseId(item),
          ownershipEpoch: epoch(item),
          usageDelta: { modelTokens: 100, toolCalls: 2 },
          cumulativeUsage: { financialMicrounits: 0, modelTokens: 100, toolCalls: 2, computeSeconds: 0, wallClockSeconds: 0, externalActions: 0 },
          remainingBudget: { modelTokens: 9900, toolCalls: 48 },
        },
        { actor: SELF },
      )
      return log
    },
    approveExecution(item) {
      emit(
        'approval.execution.granted',
        {
          approvalId: `${id(item)}:approval`,
          workItemId: id(item),
          ownershipEpoch: epoch(item),
          operations: ['write'],
          resources: [],
          budget: { currency: 'USD', financialLimit: 5 },
          expiresAt: at(now() + 900),
        },
        { actor: COORDINATOR, aggregate: `approval:${id(item)}` },
      )
      return log
    },
    addDependency(item, dependsOn) {
      const previous = contracts.get(item) ?? contract()
      const terms = { ...previous, contractVersion: previous.contractVersion + 1, dependencyWorkItemIds: [...previous.dependencyWorkItemIds, id(dependsOn)] }
      contracts.set(item, terms)
      emit(
        'work.contract.revised',
        {
          workItemId: id(item),
          contract: terms,
          previousContractVersion: previous.contractVersion,
          revisionReason: 'dependency_added',
          dependencyIds: terms.dependencyWorkItemIds,
          addedDependencyId: id(dependsOn),
          requiresReacceptance: false,
        },
        { actor: COORDINATOR },
      )
      return log
    },
    message(text) {
      emit(
        'message.posted',
        {
          messageId: `${groupId}:message:${events.length}`,
          missionId,
          groupId,
          conversationId: `${groupId}:conversation:main`,
          author: { type: 'agent', id: COORDINATOR },
          kind: 'message',
          authority: false,
          content: [{ type: 'text', text }],
          committedAt: at(now()),
        },
        { actor: COORDINATOR, aggregate: `message:${events.length}` },
      )
      return log
    },
    promote(item, child) {
      emit(
        'mission.child.created',
        {
          parentWorkItemId: id(item),
          childMissionId: child.missionId,
          childGroupId: child.groupId,
          depth: 1,
          coordinatorAgentId: COORDINATOR,
          budget: { currency: 'USD', financialLimit: 5 },
          deadline: '2026-08-01T00:00:00Z',
          childFailurePolicy: 'block_parent_work_item',
          fencedOwnershipEpoch: epoch(item),
        },
        { actor: COORDINATOR },
      )
      child.genesis({ missionId, workItemId: id(item) })
      return log
    },
    missionCancelled(unfinished) {
      emit('mission.cancelled', { reason: 'The owner stopped the Mission.' }, { actor: OWNER })
      for (const item of unfinished) emit('work.cancelled', { workItemId: id(item), reason: 'mission cancelled: The owner stopped the Mission.' })
      return log
    },
  }
  return log
}

/**
 * A realistic run over three Groups. Group `alpha`: a dependency chain a1 -> a2 -> a3 worked by
 * this Worker and another, a checkpointed and resumed item, a blocked-and-unblocked one, one
 * requeued by a lease revocation, one cancelled, one re-offered after failing, an execution
 * approval, usage and a Message, and a7 promoted to the child Mission of Group `gamma`. Group
 * `beta`: a dependency added by contract revision, then the Mission cancelled with its unfinished
 * WorkItems. Group `gamma` runs one item to `verified`.
 */
export function lifecycle(): { readonly alpha: GroupLog; readonly beta: GroupLog; readonly gamma: GroupLog } {
  const alpha = groupLog('alpha').genesis()
  const beta = groupLog('beta').genesis()
  const gamma = groupLog('gamma')
  alpha.authorize('a1').authorize('a2', ['a1']).authorize('a3', ['a1', 'a2']).authorize('a4').authorize('a5').authorize('a6').authorize('a7').authorize('a8')
  alpha.offer('a1', [SELF, OTHER]).accept('a1').start('a1').renew('a1').checkpoint('a1').start('a1').usage('a1').submit('a1').verify('a1')
  alpha.offer('a2').accept('a2').message('a2 is next')
  alpha.offer('a3', [OTHER]).accept('a3', OTHER).start('a3')
  alpha.offer('a4').accept('a4').start('a4').block('a4').unblock('a4', 'queued')
  alpha.offer('a5').accept('a5').approveExecution('a5').start('a5').revokeLease('a5')
  alpha.offer('a6').accept('a6').cancel('a6')
  alpha.offer('a7').accept('a7').promote('a7', gamma)
  alpha.offer('a8').accept('a8').start('a8').fail('a8').offer('a8').accept('a8')
  beta.authorize('b1').authorize('b2').addDependency('b2', 'b1').offer('b1').accept('b1').start('b1').block('b1').unblock('b1', 'open')
  beta.offer('b2', [OTHER]).missionCancelled(['b1', 'b2'])
  gamma.authorize('c1').offer('c1').accept('c1').start('c1').submit('c1').verify('c1').authorize('c2', ['c1']).offer('c2').accept('c2')
  return { alpha, beta, gamma }
}
