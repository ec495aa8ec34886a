/**
 * The model-based test of the Group Authority (see `model-property.test.ts`) on scripted runs:
 * one that reaches `verified` through the refusals the model predicts, and one showing that the §4
 * invariant checks of `model-world.ts` catch a log tampered with. Each step is judged on the model
 * of `model-spec.ts` and checked after it runs, as in the random runs.
 */
import type { Event } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import type { Model } from './model-spec.js'
import { fencingViolations, groupOf, ownershipViolations, sequenceViolations, type World } from './model-world.js'
import { acceptOffer, acceptResult, advance, ITEMS, NEVER_ISSUED, offer, openSession, PLAIN, renew, runModel, start, Step, submit, type OwnerParams } from './model-actions.js'

describe('the Group Authority against the §10.2 WorkItem statechart, with the §4 invariants', () => {
  it('a scripted run reaches verified through a stale submission, a lost race, an expired offer and a replaced Session', async () => {
    const knobs = PLAIN
    const owner = (p: Partial<OwnerParams> = {}): OwnerParams => ({ item: 0, who: 'owner', epoch: 'current', lease: 'current', seconds: 600, knobs, ...p })
    const script: [string, (model: Model, world: World) => Promise<void>][] = [
      ['offer to two', (m, w) => offer(m, w, { item: 0, candidates: [0, 1], seconds: 300, knobs })],
      ['worker 2 wins', (m, w) => acceptOffer(m, w, { item: 0, who: 1, seconds: 900, knobs })],
      ['worker 1 lost the race', (m, w) => acceptOffer(m, w, { item: 0, who: 0, seconds: 900, knobs })],
      ['start', (m, w) => start(m, w, owner())],
      ['expire the Execution Lease', (m, w) => advance(m, w, { item: 0, deadline: 'execution', seconds: 1 })],
      ['re-offer to worker 3', (m, w) => offer(m, w, { item: 0, candidates: [2], seconds: 60, knobs })],
      ['the offer expires', (m, w) => advance(m, w, { item: 0, deadline: 'offer', seconds: 1 })],
      ['too late', (m, w) => acceptOffer(m, w, { item: 0, who: 2, seconds: 900, knobs })],
      ['offer again', (m, w) => offer(m, w, { item: 0, candidates: [2], seconds: 600, knobs })],
      ['worker 3 accepts', (m, w) => acceptOffer(m, w, { item: 0, who: 'owner', seconds: 900, knobs })],
      ['the old owner submits under the stale epoch', (m, w) => submit(m, w, owner({ who: 1, epoch: 'stale' }))],
      ['start', (m, w) => start(m, w, owner())],
      ['a new Session requeues', (m, w) => openSession(m, w, { worker: 2 })],
      ['the old runtime renews', (m, w) => renew(m, w, owner({ knobs: { cas: 'none', staleSession: true } }))],
      ['start again', (m, w) => start(m, w, owner())],
      ['submit under the superseded lease', (m, w) => submit(m, w, owner({ lease: 'stale' }))],
      ['submit', (m, w) => submit(m, w, owner({ knobs: { cas: 'current', staleSession: false } }))],
      ['accept the result', (m, w) => acceptResult(m, w, { item: 0, knobs })],
    ]
    const world = await runModel(script.map(([label, body]) => new Step(label, body)))
    const kinds = world.authority.events(groupOf(world).groupId).map((e) => e.kind)
    expect(groupOf(world).workItems.get(ITEMS[0]!)?.doc.state).toBe('verified')
    expect(kinds.filter((k) => k === 'work.offer.accepted')).toHaveLength(2)
    expect(kinds.filter((k) => k === 'work.submitted')).toHaveLength(1)
  })

  it('the invariant checks catch a stale submission, a second current epoch and a sequence gap in a log', async () => {
    const knobs = PLAIN
    const owner: OwnerParams = { item: 0, who: 'owner', epoch: 'current', lease: 'current', seconds: 600, knobs }
    const world = await runModel(
      [
        (m: Model, w: World) => offer(m, w, { item: 0, candidates: [0], seconds: 300, knobs }),
        (m: Model, w: World) => acceptOffer(m, w, { item: 0, who: 'owner', seconds: 900, knobs }),
        (m: Model, w: World) => start(m, w, owner),
        (m: Model, w: World) => submit(m, w, owner),
      ].map((body, i) => new Step(`scripted ${i}`, body)),
    )
    const group = groupOf(world)
    const log = world.authority.events(group.groupId)
    const tampered = (kind: string, change: (payload: Record<string, unknown>) => Record<string, unknown>): Event[] =>
      log.map((e) => (e.kind === kind ? { ...e, payload: change(e.payload as Record<string, unknown>) } : e))
    expect(fencingViolations(tampered('work.submitted', (p) => ({ ...p, ownershipEpoch: 2 })))).toHaveLength(1)
    expect(fencingViolations(tampered('work.submitted', (p) => ({ ...p, executionLeaseId: NEVER_ISSUED })))).toHaveLength(1)
    expect(
      ownershipViolations(
        group,
        tampered('work.offer.accepted', (p) => ({ ...p, ownershipEpoch: 2 })),
      ),
    ).not.toEqual([])
    expect(
      sequenceViolations(
        group,
        log.filter((e) => e.sequence !== 3),
      ),
    ).not.toEqual([])
    expect([fencingViolations(log), ownershipViolations(group, log), sequenceViolations(group, log)]).toEqual([[], [], []])
  })
})
