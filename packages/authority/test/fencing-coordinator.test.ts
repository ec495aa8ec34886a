/**
 * Coordinator Epoch fencing case by case (§7.2, §15.1, §19), in a world where the Coordinator was
 * re-appointed under Coordinator Epoch 2: a Command under the Coordinator role without the current
 * epoch is not under the current lease, a Worker cannot claim the role by carrying the epoch, and a
 * Coordinator acting as a plain member needs none. The catalog-wide cases are in
 * `fencing-kinds.test.ts`.
 */
import { describe, expect, it } from 'vitest'
import { cast, evidence } from '@weft/testkit/fixtures'
import { codeOf, expectRefused, reach, type World } from '@weft/testkit/world'
import { fenced, grantPayload, mainConversation, offerOf, omit, resigned, text } from './fencing-world.js'

describe('Coordinator Epoch fencing (§7.2, §15.1)', () => {
  const offerNew = async (w: World) => w.as.coordinator.build('work.offer', offerOf(await reach(w, 'open')))

  it('[error AUTH_STALE_COORDINATOR] a re-appointed Coordinator’s work.offer without the Coordinator Epoch is not under the current lease', async () => {
    const w = await fenced()
    const built = await offerNew(w)
    expect(built.command.coordinatorEpoch).toBe(2)
    await expectRefused(w, () => w.as.coordinator.resend(resigned(w, 'coordinator', built, omit('coordinator'))), 'AUTH_STALE_COORDINATOR')
    await expectRefused(w, () => w.as.coordinator.resend(resigned(w, 'coordinator', built, (c) => void (c['coordinatorEpoch'] = 1))), 'AUTH_STALE_COORDINATOR')
    expect((await w.as.coordinator.resend(built)).events.map((e) => e.kind)).toEqual(['work.offer.created'])
  })

  it('[error AUTH_FORBIDDEN] a Worker carrying the current Coordinator Epoch on a Coordinator-only Command is not the Coordinator', async () => {
    const w = await fenced()
    const submitted = await reach(w, 'submitted')
    const target = await reach(w, 'open')
    // The client carries a Coordinator Epoch only for a lease holder; the Worker claims one by hand.
    w.as.worker1.epochs.setCoordinator(w.groupId, 2)
    const asWorker = (kind: 'work.accept_result' | 'membership.grant_delegation', payload: Record<string, unknown>, coordinatorEpoch: number) => {
      const built = w.as.worker1.build(kind, payload as never)
      return w.as.worker1.resend(resigned(w, 'worker1', built, (c) => void (c['coordinatorEpoch'] = coordinatorEpoch)))
    }
    const acceptResult = { workItemId: submitted, evidence: [evidence(w.group(), submitted, cast.reviewer)] }
    const grant = grantPayload(w, target, 2)
    await expectRefused(w, () => asWorker('work.accept_result', acceptResult, 2), 'AUTH_FORBIDDEN')
    await expectRefused(w, () => asWorker('membership.grant_delegation', grant, 2), 'AUTH_FORBIDDEN')
    // A Coordinator Epoch no longer current is fenced whoever carries it; one never issued is not the Worker's either.
    await expectRefused(w, () => asWorker('work.accept_result', acceptResult, 1), 'AUTH_STALE_COORDINATOR')
    await expectRefused(w, () => asWorker('membership.grant_delegation', grant, 3), 'AUTH_FORBIDDEN')
  })

  it('[error AUTH_STALE_COORDINATOR] the Coordinator carrying a Coordinator Epoch never issued', async () => {
    const w = await fenced()
    const built = await offerNew(w)
    await expectRefused(w, () => w.as.coordinator.resend(resigned(w, 'coordinator', built, (c) => void (c['coordinatorEpoch'] = 3))), 'AUTH_STALE_COORDINATOR')
  })

  it('a Coordinator acting as a plain member needs no Coordinator Epoch', async () => {
    const w = await fenced()
    const built = w.as.coordinator.build('message.post', { messageId: 'urn:weft:test:message:plain', conversationId: mainConversation(w), content: text('Status: on track.') })
    const receipt = await w.as.coordinator.resend(resigned(w, 'coordinator', built, omit('coordinator')))
    expect(receipt.events.map((e) => e.kind)).toEqual(['message.posted'])
    expect(await codeOf(w.as.coordinator.resend(resigned(w, 'coordinator', built, (c) => void (c['coordinatorEpoch'] = 1))))).toBe('AUTH_STALE_COORDINATOR')
  })
})
