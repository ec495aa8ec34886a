/**
 * `authority.budgetLedger(groupId, workItemId?)` (§12): the six-dimensional ledger of a Mission or a
 * WorkItem, read from the folded state. Each dimension names its limit and where the bound comes
 * from (listed on the budget, inherited from the nearest budget above that lists it, or unlimited),
 * and what is reserved, used and left; the figures agree with the ledger the charges are checked
 * against and with what the `resource_usage_recorded` Events report.
 */
import type { ResourceBudget } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { budgetLedgerOf } from '../src/domain/budget-ledger.js'
import { contract } from '@weft/testkit/fixtures'
import {
  accept,
  authorize,
  boot,
  CHILD_CONTRACT,
  coordinatorOf,
  createWorld,
  enrol,
  MEMBERS,
  offer,
  openMission,
  ownerName,
  payloadOf,
  promote,
  runningOf,
  start,
  wid,
  type World,
} from '@weft/testkit/world'

/** A Mission budget limiting every dimension but external actions, which no budget above limits. */
const MISSION: ResourceBudget = { currency: 'USD', financialLimit: 100, modelTokenLimit: 10_000, toolCallLimit: 100, computeSecondsLimit: 1000, wallClockSecondsLimit: 1000 }

/**
 * Root Mission ({@link MISSION}) with top-level WorkItem P (2000 tokens, 20 tool calls; the rest
 * inherited) and its child C (5 tool calls) running for worker1, charged 300 tokens and 2 tool calls,
 * and top-level WorkItem S (1 USD, 50 tool calls) still open.
 */
async function world(): Promise<World> {
  const w = createWorld()
  await boot(w)
  await openMission(w, { budget: MISSION })
  await enrol(w, MEMBERS)
  await authorize(w, wid('p'), { budget: { modelTokenLimit: 2000, toolCallLimit: 20 } })
  await authorize(w, wid('s'), { budget: { currency: 'USD', financialLimit: 1, toolCallLimit: 50 } })
  await coordinatorOf(w).workAuthorize({ workItemId: wid('c'), contract: contract({ budget: { toolCallLimit: 5 } }), parentWorkItemId: wid('p') })
  await offer(w, wid('c'), ['worker1'])
  await accept(w, wid('c'), 'worker1')
  await start(w, wid('c'))
  const { epoch, leaseId } = runningOf(w, wid('c'))
  await w.as.worker1.coreResourceUsageRecord({ workItemId: wid('c'), ownershipEpoch: epoch, executionLeaseId: leaseId, usageDelta: { modelTokens: 300, toolCalls: 2 } })
  return w
}

describe('authority.budgetLedger (§12)', () => {
  it('shows a Mission’s own limits, what its top-level WorkItems reserve, and what was used and is left', async () => {
    const w = await world()
    const ledger = w.authority.budgetLedger(w.groupId)!
    expect(ledger).toMatchObject({ scope: 'mission', groupId: w.groupId, missionId: w.group().missionId, currency: 'USD' })
    expect(ledger).not.toHaveProperty('workItemId')
    expect(ledger.dimensions.toolCalls).toEqual({ limit: 100, source: 'own', reserved: 70, used: 2, remaining: 98 })
    // P lists 2000 model tokens, which it reserves; S inherits them and reserves nothing.
    expect(ledger.dimensions.modelTokens).toEqual({ limit: 10_000, source: 'own', reserved: 2000, used: 300, remaining: 9700 })
    // P inherits money and reserves nothing of it; S reserves its 1 USD.
    expect(ledger.dimensions.financialMicrounits).toEqual({ limit: 100_000_000, source: 'own', reserved: 1_000_000, used: 0, remaining: 100_000_000 })
    expect(ledger.dimensions.externalActions).toEqual({ limit: null, source: 'unlimited', reserved: 0, used: 0, remaining: null })
  })

  it('tells a WorkItem’s own limits from those it inherits, naming the budget it inherits from', async () => {
    const w = await world()
    const c = w.authority.budgetLedger(w.groupId, wid('c'))!
    expect(c).toMatchObject({ scope: 'workItem', groupId: w.groupId, workItemId: wid('c'), currency: 'USD' })
    expect(c.dimensions.toolCalls).toEqual({ limit: 5, source: 'own', reserved: 0, used: 2, remaining: 3 })
    const fromP = { scope: 'workItem', groupId: w.groupId, missionId: w.group().missionId, workItemId: wid('p') }
    expect(c.dimensions.modelTokens).toEqual({ limit: null, source: 'inherited', inheritedFrom: fromP, reserved: 0, used: 300, remaining: 1700 })
    const fromMission = { scope: 'mission', groupId: w.groupId, missionId: w.group().missionId }
    expect(c.dimensions.computeSeconds).toEqual({ limit: null, source: 'inherited', inheritedFrom: fromMission, reserved: 0, used: 0, remaining: 1000 })
    expect(c.dimensions.externalActions).toEqual({ limit: null, source: 'unlimited', reserved: 0, used: 0, remaining: null })
    const p = w.authority.budgetLedger(w.groupId, wid('p'))!
    expect(p.dimensions.toolCalls).toEqual({ limit: 20, source: 'own', reserved: 5, used: 2, remaining: 18 })
    // The remaining amounts are the ones the charge's Event reported.
    const { epoch, leaseId } = runningOf(w, wid('c'))
    const receipt = await w.as[ownerName(w, wid('c'))].coreResourceUsageRecord({ workItemId: wid('c'), ownershipEpoch: epoch, executionLeaseId: leaseId, usageDelta: { computeSeconds: 10 } })
    const reported = payloadOf(receipt, 'ext.missionweaveprotocol.core.resource_usage_recorded').remainingBudget
    const after = w.authority.budgetLedger(w.groupId, wid('c'))!
    for (const [d, left] of Object.entries(reported)) expect([d, after.dimensions[d as keyof typeof after.dimensions].remaining]).toEqual([d, left])
  })

  it('follows a child Mission’s inherited dimensions into the parent Group (§14)', async () => {
    const w = await world()
    const s = wid('s')
    await offer(w, s, ['worker3'])
    await accept(w, s, 'worker3')
    const { child } = await promote(w, s, { name: 'ledger', overrides: { budget: { toolCallLimit: 10 } } })
    await authorize(child, wid('leaf'), { ...CHILD_CONTRACT, budget: { toolCallLimit: 4 } })
    const mission = w.authority.budgetLedger(child.groupId)!
    expect(mission.dimensions.toolCalls).toEqual({ limit: 10, source: 'own', reserved: 4, used: 0, remaining: 10 })
    expect(mission.dimensions.financialMicrounits).toMatchObject({ source: 'inherited', inheritedFrom: { scope: 'workItem', groupId: w.groupId, workItemId: s }, remaining: 1_000_000 })
    expect(mission.dimensions.modelTokens).toMatchObject({ source: 'inherited', inheritedFrom: { scope: 'mission', groupId: w.groupId }, remaining: 9700 })
    expect(mission.currency).toBe('USD')
    // The parent WorkItem holds the running child Mission's listed budget.
    expect(w.authority.budgetLedger(w.groupId, s)!.dimensions.toolCalls).toMatchObject({ limit: 50, reserved: 10 })
  })

  it('answers undefined for an unknown Group or WorkItem, and the same figures after a replay of the log', async () => {
    const w = await world()
    expect(w.authority.budgetLedger('urn:weft:test:group:none')).toBeUndefined()
    expect(w.authority.budgetLedger(w.groupId, wid('none'))).toBeUndefined()
    const replayed = w.authority.replayState()
    for (const id of [undefined, wid('p'), wid('c'), wid('s')]) expect(budgetLedgerOf(replayed, w.groupId, id)).toEqual(w.authority.budgetLedger(w.groupId, id))
  })
})
