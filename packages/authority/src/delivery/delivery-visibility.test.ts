/**
 * What Delivery lets a subscriber see (§8, §17.2): Groups it may read and nothing below its
 * visibility start or after its Membership ends, and the attention filters that narrow live
 * delivery (and never the replay).
 */
import type { Event } from '@weft/spec'
import { cast, T0 } from '@weft/testkit/fixtures'
import { describe, expect, it } from 'vitest'
import { A, B, BOTH, codeOf, enrol, recorder, setup } from '../../test/fixtures-delivery.js'
import { actorKey } from '../model.js'
import type { createDelivery } from './delivery.js'

describe('authorization per Group (§8, §17.2)', () => {
  it('answers an absent Group and a hidden one with the same GROUP_NOT_FOUND', () => {
    const { fake, delivery } = setup()
    fake.group('urn:weft:test:group:hidden')
    const outsider = cast.worker2.actor
    const r = recorder()
    const hidden = codeOf(() => delivery.subscribe(outsider, [{ groupId: 'urn:weft:test:group:hidden', afterSequence: 0 }], r.handlers))
    const absent = codeOf(() => delivery.subscribe(outsider, [{ groupId: 'urn:weft:test:group:absent', afterSequence: 0 }], r.handlers))
    expect(hidden).toEqual({
      code: 'GROUP_NOT_FOUND',
      message: absent.message,
      details: absent.details,
    })
    expect(absent.code).toBe('GROUP_NOT_FOUND')
    for (const call of [() => delivery.replay(outsider, A), () => delivery.cursor(outsider, A), () => delivery.ack(outsider, [{ groupId: A, sequence: 0 }])]) {
      expect(codeOf(call)).toEqual(absent)
    }
  })

  it('refuses the whole subscription when one Group is hidden, subscribing none', () => {
    const { fake, delivery, worker } = setup()
    fake.group('urn:weft:test:group:hidden')
    const r = recorder()
    expect(
      codeOf(() =>
        delivery.subscribe(
          worker,
          [
            { groupId: A, afterSequence: 0 },
            { groupId: 'urn:weft:test:group:hidden', afterSequence: 0 },
          ],
          r.handlers,
        ),
      ).code,
    ).toBe('GROUP_NOT_FOUND')
    fake.fill(A, 1)
    expect(r.seq(A)).toEqual([])
  })

  it('admits provisional members and listed control-plane services; refuses ended members and other services', () => {
    const { fake, a, delivery } = setup()
    fake.fill(A, 1)
    enrol(a, cast.worker2, {
      state: 'provisional',
      provisionalExpiresAt: T0,
      contextPackageId: 'urn:weft:test:package:1',
    })
    enrol(a, cast.worker3, { state: 'ended', endedAt: T0 })
    expect(delivery.replay(cast.worker2.actor, A).events).toHaveLength(1)
    expect(delivery.replay(cast.controlPlane.actor, A).events).toHaveLength(1)
    expect(delivery.replay(cast.owner.actor, A).events).toHaveLength(1)
    expect(codeOf(() => delivery.replay(cast.worker3.actor, A)).code).toBe('GROUP_NOT_FOUND')
    expect(codeOf(() => delivery.replay(cast.registry.actor, A)).code).toBe('GROUP_NOT_FOUND')
  })

  it('never delivers Events at or below the visibility start of a late joiner', () => {
    const { fake, a, delivery } = setup()
    fake.fill(A, 4)
    enrol(a, cast.worker2, { visibilityStartSequence: 3 })
    const r = recorder()
    delivery.subscribe(cast.worker2.actor, [{ groupId: A, afterSequence: 0 }], r.handlers)
    fake.fill(A, 1)
    expect(r.seq(A)).toEqual([4, 5])
    const page = delivery.replay(cast.worker2.actor, A, 1)
    expect(page.events.map((e) => e.sequence)).toEqual([4, 5])
  })

  it('stops live delivery when the Membership ends, after the Event that ends it', () => {
    const { fake, a, delivery, worker } = setup()
    const r = recorder()
    const subscription = delivery.subscribe(worker, BOTH, r.handlers)
    fake.fill(A, 1)
    const id = a.membershipByMember.get(actorKey(worker))!
    const ended = {
      ...a.memberships.get(id)!,
      state: 'ended' as const,
      endedAt: T0,
    }
    fake.commit(
      A,
      [
        {
          kind: 'membership.ended',
          payload: {
            membershipId: id,
            member: worker,
            membershipEpoch: 1,
            reason: 'done',
          },
        },
      ],
      () => a.memberships.set(id, ended),
    )
    fake.fill(A, 2)
    fake.fill(B, 1)
    expect(r.seq(A)).toEqual([1, 2])
    expect(r.seq(B)).toEqual([1])
    expect(r.errors).toEqual([{ code: 'GROUP_NOT_FOUND', groupId: A, details: undefined }])
    expect(subscription.status(A)).toBe('ended')
  })

  it('delivers the Events of a transaction that come before the one ending the Membership, then ends', () => {
    const { fake, a, delivery, worker } = setup()
    const r = recorder()
    delivery.subscribe(worker, [{ groupId: A, afterSequence: 0 }], r.handlers)
    const id = a.membershipByMember.get(actorKey(worker))!
    const ended = { ...a.memberships.get(id)!, state: 'ended' as const, endedAt: T0 }
    // E.g. a Coordinator replaced: `mission.coordinator.assigned`, then the old seat's `membership.ended`.
    fake.commit(A, [{}, { kind: 'membership.ended', payload: { membershipId: id, member: worker, membershipEpoch: 1, reason: 'replaced' } }, {}], () => a.memberships.set(id, ended))
    expect(r.seq(A)).toEqual([1, 2])
    expect(r.errors).toEqual([{ code: 'GROUP_NOT_FOUND', groupId: A, details: undefined }])
  })

  it('drops buffered Events of a Group whose Membership ended while paused', () => {
    const { fake, a, delivery, worker } = setup()
    const r = recorder()
    const subscription = delivery.subscribe(worker, [{ groupId: A, afterSequence: 0 }], r.handlers)
    subscription.pause(A)
    fake.fill(A, 2)
    const id = a.membershipByMember.get(actorKey(worker))!
    a.memberships.set(id, {
      ...a.memberships.get(id)!,
      state: 'ended',
      endedAt: T0,
    })
    subscription.resume(A)
    expect(r.seq(A)).toEqual([])
    expect(subscription.status(A)).toBe('ended')
  })
})

describe('attention filters change live delivery only (§8, §17.2)', () => {
  const mine = 'urn:weft:test:work:mine'
  const other = 'urn:weft:test:work:other'

  function filtered(attention: NonNullable<Parameters<ReturnType<typeof createDelivery>['subscribe']>[1][number]['attention']>) {
    const s = setup()
    s.a.conversations.set('urn:weft:test:conversation:mine', {
      ...s.a.conversations.get(`${A}:conversation:main`)!,
      conversationId: 'urn:weft:test:conversation:mine',
      type: 'work_item',
      primaryWorkItemId: mine,
    })
    s.fake.commit(A, [{ kind: 'work.authorized', workItemId: other }])
    const r = recorder()
    s.delivery.subscribe(s.worker, [{ groupId: A, afterSequence: 0, attention }], r.handlers)
    return { ...s, r }
  }
  const message = (conversationId: string, extra: Record<string, unknown> = {}): Partial<Event> => ({
    kind: 'message.posted',
    conversationId,
    payload: { conversationId, author: cast.worker2.actor, ...extra },
  })
  const main = `${A}:conversation:main`

  it('replays everything, then delivers only the WorkItems asked for (their Conversations included) and what names the subscriber', () => {
    const { fake, r } = filtered({ workItemIds: [mine] })
    fake.commit(A, [{ kind: 'work.started', workItemId: mine }]) // 2
    fake.commit(A, [{ kind: 'work.started', workItemId: other }]) // 3
    fake.commit(A, [message('urn:weft:test:conversation:mine')]) // 4
    fake.commit(A, [message(main)]) // 5
    fake.commit(A, [
      {
        kind: 'work.offer.created',
        workItemId: other,
        payload: {
          workItemId: other,
          candidateAgentIds: [cast.worker1.actor.id],
        },
      },
    ]) // 6
    fake.commit(A, [message(main, { mentions: [cast.worker1.actor] })]) // 7
    expect(r.seq(A)).toEqual([1, 2, 4, 6, 7])
  })

  it('mentionsOnly keeps only the Messages that mention the subscriber', () => {
    const { fake, r } = filtered({
      mentionsOnly: true,
      conversationIds: [main],
    })
    fake.commit(A, [message(main)]) // 2
    fake.commit(A, [message(main, { mentions: [cast.worker1.actor] })]) // 3
    fake.commit(A, [{ kind: 'work.started', conversationId: main }]) // 4
    fake.commit(A, [message(main, { mentions: [cast.worker2.actor] })]) // 5
    expect(r.seq(A)).toEqual([1, 3, 4])
  })

  it('announcements are Mission and Group facts and the Coordinator or MissionOwner speaking in the Group Conversation', () => {
    const { fake, r } = filtered({ announcements: true })
    fake.commit(A, [{ kind: 'mission.coordinator.renewed' }]) // 2
    fake.commit(A, [message(main, { author: cast.coordinator.actor })]) // 3
    fake.commit(A, [message(main)]) // 4
    fake.commit(A, [message(main, { author: cast.owner.actor })]) // 5
    fake.commit(A, [{ kind: 'work.started', workItemId: other }]) // 6
    expect(r.seq(A)).toEqual([1, 2, 3, 5])
  })

  it('eventKinds selects kinds; an empty filter selects everything; replay ignores the filter', () => {
    const { fake, r, delivery, worker } = filtered({
      eventKinds: ['work.blocked'],
    })
    fake.commit(A, [{ kind: 'work.started' }, { kind: 'work.blocked' }]) // 2, 3
    const all = recorder()
    delivery.subscribe(worker, [{ groupId: A, afterSequence: 3, attention: {} }], all.handlers)
    fake.commit(A, [{ kind: 'work.started' }]) // 4
    expect(r.seq(A)).toEqual([1, 3])
    expect(all.seq(A)).toEqual([4])
    expect(delivery.replay(worker, A, 0).events.map((e) => e.sequence)).toEqual([1, 2, 3, 4])
  })
})
