import { UsageError } from '@weft/codec'
import type { Event, EventKind } from '@weft/spec'
import { eventPayloads } from '@weft/validators/payloads'
import { describe, expect, it } from 'vitest'
import { createEpochs } from '../src/index.js'
import { cast, coordinatorEntry, GROUP, membership, missionCreated, OTHER_GROUP } from './fixtures.js'

/** The members of an Event the epoch view reads; the rest does not matter to it. */
function fact(kind: EventKind, payload: object, sequence?: number, groupId = GROUP): Event {
  return { kind, payload, ...(sequence !== undefined && { groupId, sequence }) } as unknown as Event
}

const sessionOpened = (agentId: string, sessionEpoch: number) => fact('ext.missionweaveprotocol.identity.session_opened', { agentId, sessionEpoch })
const changed = (epoch: number, sequence: number, state: 'active' | 'provisional' | 'ended' = 'active') =>
  fact('membership.changed', { membership: membership(cast.worker, epoch, GROUP, state) }, sequence)
const ended = (sequence: number) => fact('membership.ended', { membershipId: 'm', member: cast.worker.actor, membershipEpoch: 1, reason: 'r' }, sequence)

describe('createEpochs', () => {
  it('learns from payloads of the real shape (the samples pass the payload schemas)', () => {
    expect(eventPayloads['mission.created'].errors(missionCreated(GROUP, cast.coordinator))).toEqual([])
    for (const state of ['active', 'provisional', 'ended'] as const) {
      expect(eventPayloads['membership.changed'].errors({ membership: membership(cast.worker, 2, GROUP, state) }), state).toEqual([])
    }
  })

  it('keeps the highest Session Epoch opened for this Agent only (§6.3)', () => {
    const epochs = createEpochs(cast.worker.actor)
    epochs.observe([sessionOpened(cast.worker.actor.id, 3), sessionOpened(cast.coordinator.actor.id, 9), sessionOpened(cast.worker.actor.id, 2)])
    expect(epochs.sessionEpoch).toBe(3)
  })

  it('a human or service learns no Session Epoch and may not set one', () => {
    const owner = createEpochs(cast.owner.actor)
    owner.observe([sessionOpened(cast.owner.actor.id, 3)])
    expect(owner.sessionEpoch).toBeUndefined()
    expect(() => owner.setSession(1)).toThrow(UsageError)
    expect(() => createEpochs(cast.controlPlane.actor).setCoordinator(GROUP, 1)).toThrow(UsageError)
  })

  it('refuses epochs that are not positive integers', () => {
    const epochs = createEpochs(cast.worker.actor)
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      expect(() => epochs.setSession(bad)).toThrow(UsageError)
      expect(() => epochs.setMembership(GROUP, bad)).toThrow(UsageError)
    }
  })

  it('follows Group order: an older Event never overwrites a newer one (§15.2)', () => {
    const epochs = createEpochs(cast.worker.actor)
    epochs.observe([changed(2, 5), changed(1, 4)])
    expect(epochs.membership(GROUP)).toBe(2)
    epochs.observe([ended(6), changed(2, 5)])
    expect(epochs.membership(GROUP)).toBeUndefined()
    epochs.observe([changed(3, 7, 'provisional')])
    expect(epochs.membership(GROUP)).toBe(3)
    epochs.observe([changed(3, 8, 'ended')])
    expect(epochs.membership(GROUP)).toBeUndefined()
  })

  it('keeps each Group apart', () => {
    const epochs = createEpochs(cast.worker.actor)
    epochs.observe([changed(4, 1), fact('membership.changed', { membership: membership(cast.worker, 7, OTHER_GROUP) }, 1, OTHER_GROUP)])
    expect([epochs.membership(GROUP), epochs.membership(OTHER_GROUP)]).toEqual([4, 7])
  })

  it('ignores Memberships of other actors, including an Agent and a human sharing an ID', () => {
    const epochs = createEpochs(cast.worker.actor)
    const lookalike = { ...membership(cast.worker, 5), member: { type: 'human', id: cast.worker.actor.id } }
    epochs.observe([fact('membership.changed', { membership: membership(cast.coordinator, 5) }, 1), fact('membership.changed', { membership: lookalike }, 2)])
    expect(epochs.membership(GROUP)).toBeUndefined()
  })

  it('learns Membership and Coordinator lease from mission.created, and loses the lease to another Agent (§7.2)', () => {
    const epochs = createEpochs(cast.coordinator.actor)
    epochs.observe([fact('mission.created', missionCreated(GROUP, cast.coordinator, 2), 1)])
    expect([epochs.membership(GROUP), epochs.coordinator(GROUP)]).toEqual([1, 2])
    epochs.observe([fact('mission.coordinator.assigned', { coordinator: coordinatorEntry(cast.worker, 3) }, 2)])
    expect(epochs.coordinator(GROUP)).toBeUndefined()
    expect(epochs.membership(GROUP)).toBe(1)
  })

  it('a value set by hand stands until a newer Event of its Group', () => {
    const epochs = createEpochs(cast.worker.actor)
    epochs.observe([changed(2, 5)])
    epochs.setMembership(GROUP, 4)
    epochs.observe([changed(2, 5)])
    expect(epochs.membership(GROUP)).toBe(4)
    epochs.observe([changed(6, 6)])
    expect(epochs.membership(GROUP)).toBe(6)
  })

  it('set: several epochs at once, all or nothing', () => {
    const epochs = createEpochs(cast.coordinator.actor)
    epochs.set({ session: 2, groupId: GROUP, membership: 3, coordinator: 4 })
    expect([epochs.sessionEpoch, epochs.membership(GROUP), epochs.coordinator(GROUP)]).toEqual([2, 3, 4])
    epochs.set({ groupId: OTHER_GROUP, membership: 7 })
    expect([epochs.membership(OTHER_GROUP), epochs.membership(GROUP), epochs.sessionEpoch]).toEqual([7, 3, 2])
    for (const bad of [{ membership: 1 }, { coordinator: 1 }, { groupId: GROUP }, { session: 9, groupId: GROUP, membership: 0 }, { groupId: 5 as never, membership: 1 }]) {
      expect(() => epochs.set(bad), JSON.stringify(bad)).toThrow(UsageError)
    }
    expect(epochs.sessionEpoch).toBe(2) // the refused setting changed nothing
    const owner = createEpochs(cast.owner.actor)
    expect(() => owner.set({ groupId: GROUP, membership: 1, coordinator: 1 })).toThrow(UsageError)
    expect(owner.membership(GROUP)).toBeUndefined()
  })

  it('a value set by hand yields only to Events naming the same or a higher epoch, whatever their sequence', () => {
    // A restarted runtime: it has seen nothing, is told its epochs, then replays the Group from the start.
    const epochs = createEpochs(cast.coordinator.actor)
    epochs.set({ session: 2, groupId: GROUP, membership: 3, coordinator: 2 })
    epochs.observe([
      sessionOpened(cast.coordinator.actor.id, 1),
      fact('mission.created', missionCreated(GROUP, cast.coordinator, 1), 1),
      fact('membership.changed', { membership: membership(cast.coordinator, 2) }, 4),
      fact('membership.ended', { membershipId: 'm', member: cast.coordinator.actor, membershipEpoch: 2, reason: 'r' }, 5),
    ])
    expect([epochs.sessionEpoch, epochs.membership(GROUP), epochs.coordinator(GROUP)]).toEqual([2, 3, 2])
    // The Event that issued the set epochs: Group order takes over from it.
    epochs.observe([fact('membership.changed', { membership: membership(cast.coordinator, 3) }, 6), fact('membership.changed', { membership: membership(cast.coordinator, 1) }, 2)])
    expect(epochs.membership(GROUP)).toBe(3)
    // Ending the set epoch, or fencing the lease with a higher one, is news.
    epochs.observe([fact('membership.ended', { membershipId: 'm', member: cast.coordinator.actor, membershipEpoch: 3, reason: 'r' }, 9)])
    epochs.observe([fact('mission.coordinator.assigned', { coordinator: coordinatorEntry(cast.worker, 3) }, 10)])
    expect([epochs.membership(GROUP), epochs.coordinator(GROUP)]).toEqual([undefined, undefined])
    // A later Membership of the same actor starts its own epochs again (§8), in Group order.
    epochs.observe([fact('membership.changed', { membership: { ...membership(cast.coordinator, 1), membershipId: 'm2' } }, 11)])
    expect(epochs.membership(GROUP)).toBe(1)
  })

  it('an explicit value replaces what the client learned, lower ones included; forgetting makes Events news again', () => {
    const epochs = createEpochs(cast.worker.actor)
    epochs.observe([changed(5, 5)])
    epochs.setMembership(GROUP, 4)
    expect(epochs.membership(GROUP)).toBe(4)
    epochs.setMembership(GROUP, undefined)
    epochs.observe([changed(1, 3)]) // older than the last Event seen: still ignored
    expect(epochs.membership(GROUP)).toBeUndefined()
    epochs.observe([changed(2, 6)])
    expect(epochs.membership(GROUP)).toBe(2)
  })

  it('skips Events of kinds it does not track and malformed payloads', () => {
    const epochs = createEpochs(cast.worker.actor)
    epochs.observe([
      fact('work.started', { workItemId: 'x' }, 1),
      fact('membership.changed', {}, 2),
      fact('mission.created', { memberships: 'x' }, 3),
      fact('mission.coordinator.assigned', {}, 4),
      changed(0, 5),
    ])
    expect([epochs.sessionEpoch, epochs.membership(GROUP), epochs.coordinator(GROUP)]).toEqual([undefined, undefined, undefined])
  })
})
