/**
 * Fixtures for the WorkItem domain tests: a world (seeded Group, clock, ID source) in which
 * WorkItem Commands run the way the pipeline runs them, with every accepted transition followed
 * by schema checks of the WorkItem documents and Event payloads, and steps that bring a WorkItem
 * into any state of the §10.2 machine.
 */
import { sha256Tagged, utf8Encode } from '@weft/codec'
import { ProtocolError } from '@weft/codec/errors'
import type { Artifact, DelegationGrant, Event, EventKind, WorkContract } from '@weft/spec'
import { validators } from '@weft/validators'
import { eventPayloads } from '@weft/validators/payloads'
import { expect } from 'vitest'
import { workHandlers, workReducers, type WorkCommandKind } from '../src/domain/work.js'
import type { CommandOf, HandlerFor, ReducerFor } from '../src/commit/handler.js'
import { actorKey, emptyState, type AuthorityState, type GroupState, type WorkItemRecord } from '../src/model.js'
import type { ReducerTable } from '../src/commit/transact.js'
import { CAPABILITY, cast, command, contract, counterIds, evidence, GROUP, T0, testClock, type Cast, type TestClock } from '@weft/testkit/fixtures'
import { SELECTION } from '@weft/testkit/documents'
import { memberDoc, run, seedGroup } from './fixtures-state.js'

/** A stand-in for the Membership domain's reducer: stores the Membership as the Event carries it. */
const membershipChanged: ReducerFor<'membership.changed'> = (state, event) => {
  const group = state.groups.get(event.groupId as string) as GroupState
  const m = event.payload.membership
  group.memberships.set(m.membershipId, m)
  group.membershipByMember.set(actorKey(m.member), m.membershipId)
}

/** The reducers the WorkItem Commands need. */
export const reducers: Partial<ReducerTable> = { ...workReducers, 'membership.changed': membershipChanged }

/** One test's Authority state, Group, clock and ID source. */
export interface World {
  readonly state: AuthorityState
  readonly group: GroupState
  readonly clock: TestClock
  readonly ids: () => string
  /** Every Event appended so far, in order. */
  readonly log: Event[]
}

/** A fresh world around a seeded Group. */
export function world(): World {
  const state = emptyState()
  const group = seedGroup(state)
  return { state, group, clock: testClock(), ids: counterIds('00000000-0000-4000-8004'), log: [] }
}

/** `urn:weft:test:work:<name>`. */
export function wid(name: string): string {
  return `urn:weft:test:work:${name}`
}

/**
 * The envelope a member of the seeded Group signs with (the pipeline checks the epochs, not the
 * handlers). As the client does, the Agent holding the Coordinator lease carries its Coordinator
 * Epoch, which the handlers read as acting under the lease (§15.1).
 */
function envelopeOf(group: GroupState, by: Cast): Record<string, unknown> {
  const coordinator = group.mission.coordinator
  if (by.actor.type === 'agent' && by.actor.id === coordinator.agentId) return { groupId: GROUP, sessionEpoch: 1, membershipEpoch: 1, coordinatorEpoch: coordinator.coordinatorEpoch }
  if (by.actor.type === 'agent') return { groupId: GROUP, sessionEpoch: 1, membershipEpoch: 1 }
  if (by.actor.type === 'human') return { groupId: GROUP, membershipEpoch: 1 }
  return { groupId: GROUP }
}

/** Asserts every WorkItem document and Event payload is schema-valid. */
export function expectValid(w: World, events: readonly Event[]): void {
  for (const event of events) expect([event.kind, eventPayloads[event.kind as EventKind].errors(event.payload)]).toEqual([event.kind, []])
  for (const record of w.group.workItems.values()) expect([record.doc.workItemId, validators.workItem.errors(record.doc)]).toEqual([record.doc.workItemId, []])
}

/**
 * Signs `payload` as `kind` by `by`, runs it like the pipeline (handler, materialize, reducers),
 * checks the schemas, and returns the appended Events. A rejection throws the `ProtocolError`.
 */
export function exec<K extends WorkCommandKind>(w: World, kind: K, payload: CommandOf<K>['payload'], by: Cast, envelope: Record<string, unknown> = {}): Event[] {
  const cmd = command(kind, payload, by, { ...envelopeOf(w.group, by), ...envelope } as never, w.clock)
  const events = run(w.state, workHandlers[kind] as unknown as HandlerFor<K>, cmd, reducers, w.clock, w.ids)
  expectValid(w, events)
  w.log.push(...events)
  return events
}

/** The `ProtocolError` a Command is refused with; also checks nothing was appended. */
export function rejection<K extends WorkCommandKind>(w: World, kind: K, payload: CommandOf<K>['payload'], by: Cast, envelope: Record<string, unknown> = {}): ProtocolError {
  const head = w.group.head
  try {
    exec(w, kind, payload, by, envelope)
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error
    expect(w.group.head).toBe(head)
    return error
  }
  throw new Error(`${kind} was accepted`)
}

/** The code of {@link rejection}. */
export function refused<K extends WorkCommandKind>(w: World, kind: K, payload: CommandOf<K>['payload'], by: Cast, envelope: Record<string, unknown> = {}): string {
  return rejection(w, kind, payload, by, envelope).code
}

/** The record of WorkItem `id`. */
export function item(w: World, id: string): WorkItemRecord {
  const record = w.group.workItems.get(id)
  if (record === undefined) throw new Error(`no WorkItem ${id}`)
  return record
}

/** Authorizes WorkItem `id` as the Coordinator. */
export function authorize(w: World, id: string, overrides: Partial<WorkContract> = {}, extra: Partial<CommandOf<'work.authorize'>['payload']> = {}): Event[] {
  return exec(w, 'work.authorize', { workItemId: id, contract: contract(overrides), ...extra }, cast.coordinator)
}

/** Offers WorkItem `id` to `candidates` as the Coordinator. */
export function offer(w: World, id: string, candidates: readonly Cast[] = [cast.worker1], seconds = 600): Event[] {
  return exec(w, 'work.offer', { workItemId: id, candidateAgentIds: candidates.map((c) => c.actor.id), selectionBasis: SELECTION, offerExpiresInSeconds: seconds }, cast.coordinator)
}

/** `who` accepts the offer of WorkItem `id`. */
export function accept(w: World, id: string, who: Cast = cast.worker1, leaseSeconds = 3600): Event[] {
  return exec(w, 'work.accept_offer', { workItemId: id, ownershipLeaseSeconds: leaseSeconds }, who)
}

/** The owner's current Ownership Epoch and Execution Lease ID. */
export interface Running {
  readonly epoch: number
  readonly leaseId: string
}

/** The owner `who` starts WorkItem `id`; returns its epoch and new Execution Lease ID. */
export function start(w: World, id: string, who: Cast = cast.worker1, leaseSeconds = 600): Running {
  const epoch = item(w, id).doc.owner?.ownershipEpoch ?? 0
  const [started] = exec(w, 'work.start', { workItemId: id, ownershipEpoch: epoch, executionLeaseSeconds: leaseSeconds }, who)
  return { epoch, leaseId: (started!.payload as { executionLease: { leaseId: string } }).executionLease.leaseId }
}

/** A checkpoint taken now. */
export function checkpointOf(w: World, phase = 'build'): CommandOf<'work.checkpoint'>['payload']['checkpoint'] {
  return { phase, completedMilestones: ['tests written'], nextStep: 'implement', stateArtifactHash: sha256Tagged(utf8Encode(phase)), createdAt: new Date(w.clock.nowMs).toISOString() }
}

/** Authorizes, offers, accepts and starts WorkItem `id` for `who`. */
export function activate(w: World, id: string, who: Cast = cast.worker1, overrides: Partial<WorkContract> = {}): Running {
  authorize(w, id, overrides)
  offer(w, id, [who])
  accept(w, id, who)
  return start(w, id, who)
}

/** Files a published Artifact of WorkItem `id` as the Artifact domain would; returns its ID. */
export function publish(w: World, id: string, running: Running, content = 'patch'): string {
  const artifactId = `urn:weft:test:artifact:${w.ids().slice(-12)}`
  const manifest = {
    artifactId,
    contentHash: sha256Tagged(utf8Encode(content)),
    // §10.1: the kind of the contract's deliverable, so a submission of it is complete.
    mediaType: 'text/x-diff',
    schemaUri: 'urn:weft:test:schema:patch',
    missionId: w.group.missionId,
    groupId: w.group.groupId,
    workItemId: id,
  } as unknown as Artifact
  w.group.artifacts.set(artifactId, { manifest, eventId: w.ids(), ownershipEpoch: running.epoch, executionLeaseId: running.leaseId })
  return artifactId
}

/** The owner `who` publishes an Artifact and submits WorkItem `id` with passing Evidence. */
export function submit(w: World, id: string, running: Running, who: Cast = cast.worker1): Event[] {
  const artifactId = publish(w, id, running)
  return exec(w, 'work.submit', { workItemId: id, ownershipEpoch: running.epoch, executionLeaseId: running.leaseId, artifactIds: [artifactId], evidence: [evidence(w.group, id, who)] }, who)
}

/** Failure Evidence about WorkItem `id` by `by`. */
export function failure(w: World, id: string, by: Cast = cast.coordinator): ReturnType<typeof evidence> {
  return evidence(w.group, id, by, ['tests-pass'], 'failed')
}

/**
 * Brings a new WorkItem `name` into `state` (a state of the §10.2 machine, or `none` for one not
 * authorized yet), under a contract with `overrides`, with `cast.worker1` as the owner where the
 * state has one. Returns its ID and,
 * for `active`, the running lease.
 */
export function reach(w: World, state: string, overrides: Partial<WorkContract> = {}, name = 'reached'): { readonly id: string; readonly running?: Running } {
  const id = wid(name)
  if (state === 'none') return { id }
  authorize(w, id, overrides)
  if (state === 'open') return { id }
  if (state === 'failed') {
    exec(w, 'work.fail', { workItemId: id, reason: 'Not feasible.', evidence: [failure(w, id)] }, cast.coordinator)
    return { id }
  }
  offer(w, id, [cast.worker1, cast.worker2])
  if (state === 'offered') return { id }
  accept(w, id)
  if (state === 'queued') return { id }
  const running = start(w, id)
  if (state === 'active') return { id, running }
  if (state === 'blocked') {
    exec(
      w,
      'work.block',
      { workItemId: id, ownershipEpoch: running.epoch, executionLeaseId: running.leaseId, checkpoint: checkpointOf(w), reason: 'Waiting for credentials.', blockedLeaseSeconds: 600 },
      cast.worker1,
    )
    return { id, running }
  }
  if (state === 'submitted') {
    submit(w, id, running)
    return { id, running }
  }
  throw new Error(`reach: unsupported state ${state}`)
}

/** A Delegation Grant to `cast.worker3` over `targetWorkItemId`, persisted with the grantee's `work_delegate` Membership. */
export function seedGrant(w: World, targetWorkItemId: string, overrides: Partial<DelegationGrant> = {}): DelegationGrant {
  const grant: DelegationGrant = {
    grantId: 'urn:weft:test:grant:1',
    granteeAgentId: cast.worker3.actor.id,
    missionId: w.group.missionId,
    groupId: w.group.groupId,
    targetWorkItemId,
    allowedCapabilities: [CAPABILITY],
    budget: { currency: 'USD', financialLimit: 15, modelTokenLimit: 15000, toolCallLimit: 75, computeSecondsLimit: 600, wallClockSecondsLimit: 600, externalSideEffectLimit: 5 },
    maxDescendantDepth: 2,
    granteeMembershipEpoch: 1,
    coordinatorEpoch: 1,
    grantedBy: cast.coordinator.actor as DelegationGrant['grantedBy'],
    grantedAt: T0,
    expiresAt: '2026-07-15T12:00:00.000Z',
    ...overrides,
  }
  const membership = memberDoc(w.group, cast.worker3, 'work_delegate', { membershipId: 'urn:weft:test:membership:delegate' })
  w.group.memberships.set(membership.membershipId, membership)
  w.group.membershipByMember.set(actorKey(cast.worker3.actor), membership.membershipId)
  w.group.grants.set(grant.grantId, { grant, workItemIds: new Set() })
  return grant
}

/** A complete six-dimension budget, as a Delegation Grant's WorkItems need. */
export const FULL_BUDGET = { currency: 'USD', financialLimit: 5, modelTokenLimit: 5000, toolCallLimit: 25, computeSecondsLimit: 200, wallClockSecondsLimit: 200, externalSideEffectLimit: 1 }
