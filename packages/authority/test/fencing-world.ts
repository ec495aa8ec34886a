/**
 * The worlds of the fencing tests (`fencing-kinds.test.ts`, `fencing-coordinator.test.ts`): an
 * Organization in which every epoch a Command carries is 2, so the "stale" value 1 is one the
 * Authority really issued and then fenced (§6.3, §7.2, §8, §10.2, §11.3); the attempts the cases
 * send there, and the changes to a built envelope that drop or age one fence and sign it again.
 */
import type { BuiltCommand, CommandOptions } from '@weft/client'
import { sign } from '@weft/codec'
import type { CommandPayload, EpochName } from '@weft/spec'
import { expect } from 'vitest'
import { decision, SELECTION } from '@weft/testkit/documents'
import { cast } from '@weft/testkit/fixtures'
import {
  accept,
  AGENT_NAMES,
  authorize,
  boot,
  checkpoint,
  CHILD_CONTRACT,
  createWorld,
  enrol,
  MEMBERS,
  offer,
  openMission,
  promote,
  reach,
  reachMission,
  runningOf,
  start,
  wid,
} from '@weft/testkit/world'
import type { Who, World } from '@weft/testkit/world'
import { contextPackage } from './fixtures-missions.js'
import { FULL_BUDGET } from './fixtures-work.js'

/** The payload members that fence an owner Command (§11.3). */
export const PAYLOAD_FENCES = ['ownershipEpoch', 'executionLeaseId'] as const
/** One of {@link PAYLOAD_FENCES}. */
export type PayloadFence = (typeof PAYLOAD_FENCES)[number]
/** Anything a Command is fenced by: an envelope epoch or a payload member. */
export type Fence = EpochName | PayloadFence

/** What a case sends: a Command `who` builds in `world` that the Authority accepts as built. */
export interface Attempt {
  readonly world: World
  readonly who: Who
  readonly payload: Record<string, unknown>
  readonly options?: CommandOptions
  /** An Execution Lease ID of the same WorkItem and Ownership Epoch older than the current one (§11.3). */
  readonly staleLeaseId?: string
  /** A change to every envelope the case sends (dropping an epoch the issuer need not carry). */
  readonly envelope?: (command: Envelope) => void
}

/** A Command envelope as plain data, to change before it is signed again. */
export type Envelope = Record<string, unknown> & { payload: Record<string, unknown> }

// ---------------------------------------------------------------------------------------------
// Worlds whose every epoch is 2
// ---------------------------------------------------------------------------------------------

/** The text content of a Message. */
export const text = (value: string) => [{ type: 'text' as const, text: value }]
/** The ID of the Group Conversation of the view's Group. */
export const mainConversation = (w: World) => w.group().group.mainConversationId

/** The ID of `who`'s Membership in the view's Group. */
export function membershipIdOf(w: World, who: Who): string {
  const m = [...w.group().memberships.values()].find((x) => x.member.id === cast[who].actor.id && x.state !== 'ended')
  if (m === undefined) throw new Error(`${who} holds no Membership in ${w.groupId}`)
  return m.membershipId
}

/** `by` (a Coordinator) changes the seat Membership of `who` once more, fencing its epoch (§8). */
async function reseat(w: World, who: Who, role: 'mission_owner' | 'coordinator', by: Who): Promise<void> {
  await w.as[by].membershipChange({ membershipId: membershipIdOf(w, who), member: cast[who].actor, role, state: 'active', scopes: ['group:read', 'group:write'], visibilityStartSequence: 0 })
}

/**
 * The Organization booted with a second session for every Agent (§6.3), the main Mission open with
 * its Coordinator re-appointed under Coordinator Epoch 2 (§7.2), and every Membership changed so
 * it is at epoch 2 (§8).
 */
export async function fenced(): Promise<World> {
  const w = createWorld()
  await boot(w)
  for (const who of AGENT_NAMES) await w.as.controlPlane.identitySessionOpen({ agentId: cast[who].actor.id })
  await openMission(w)
  await w.as.owner.missionAssignCoordinator({ coordinatorAgentId: cast.coordinator.actor.id, leaseSeconds: 3600, contextPackage: contextPackage(w.group()) })
  await enrol(w, MEMBERS)
  await enrol(w, MEMBERS)
  await reseat(w, 'owner', 'mission_owner', 'coordinator')
  await reseat(w, 'coordinator', 'coordinator', 'coordinator')
  return w
}

/** A child Mission of a {@link fenced} world (§14), whose MissionOwner (the parent Coordinator) holds its seat at epoch 2. */
export async function child(): Promise<World> {
  const w = await fenced()
  const { child: c } = await promote(w, await reach(w, 'queued'))
  await reseat(c, 'coordinator', 'mission_owner', 'worker2')
  return c
}

/** A WorkItem owned by worker1 under Ownership Epoch 2: the first ownership lapsed and a new offer fenced it (§10.2). */
export async function ownedTwice(w: World, overrides = {}): Promise<string> {
  const id = wid(w.fresh('fenced'))
  await authorize(w, id, overrides)
  await offer(w, id, ['worker1'])
  await accept(w, id, 'worker1', 1)
  w.clock.advance(2)
  await offer(w, id, ['worker1'])
  await accept(w, id, 'worker1')
  expect(w.item(id).doc.owner?.ownershipEpoch).toBe(2)
  return id
}

/** An active WorkItem of worker1 under Ownership Epoch 2 and its second Execution Lease; the first one a checkpoint released (§11.3). */
export async function runningTwice(w: World): Promise<{ readonly id: string; readonly ownershipEpoch: number; readonly executionLeaseId: string; readonly staleLeaseId: string }> {
  const id = await ownedTwice(w)
  await start(w, id)
  const staleLeaseId = runningOf(w, id).leaseId
  await checkpoint(w, id)
  await start(w, id)
  const { epoch, leaseId } = runningOf(w, id)
  return { id, ownershipEpoch: epoch, executionLeaseId: leaseId, staleLeaseId }
}

/** An owner Command's execution reference on a {@link runningTwice} WorkItem, as an attempt by worker1. */
export async function executing(
  payload: (w: World, ref: { workItemId: string; ownershipEpoch: number; executionLeaseId: string }) => Promise<Record<string, unknown>> | Record<string, unknown>,
): Promise<Attempt> {
  const w = await fenced()
  const { id, ownershipEpoch, executionLeaseId, staleLeaseId } = await runningTwice(w)
  return { world: w, who: 'worker1', payload: await payload(w, { workItemId: id, ownershipEpoch, executionLeaseId }), staleLeaseId }
}

/** A Message `who` posted in the main Conversation, to amend. */
export async function posted(w: World, who: Who): Promise<string> {
  const messageId = `urn:weft:test:message:${w.fresh('posted')}`
  await w.as[who].messagePost({ messageId, conversationId: mainConversation(w), content: text('The build is red.') })
  return messageId
}

/** A correction, retraction or redaction of `targetMessageId` (§9.1). */
export const amendment = (w: World, targetMessageId: string) => ({ messageId: `urn:weft:test:message:${w.fresh('amend')}`, targetMessageId, content: text('Amended.'), reason: 'Posted in error.' })

/** A one-shot Cooperation Override for a burst of status Messages. */
export const override = (w: World) => ({
  grantId: `urn:weft:test:override:${w.fresh('burst')}`,
  policyName: 'message_rate',
  beneficiary: cast.worker1.actor,
  targetCommandKind: 'message.post',
  targetActionId: 'urn:weft:test:action:status-burst',
  reason: 'Incident updates go out every minute.',
  expiresAt: '2026-07-16T00:00:00Z',
})

/** A fresh Coordinator appointment of `agent`, with its Context Package (§7.2). */
export const appoint = (w: World, agent: Who) => ({
  coordinatorAgentId: cast[agent].actor.id,
  leaseSeconds: 3600,
  contextPackage: contextPackage(w.group(), cast.coordinator, { contextPackageId: `urn:weft:test:context:${w.fresh('appoint')}` }),
})

/** A `work.offer` payload for worker1. */
export const offerOf = (workItemId: string) => ({ workItemId, candidateAgentIds: [cast.worker1.actor.id], selectionBasis: SELECTION, offerExpiresInSeconds: 600 })

/** The main Mission brought to its approval, and the approval decision of `who`. */
export async function approval(w: World, who: Who, verdict: 'approved' | 'changes_requested'): Promise<Record<string, unknown>> {
  await reachMission(w, 'awaiting_approval', w.group().mission.parent === undefined ? {} : CHILD_CONTRACT)
  return { approval: decision(w.group(), cast[who], verdict) }
}

/** An attempt by `who` in a fresh world `make` builds; `payload` prepares the world and gives the Command's payload. */
export function attemptIn(make: () => Promise<World>, who: Who, payload: (w: World) => Promise<Record<string, unknown>> | Record<string, unknown>, options?: CommandOptions): () => Promise<Attempt> {
  return async () => {
    const w = await make()
    return { world: w, who, payload: await payload(w), ...(options === undefined ? {} : { options }) }
  }
}

/** A booted Organization with no Mission yet. */
export async function booted(): Promise<World> {
  const w = createWorld()
  await boot(w)
  return w
}

/** An attempt by `who` in a {@link fenced} world. */
export const inFenced = (who: Who, payload: Parameters<typeof attemptIn>[2], options?: CommandOptions) => attemptIn(fenced, who, payload, options)
/** An attempt by `who` in a {@link child} Mission. */
export const inChild = (who: Who, payload: Parameters<typeof attemptIn>[2]) => attemptIn(child, who, payload)
/** An attempt by the control plane in a {@link booted} Organization. */
export const inOrganization = (payload: Record<string, unknown>) => attemptIn(booted, 'controlPlane', () => payload)

/** Drops the envelope's Coordinator Epoch, for an issuer that acts without the Coordinator role. */
export const coordinatorEpochDropped = (command: Envelope): void => {
  delete command['coordinatorEpoch']
}

/** A Delegation Grant over `targetWorkItemId` for worker3 at Membership Epoch `granteeMembershipEpoch` (§9.1). */
export function grantPayload(w: World, targetWorkItemId: string, granteeMembershipEpoch: number): CommandPayload<'membership.grant_delegation'> {
  return {
    grantId: `urn:weft:test:grant:${w.fresh('grant')}`,
    granteeAgentId: cast.worker3.actor.id,
    targetWorkItemId,
    allowedCapabilities: [SELECTION.requiredCapabilities[0]!],
    budget: FULL_BUDGET,
    maxDescendantDepth: 2,
    granteeMembershipEpoch,
    expiresAt: '2026-07-15T12:00:00.000Z',
  }
}

/** A Delegation Grant over a new open WorkItem for worker3, whom the Coordinator made a `work_delegate` (§9.1). */
export async function delegation(w: World): Promise<CommandPayload<'membership.grant_delegation'>> {
  const target = await reach(w, 'open')
  await w.as.coordinator.membershipChange({ membershipId: membershipIdOf(w, 'worker3'), member: cast.worker3.actor, role: 'work_delegate', state: 'active', scopes: ['group:read'] })
  return grantPayload(w, target, w.group().memberships.get(membershipIdOf(w, 'worker3'))!.membershipEpoch)
}

/** An Execution Approval for the current Ownership Epoch of `workItemId` (§11.3). */
export function executionApproval(w: World, workItemId: string): Record<string, unknown> {
  return {
    approvalId: `urn:weft:test:approval:${w.fresh('execution')}`,
    workItemId,
    ownershipEpoch: w.item(workItemId).doc.owner!.ownershipEpoch,
    operations: ['write'],
    resources: ['urn:weft:test:resource:repo'],
    budget: { currency: 'USD', financialLimit: 1 },
    expiresInSeconds: 600,
  }
}

// ---------------------------------------------------------------------------------------------
// Changes to a built Command
// ---------------------------------------------------------------------------------------------

/** Whether `fence` is a payload member rather than an envelope epoch. */
export const isPayloadFence = (fence: Fence): fence is PayloadFence => (PAYLOAD_FENCES as readonly string[]).includes(fence)

/** Drops `fence` from the Command. */
export function omit(fence: Fence): (command: Envelope) => void {
  return (command) => {
    if (isPayloadFence(fence)) delete command.payload[fence]
    else delete command[`${fence}Epoch`]
  }
}

/** `built` with `change` applied, under a new Action ID, signed again by `who`. */
export function resigned(w: World, who: Who, built: BuiltCommand, change: (command: Envelope) => void): BuiltCommand {
  const { signature: _signature, ...unsigned } = structuredClone(built.command) as unknown as Envelope
  change(unsigned as Envelope)
  unsigned['actionId'] = `urn:weft:test:action:${w.fresh('fence')}`
  const command = sign('command', unsigned, cast[who].key) as unknown as BuiltCommand['command']
  return { command, bytes: JSON.stringify(command) }
}
