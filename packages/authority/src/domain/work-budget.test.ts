import type { ResourceBudget, UsageDelta } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { seedActiveItem } from '@weft/testkit/artifacts'
import { accept, activate, authorize, checkpointOf, exec, failure, item, offer, rejection, start, submit, wid, world, type Running, type World } from '../../test/fixtures-work.js'
import { SELECTION } from '@weft/testkit/documents'
import { cast, contract, evidence } from '@weft/testkit/fixtures'
import { seedGroup } from '../../test/fixtures-state.js'
import type { AuthorityState, GroupState, WorkItemRecord } from '../model.js'
import {
  budgetLevels,
  committedUnder,
  limitsOf,
  missionUsageOf,
  recordUsage,
  remainingBudget,
  requireNotExhausted,
  requireUsageFits,
  settleReservations,
  usageAsBudget,
  usageOf,
} from './work-budget.js'
import { zeroUsage } from './budget-limits.js'

const USAGE = 'ext.missionweaveprotocol.core.resource_usage_record'

/** A budget in USD with `toolCalls` tool calls and generous money and tokens. */
function calls(toolCalls: number, extra: Partial<ResourceBudget> = {}): ResourceBudget {
  return { currency: 'USD', financialLimit: 10, modelTokenLimit: 10_000, toolCallLimit: toolCalls, ...extra }
}

/** The owner `who` charges `usageDelta` to WorkItem `id` under `r`. */
function charge(w: World, id: string, r: Running, usageDelta: UsageDelta, who = cast.worker1) {
  return exec(w, USAGE, { workItemId: id, ownershipEpoch: r.epoch, executionLeaseId: r.leaseId, usageDelta }, who)
}

function chargeRefusal(w: World, id: string, r: Running, usageDelta: UsageDelta, who = cast.worker1) {
  return rejection(w, USAGE, { workItemId: id, ownershipEpoch: r.epoch, executionLeaseId: r.leaseId, usageDelta }, who)
}

/** The owner checkpoints, keeping ownership for `seconds`. */
function checkpoint(w: World, id: string, r: Running, seconds = 60, who = cast.worker1) {
  return exec(w, 'work.checkpoint', { workItemId: id, ownershipEpoch: r.epoch, executionLeaseId: r.leaseId, checkpoint: checkpointOf(w), resumeWithinSeconds: seconds }, who)
}

/** The Coordinator offers WorkItem `id` to `who` with a corrected contract carrying `budget` (§10.1). */
function escalate(w: World, id: string, budget: ResourceBudget, who = cast.worker1) {
  const payload = { workItemId: id, candidateAgentIds: [who.actor.id], selectionBasis: SELECTION, offerExpiresInSeconds: 600, contract: { ...item(w, id).doc.contract, budget } }
  return { payload, run: () => exec(w, 'work.offer', payload, cast.coordinator) }
}

describe('amounts (§12)', () => {
  it('counts money in microunits and turns a usage vector back into a budget', () => {
    expect(limitsOf({ currency: 'USD', financialLimit: 2.5, toolCallLimit: 3 })).toEqual({ financialMicrounits: 2_500_000, toolCalls: 3 })
    const usage = { ...zeroUsage(), financialMicrounits: 1_250_000, modelTokens: 7 }
    expect(limitsOf(usageAsBudget(usage, 'USD'))).toEqual(usage)
    expect(usageAsBudget(usage, undefined)).not.toHaveProperty('financialLimit')
  })
})

describe('exhaustion pauses the affected work (§12)', () => {
  it('refuses further charges in any dimension and a new start once a limit is reached, but not for a zero limit never charged', () => {
    const w = world()
    const r = activate(w, wid('a'), cast.worker1, { budget: calls(5, { externalSideEffectLimit: 0 }) })
    charge(w, wid('a'), r, { toolCalls: 4, modelTokens: 10 })
    // A zero limit forbids the dimension; it pauses nothing.
    expect(chargeRefusal(w, wid('a'), r, { externalActions: 1 })).toMatchObject({ code: 'BUDGET_EXCEEDED', details: { dimension: 'externalActions', limit: 0 } })
    const [reached] = charge(w, wid('a'), r, { toolCalls: 1 })
    expect(reached?.payload).toMatchObject({ cumulativeUsage: { toolCalls: 5, modelTokens: 10 }, remainingBudget: { toolCalls: 0, externalActions: 0, modelTokens: 9_990 } })
    expect(chargeRefusal(w, wid('a'), r, { modelTokens: 1 })).toMatchObject({
      code: 'BUDGET_EXCEEDED',
      details: { scope: `WorkItem ${wid('a')}`, dimension: 'toolCalls', limit: 5, used: 5, exhausted: true },
    })
    expect(usageOf(item(w, wid('a'))).own).toMatchObject({ toolCalls: 5, modelTokens: 10 })
    // Pausing leaves the owner its checkpoint; the start that would resume is refused.
    checkpoint(w, wid('a'), r)
    expect(rejection(w, 'work.start', { workItemId: wid('a'), ownershipEpoch: r.epoch, executionLeaseSeconds: 600 }, cast.worker1)).toMatchObject({
      code: 'BUDGET_EXCEEDED',
      details: { exhausted: true },
    })
  })

  it('is escalated by work.offer with a corrected contract whose budget fits what the Mission has left; an unchanged budget stays paused', () => {
    const w = world()
    const r = activate(w, wid('a'), cast.worker1, { budget: calls(5) })
    authorize(w, wid('b'), { budget: calls(9_990) })
    charge(w, wid('a'), r, { toolCalls: 5 })
    checkpoint(w, wid('a'), r, 60)
    // §10.2: the paused owner is live until its resume bound, so nobody may re-offer yet.
    expect(rejection(w, 'work.offer', escalate(w, wid('a'), calls(10)).payload, cast.coordinator).code).toBe('INVALID_STATE_TRANSITION')
    w.clock.advance(61)
    // A re-offer without a larger budget leaves the item paused for the next owner too.
    offer(w, wid('a'), [cast.worker2])
    accept(w, wid('a'), cast.worker2)
    expect(rejection(w, 'work.start', { workItemId: wid('a'), ownershipEpoch: 2, executionLeaseSeconds: 600 }, cast.worker2)).toMatchObject({ code: 'BUDGET_EXCEEDED', details: { exhausted: true } })
    w.clock.advance(3601)
    // Mission 10,000 tool calls: b reserves 9,990, so a may grow to 10 but not 11.
    expect(rejection(w, 'work.offer', escalate(w, wid('a'), calls(11)).payload, cast.coordinator).code).toBe('BUDGET_EXCEEDED')
    const events = escalate(w, wid('a'), calls(10)).run()
    expect(events.map((e) => e.kind)).toEqual(['work.contract.revised', 'work.offer.created'])
    accept(w, wid('a'))
    const resumed = start(w, wid('a'))
    const [recorded] = charge(w, wid('a'), resumed, { toolCalls: 4 })
    expect(recorded?.payload).toMatchObject({ cumulativeUsage: { toolCalls: 9 }, remainingBudget: { toolCalls: 1 } })
  })

  it('an exhausted parent WorkItem pauses its children until the parent budget is raised', () => {
    const w = world()
    const p = activate(w, wid('p'), cast.worker1, { budget: calls(10) })
    exec(w, 'work.authorize', { workItemId: wid('c'), contract: contract({ budget: calls(6) }), parentWorkItemId: wid('p') }, cast.coordinator)
    offer(w, wid('c'), [cast.worker2])
    accept(w, wid('c'), cast.worker2)
    const c = start(w, wid('c'), cast.worker2)
    charge(w, wid('p'), p, { toolCalls: 5 })
    expect(chargeRefusal(w, wid('c'), c, { toolCalls: 6 }, cast.worker2)).toMatchObject({ code: 'BUDGET_EXCEEDED', details: { scope: `WorkItem ${wid('p')}`, used: 5, delta: 6 } })
    charge(w, wid('c'), c, { toolCalls: 5 }, cast.worker2)
    // The child still has one tool call of its own, but its parent is used up.
    expect(chargeRefusal(w, wid('c'), c, { modelTokens: 1 }, cast.worker2)).toMatchObject({ details: { scope: `WorkItem ${wid('p')}`, exhausted: true } })
    checkpoint(w, wid('p'), p, 60)
    w.clock.advance(61)
    escalate(w, wid('p'), calls(20)).run()
    charge(w, wid('c'), c, { toolCalls: 1 }, cast.worker2)
    expect(usageOf(item(w, wid('p'))).subtree.toolCalls).toBe(11)
  })
})

describe('reservations (§12)', () => {
  it('a cancelled WorkItem keeps only what it consumed, so replacement work is not starved', () => {
    const w = world()
    const r = activate(w, wid('a'), cast.worker1, { budget: calls(6_000) })
    charge(w, wid('a'), r, { toolCalls: 100 })
    expect(rejection(w, 'work.authorize', { workItemId: wid('b'), contract: contract({ budget: calls(9_900) }) }, cast.coordinator).code).toBe('BUDGET_EXCEEDED')
    exec(w, 'work.cancel', { workItemId: wid('a'), reason: 'Descoped.' }, cast.coordinator)
    expect(limitsOf(item(w, wid('a')).reservedBudget)).toMatchObject({ toolCalls: 100, modelTokens: 0 })
    authorize(w, wid('b'), { budget: calls(9_900) })
    expect(rejection(w, 'work.authorize', { workItemId: wid('c'), contract: contract({ budget: calls(1) }) }, cast.coordinator).code).toBe('BUDGET_EXCEEDED')
  })

  it('a failed WorkItem gives its budget back until it is offered again; a verified one keeps what it consumed', () => {
    const w = world()
    authorize(w, wid('f'), { budget: calls(4_000) })
    exec(w, 'work.fail', { workItemId: wid('f'), reason: 'Not feasible.', evidence: [failure(w, wid('f'))] }, cast.coordinator)
    expect(limitsOf(item(w, wid('f')).reservedBudget).toolCalls).toBe(0)
    offer(w, wid('f'))
    expect(item(w, wid('f')).reservedBudget).toEqual(calls(4_000))
    const r = activate(w, wid('v'), cast.worker2, { budget: calls(3_000) })
    charge(w, wid('v'), r, { toolCalls: 7, financialMicrounits: 1_500_000 }, cast.worker2)
    submit(w, wid('v'), r, cast.worker2)
    exec(w, 'work.accept_result', { workItemId: wid('v'), evidence: [evidence(w.group, wid('v'), cast.reviewer)] }, cast.coordinator)
    expect(item(w, wid('v')).reservedBudget).toMatchObject({ currency: 'USD', financialLimit: 1.5, toolCallLimit: 7 })
  })

  it('an ended parent WorkItem still holds what its unfinished children reserve, then only what they consumed', () => {
    const w = world()
    authorize(w, wid('p'), { budget: calls(20) })
    exec(w, 'work.authorize', { workItemId: wid('c'), contract: contract({ budget: calls(8) }), parentWorkItemId: wid('p') }, cast.coordinator)
    offer(w, wid('c'), [cast.worker2])
    accept(w, wid('c'), cast.worker2)
    const c = start(w, wid('c'), cast.worker2)
    charge(w, wid('c'), c, { toolCalls: 3 }, cast.worker2)
    exec(w, 'work.cancel', { workItemId: wid('p'), reason: 'Replanned.' }, cast.coordinator)
    expect(limitsOf(item(w, wid('p')).reservedBudget).toolCalls).toBe(8)
    charge(w, wid('c'), c, { toolCalls: 2 }, cast.worker2)
    expect(limitsOf(item(w, wid('p')).reservedBudget).toolCalls).toBe(8)
    exec(w, 'work.cancel', { workItemId: wid('c'), reason: 'Replanned.' }, cast.coordinator)
    expect(limitsOf(item(w, wid('p')).reservedBudget).toolCalls).toBe(5)
  })

  it('an ended WorkItem never keeps more than its own budget', () => {
    const w = world()
    const p = activate(w, wid('p'), cast.worker1, { budget: calls(10) })
    charge(w, wid('p'), p, { toolCalls: 4 })
    // The child's reservation and the parent's own usage (4 + 8) together exceed the parent's 10.
    exec(w, 'work.authorize', { workItemId: wid('c'), contract: contract({ budget: calls(8) }), parentWorkItemId: wid('p') }, cast.coordinator)
    exec(w, 'work.cancel', { workItemId: wid('p'), reason: 'Replanned.' }, cast.coordinator)
    expect(limitsOf(item(w, wid('p')).reservedBudget).toolCalls).toBe(10)
  })
})

/** A root Group with active WorkItem `w` (budget 20 tool calls) promoted to a child Group whose WorkItem `c` (budget 8) is active. */
function twoGroups(childMissionCalls = 10): { state: AuthorityState; root: GroupState; child: GroupState; parent: WorkItemRecord; leaf: WorkItemRecord } {
  const w = world()
  const parent = seedActiveItem(w.group, 'w').record
  parent.doc = { ...parent.doc, contract: { ...parent.doc.contract, budget: calls(20) } }
  const child = seedGroup(w.state, 'urn:weft:test:group:child', 'urn:weft:test:mission:child')
  child.mission = { ...child.mission, budget: calls(childMissionCalls) }
  w.state.childLinks.set(child.groupId, { parentGroupId: w.group.groupId, parentWorkItemId: parent.doc.workItemId })
  const leaf = seedActiveItem(child, 'c').record
  leaf.doc = { ...leaf.doc, contract: { ...leaf.doc.contract, budget: calls(8) } }
  return { state: w.state, root: w.group, child, parent, leaf }
}

describe('the ledger over the complete ancestry (§12, §14)', () => {
  it('walks from a child Mission into the parent Group, nearest level first', () => {
    const { state, child, leaf } = twoGroups()
    expect(budgetLevels(child, leaf, state).map((l) => l.scope)).toEqual([`WorkItem ${wid('c')}`, 'Mission urn:weft:test:mission:child', `WorkItem ${wid('w')}`, 'Mission urn:weft:test:mission:one'])
    expect(budgetLevels(child, leaf).map((l) => l.scope)).toHaveLength(2)
  })

  it('books a charge on every level across Groups, and refuses one that overflows a parent Group level with nothing booked', () => {
    const { state, root, child, parent, leaf } = twoGroups(30)
    recordUsage(child, leaf, { toolCalls: 7 }, state)
    expect([usageOf(leaf).subtree.toolCalls, missionUsageOf(child).toolCalls, usageOf(parent).subtree.toolCalls, usageOf(parent).own.toolCalls, missionUsageOf(root).toolCalls]).toEqual([
      7, 7, 7, 0, 7,
    ])
    const sibling = seedActiveItem(child, 'd').record
    recordUsage(child, sibling, { toolCalls: 13 }, state)
    // The child Mission (30) and the sibling's own budget (50) have room; the parent WorkItem (20) has none.
    expect(() => requireUsageFits(child, sibling, { toolCalls: 1 }, state)).toThrow(
      expect.objectContaining({ code: 'BUDGET_EXCEEDED', details: expect.objectContaining({ scope: `WorkItem ${wid('w')}`, exhausted: true }) }),
    )
    expect(() => requireNotExhausted(child, sibling)).not.toThrow()
    expect(remainingBudget(child, leaf, state).toolCalls).toBe(0)
    expect(remainingBudget(child, leaf).toolCalls).toBe(1)
    expect([missionUsageOf(root).toolCalls, usageOf(parent).subtree.toolCalls]).toEqual([20, 20])
  })

  it('refuses an overflow before anything is booked and reports the least any level has left', () => {
    const { state, root, child, parent, leaf } = twoGroups()
    expect(() => requireUsageFits(child, leaf, { toolCalls: 9 }, state)).toThrow(
      expect.objectContaining({ code: 'BUDGET_EXCEEDED', details: expect.objectContaining({ scope: `WorkItem ${wid('c')}` }) }),
    )
    expect(() => requireUsageFits(child, leaf, { toolCalls: 0 }, state)).toThrow(expect.objectContaining({ code: 'INVALID_COMMAND' }))
    expect(requireUsageFits(child, leaf, { toolCalls: 2 }, state)).toMatchObject({ cumulativeUsage: { toolCalls: 2 }, remainingBudget: { toolCalls: 6 } })
    expect([usageOf(leaf).subtree, missionUsageOf(child), usageOf(parent).subtree, missionUsageOf(root)]).toEqual([zeroUsage(), zeroUsage(), zeroUsage(), zeroUsage()])
  })

  it('counts a running child Mission’s whole budget against its parent WorkItem, an ended one only its usage', () => {
    const { state, root, child, parent, leaf } = twoGroups()
    recordUsage(child, leaf, { toolCalls: 3 }, state)
    expect(committedUnder(root, parent, state).toolCalls).toBe(10)
    expect(committedUnder(root, parent).toolCalls).toBe(0)
    child.mission = { ...child.mission, state: 'cancelled' }
    expect(committedUnder(root, parent, state).toolCalls).toBe(3)
    parent.doc = { ...parent.doc, state: 'cancelled' }
    settleReservations(root, parent, state)
    expect(limitsOf(parent.reservedBudget).toolCalls).toBe(3)
  })
})
