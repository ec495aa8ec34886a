/**
 * The Coordinator against a real Group Authority and reference Workers (§7.2, §10.3, §11.5,
 * §13.2, §7.3): offers in dependency order to capable candidates, Evidence review with accept
 * and reject, re-offer after an unaccepted offer, reassignment after a lapsed lease under a
 * higher Ownership Epoch, submission and a change round, and replacement by a second instance
 * under a higher Coordinator Epoch.
 */
import { ProtocolError } from '@weft/codec'
import type { EventPayload } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { requestChangesOnce, approveAll } from '../src/demo/owner.js'
import { deliverPatch, GROUP, idOf, stateOf, testPlan, testStage, testWorld, until, workIdOf, type TestWorld } from './world.js'

function kinds(w: TestWorld, workItemId: string): string[] {
  return w.authority
    .events(GROUP)
    .filter((e) => (e.payload as { workItemId?: string }).workItemId === workItemId)
    .map((e) => e.kind)
}

function offersOf(w: TestWorld, key: string): EventPayload<'work.offer.created'>[] {
  return w.authority
    .events(GROUP)
    .filter((e) => e.kind === 'work.offer.created' && (e.payload as { workItemId: string }).workItemId === workIdOf(key))
    .map((e) => e.payload as EventPayload<'work.offer.created'>)
}

describe('createCoordinator', () => {
  it('offers each WorkItem only once its dependencies are verified, reviews the Evidence and submits the Mission', async () => {
    const plan = testPlan([testStage('a'), testStage('b', { dependsOn: ['a'] })])
    const w = await testWorld({ plan, executors: { w1: (_item, ctx) => deliverPatch(ctx) } })
    await until(w, () => stateOf(w, 'a') !== undefined && stateOf(w, 'b') !== undefined)
    // §10.4: both are authorized as a graph; only the one without dependencies is offered.
    expect(w.authority.group(GROUP)!.workItems.get(workIdOf('b'))!.dependencyIds).toEqual([workIdOf('a')])
    expect(offersOf(w, 'b')).toEqual([])
    await until(w, () => w.authority.group(GROUP)?.mission.state === 'approved')
    const [offerA] = offersOf(w, 'a')
    // §10.3: sequential offer to the best candidate with a structured selection basis.
    expect(offerA?.candidateAgentIds).toHaveLength(1)
    expect(offerA?.selectionBasis).toMatchObject({ requiredCapabilities: [{ id: 'weft.demo.implement' }], authorizationEligible: true })
    expect(offerA?.selectionBasis.policyRulesApplied).toContain('sequential-offer')
    const sequenceOf = (kind: string, id: string): number => w.authority.events(GROUP).find((e) => e.kind === kind && (e.payload as { workItemId?: string }).workItemId === id)!.sequence!
    expect(sequenceOf('work.offer.created', workIdOf('b'))).toBeGreaterThan(sequenceOf('work.result.accepted', workIdOf('a')))
    // §13.2: the review Evidence is the Coordinator's own, covering what the submission lacked.
    const accepted = w.authority.events(GROUP).filter((e) => e.kind === 'work.result.accepted')
    expect(accepted).toHaveLength(2)
    const review = (accepted[0]!.payload as EventPayload<'work.result.accepted'>).evidence
    expect(review.every((e) => e.generatedBy.id === idOf('atlas') && e.result === 'passed')).toBe(true)
    // The plan's test check backs unit-tests-pass; schema_validation is what the submission lacked for patch-applies.
    expect(review.map((e) => [e.type, e.criterionIds])).toEqual([
      ['deterministic_test', ['unit-tests-pass']],
      ['schema_validation', ['patch-applies']],
    ])
    expect(w.coordinator.status()).toBe('approved')
    expect(w.coordinator.decisions().map((d) => d.kind)).toEqual(['offer', 'accept_result', 'offer', 'accept_result', 'submit'])
    expect(w.authority.replayState()).toEqual(w.authority.state)
  })

  it('fails a submission whose Evidence does not hold up and offers it to another candidate', async () => {
    // w1 claims a passing test run, but its report shows failures: the plan's deterministic check catches it.
    const w = await testWorld({
      plan: testPlan([testStage('a')]),
      executors: { w1: (_item, ctx) => deliverPatch(ctx, { passed: 1, failed: 2 }), w2: (_item, ctx) => deliverPatch(ctx) },
    })
    await until(w, () => stateOf(w, 'a') === 'verified')
    expect(kinds(w, workIdOf('a'))).toContain('work.failed')
    const failed = w.authority.events(GROUP).find((e) => e.kind === 'work.failed')!.payload as EventPayload<'work.failed'>
    expect(failed.evidence[0]).toMatchObject({ type: 'failure_report', result: 'failed', criterionIds: ['unit-tests-pass'] })
    expect(failed.reason).toContain('the unit test report shows 1 passed and 2 failed')
    // The failed owner goes last: the new offer names w2, whose result is accepted under a new Ownership Epoch.
    expect(offersOf(w, 'a').map((o) => o.candidateAgentIds)).toEqual([[idOf('w1')], [idOf('w2')]])
    expect(w.authority.group(GROUP)!.workItems.get(workIdOf('a'))!.doc.owner).toMatchObject({ agentId: idOf('w2'), ownershipEpoch: 2 })
    expect(w.coordinator.decisions().map((d) => d.kind)).toEqual(['offer', 'reject_result', 'offer', 'accept_result', 'submit'])
  })

  it('rejects Artifacts whose stored bytes no longer match their manifest (§13.1 integrity)', async () => {
    let tampered = false
    const w = await testWorld({
      plan: testPlan([testStage('a')]),
      executors: {
        w1: async (_item, ctx) => {
          const result = await deliverPatch(ctx)
          if (!tampered) {
            // Storage corrupts the first attempt's patch after it was published.
            const hash = (result.artifacts[0] as { contentHash: string }).contentHash
            w.blobs.set(hash, new TextEncoder().encode('something else'))
            tampered = true
          }
          return result
        },
        w2: (_item, ctx) => deliverPatch(ctx, { passed: 5, failed: 0 }),
      },
    })
    await until(w, () => stateOf(w, 'a') === 'verified')
    const failed = w.authority.events(GROUP).find((e) => e.kind === 'work.failed')!.payload as EventPayload<'work.failed'>
    expect(failed.reason).toMatch(/integrity: .* cannot be retrieved|integrity: the stored bytes/)
  })

  it('offers again to the next candidate when an offer expires unaccepted (§10.3: declines are local)', async () => {
    // w1 expects a week per WorkItem: its admission control declines the two-day deadline, and no Command says so.
    const w = await testWorld({
      plan: testPlan([testStage('a')]),
      executors: { w1: { run: (_i, ctx) => deliverPatch(ctx), expectedDurationMs: 7 * 86_400_000 }, w2: (_i, ctx) => deliverPatch(ctx) },
      offerSeconds: 120,
    })
    await until(w, () => stateOf(w, 'a') === 'verified')
    expect(w.workers.get('w1')!.decisions()).toMatchObject([{ decision: 'declined', reason: 'deadline' }])
    const offers = offersOf(w, 'a')
    expect(offers.map((o) => o.candidateAgentIds)).toEqual([[idOf('w1')], [idOf('w2')]])
    // The second offer came only after the first expired.
    const created = w.authority
      .events(GROUP)
      .filter((e) => e.kind === 'work.offer.created')
      .map((e) => Date.parse(e.occurredAt))
    expect(created[1]! - created[0]!).toBeGreaterThanOrEqual(120_000)
  })

  it('reassigns after the owner lets its lease lapse; the new owner holds a higher Ownership Epoch (§11.5)', async () => {
    let started = 0
    const w = await testWorld({
      plan: testPlan([testStage('a')]),
      executors: {
        w1: async (_item, ctx) => {
          started++
          // The runtime "crashes" mid-work: it never returns and never ticks again.
          await new Promise<never>(() => {})
          return deliverPatch(ctx)
        },
        w2: (_item, ctx) => deliverPatch(ctx),
      },
    })
    await until(w, () => stateOf(w, 'a') === 'active')
    expect(started).toBe(1)
    w.dead.add('w1')
    await until(w, () => stateOf(w, 'a') === 'verified', 400)
    const offers = offersOf(w, 'a')
    expect(offers.map((o) => o.candidateAgentIds)).toEqual([[idOf('w1')], [idOf('w2')]])
    // §10.2: the offer over the lapsed owner fenced its epoch first.
    expect(offers[1]?.fencedOwnershipEpoch).toBe(1)
    expect(offers[1]?.selectionBasis.policyRulesApplied).toContain('lapsed-owner-fenced')
    expect(w.authority.group(GROUP)!.workItems.get(workIdOf('a'))!.doc.owner).toMatchObject({ agentId: idOf('w2'), ownershipEpoch: 2 })
    expect(w.coordinator.decisions().map((d) => d.kind)).toContain('reassign')
  })

  it('plans the corrective stages of a change request and submits again (§7.3)', async () => {
    const plan = testPlan([testStage('a')], (round) => [testStage(`fix-${round}`)])
    const w = await testWorld({
      plan,
      executors: { w1: (_i, ctx) => deliverPatch(ctx) },
      decide: requestChangesOnce({ 'urn:weft:test:mission:shop': { comments: 'Handle refunds too.', conditions: ['Refunds are retried.'] } }, approveAll()),
    })
    await until(w, () => w.authority.group(GROUP)?.mission.state === 'approved', 400)
    expect(stateOf(w, 'fix-1')).toBe('verified')
    const decisions = w.owner.records().map((r) => [r.decision, r.missionRevision])
    expect(decisions.map((d) => d[0])).toEqual(['changes_requested', 'approved'])
    // The second submission carries both rounds' Artifacts and a later revision.
    expect(decisions[1]![1]).toBeGreaterThan(decisions[0]![1] as number)
    expect(w.coordinator.stages().map((s) => s.key)).toEqual(['a', 'fix-1'])
  })

  it('is replaced by a second instance under a higher Coordinator Epoch; the old one stands down and is refused', async () => {
    const plan = testPlan([testStage('a'), testStage('b', { dependsOn: ['a'] })])
    const w = await testWorld({ plan, executors: { w1: (_i, ctx) => deliverPatch(ctx) } })
    await until(w, () => stateOf(w, 'a') === 'verified')
    const next = w.coordinatorFor('atlas-2')
    w.extra.push(next)
    await next.tick()
    expect(next.status()).toBe('standby')
    // §7.2: the MissionOwner appoints the replacement with the outgoing Coordinator's signed Context Package.
    const pkg = w.coordinator.handover()
    expect(pkg.sourceEventRange.toSequence).toBe(w.authority.group(GROUP)!.head)
    await w.owner.appointCoordinator(GROUP, idOf('atlas-2'), pkg, 'The first Coordinator is being retired.')
    expect(w.authority.group(GROUP)!.mission.coordinator).toMatchObject({ agentId: idOf('atlas-2'), coordinatorEpoch: 2 })
    await until(w, () => w.authority.group(GROUP)?.mission.state === 'approved', 400)
    expect(w.coordinator.status()).toBe('replaced')
    expect(next.status()).toBe('approved')
    // The replacement reconciled from the log: b was already offered, so it did not offer it again.
    expect(offersOf(w, 'b')).toHaveLength(1)
    expect(next.decisions().map((d) => [d.kind, d.workItemId])).toEqual([
      ['accept_result', workIdOf('b')],
      ['submit', undefined],
    ])
    expect(w.authority.events(GROUP).find((e) => e.kind === 'mission.submitted_for_approval')?.actor.id).toBe(idOf('atlas-2'))
    // The old instance's Commands are refused: its Membership ended with its Coordinator Epoch.
    const old = w.coordinator.client
    old.epochs.setMembership(GROUP, 1)
    old.epochs.setCoordinator(GROUP, 1)
    const refused = await old.missionRenewCoordinator({ leaseSeconds: 600 }).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(refused).toBeInstanceOf(ProtocolError)
    expect((refused as ProtocolError).code).toBe('MEMBERSHIP_REQUIRED')
    expect(w.authority.replayState()).toEqual(w.authority.state)
  })
})
