/**
 * Shared test fixtures: a cast of Principals with real Ed25519 keys and a Registry binding each,
 * sample documents valid against the normative schemas, a hand-seeded Group (so handlers can be
 * tested before, and independently of, `mission.create`), and a `run` helper that drives one
 * handler the way the pipeline does: handler -> materialize -> applyEvents.
 */
import { encodeBase64url, keyPairFromSeed, Registry, sign, signingHash, type SigningKey } from '@weft/codec'
import type { AgentCard, Evidence, Lease, Membership, Mission, WorkContract } from '@weft/spec'
import type { AnyEventDraft, CommandOf, HandlerContext, HandlerFor } from '../src/commit/handler.js'
import type { AuthorityPolicy } from '../src/policy.js'
import { actorKey, emptyGroupState, emptyState, type ActorRef, type AuthorityState, type GroupState } from '../src/model.js'
import { applyEvents, materialize, type ReducerTable } from '../src/commit/transact.js'
import type { CommandKind, Event } from '@weft/spec'

/** The fixed start of test time. */
export const T0 = '2026-07-15T00:00:00.000Z'
export const T0_MS = Date.parse(T0)

export const ORG = 'urn:weft:test:org'

/** A Principal with its signing key. */
export interface Cast {
  readonly actor: ActorRef
  readonly key: SigningKey
}

function member(type: ActorRef['type'], name: string, seed: number): Cast {
  return {
    actor: { type, id: `urn:weft:test:${type}:${name}` },
    key: { keyId: `urn:weft:test:key:${name}`, pair: keyPairFromSeed(new Uint8Array(32).fill(seed)) },
  }
}

/** The cast: a human owner, a Coordinator, three Workers, a reviewer, the control plane and the Authority itself. */
export const cast = {
  owner: member('human', 'owner', 1),
  coordinator: member('agent', 'coordinator', 2),
  worker1: member('agent', 'worker-1', 3),
  worker2: member('agent', 'worker-2', 4),
  worker3: member('agent', 'worker-3', 5),
  reviewer: member('agent', 'reviewer', 6),
  controlPlane: member('service', 'control-plane', 7),
  authority: member('service', 'authority', 8),
  registry: member('service', 'registry', 9),
} as const

/** A Registry binding every cast member's key, valid from 2026-01-01. */
export function testRegistry(extra: readonly Cast[] = []): Registry {
  const bindings = [...Object.values(cast), ...extra].map((m) => ({
    keyId: m.key.keyId,
    principal: m.actor,
    algorithm: 'Ed25519',
    publicKey: encodeBase64url(m.key.pair.publicKey),
    validFrom: '2026-01-01T00:00:00Z',
    validityHistory: [],
  }))
  const result = Registry.fromEvidence({ organizationId: ORG, bindings })
  if (!(result instanceof Registry)) throw new Error(`test registry rejected: ${JSON.stringify(result)}`)
  return result
}

export const CAPABILITY = { id: 'weft.test.implementation', version: '1.0.0' }

/**
 * An Organization-signed Agent Card for `who` with the test capability; `changes` replace members
 * before the signature (a `status`, the `publicKeys` with their validity boundaries).
 */
export function agentCard(who: Cast, cardVersion = 1, changes: Partial<Pick<AgentCard, 'status' | 'publicKeys'>> = {}): AgentCard {
  return sign(
    'agent-card',
    {
      agentId: who.actor.id,
      organizationId: ORG,
      cardVersion,
      displayName: who.actor.id.split(':').pop()!,
      owner: cast.owner.actor,
      status: 'active',
      protocolVersions: ['0.1'],
      endpoints: [{ transport: 'wss', uri: `wss://agents.test.invalid/${who.actor.id.split(':').pop()}` }],
      publicKeys: [{ keyId: who.key.keyId, algorithm: 'Ed25519', publicKey: encodeBase64url(who.key.pair.publicKey), validFrom: '2026-01-01T00:00:00Z' }],
      capabilities: [
        {
          id: CAPABILITY.id,
          version: CAPABILITY.version,
          inputSchema: 'urn:weft:test:schema:input',
          inputSchemaHash: `sha256:${'a'.repeat(64)}`,
          outputSchema: 'urn:weft:test:schema:output',
          outputSchemaHash: `sha256:${'b'.repeat(64)}`,
          constraints: {},
          verifiedEvidence: ['urn:weft:test:evidence:capability'],
        },
      ],
      maxConcurrency: 2,
      issuedAt: '2026-07-01T00:00:00Z',
      ...changes,
    },
    cast.registry.key,
  ) as unknown as AgentCard
}

/** A complete Work Contract (§10.1) with one acceptance criterion, `tests-pass`. */
export function contract(overrides: Partial<WorkContract> = {}): WorkContract {
  return {
    contractVersion: 1,
    goal: 'Implement the feature.',
    requiredDeliverables: [{ deliverableId: 'patch', description: 'The change.', mediaType: 'text/x-diff', schema: 'urn:weft:test:schema:patch' }],
    acceptanceCriteria: [{ criterionId: 'tests-pass', description: 'The tests pass.', evidenceRequired: ['deterministic_test'] }],
    inputArtifacts: [],
    dependencyWorkItemIds: [],
    allowedResources: [{ resource: 'urn:weft:test:resource:repo', operations: ['read', 'write'] }],
    requiredCapabilities: [CAPABILITY],
    deadline: '2026-08-01T00:00:00Z',
    requestedUrgency: 'normal',
    businessImpact: 'Needed for the release.',
    retryPolicy: { maxAttempts: 3, backoff: 'exponential', maxDelay: 'PT5M', retryableFailures: ['TRANSIENT'] },
    budget: { currency: 'USD', financialLimit: 10, modelTokenLimit: 10000, toolCallLimit: 50 },
    sideEffectRisk: 'reversible',
    executionApproval: 'not_required',
    ...overrides,
  } as WorkContract
}

/** Evidence for `criterionIds` of a WorkItem, signed by `by` at `createdAt`. */
export function evidence(group: GroupState, workItemId: string, by: Cast, criterionIds = ['tests-pass'], result: Evidence['result'] = 'passed', createdAt = '2026-07-15T00:00:00Z'): Evidence {
  return sign(
    'evidence',
    {
      evidenceId: `urn:weft:test:evidence:${Math.random().toString(36).slice(2)}`,
      missionId: group.missionId,
      groupId: group.groupId,
      workItemId,
      type: 'deterministic_test',
      subject: { type: 'work_item', id: workItemId },
      criterionIds,
      method: 'Ran the test suite.',
      result,
      artifactHashes: [],
      generatedBy: by.actor,
      createdAt,
    },
    by.key,
  ) as unknown as Evidence
}

export const GROUP = 'urn:weft:test:group:one'
export const MISSION = 'urn:weft:test:mission:one'

const fullVisibility = ['group:read', 'group:write']

/**
 * Seeds a Group as `mission.created` would leave it, without running any handler: an active
 * Mission owned by `cast.owner` with `cast.coordinator` at Coordinator Epoch 1 (Session Epoch 1),
 * both with active Memberships at epoch 1, and every cast Agent registered at Session Epoch 1.
 * Returns the Group state; `state.groups` holds it.
 */
export function seedGroup(state: AuthorityState = emptyState(), groupId = GROUP, missionId = MISSION): GroupState {
  for (const who of [cast.coordinator, cast.worker1, cast.worker2, cast.worker3, cast.reviewer]) {
    if (state.org.agents.has(who.actor.id)) continue
    const card = agentCard(who)
    state.org.agents.set(who.actor.id, { agentId: who.actor.id, card, cardVersions: [card], sessionEpoch: 1 })
  }
  const conversationId = `${groupId}:conversation:main`
  const coordinatorLease: Lease = {
    leaseId: `${groupId}:lease:coordinator:1`,
    leaseType: 'coordinator',
    missionId,
    groupId,
    holderAgentId: cast.coordinator.actor.id,
    sessionEpoch: 1,
    coordinatorEpoch: 1,
    issuedAt: T0,
    startsAt: T0,
    expiresAt: '2026-07-16T00:00:00.000Z',
    state: 'active',
    renewalCount: 0,
  }
  const mission: Mission = {
    missionId,
    groupId,
    revision: 1,
    objective: 'Ship the feature.',
    definitionOfDone: [{ criterionId: 'shipped', description: 'It ships.', evidenceRequired: ['human_review'] }],
    missionOwner: cast.owner.actor,
    coordinator: { agentId: cast.coordinator.actor.id, agentCardVersion: 1, coordinatorEpoch: 1, leaseId: coordinatorLease.leaseId },
    state: 'active',
    budget: { currency: 'USD', financialLimit: 1000, modelTokenLimit: 1_000_000, toolCallLimit: 10_000 },
    deadline: '2026-09-01T00:00:00Z',
    approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
    createdAt: T0,
  } as Mission
  const group = emptyGroupState({
    groupId,
    missionId,
    mission,
    group: { groupId, missionId, state: 'active', mainConversationId: conversationId, createdAt: T0 },
    coordinatorLease,
    conversation: {
      conversationId,
      missionId,
      groupId,
      type: 'group',
      title: 'Planning',
      access: { mode: 'group' },
      createdBy: cast.owner.actor,
      createdAt: T0,
      state: 'active',
      revision: 1,
    },
  })
  group.head = 1
  group.revisions.set(`mission:${groupId}`, 1)
  const seat = (who: Cast, role: Membership['role']) =>
    memberDoc(group, who, role, { membershipId: `${groupId}:membership:${who.actor.id.split(':').pop()}`, scopes: fullVisibility })
  for (const m of [seat(cast.owner, 'mission_owner'), seat(cast.coordinator, 'coordinator')]) {
    group.memberships.set(m.membershipId, m)
    group.membershipByMember.set(actorKey(m.member), m.membershipId)
    group.revisions.set(`membership:${m.membershipId}`, 1)
  }
  state.groups.set(groupId, group)
  return group
}

/** A deterministic `newId`: `urn:uuid:`-shaped, counting up. */
export function counterIds(prefix = '00000000-0000-4000-8000'): () => string {
  let n = 0
  return () => `urn:uuid:${prefix}-${(++n).toString(16).padStart(12, '0')}`
}

export const DEFAULT_TEST_POLICY: AuthorityPolicy = {
  freshnessSeconds: 300,
  maxCommandBytes: 1 << 20,
  maxMissionDepth: 4,
  maxDelegationDepth: 8,
  controlPlane: [cast.controlPlane.actor.id],
}

/** A clock the test moves by hand. */
export interface TestClock {
  nowMs: number
  advance(seconds: number): void
}

export function testClock(startMs = T0_MS): TestClock {
  return {
    nowMs: startMs,
    advance(seconds) {
      this.nowMs += seconds * 1000
    },
  }
}

/** A Command envelope around `payload`, signed by `by` (epochs as given). */
export function command<K extends CommandKind>(
  kind: K,
  payload: CommandOf<K>['payload'],
  by: Cast,
  envelope: Partial<Omit<CommandOf<K>, 'kind' | 'payload' | 'signature'>> = {},
  clock: TestClock = testClock(),
): CommandOf<K> {
  const unsigned = {
    protocolVersion: '0.1',
    actionId: `urn:weft:test:action:${Math.random().toString(36).slice(2)}`,
    actor: by.actor,
    kind,
    correlationId: 'urn:weft:test:correlation:1',
    issuedAt: new Date(clock.nowMs).toISOString(),
    payload,
    ...envelope,
  }
  return sign('command', unsigned, by.key) as unknown as CommandOf<K>
}

/** A {@link HandlerContext} over `state` at `clock`, verifying embedded documents with the test Registry. */
export function context(state: AuthorityState, groupId: string | undefined, clock: TestClock = testClock(), ids = counterIds()): HandlerContext {
  return {
    state,
    group: groupId === undefined ? undefined : state.groups.get(groupId),
    now: new Date(clock.nowMs).toISOString(),
    nowMs: clock.nowMs,
    authority: cast.authority.actor,
    policy: DEFAULT_TEST_POLICY,
    newId: ids,
    after: (seconds) => new Date(clock.nowMs + seconds * 1000).toISOString(),
    commandHash: `sha256:${'0'.repeat(64)}`,
    coordinatorEpoch: undefined,
    verifyDocument: () => {},
  }
}

/**
 * Runs one handler the way the pipeline does: handler, then materialize (sequences, revisions,
 * Authority signatures), then the reducers. Returns the appended Events. A rejection propagates as
 * the handler's `ProtocolError` with the state untouched.
 */
export function run<K extends CommandKind>(
  state: AuthorityState,
  handler: HandlerFor<K>,
  cmd: CommandOf<K>,
  reducers: Partial<ReducerTable>,
  clock: TestClock = testClock(),
  ids = counterIds(),
): Event[] {
  const ctx = { ...context(state, cmd.groupId, clock, ids), commandHash: signingHash(cmd as object), coordinatorEpoch: cmd.coordinatorEpoch }
  const drafts: readonly AnyEventDraft[] = handler(cmd, ctx)
  const events = materialize(
    state,
    { type: 'command', id: cmd.actionId, actor: cmd.actor as ActorRef, correlationId: cmd.correlationId, ...(cmd.groupId === undefined ? {} : { groupId: cmd.groupId }), commandHash: ctx.commandHash },
    drafts,
    { now: ctx.now, newId: ids, authority: cast.authority.actor, sign: (e) => sign('event', e, cast.authority.key) as unknown as Event },
  )
  const missing = events.filter((e) => (reducers as Record<string, unknown>)[e.kind] === undefined).map((e) => e.kind)
  if (missing.length > 0) throw new Error(`run: no reducer given for ${missing.join(', ')}`)
  applyEvents(state, events, reducers as ReducerTable)
  return events
}

/** An active Membership document of `who` in `group` at epoch 1, seeing the whole history; `overrides` last. */
export function memberDoc(group: GroupState, who: Cast, role: Membership['role'], overrides: Partial<Membership> = {}): Membership {
  return {
    membershipId: `${group.groupId}:membership:${who.actor.id}`,
    missionId: group.missionId,
    groupId: group.groupId,
    member: who.actor,
    role,
    state: 'active',
    membershipEpoch: 1,
    scopes: ['group:read'],
    visibilityStartSequence: 0,
    grantedAt: T0,
    activatedAt: T0,
    ...overrides,
  }
}
