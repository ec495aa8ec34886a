/**
 * Budgets that list only some dimensions (§4 invariant 11, §10.1 "as applicable", §12, §14), through
 * real signed Commands. The Resource Budget schema accepts any non-empty subset of the six limits; a
 * dimension a Work Contract, child Mission or Grant target leaves out is inherited: bounded by what
 * its ancestry has left, because every charge is checked against the complete ancestry. Only a
 * listed limit above what its parent has is refused.
 */
import type { Receipt } from '@weft/client'
import type { ResourceBudget, UsageDelta } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { usageOf } from '../src/domain/work-budget.js'
import { refusal, cast, contract, GROUP } from '@weft/testkit/fixtures'
import { FULL_BUDGET } from './fixtures-work.js'
import { SELECTION } from '@weft/testkit/documents'
import {
  accept,
  authorize,
  boot,
  CHILD_CONTRACT,
  codeOf,
  coordinatorOf,
  createWorld,
  enrol,
  expectRefused,
  failWork,
  MEMBERS,
  offer,
  openMission,
  ownerName,
  payloadOf,
  promote,
  runningOf,
  start,
  wid,
  type Who,
  type World,
} from '@weft/testkit/world'

const RECORDED = 'ext.missionweaveprotocol.core.resource_usage_recorded'

/** A Mission budget limiting all six dimensions. */
const SIX: ResourceBudget = {
  currency: 'USD',
  financialLimit: 100,
  modelTokenLimit: 10_000,
  toolCallLimit: 100,
  computeSecondsLimit: 1000,
  wallClockSecondsLimit: 1000,
  externalSideEffectLimit: 10,
}

/** A world whose root Mission limits all six dimensions ({@link SIX}). */
async function sixWorld(): Promise<World> {
  const w = createWorld()
  await boot(w)
  await openMission(w, { budget: SIX })
  await enrol(w, MEMBERS)
  return w
}

/** The owner of WorkItem `id` charges `usageDelta` under its current Execution Lease (§12). */
function charge(w: World, id: string, usageDelta: UsageDelta): Promise<Receipt> {
  const { epoch, leaseId } = runningOf(w, id)
  return w.as[ownerName(w, id)].coreResourceUsageRecord({ workItemId: id, ownershipEpoch: epoch, executionLeaseId: leaseId, usageDelta })
}

/** Authorizes WorkItem `id` with `budget` (and `overrides`), offers it to `who`, who accepts and starts it. */
async function running(w: World, id: string, budget: ResourceBudget, who: Who = 'worker1', overrides: Parameters<typeof contract>[0] = {}): Promise<void> {
  await authorize(w, id, { ...overrides, budget })
  await offer(w, id, [who])
  await accept(w, id, who)
  await start(w, id)
}

describe('a budget listing some dimensions inherits the others (§4 invariant 11, §12)', () => {
  it('accepts a Work Contract that limits only model tokens under a Mission limiting all six [command work.authorize] [event work.authorized]', async () => {
    const w = await sixWorld()
    const receipt = await authorize(w, wid('tokens'), { budget: { modelTokenLimit: 1000 } })
    expect(payloadOf(receipt, 'work.authorized').workItem.contract.budget).toEqual({ modelTokenLimit: 1000 })
    // An inherited dimension reserves nothing of its own: a sibling may still take the Mission's whole tool calls.
    await authorize(w, wid('sibling'), { budget: { ...SIX, financialLimit: 50, modelTokenLimit: 9000 } })
  })

  it('refuses a listed limit above the parent’s, whether the parent lists it or inherits it [error BUDGET_EXCEEDED]', async () => {
    const w = await sixWorld()
    await expectRefused(w, () => authorize(w, wid('over'), { budget: { modelTokenLimit: 10_001 } }), 'BUDGET_EXCEEDED')
    await authorize(w, wid('parent'), { budget: { modelTokenLimit: 1000 } })
    const child = (budget: ResourceBudget) => coordinatorOf(w).workAuthorize({ workItemId: wid('child'), contract: contract({ budget }), parentWorkItemId: wid('parent') })
    // The parent lists model tokens: 1001 is above it.
    await expectRefused(w, () => child({ modelTokenLimit: 1001 }), 'BUDGET_EXCEEDED')
    // The parent inherits tool calls from the Mission, which has 100 left.
    const refused = await refusal(child({ toolCallLimit: 101 }))
    expect(refused).toMatchObject({ code: 'BUDGET_EXCEEDED', details: { dimension: 'toolCallLimit', limit: 100, requested: 101 } })
    await child({ toolCallLimit: 100 })
  })

  it('counts a WorkItem’s own usage as its own when a corrected contract lists a limit its parent inherits [command work.offer]', async () => {
    const w = await sixWorld()
    await authorize(w, wid('parent'), { budget: { modelTokenLimit: 1000 } })
    const id = wid('child')
    await coordinatorOf(w).workAuthorize({ workItemId: id, contract: contract({ budget: { modelTokenLimit: 100 } }), parentWorkItemId: wid('parent') })
    await offer(w, id, ['worker1'])
    await accept(w, id, 'worker1')
    await start(w, id)
    await charge(w, id, { toolCalls: 40 })
    await failWork(w, id)
    // The Mission has 60 tool calls left, and the 40 this WorkItem consumed count within its new limit of 100.
    const corrected = (toolCallLimit: number) =>
      coordinatorOf(w).workOffer({
        workItemId: id,
        candidateAgentIds: [cast.worker2.actor.id],
        selectionBasis: SELECTION,
        offerExpiresInSeconds: 600,
        contract: { ...w.item(id).doc.contract, budget: { modelTokenLimit: 100, toolCallLimit } },
      })
    await expectRefused(w, () => corrected(101), 'BUDGET_EXCEEDED', id)
    await corrected(100)
    expect(w.item(id).doc.contract.budget).toEqual({ modelTokenLimit: 100, toolCallLimit: 100 })
  })

  it('refuses a currency other than the one the parent inherits [error INVALID_COMMAND]', async () => {
    const w = await sixWorld()
    await authorize(w, wid('parent'), { budget: { modelTokenLimit: 1000 } })
    const child = (budget: ResourceBudget) => coordinatorOf(w).workAuthorize({ workItemId: wid('child'), contract: contract({ budget }), parentWorkItemId: wid('parent') })
    // The parent names no currency; it counts money in the Mission's USD.
    await expectRefused(w, () => child({ currency: 'EUR', financialLimit: 1 }), 'INVALID_COMMAND')
    await child({ currency: 'USD', financialLimit: 1 })
  })

  it('refuses a charge on an inherited dimension that would overflow the Mission, and applies nothing [command ext.missionweaveprotocol.core.resource_usage_record] [error BUDGET_EXCEEDED]', async () => {
    const w = await sixWorld()
    const id = wid('run')
    await running(w, id, { modelTokenLimit: 1000 })
    const before = { ...usageOf(w.item(id)).subtree }
    await expectRefused(w, () => charge(w, id, { modelTokens: 1, externalActions: 11 }), 'BUDGET_EXCEEDED', id)
    expect(usageOf(w.item(id)).subtree).toEqual(before)
    const error = await refusal(charge(w, id, { externalActions: 11 }))
    expect(error.details).toMatchObject({ scope: `Mission ${w.group().missionId}`, dimension: 'externalActions', limit: 10 })
  })

  it('reports what the ancestry has left for an inherited dimension with each charge [event ext.missionweaveprotocol.core.resource_usage_recorded]', async () => {
    const w = await sixWorld()
    const id = wid('run')
    await running(w, id, { modelTokenLimit: 1000 })
    const receipt = await charge(w, id, { modelTokens: 10, externalActions: 4 })
    expect(payloadOf(receipt, RECORDED)).toMatchObject({
      cumulativeUsage: { modelTokens: 10, externalActions: 4 },
      remainingBudget: { financialMicrounits: 100_000_000, modelTokens: 990, toolCalls: 100, computeSeconds: 1000, wallClockSeconds: 1000, externalActions: 6 },
    })
  })

  it('runs a child Mission whose budget lists only model tokens, end to end for one charge [command mission.create_child] [event mission.child.created]', async () => {
    const w = await sixWorld()
    const parent = wid('parent')
    await authorize(w, parent, { budget: { ...SIX, financialLimit: 20, modelTokenLimit: 2000, toolCallLimit: 20 } })
    await offer(w, parent, ['worker1'])
    await accept(w, parent, 'worker1')
    // A listed limit above the parent WorkItem's is still refused.
    expect(await codeOf(promote(w, parent, { name: 'big', overrides: { budget: { modelTokenLimit: 2001 } } }))).toBe('BUDGET_EXCEEDED')
    const { child, receipt } = await promote(w, parent, { name: 'tokens', overrides: { budget: { modelTokenLimit: 500 } } })
    expect(payloadOf(receipt, 'mission.child.created').budget).toEqual({ modelTokenLimit: 500 })
    const leaf = wid('leaf')
    await running(child, leaf, { toolCallLimit: 5 }, 'worker3', { deadline: CHILD_CONTRACT.deadline! })
    const charged = await charge(child, leaf, { modelTokens: 100, toolCalls: 2, computeSeconds: 30 })
    expect(charged.events.map((e) => [e.kind, e.groupId])).toEqual([[RECORDED, child.groupId]])
    expect(payloadOf(charged, RECORDED).remainingBudget).toEqual({
      financialMicrounits: 20_000_000,
      modelTokens: 400,
      toolCalls: 3,
      computeSeconds: 970,
      wallClockSeconds: 1000,
      externalActions: 10,
    })
    expect(usageOf(w.item(parent)).subtree).toMatchObject({ modelTokens: 100, toolCalls: 2, computeSeconds: 30 })
    expect(w.authority.replayState()).toEqual(w.authority.state)
  })
})

describe('Delegation Grants over budgets that inherit (§9.1)', () => {
  /** A grant of {@link FULL_BUDGET} (or `budget`) to worker3 over `target`. */
  async function grant(w: World, target: string, budget: Required<ResourceBudget> = FULL_BUDGET): Promise<Receipt> {
    return coordinatorOf(w).membershipGrantDelegation({
      grantId: 'urn:weft:test:grant:inherited',
      granteeAgentId: cast.worker3.actor.id,
      targetWorkItemId: target,
      allowedCapabilities: [SELECTION.requiredCapabilities[0]!],
      budget,
      maxDescendantDepth: 2,
      granteeMembershipEpoch: 2,
      expiresAt: '2026-07-15T12:00:00.000Z',
    })
  }

  it('grants over a target that limits only model tokens, its ceilings within what the target inherits [command membership.grant_delegation] [error BUDGET_EXCEEDED]', async () => {
    const w = await sixWorld()
    const target = wid('target')
    await authorize(w, target, { budget: { modelTokenLimit: 5000 } })
    await w.as.coordinator.membershipChange({ membershipId: `${GROUP}:membership:worker3`, member: cast.worker3.actor, role: 'work_delegate', state: 'active', scopes: ['group:read'] })
    // The target inherits external actions from the Mission, which has 10 left.
    await expectRefused(w, () => grant(w, target, { ...FULL_BUDGET, externalSideEffectLimit: 11 }), 'BUDGET_EXCEEDED')
    await grant(w, target)
  })

  it('lets delegated sub-work inherit a dimension only from a WorkItem of the Grant, whose limit the ceilings count [error WORK_CONTRACT_INCOMPLETE]', async () => {
    const w = await sixWorld()
    const target = wid('target')
    await authorize(w, target, { budget: { modelTokenLimit: 5000 } })
    await w.as.coordinator.membershipChange({ membershipId: `${GROUP}:membership:worker3`, member: cast.worker3.actor, role: 'work_delegate', state: 'active', scopes: ['group:read'] })
    await grant(w, target)
    const grantId = 'urn:weft:test:grant:inherited'
    const sub = (id: string, parent: string, budget: ResourceBudget) =>
      w.as.worker3.workAuthorize({ workItemId: wid(id), contract: contract({ budget }), parentWorkItemId: parent, delegationGrantId: grantId })
    // Below the target, a dimension left out would be bounded by the Mission, not by the Grant.
    await expectRefused(w, () => sub('a', target, { modelTokenLimit: 100 }), 'WORK_CONTRACT_INCOMPLETE')
    await sub('a', target, { ...FULL_BUDGET, modelTokenLimit: 1000 })
    // Below a WorkItem of the Grant, whose listed limits the ceilings count, it may be left out.
    await sub('b', wid('a'), { modelTokenLimit: 100 })
    expect(w.group().grants.get(grantId)?.workItemIds).toEqual(new Set([wid('a'), wid('b')]))
  })
})
