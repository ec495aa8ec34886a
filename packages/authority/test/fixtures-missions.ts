/**
 * Fixtures for the Organization, Mission, Membership, Message and policy domain tests: one call
 * that runs a Command of those domains the way the pipeline does, WorkItems seeded in any state,
 * published Artifacts, signed Approvals and Context Packages, and the schema checks every
 * accepted transition is followed by.
 */
import { sign } from '@weft/codec'
import { ProtocolError } from '@weft/codec/errors'
import type { CommandKind, CommandPayload, ContextPackage, Event, EventKind, WorkItem } from '@weft/spec'
import { validators } from '@weft/validators'
import { eventPayloads } from '@weft/validators/payloads'
import { expect } from 'vitest'
import { membershipHandlers, membershipReducers } from '../src/domain/memberships.js'
import { messageHandlers, messageReducers } from '../src/domain/messages.js'
import { missionHandlers, missionReducers } from '../src/domain/missions.js'
import { organizationHandlers, organizationReducers } from '../src/domain/organization.js'
import { policyHandlers, policyReducers } from '../src/domain/policy.js'
import type { CommandOf, HandlerFor } from '../src/commit/handler.js'
import type { AuthorityState, GroupState, WorkItemRecord } from '../src/model.js'
import type { ReducerTable } from '../src/commit/transact.js'
import { hashOf, manifest, seedActiveItem } from '@weft/testkit/artifacts'
import { agentCard, cast, command, counterIds, T0, testClock, type Cast, type TestClock } from '@weft/testkit/fixtures'
import { missionPayload } from '@weft/testkit/documents'
import { run } from './fixtures-state.js'

/** The handlers under test, by kind. */
export const domainHandlers = { ...organizationHandlers, ...missionHandlers, ...membershipHandlers, ...messageHandlers, ...policyHandlers }

/** A Command kind of these domains. */
export type DomainKind = keyof typeof domainHandlers & CommandKind

/** The reducers of these domains. */
export const domainReducers: Partial<ReducerTable> = { ...organizationReducers, ...missionReducers, ...membershipReducers, ...messageReducers, ...policyReducers }

// One ID source for the whole test file, so IDs minted by successive Commands never collide.
const ids = counterIds('00000000-0000-4000-8001')

/** Options of {@link exec}. */
export interface ExecOptions {
  /** Envelope members besides the payload (`groupId`, epochs, `expectedRevision`, ...). */
  readonly envelope?: Partial<Omit<CommandOf<CommandKind>, 'kind' | 'payload' | 'signature'>>
  readonly clock?: TestClock
  /** Reducers of other domains the Command's Events need (the WorkItem reducers, typically). */
  readonly reducers?: Partial<ReducerTable>
}

/**
 * Signs `payload` as `kind` by `by` and runs it through its handler, materialize and the
 * reducers, as the pipeline does. Returns the appended Events; a rejection throws the handler's
 * `ProtocolError` with the state untouched.
 */
export function exec<K extends DomainKind>(state: AuthorityState, kind: K, payload: CommandPayload<K>, by: Cast, options: ExecOptions = {}): Event[] {
  const clock = options.clock ?? testClock()
  const envelope = { ...coordinatorEnvelope(state, by, options.envelope?.groupId), ...options.envelope }
  const cmd = command(kind, payload as CommandOf<K>['payload'], by, envelope as Partial<Omit<CommandOf<K>, 'kind' | 'payload' | 'signature'>>, clock)
  return run(state, domainHandlers[kind] as unknown as HandlerFor<K>, cmd, { ...domainReducers, ...options.reducers }, clock, ids)
}

/**
 * The Coordinator Epoch the Agent holding the Coordinator lease of Group `groupId` carries, as the
 * client adds it (§15.1: the handlers read it as acting under the lease); nothing for anyone else.
 */
function coordinatorEnvelope(state: AuthorityState, by: Cast, groupId: string | undefined): { coordinatorEpoch?: number } {
  const coordinator = groupId === undefined ? undefined : state.groups.get(groupId)?.mission.coordinator
  return by.actor.type === 'agent' && coordinator?.agentId === by.actor.id ? { coordinatorEpoch: coordinator.coordinatorEpoch } : {}
}

/** The `ProtocolError` code `action` throws; fails the test when it throws nothing or something else. */
export function codeOf(action: () => unknown): string {
  try {
    action()
  } catch (error) {
    expect(error).toBeInstanceOf(ProtocolError)
    return (error as ProtocolError).code
  }
  throw new Error('expected a ProtocolError, nothing was thrown')
}

/** Asserts every Event payload validates against its kind's payload schema. */
export function expectValidPayloads(events: readonly Event[]): void {
  for (const event of events) expect([event.kind, eventPayloads[event.kind as EventKind].errors(event.payload)]).toEqual([event.kind, []])
}

/** Asserts the documents the Group stores validate against their normative schemas. */
export function expectValidGroup(group: GroupState): void {
  expect(validators.mission.errors(group.mission)).toEqual([])
  expect(validators.group.errors(group.group)).toEqual([])
  expect(validators.lease.errors(group.coordinatorLease)).toEqual([])
  for (const m of group.memberships.values()) expect(validators.membership.errors(m)).toEqual([])
  for (const c of group.conversations.values()) expect(validators.conversation.errors(c)).toEqual([])
  for (const r of group.messages.values()) expect(validators.message.errors(r.message)).toEqual([])
  for (const a of group.approvals.values()) expect(validators.approval.errors(a)).toEqual([])
  for (const r of group.workItems.values()) expect(validators.workItem.errors(r.doc)).toEqual([])
}

/** The envelope of a Command in `group` (the epochs the pipeline would check are left to it). */
export function inGroup(group: GroupState | string): NonNullable<ExecOptions['envelope']> {
  return { groupId: typeof group === 'string' ? group : group.groupId }
}

/**
 * Seeds WorkItem `name` in `group` in `state`, starting from the active item of the Artifact
 * fixtures and removing or adding what the state implies (owner, leases, submission).
 */
export function seedItem(group: GroupState, name: string, state: WorkItem['state'], owner: Cast = cast.worker1): WorkItemRecord {
  const { record } = seedActiveItem(group, name, owner)
  const owned = state === 'queued' || state === 'active' || state === 'blocked' || state === 'submitted' || state === 'verified'
  const { owner: _owner, selectionBasis: _basis, ...unowned } = record.doc
  const submission = { artifactHashes: [hashOf(name)], evidenceIds: [`urn:weft:test:evidence:${name}`], submittedAt: T0 }
  record.doc = { ...(owned ? record.doc : unowned), state, ...(state === 'submitted' || state === 'verified' ? { submission } : {}) }
  if (state !== 'active') delete record.executionLease
  if (state !== 'queued' && state !== 'active' && state !== 'blocked') delete record.ownershipLease
  return record
}

/** Publishes an Artifact with `content` for `workItemId` in `group` and returns its content hash. */
export function publish(group: GroupState, workItemId: string, content: string): string {
  const artifact = manifest(group, workItemId, content)
  group.artifacts.set(artifact.artifactId, { manifest: artifact, eventId: `urn:weft:test:event:${content}`, ownershipEpoch: 2, executionLeaseId: 'urn:weft:test:lease' })
  return artifact.contentHash
}

/** A Context Package of `group` signed by `by`; `overrides` replace fields before signing. */
export function contextPackage(group: GroupState, by: Cast = cast.coordinator, overrides: Partial<ContextPackage> = {}): ContextPackage {
  return sign(
    'context-package',
    {
      contextPackageId: `urn:weft:test:context:${group.groupId.split(':').pop()}`,
      version: 1,
      missionId: group.missionId,
      groupId: group.groupId,
      sourceEventRange: { fromSequence: 1, toSequence: Math.max(1, group.head), eventIds: ['urn:weft:test:event:genesis'] },
      artifactHashes: [],
      summary: 'Where the Mission stands.',
      decisions: [],
      constraints: [],
      unresolvedQuestions: [],
      generatedBy: by.actor,
      generatedAt: '2026-07-15T00:00:00Z',
      ...overrides,
    },
    by.key,
  ) as unknown as ContextPackage
}

/** Every cast Agent, in the order {@link boot} registers them. */
export const AGENTS: readonly Cast[] = [cast.coordinator, cast.worker1, cast.worker2, cast.worker3, cast.reviewer]

/** Registers every cast Agent's card and opens its first session, through the Organization Commands (§6.1, §6.3). */
export function boot(state: AuthorityState): void {
  for (const who of AGENTS) {
    exec(state, 'ext.missionweaveprotocol.registry.agent_card_register', { card: agentCard(who) }, cast.controlPlane)
    exec(state, 'ext.missionweaveprotocol.identity.session_open', { agentId: who.actor.id }, cast.controlPlane)
  }
}

/** Opens root Mission `name` (Group `urn:weft:test:group:<name>`) owned by `cast.owner` and returns its Group. */
export function openMission(state: AuthorityState, name: string, overrides: Partial<CommandPayload<'mission.create'>> = {}): GroupState {
  const groupId = `urn:weft:test:group:${name}`
  exec(state, 'mission.create', missionPayload(`urn:weft:test:mission:${name}`, overrides), cast.owner, { envelope: { groupId } })
  return state.groups.get(groupId)!
}
