/**
 * The §12 budget ledger over the complete ancestry, through real signed Commands: a charge in a
 * child Mission is one Event in the child Group that the parent Group's ledger folds in; an
 * overflow at any level of any Group refuses the whole charge; exhaustion pauses the work below
 * the exhausted level until an escalation; and a property over random charges and cancellations
 * on a small tree checks the ledger against a model and against the Events of every Group.
 */
import type { Receipt } from '@weft/client'
import type { ErrorCode } from '@weft/codec'
import type { ProtocolError } from '@weft/codec/errors'
import { USAGE_DIMENSIONS, type Event, type ResourceBudget, type UsageDelta, type UsageDimension } from '@weft/spec'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { budgetLevels, committedUnder, limitsOf, missionUsageOf, usageOf, type Limits, type Usage } from '../src/domain/work-budget.js'
import type { AuthorityState, GroupState } from '../src/model.js'
import { refusal, contract } from '@weft/testkit/fixtures'
import {
  accept,
  boot,
  checkpoint,
  CHILD_CONTRACT,
  codeOf,
  coordinatorOf,
  createWorld,
  enrol,
  MEMBERS,
  offer,
  openMission,
  ownerName,
  ownerOf,
  promote,
  runningOf,
  start,
  wid,
  type Who,
  type World,
} from '@weft/testkit/world'

const RECORDED = 'ext.missionweaveprotocol.core.resource_usage_recorded'

/** A budget of `toolCalls` tool calls, ten model tokens and a tenth of a dollar per call. */
function budget(toolCalls: number): ResourceBudget {
  return { currency: 'USD', financialLimit: toolCalls / 10, modelTokenLimit: toolCalls * 10, toolCallLimit: toolCalls }
}

/** The owner of WorkItem `id` charges `usageDelta` under its current Execution Lease (§12). */
function charge(w: World, id: string, usageDelta: UsageDelta): Promise<Receipt> {
  const { epoch, leaseId } = runningOf(w, id)
  return w.as[ownerName(w, id)].coreResourceUsageRecord({ workItemId: id, ownershipEpoch: epoch, executionLeaseId: leaseId, usageDelta })
}

/** The Coordinator of `w` authorizes WorkItem `id` (under `parent`), offers it to `who`, who accepts it. */
async function owned(w: World, id: string, toolCalls: number, who: Who, parent?: string): Promise<void> {
  const overrides = w.group().mission.parent === undefined ? { budget: budget(toolCalls) } : { ...CHILD_CONTRACT, budget: budget(toolCalls) }
  await coordinatorOf(w).workAuthorize({ workItemId: id, contract: contract(overrides), ...(parent === undefined ? {} : { parentWorkItemId: parent }) })
  await offer(w, id, [who])
  await accept(w, id, who)
}

/** As {@link owned}, then started. */
async function running(w: World, id: string, toolCalls: number, who: Who, parent?: string): Promise<void> {
  await owned(w, id, toolCalls, who, parent)
  await start(w, id)
}

/** Tool-call limits of the tree {@link tree} builds. */
const LIMITS = { M: 30, A: 20, B: 10, A1: 15, C: 15, C1: 12 } as const

/** A node of the tree: a WorkItem or a Mission. */
type Node = keyof typeof LIMITS

/** The WorkItems that execute in the tree. */
type Executing = 'A' | 'B' | 'C1'

/** Each executing WorkItem's budget path, nearest first (§12, §14). */
const PATHS: Readonly<Record<Executing, readonly Node[]>> = { A: ['A', 'M'], B: ['B', 'M'], C1: ['C1', 'C', 'A1', 'A', 'M'] }

/** The tree: the views of both Groups and the WorkItem ID of every node. */
interface Tree {
  readonly root: World
  readonly child: World
  readonly ids: Readonly<Record<Exclude<Node, 'M' | 'C'>, string>>
}

/**
 * Root Mission M (30 tool calls) with WorkItems A (20, running, `worker1`) and B (10, running,
 * `worker2`); A1 (15) below A is promoted to child Mission C (15), whose WorkItem C1 (12) runs for
 * `worker3`. Every budget also limits tokens (×10) and money (÷10 USD).
 */
async function tree(): Promise<Tree> {
  const root = createWorld()
  await boot(root)
  await openMission(root, { budget: budget(LIMITS.M) })
  await enrol(root, MEMBERS)
  const ids = { A: wid('a'), B: wid('b'), A1: wid('a1'), C1: wid('c1') }
  await running(root, ids.A, LIMITS.A, 'worker1')
  await running(root, ids.B, LIMITS.B, 'worker2')
  await owned(root, ids.A1, LIMITS.A1, 'worker3', ids.A)
  const { child } = await promote(root, ids.A1, { name: 'c', overrides: { budget: budget(LIMITS.C) } })
  await running(child, ids.C1, LIMITS.C1, 'worker3')
  return { root, child, ids }
}

/** The view and WorkItem ID of an executing node. */
function where(t: Tree, node: Executing): { readonly w: World; readonly id: string } {
  return { w: node === 'C1' ? t.child : t.root, id: t.ids[node] }
}

/** The ledger of every node as the Authority holds it (`state` defaults to the live state). */
function ledger(t: Tree, state: AuthorityState = t.root.authority.state): Record<Node, Usage> {
  const root = state.groups.get(t.root.groupId) as GroupState
  const child = state.groups.get(t.child.groupId) as GroupState
  const subtree = (g: GroupState, id: string): Usage => usageOf(g.workItems.get(id)!).subtree
  return {
    M: { ...missionUsageOf(root) },
    A: { ...subtree(root, t.ids.A) },
    B: { ...subtree(root, t.ids.B) },
    A1: { ...subtree(root, t.ids.A1) },
    C: { ...missionUsageOf(child) },
    C1: { ...subtree(child, t.ids.C1) },
  }
}

/** The head of every Group. */
function heads(t: Tree): number[] {
  return [t.root.groupId, t.child.groupId].map((g) => t.root.authority.group(g)?.head ?? 0)
}

/** A zero usage vector. */
function zero(): Usage {
  return Object.fromEntries(USAGE_DIMENSIONS.map((d) => [d, 0])) as Usage
}

/**
 * Recomputes every node's usage from the Events of all Groups alone: the parent links come from
 * `work.authorized` and `mission.child.created`, the charges from `resource_usage_recorded`, and
 * each charge counts at every node of its ancestry path.
 */
function ledgerFromEvents(t: Tree): Record<Node, Usage> {
  const a = t.root.authority
  const events: Event[] = [...a.state.groups.keys()].flatMap((g) => [...a.events(g)])
  const key = (groupId: string, workItemId?: string): string => `${groupId} ${workItemId ?? 'mission'}`
  const parent = new Map<string, string>()
  for (const e of events) {
    const p = e.payload as { workItem?: { workItemId: string }; parentWorkItemId?: string; childGroupId?: string }
    if (e.kind === 'work.authorized') parent.set(key(e.groupId!, p.workItem!.workItemId), key(e.groupId!, p.parentWorkItemId))
    if (e.kind === 'mission.child.created') parent.set(key(p.childGroupId!), key(e.groupId!, p.parentWorkItemId))
  }
  const totals = new Map<string, Usage>()
  for (const e of events.filter((x) => x.kind === RECORDED)) {
    const p = e.payload as { workItemId: string; usageDelta: Partial<Usage> }
    for (let at: string | undefined = key(e.groupId!, p.workItemId); at !== undefined; at = parent.get(at)) {
      const sum = totals.get(at) ?? zero()
      for (const d of USAGE_DIMENSIONS) sum[d] += p.usageDelta[d] ?? 0
      totals.set(at, sum)
    }
  }
  const of = (k: string): Usage => totals.get(k) ?? zero()
  const [r, c] = [t.root.groupId, t.child.groupId]
  return { M: of(key(r)), A: of(key(r, t.ids.A)), B: of(key(r, t.ids.B)), A1: of(key(r, t.ids.A1)), C: of(key(c)), C1: of(key(c, t.ids.C1)) }
}

/** The refusal of `attempt`, after checking it changed no Group head and no ledger. */
async function refusedWithoutTrace(t: Tree, attempt: Promise<unknown>): Promise<ProtocolError> {
  const before = { heads: heads(t), ledger: ledger(t) }
  const error = await refusal(attempt)
  expect({ heads: heads(t), ledger: ledger(t) }).toEqual(before)
  return error
}

/** How a refusal reads in the property: its code, and for a budget refusal whether the work was paused. */
function outcomeOf(error: ProtocolError): Outcome {
  if (error.code !== 'BUDGET_EXCEEDED') return error.code
  return (error.details as { exhausted?: boolean } | undefined)?.exhausted === true ? 'paused' : 'overflow'
}

describe('the ledger over the complete ancestry (§12, §14)', () => {
  it('records a charge in a child Mission as one Event in its Group, folded into the parent Group’s ledger [event ext.missionweaveprotocol.core.resource_usage_recorded]', async () => {
    const t = await tree()
    const rootHead = t.root.group().head
    const receipt = await charge(t.child, t.ids.C1, { toolCalls: 4, modelTokens: 30 })
    expect(receipt.events.map((e) => [e.kind, e.groupId])).toEqual([[RECORDED, t.child.groupId]])
    expect(receipt.events[0]?.payload).toMatchObject({ cumulativeUsage: { toolCalls: 4, modelTokens: 30 }, remainingBudget: { toolCalls: 8, modelTokens: 90 } })
    expect(t.root.group().head).toBe(rootHead)
    const l = ledger(t)
    expect([l.C1, l.C, l.A1, l.A, l.M].map((u) => u.toolCalls)).toEqual([4, 4, 4, 4, 4])
    expect(l.B.toolCalls).toBe(0)
    // State = fold(log): a replay of all Groups rebuilds the parent Group's view.
    expect(ledger(t, t.root.authority.replayState())).toEqual(l)
  })

  it('refuses a charge that overflows a level in the parent Group, appending nothing anywhere [error BUDGET_EXCEEDED]', async () => {
    const t = await tree()
    await charge(t.root, t.ids.A, { toolCalls: 15 })
    // C1 (12), C (15) and A1 (15) have room for 6; A has 5 left.
    const refused = await refusedWithoutTrace(t, charge(t.child, t.ids.C1, { toolCalls: 6 }))
    expect(refused).toMatchObject({ code: 'BUDGET_EXCEEDED', details: { scope: `WorkItem ${t.ids.A}`, used: 15, delta: 6 } })
    expect(t.root.authority.audit().slice(-1)).toMatchObject([{ code: 'BUDGET_EXCEEDED' }])
    await charge(t.child, t.ids.C1, { toolCalls: 5 })
    expect(ledger(t).A.toolCalls).toBe(20)
  })

  it('pauses the work of a child Mission when a level above it in the parent Group is exhausted', async () => {
    const t = await tree()
    await charge(t.root, t.ids.A, { toolCalls: 18 })
    await charge(t.child, t.ids.C1, { toolCalls: 2 })
    const levels = budgetLevels(t.child.group(), t.child.item(t.ids.C1), t.root.authority.state)
    expect(levels.map((l) => [l.scope, l.used.toolCalls])).toEqual([
      [`WorkItem ${t.ids.C1}`, 2],
      [`Mission ${t.child.group().missionId}`, 2],
      [`WorkItem ${t.ids.A1}`, 2],
      [`WorkItem ${t.ids.A}`, 20],
      [`Mission ${t.root.group().missionId}`, 20],
    ])
    const paused = { code: 'BUDGET_EXCEEDED', details: { scope: `WorkItem ${t.ids.A}`, dimension: 'toolCalls', exhausted: true } }
    expect(await refusedWithoutTrace(t, charge(t.child, t.ids.C1, { modelTokens: 1 }))).toMatchObject(paused)
    await checkpoint(t.child, t.ids.C1)
    expect(await refusedWithoutTrace(t, start(t.child, t.ids.C1))).toMatchObject(paused)
    // B's path does not pass through A: it keeps running.
    await charge(t.root, t.ids.B, { toolCalls: 1 })
  })
})

describe('child Mission budgets (§4 invariant 11, §14)', () => {
  /** Root WorkItem W (20 tool calls) running for `worker1`, having consumed `used` tool calls. */
  async function parentWith(used: number): Promise<{ readonly w: World; readonly id: string }> {
    const w = createWorld()
    await boot(w)
    await openMission(w)
    await enrol(w, MEMBERS)
    const id = wid('w')
    await running(w, id, 20, 'worker1')
    await charge(w, id, { toolCalls: used })
    return { w, id }
  }

  it('come out of what the parent WorkItem has not consumed', async () => {
    const { w, id } = await parentWith(10)
    expect(await codeOf(promote(w, id, { name: 'big', overrides: { budget: budget(11) } }))).toBe('BUDGET_EXCEEDED')
    const { child } = await promote(w, id, { name: 'fits', overrides: { budget: budget(10) } })
    expect(limitsOf(child.group().mission.budget).toolCalls).toBe(10)
  })

  it('an exhausted child Mission is escalated by cancelling it and promoting the parent WorkItem again within what is left', async () => {
    const { w, id } = await parentWith(4)
    const { child } = await promote(w, id, { name: 'first', overrides: { budget: budget(6) } })
    await running(child, wid('c1'), 6, 'worker3')
    await charge(child, wid('c1'), { toolCalls: 6 })
    expect(await codeOf(charge(child, wid('c1'), { modelTokens: 1 }))).toBe('BUDGET_EXCEEDED')
    // The parent Coordinator is the child's MissionOwner (§14).
    await ownerOf(child).missionCancel({ reason: 'Budget exhausted; replanning with a larger child.' })
    // 20 - 4 consumed by the parent WorkItem - 6 consumed by the cancelled child = 10.
    expect(await codeOf(promote(w, id, { name: 'second-big', overrides: { budget: budget(11) } }))).toBe('BUDGET_EXCEEDED')
    const { child: second } = await promote(w, id, { name: 'second', overrides: { budget: budget(10) } })
    await running(second, wid('c2'), 10, 'worker3')
    await charge(second, wid('c2'), { toolCalls: 10 })
    expect(usageOf(w.item(id)).subtree.toolCalls).toBe(20)
  })
})

/** One step of the property: a charge or a cancellation of an executing WorkItem. */
type Step = { readonly op: 'charge'; readonly node: Executing; readonly delta: UsageDelta } | { readonly op: 'cancel'; readonly node: Executing }

const executing = fc.constantFrom<Executing>('A', 'B', 'C1')

/**
 * Deltas in the three limited dimensions, at least one positive, in the coarse steps the budgets
 * are scaled by, so limits are reached exactly (and work paused) within a few steps.
 */
const delta: fc.Arbitrary<UsageDelta> = fc
  .record(
    { toolCalls: fc.integer({ min: 0, max: 4 }), modelTokens: fc.integer({ min: 0, max: 4 }).map((n) => n * 10), financialMicrounits: fc.integer({ min: 0, max: 4 }).map((n) => n * 100_000) },
    { requiredKeys: [] },
  )
  .filter((d) => Object.values(d).some((v) => v > 0))

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 15, arbitrary: fc.record({ op: fc.constant('charge' as const), node: executing, delta }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('cancel' as const), node: executing }) },
)

/** The dimensions every budget of the tree limits; the others are unlimited. */
const LIMITED = Object.keys(limitsOf(budget(1))) as UsageDimension[]

/** Every node's limits (tokens ×10, money ÷10 in microunits, as {@link budget} sets them). */
const NODE_LIMITS: Readonly<Record<Node, Limits>> = Object.fromEntries((Object.keys(LIMITS) as Node[]).map((n) => [n, limitsOf(budget(LIMITS[n]))])) as Record<Node, Limits>

/** The limit of `node` in `d`; unlimited is infinite. */
function limitOf(node: Node, d: UsageDimension): number {
  return NODE_LIMITS[node][d] ?? Number.POSITIVE_INFINITY
}

/**
 * §4 invariant 11, §12: what each budget has allocated stays within it: the reservations of the
 * Mission's top-level WorkItems, A1's reservation under A, and the child Mission under A1 (its
 * budget while it runs, its usage once it ended). A parent's own usage is consumption, not
 * allocation: it competes with its children's reservations at charge time.
 */
function expectAllocationsWithin(t: Tree): void {
  const state = t.root.authority.state
  const root = t.root.group()
  const topLevel = [t.ids.A, t.ids.B].map((id) => limitsOf(t.root.item(id).reservedBudget))
  const allocatedUnder = (id: string) => {
    const record = t.root.item(id)
    const committed = committedUnder(root, record, state)
    return (d: UsageDimension) => committed[d] - usageOf(record).own[d]
  }
  const [underA, underA1] = [allocatedUnder(t.ids.A), allocatedUnder(t.ids.A1)]
  for (const d of LIMITED) {
    expect(topLevel.reduce((sum, l) => sum + (l[d] ?? 0), 0)).toBeLessThanOrEqual(limitOf('M', d))
    expect(underA(d)).toBeLessThanOrEqual(limitOf('A', d))
    expect(underA1(d)).toBeLessThanOrEqual(limitOf('A1', d))
  }
}

/** What a charge comes to: accepted, refused as paused or as an overflow (`BUDGET_EXCEEDED`), or refused with another code. */
type Outcome = 'accepted' | 'paused' | 'overflow' | ErrorCode

/** What the model expects of a charge of `add` to `node`. */
function expected(model: Record<Node, Usage>, cancelled: ReadonlySet<Executing>, node: Executing, add: Usage): Outcome {
  if (cancelled.has(node)) return 'INVALID_STATE_TRANSITION'
  const path = PATHS[node]
  // §12: a level some charge brought to a limit pauses everything below it.
  const exhausted = path.some((n) => LIMITED.some((d) => model[n][d] > 0 && model[n][d] >= limitOf(n, d)))
  const overflow = path.some((n) => LIMITED.some((d) => model[n][d] + add[d] > limitOf(n, d)))
  return exhausted ? 'paused' : overflow ? 'overflow' : 'accepted'
}

describe('property: the budget ledger (§12)', () => {
  it('is never negative, never over a limit, equals the model and the sum of recorded usage along every ancestry path, keeps allocations within every parent, and a refused charge changes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 30, size: 'max' }), async (steps) => {
        const t = await tree()
        const model = Object.fromEntries((Object.keys(LIMITS) as Node[]).map((n) => [n, zero()])) as Record<Node, Usage>
        const cancelled = new Set<Executing>()
        for (const s of steps) {
          const { w, id } = where(t, s.node)
          if (s.op === 'cancel') {
            const attempt = coordinatorOf(w).workCancel({ workItemId: id, reason: 'Descoped.' })
            if (cancelled.has(s.node)) expect((await refusedWithoutTrace(t, attempt)).code).toBe('INVALID_STATE_TRANSITION')
            else await attempt
            cancelled.add(s.node)
          } else {
            const add = { ...zero(), ...s.delta }
            const want = expected(model, cancelled, s.node, add)
            if (want !== 'accepted') {
              expect(outcomeOf(await refusedWithoutTrace(t, charge(w, id, s.delta)))).toBe(want)
            } else {
              const receipt = await charge(w, id, s.delta)
              expect(receipt.events.map((e) => [e.kind, e.groupId])).toEqual([[RECORDED, w.groupId]])
              for (const n of PATHS[s.node]) for (const d of USAGE_DIMENSIONS) model[n][d] += add[d]
              const left = Object.fromEntries(LIMITED.map((d) => [d, Math.min(...PATHS[s.node].map((n) => limitOf(n, d) - model[n][d]))]))
              expect(receipt.events[0]?.payload).toMatchObject({ cumulativeUsage: model[s.node], remainingBudget: left })
            }
          }
          const live = ledger(t)
          expect(live).toEqual(model)
          expect(ledgerFromEvents(t)).toEqual(live)
          expectAllocationsWithin(t)
          for (const n of Object.keys(live) as Node[]) {
            for (const d of USAGE_DIMENSIONS) {
              expect(live[n][d]).toBeGreaterThanOrEqual(0)
              expect(live[n][d]).toBeLessThanOrEqual(limitOf(n, d))
            }
          }
        }
        expect(ledger(t, t.root.authority.replayState())).toEqual(ledger(t))
      }),
      { numRuns: 50 },
    )
  }, 120_000)
})
