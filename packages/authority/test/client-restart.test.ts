/**
 * A runtime that restarts (or joins late) acts with `@weft/client` against the Authority: told its
 * current epochs (`epochs` of `createClient`), its Commands are accepted even while it replays
 * older Events; left to the Events it saw before the restart, it carries fenced epochs and the
 * Authority refuses it (§6.3, §7.2, §8, §15.1). The client cannot import the Authority (the arrow
 * is client <- authority), so this test lives here.
 */
import { createClient, type Client, type EpochSetting } from '@weft/client'
import type { Event } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { contextPackage } from './fixtures-missions.js'
import { cast, contract, GROUP } from '@weft/testkit/fixtures'
import { codeOf, started, wid, type Who, type World } from '@weft/testkit/world'

/** A fresh client for `who`, as a restarted runtime makes it: nothing observed yet. */
function restarted(w: World, who: Who, epochs?: EpochSetting): Client {
  const { actor, key } = cast[who]
  return createClient({ actor, signingKey: key, transport: w.authority.connect(), groupId: GROUP, clock: { now: () => w.clock.nowMs }, ...(epochs === undefined ? {} : { epochs }) })
}

/** Every Event the Authority has appended so far: what a runtime saved before it stopped. */
function seenSoFar(w: World): readonly Event[] {
  return [...w.authority.organizationEvents(), ...w.authority.events(GROUP)]
}

const text = (value: string) => [{ type: 'text' as const, text: value }]

describe('a restarted runtime given its epochs', () => {
  /** worker1 at Membership Epoch 2, then restarted under Session Epoch 2; returns the Events seen before. */
  async function workerRestart(w: World): Promise<readonly Event[]> {
    const before = seenSoFar(w)
    await w.as.coordinator.membershipChange({ membershipId: `${GROUP}:membership:worker1`, member: cast.worker1.actor, role: 'worker', state: 'active', scopes: ['group:read', 'group:write'] })
    await w.as.controlPlane.identitySessionOpen({ agentId: cast.worker1.actor.id })
    expect([w.authority.state.org.agents.get(cast.worker1.actor.id)?.sessionEpoch, w.as.worker1.epochs.membership(GROUP)]).toEqual([2, 2])
    return before
  }
  const post = (c: Client, w: World) => c.messagePost({ messageId: `urn:weft:test:message:${w.fresh('m')}`, conversationId: w.group().group.mainConversationId, content: text('Back.') })

  it('a Worker acts at once, and replaying what it saw before the restart does not roll its epochs back', async () => {
    const w = await started()
    const before = await workerRestart(w)
    const worker = restarted(w, 'worker1', { session: 2, groupId: GROUP, membership: 2 })
    worker.observe(before)
    expect([worker.epochs.sessionEpoch, worker.epochs.membership(GROUP)]).toEqual([2, 2])
    const receipt = await post(worker, w)
    expect(receipt.events.map((e) => e.kind)).toEqual(['message.posted'])
  })

  it('without them, the Events it saw before the restart leave it fenced', async () => {
    const w = await started()
    const before = await workerRestart(w)
    const stale = restarted(w, 'worker1')
    stale.observe(before)
    expect([stale.epochs.sessionEpoch, stale.epochs.membership(GROUP)]).toEqual([1, 1])
    expect(await codeOf(post(stale, w))).toBe('AUTH_STALE_SESSION')
    stale.epochs.set({ session: 2 })
    expect(await codeOf(post(stale, w))).toBe('MEMBERSHIP_STALE')
    // One Command may carry the current epoch without changing the client's own.
    expect(
      (await stale.messagePost({ messageId: 'urn:weft:test:message:override', conversationId: w.group().group.mainConversationId, content: text('Once.') }, { membershipEpoch: 2 })).events,
    ).toHaveLength(1)
    expect(stale.epochs.membership(GROUP)).toBe(1)
  })

  it('a reappointed Coordinator acts under its new Coordinator Epoch; the old one is stale (§7.2)', async () => {
    const w = await started()
    const before = seenSoFar(w)
    await w.as.owner.missionAssignCoordinator({ coordinatorAgentId: cast.coordinator.actor.id, leaseSeconds: 3600, contextPackage: contextPackage(w.group()) })
    expect(w.group().mission.coordinator.coordinatorEpoch).toBe(2)
    const membership = w.as.coordinator.epochs.membership(GROUP) ?? 0

    const coordinator = restarted(w, 'coordinator', { session: 1, groupId: GROUP, membership, coordinator: 2 })
    coordinator.observe(before)
    const receipt = await coordinator.workAuthorize({ workItemId: wid('after-restart'), contract: contract() })
    expect(receipt.events.map((e) => e.kind)).toContain('work.authorized')

    const stale = restarted(w, 'coordinator', { session: 1, groupId: GROUP, membership })
    stale.observe(before) // learns the lease from mission.created: epoch 1
    expect(stale.epochs.coordinator(GROUP)).toBe(1)
    expect(await codeOf(stale.workAuthorize({ workItemId: wid('stale'), contract: contract() }))).toBe('AUTH_STALE_COORDINATOR')
  })
})
