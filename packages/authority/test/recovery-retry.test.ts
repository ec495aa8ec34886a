/**
 * The Work Contract's retry limits at the Authority (§10.2, §11.4), driven through signed Commands:
 * a re-offer of a failed WorkItem after a classified failure is a retry and must fit the contract's
 * attempts, back-off, deadline and cost; the last attempt's failure marks exhaustion; everything is
 * a fold of the log.
 */
import type { WorkContract } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { retryStatusOf } from '../src/domain/retry.js'
import { refusal, cast, contract } from '@weft/testkit/fixtures'
import { ownerFails } from '@weft/testkit/recovery'
import { accept, coordinatorOf, failWork, kinds, offer, ownerName, reach, runningOf, start, started, type World } from '@weft/testkit/world'
import { SELECTION } from '@weft/testkit/documents'

const TRANSIENT = { code: 'TRANSIENT', attempts: 1, stopped: 'retry-budget' }

/** Offers failed WorkItem `id` again with a corrected contract (§10.1): the Coordinator's escalation. */
function offerCorrected(w: World, id: string, overrides: Partial<WorkContract>) {
  return coordinatorOf(w).workOffer({ workItemId: id, candidateAgentIds: [cast.worker1.actor.id], selectionBasis: SELECTION, offerExpiresInSeconds: 600, contract: contract(overrides) })
}

/** Offers `id` again, has worker1 accept and start it: the next attempt. */
async function nextAttempt(w: World, id: string): Promise<void> {
  await offer(w, id)
  await accept(w, id)
  await start(w, id)
}

/** The retry status of `id` in the live state and in a fresh fold of the log: they must agree. */
function statusOf(w: World, id: string) {
  const live = retryStatusOf(w.item(id))
  expect(retryStatusOf(w.authority.replayState().groups.get(w.groupId)!.workItems.get(id)!)).toEqual(live)
  return live
}

describe('retry limits of the Work Contract (§11.4)', () => {
  it('a retry waits out the back-off after a retryable failure, then is offered; attempts are counted from the log [error RATE_LIMITED]', async () => {
    const w = await started()
    const id = await reach(w, 'active')
    await ownerFails(w, id, TRANSIENT)
    expect(statusOf(w, id)).toMatchObject({ attemptsUsed: 1, maxAttempts: 3, lastFailure: { code: 'TRANSIENT', permanent: false } })
    expect(statusOf(w, id).exhausted).toBeUndefined()
    const early = await refusal(offer(w, id))
    expect([early.code, early.retryable, early.details?.['retryAfterMs'], early.details?.['limit']]).toEqual(['RATE_LIMITED', true, 1000, 'backoff'])
    expect(w.item(id).doc.state).toBe('failed')
    w.clock.advance(1)
    expect(kinds((await offer(w, id)).events)).toEqual(['work.offer.created'])
    // The second failure doubles the back-off (exponential, one second base).
    await accept(w, id)
    await start(w, id)
    await ownerFails(w, id, TRANSIENT)
    w.clock.advance(1.5)
    expect((await refusal(offer(w, id))).details?.['retryAfterMs']).toBe(500)
  })

  it('the last attempt failing marks exhaustion; a further retry is BUDGET_EXCEEDED until a corrected contract allows more [error BUDGET_EXCEEDED]', async () => {
    const w = await started()
    const id = await reach(w, 'active', { contract: { retryPolicy: { maxAttempts: 2, backoff: 'fixed', maxDelay: 'PT1M', retryableFailures: ['TRANSIENT'] } } })
    await ownerFails(w, id, TRANSIENT)
    w.clock.advance(1)
    await nextAttempt(w, id)
    await ownerFails(w, id, TRANSIENT)
    expect(statusOf(w, id)).toMatchObject({ attemptsUsed: 2, maxAttempts: 2, exhausted: 'attempts' })
    w.clock.advance(60)
    const refused = await refusal(offer(w, id))
    expect([refused.code, refused.details?.['limit'], refused.details?.['attemptsUsed']]).toEqual(['BUDGET_EXCEEDED', 'attempts', 2])
    expect(kinds((await offerCorrected(w, id, { retryPolicy: { maxAttempts: 3, backoff: 'fixed', maxDelay: 'PT1M', retryableFailures: ['TRANSIENT'] } })).events)).toEqual([
      'work.contract.revised',
      'work.offer.created',
    ])
  })

  it('counts the attempts an owner reports: one failure after three local attempts exhausts a three-attempt contract', async () => {
    const w = await started()
    const id = await reach(w, 'active')
    await ownerFails(w, id, { code: 'TRANSIENT', attempts: 3, stopped: 'exhausted' })
    expect(statusOf(w, id)).toMatchObject({ attemptsUsed: 3, exhausted: 'attempts' })
    w.clock.advance(600)
    expect((await refusal(offer(w, id))).code).toBe('BUDGET_EXCEEDED')
  })

  it('a permanent failure is not retried under the same contract; a corrected contract may follow it', async () => {
    const w = await started()
    const id = await reach(w, 'active')
    await ownerFails(w, id, { code: 'INVALID_INPUT', attempts: 1, stopped: 'not_retryable' })
    expect(statusOf(w, id)).toMatchObject({ attemptsUsed: 1, exhausted: 'permanent', lastFailure: { permanent: true } })
    w.clock.advance(600)
    expect((await refusal(offer(w, id))).code).toBe('INVALID_STATE_TRANSITION')
    expect(kinds((await offerCorrected(w, id, { goal: 'Implement the feature from the corrected input.' })).events)).toEqual(['work.contract.revised', 'work.offer.created'])
  })

  it('a failure at or after the contract deadline marks exhaustion, and no retry is offered past it', async () => {
    const w = await started()
    const deadline = new Date(w.clock.nowMs + 5 * 60_000).toISOString()
    const id = await reach(w, 'active', { contract: { deadline } })
    w.clock.advance(6 * 60)
    await ownerFails(w, id, TRANSIENT)
    expect(statusOf(w, id).exhausted).toBe('deadline')
    const refused = await refusal(offer(w, id))
    expect([refused.code, refused.details?.['limit'], refused.details?.['deadline']]).toEqual(['BUDGET_EXCEEDED', 'deadline', deadline])
  })

  it('a failure with the WorkItem budget spent marks exhaustion, and a retry is refused until the budget is escalated', async () => {
    const w = await started()
    const id = await reach(w, 'active')
    const { epoch, leaseId } = runningOf(w, id)
    await w.as[ownerName(w, id)].coreResourceUsageRecord({ workItemId: id, ownershipEpoch: epoch, executionLeaseId: leaseId, usageDelta: { toolCalls: 50 } })
    await ownerFails(w, id, TRANSIENT)
    expect(statusOf(w, id).exhausted).toBe('cost')
    w.clock.advance(10)
    const refused = await refusal(offer(w, id))
    expect([refused.code, refused.details?.['exhausted']]).toEqual(['BUDGET_EXCEEDED', true])
    const budget = { currency: 'USD', financialLimit: 10, modelTokenLimit: 10000, toolCallLimit: 80 }
    expect(kinds((await offerCorrected(w, id, { budget })).events)).toEqual(['work.contract.revised', 'work.offer.created'])
  })

  it('after an unclassified failure the Coordinator decides: offered again at once, one attempt counted, nothing exhausted', async () => {
    const w = await started()
    const id = await reach(w, 'open')
    await failWork(w, id)
    expect(statusOf(w, id)).toMatchObject({ attemptsUsed: 1, lastFailure: { permanent: false } })
    expect(statusOf(w, id).exhausted).toBeUndefined()
    expect(statusOf(w, id).retryNotBeforeMs).toBeUndefined()
    expect(kinds((await offer(w, id)).events)).toEqual(['work.offer.created'])
  })
})
