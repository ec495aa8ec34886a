/**
 * Every row of the WorkItem machine (`WORK_ITEM_TRANSITIONS`, §10.2, §11.3–§11.5, §14), performed
 * through `@weft/client` against `createAuthority`, one generated test per row; and for every row a
 * Command drives, one test that the Command is refused for the row's reason (STYLE §13: the test
 * paths come from the statechart). Each test starts a fresh world, reaches the row's `from` state
 * by real Commands, and checks the WorkItem's state and the Events appended for it.
 *
 * The tests are generated from {@link WORK_ITEM_ROW_CASES}; `coverage.test.ts` reads the same list.
 */
import type { Receipt } from '@weft/client'
import type { ErrorCode } from '@weft/codec'
import type { WorkContract } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { SELECTION } from '@weft/testkit/documents'
import { cast, contract, evidence } from '@weft/testkit/fixtures'
import {
  accept,
  acceptResult,
  authorize,
  block,
  cancelWork,
  checkpoint,
  CHILD_CONTRACT,
  coordinatorOf,
  expectRefused,
  failureEvidence,
  failWork,
  grantExecution,
  kinds,
  offer,
  ownerName,
  ownerOf,
  promote,
  publish,
  reach,
  reachMission,
  approveMission,
  renew,
  runningOf,
  start,
  started,
  submit,
  wid,
  WORK_ITEM_ROW_CASES,
  type Reachable,
  rowTests,
  type RowCase,
  type World,
} from '@weft/testkit/world'

/** What a step carries from its preparation to its Command. */
interface Scratch {
  child?: World
  leaseId?: string
  artifactId?: string
  /** Another WorkItem the step needs (a dependency). */
  other?: string
}

/** One test of a row: where it starts, what happens before, and the Command or cause. */
interface Step {
  /** The state the WorkItem is brought to first (default: the row's `from`); `none` authorizes nothing. */
  readonly from?: Reachable | 'none'
  readonly contract?: Partial<WorkContract>
  /** Said in the test title. */
  readonly how: string
  // biome-ignore lint/suspicious/noConfusingVoidType: a plan step is sync (void) or async; `undefined` would refuse `(w) => void` steps
  readonly before?: (w: World, id: string, s: Scratch) => Promise<unknown> | void
  /** The Command (default: {@link ACTIONS} of the row's event); `undefined` when nothing is sent (a timer). */
  readonly act?: (w: World, id: string, s: Scratch) => Promise<Receipt | undefined>
  /** Further checks after the row was performed. */
  readonly after?: (w: World, id: string, s: Scratch) => Promise<unknown>
}

interface Refusal extends Step {
  readonly code: ErrorCode
}

interface RowPlan {
  readonly perform?: Step
  readonly refuse?: Refusal
}

const RENEW = 'ext.missionweaveprotocol.core.work_execution_lease_renew'
const USAGE = 'ext.missionweaveprotocol.core.resource_usage_record'
const DEPENDENCY = 'ext.missionweaveprotocol.core.work_dependency_add'
const SESSION = 'ext.missionweaveprotocol.identity.session_open'

/** The Command each Command-driven row sends by default, by the row's event. */
const ACTIONS: Readonly<Record<string, (w: World, id: string, s: Scratch) => Promise<Receipt>>> = {
  'work.propose': (w, id) => w.as.worker1.workPropose({ proposalId: id, contract: contract() }),
  'work.authorize': (w, id) => authorize(w, id),
  'work.offer': (w, id) => offer(w, id, ['worker2']),
  'work.accept_offer': (w, id) => accept(w, id, 'worker1'),
  'approval.grant_execution': (w, id) => grantExecution(w, id),
  'work.start': (w, id) => start(w, id),
  'work.checkpoint': (w, id) => checkpoint(w, id),
  'work.block': (w, id) => block(w, id),
  'work.unblock': (w, id) => coordinatorOf(w).workUnblock({ workItemId: id, resolution: 'Credentials arrived.' }),
  'work.submit': (w, id) => submit(w, id),
  'work.accept_result': (w, id) => acceptResult(w, id),
  'work.fail': (w, id) => failWork(w, id),
  'work.cancel': (w, id) => cancelWork(w, id),
  'mission.create_child': async (w, id) => (await promote(w, id)).receipt,
  [SESSION]: (w, id) => w.as.controlPlane.identitySessionOpen({ agentId: cast[ownerName(w, id)].actor.id }),
  [RENEW]: (w, id) => renew(w, id),
  [USAGE]: (w, id) => w.as[ownerName(w, id)].coreResourceUsageRecord({ workItemId: id, ...runningRef(w, id), usageDelta: { toolCalls: 1 } }),
  [DEPENDENCY]: (w, id, s) => coordinatorOf(w).coreWorkDependencyAdd({ workItemId: id, dependencyId: s.other! }),
}

function runningRef(w: World, id: string): { ownershipEpoch: number; executionLeaseId: string } {
  const { epoch, leaseId } = runningOf(w, id)
  return { ownershipEpoch: epoch, executionLeaseId: leaseId }
}

/** Authorizes the WorkItem a dependency step adds an edge to. */
const another = async (w: World, _id: string, s: Scratch) => {
  s.other = await reach(w, 'open')
}

const advance = (seconds: number) => (w: World) => w.clock.advance(seconds)
/** A timer: the clock moves past a lease or an offer and nothing is sent. */
const elapse = (seconds: number) => async (w: World) => {
  w.clock.advance(seconds)
  return undefined
}

const UNFINISHED = ['open', 'offered', 'queued', 'active', 'blocked', 'submitted'] as const
const OWNED = ['queued', 'active', 'blocked'] as const

/** A plan for each row of `from` in `states`, keyed by its row tag. */
function each(states: readonly string[], tag: (from: string) => string, plan: (from: string) => RowPlan): Record<string, RowPlan> {
  return Object.fromEntries(states.map((from) => [tag(from), plan(from)]))
}

/** How long each owned state keeps its owner live: the ownership lease when queued, the execution or blocked lease otherwise. */
const LIVE_FOR: Readonly<Record<string, number>> = { queued: 3600, active: 600, blocked: 600 }

/** The child-Mission setup of a `system.child_mission_*` row: a child promoted from the blocked parent. */
const promoted = (childFailurePolicy: 'block_parent_work_item' | 'fail_parent_work_item') => async (w: World, id: string, s: Scratch) => {
  s.child = (await promote(w, id, { childFailurePolicy })).child
}

/** The child's Coordinator ends the child Mission as failed (§14). */
const childFails = async (_w: World, _id: string, s: Scratch) => coordinatorOf(s.child!).missionTerminate({ reason: 'The child cannot finish.' })

const PLANS: Readonly<Record<string, RowPlan>> = {
  '[row none --work.propose--> none]': {
    perform: { how: 'a member proposes work; only a proposal exists', after: async (w, id) => expect(w.group().proposals.get(id)?.proposedBy).toEqual(cast.worker1.actor) },
    refuse: { from: 'open', how: 'the ID already names a WorkItem', code: 'INVALID_COMMAND' },
  },
  '[row none --work.authorize--> open]': {
    perform: { how: 'the Coordinator authorizes a complete contract' },
    refuse: { from: 'open', how: 'the WorkItem exists already', code: 'INVALID_STATE_TRANSITION' },
  },
  '[row open --work.offer--> offered]': {
    perform: { how: 'the Coordinator offers it' },
    refuse: {
      how: 'a Worker is neither Coordinator nor delegate',
      code: 'AUTH_FORBIDDEN',
      act: (w, id) => w.as.worker1.workOffer({ workItemId: id, candidateAgentIds: [cast.worker1.actor.id], selectionBasis: SELECTION, offerExpiresInSeconds: 60 }),
    },
  },
  '[row offered --work.offer--> offered]': {
    perform: { how: 'a new offer replaces the pending one', after: async (w, id) => expect(w.item(id).doc.offers?.map((o) => o.status)).toEqual(['withdrawn', 'withdrawn', 'pending']) },
    refuse: { from: 'verified', how: 'a verified WorkItem is terminal', code: 'INVALID_STATE_TRANSITION' },
  },
  '[row failed --work.offer--> offered]': {
    perform: { how: 'a failed WorkItem leaves only through a new offer' },
    refuse: { from: 'cancelled', how: 'a cancelled WorkItem is terminal', code: 'INVALID_STATE_TRANSITION' },
  },
  ...each(
    OWNED,
    (from) => `[row ${from} --work.offer--> offered [noLiveOwner]]`,
    (from) => ({
      perform: {
        how: 'after its owner’s lease ran out; the old Ownership Epoch is fenced',
        before: advance(LIVE_FOR[from]! + 1),
        after: async (w, id) => expect(w.item(id).doc.owner).toBeUndefined(),
      },
      refuse: { how: 'while its owner is live', code: 'INVALID_STATE_TRANSITION' },
    }),
  ),
  '[row offered --work.accept_offer--> queued [offerValid]]': {
    perform: { how: 'the first candidate accepts; the other loses the race', after: async (w, id) => expect(w.item(id).doc.offers?.map((o) => o.status)).toEqual(['accepted', 'lost_race']) },
    refuse: { how: 'after the offer expired', before: advance(601), code: 'WORK_OFFER_EXPIRED' },
  },
  '[row queued --approval.grant_execution--> queued [executionApprovalRequired]]': {
    perform: { how: 'the human MissionOwner opens the start gate', contract: { executionApproval: 'human_required' }, after: async (w, id) => expect(w.item(id).executionApprovals).toHaveLength(1) },
    refuse: { how: 'the contract needs no Execution Approval', code: 'INVALID_STATE_TRANSITION' },
  },
  '[row queued --work.start--> active [startAllowed]]': {
    perform: { how: 'the owner starts under a new Execution Lease' },
    refuse: { how: 'a required Execution Approval was never granted', contract: { executionApproval: 'human_required' }, code: 'APPROVAL_REQUIRED' },
  },
  '[row active --work.checkpoint--> queued]': {
    perform: { how: 'a checkpoint releases the Execution Lease', after: async (w, id) => expect(w.item(id).executionLease).toBeUndefined() },
    refuse: { from: 'queued', how: 'nothing is executing', code: 'INVALID_STATE_TRANSITION' },
  },
  '[row active --work.block--> blocked]': {
    perform: { how: 'the owner blocks under a bounded blocked lease' },
    refuse: { how: 'the Execution Lease expired', before: advance(601), code: 'WORK_LEASE_EXPIRED' },
  },
  '[row blocked --work.unblock--> queued [ownershipLive]]': {
    perform: { how: 'the Coordinator resolves the blocker while the blocked lease is live', after: async (w, id) => expect(ownerName(w, id)).toBe('worker1') },
    refuse: { how: 'a Worker other than the owner unblocks', code: 'AUTH_FORBIDDEN', act: (w, id) => w.as.worker2.workUnblock({ workItemId: id }) },
  },
  '[row blocked --work.unblock--> open]': {
    perform: { how: 'after the blocked lease lapsed, to be offered again', before: advance(601), after: async (w, id) => expect(w.item(id).doc.owner).toBeUndefined() },
    refuse: { from: 'active', how: 'an active WorkItem is not blocked', code: 'INVALID_STATE_TRANSITION' },
  },
  '[row active --work.submit--> submitted]': {
    perform: { how: 'the owner submits a published Artifact with passing Evidence' },
    refuse: {
      how: 'the Evidence does not pass the acceptance criteria',
      code: 'INVALID_COMMAND',
      before: async (w, id, s) => {
        s.artifactId = (await publish(w, id)).artifactId
      },
      act: (w, id, s) => w.as.worker1.workSubmit({ workItemId: id, ...runningRef(w, id), artifactIds: [s.artifactId!], evidence: [failureEvidence(w, id, 'worker1')] }),
    },
  },
  '[row submitted --work.accept_result--> verified [acceptanceCriteriaMet]]': {
    perform: { how: 'the Coordinator accepts with a reviewer’s passing Evidence' },
    refuse: { how: 'the review Evidence failed', code: 'INVALID_COMMAND', act: (w, id) => coordinatorOf(w).workAcceptResult({ workItemId: id, evidence: [failureEvidence(w, id, 'reviewer')] }) },
  },
  ...each(
    UNFINISHED,
    (from) => `[row ${from} --work.fail--> failed]`,
    () => ({
      perform: { how: 'the Coordinator fails it with failure Evidence' },
      refuse: {
        how: 'without failure Evidence',
        code: 'INVALID_COMMAND',
        act: (w, id) => coordinatorOf(w).workFail({ workItemId: id, reason: 'No reason.', evidence: [evidence(w.group(), id, cast.coordinator)] }),
      },
    }),
  ),
  ...each(
    UNFINISHED,
    (from) => `[row ${from} --work.cancel--> cancelled]`,
    () => ({
      perform: { how: 'the Coordinator cancels it; its leases are revoked', after: async (w, id) => expect([w.item(id).ownershipLease, w.item(id).executionLease]).toEqual([undefined, undefined]) },
      refuse: { how: 'a Worker may not cancel', code: 'AUTH_FORBIDDEN', act: (w, id) => w.as.worker2.workCancel({ workItemId: id, reason: 'Mine now.' }) },
    }),
  ),
  ...each(
    ['open', 'offered'],
    (from) => `[row ${from} --mission.create_child--> blocked]`,
    () => ({ refuse: { how: 'before any Worker accepted it: a blocked WorkItem needs an owner (work-item.schema.json)', code: 'INVALID_STATE_TRANSITION' } }),
  ),
  ...each(
    OWNED,
    (from) => `[row ${from} --mission.create_child--> blocked]`,
    () => ({
      perform: {
        how: 'the Coordinator promotes it to a child Mission; ownership is fenced',
        after: async (w, id) => expect([w.item(id).ownershipLease, w.item(id).childGroupId]).toEqual([undefined, expect.any(String)]),
      },
      refuse: {
        how: 'the child budget exceeds the WorkItem’s',
        code: 'BUDGET_EXCEEDED',
        act: async (w, id) => (await promote(w, id, { overrides: { budget: { currency: 'USD', financialLimit: 50, modelTokenLimit: 5000, toolCallLimit: 20 } } })).receipt,
      },
    }),
  ),
  '[row offered --timer.offer_expired--> offered]': {
    perform: { how: 'the offer expires: no Event, acceptance is refused', act: elapse(601), after: (w, id) => expectRefused(w, () => accept(w, id), 'WORK_OFFER_EXPIRED', id) },
  },
  '[row blocked --system.child_mission_approved--> verified]': {
    perform: {
      how: 'the child Mission is approved by its owner, the parent Coordinator',
      before: async (w, id, s) => {
        await promoted('block_parent_work_item')(w, id, s)
        await reachMission(s.child!, 'awaiting_approval', CHILD_CONTRACT)
      },
      act: (_w, _id, s) => approveMission(s.child!),
      after: async (w, id, s) => expect(w.item(id).doc.submission?.evidenceIds).toEqual([...s.child!.group().approvals.keys()]),
    },
  },
  '[row blocked --system.child_mission_failed--> failed [childIndispensable]]': {
    perform: { how: 'the child fails under fail_parent_work_item', before: promoted('fail_parent_work_item'), act: childFails },
  },
  '[row blocked --system.child_mission_failed--> blocked]': {
    perform: { how: 'the child fails under block_parent_work_item: the parent waits for replanning', before: promoted('block_parent_work_item'), act: childFails },
  },
  ...each(
    UNFINISHED,
    (from) => `[row ${from} --system.mission_failed--> failed]`,
    () => ({ perform: { how: 'the Coordinator terminates the Mission', act: (w) => coordinatorOf(w).missionTerminate({ reason: 'The Mission cannot succeed.' }) } }),
  ),
  ...each(
    UNFINISHED,
    (from) => `[row ${from} --system.mission_cancelled--> cancelled]`,
    () => ({ perform: { how: 'the MissionOwner cancels the Mission', act: (w) => ownerOf(w).missionCancel({ reason: 'Priorities changed.' }) } }),
  ),
  [`[row active --${SESSION}--> queued]`]: {
    perform: {
      how: 'a replacement Session revokes the owner’s Execution Lease',
      after: async (w, id) => {
        expect(w.item(id).executionLease).toBeUndefined()
        await start(w, id)
        expect(w.item(id).executionLease?.sessionEpoch).toBe(2)
      },
    },
    refuse: { how: 'a service outside the control plane opens no Session', code: 'AUTH_FORBIDDEN', act: (w, id) => w.as.registry.identitySessionOpen({ agentId: cast[ownerName(w, id)].actor.id }) },
  },
  [`[row active --${RENEW}--> active]`]: {
    perform: { how: 'the owner renews its Execution Lease', after: async (w, id) => expect(w.item(id).executionLease?.renewalCount).toBe(1) },
    refuse: {
      how: 'a delayed renewal cites the Execution Lease a checkpoint released (§11.3)',
      code: 'WORK_LEASE_EXPIRED',
      before: async (w, id, s) => {
        s.leaseId = runningOf(w, id).leaseId
        await checkpoint(w, id)
        await start(w, id)
      },
      act: (w, id, s) => renew(w, id, 600, s.leaseId),
    },
  },
  [`[row active --${USAGE}--> active]`]: {
    perform: { how: 'the owner records usage under its Execution Lease' },
    refuse: {
      how: 'the delta exceeds the WorkItem budget',
      code: 'BUDGET_EXCEEDED',
      act: (w, id) => w.as.worker1.coreResourceUsageRecord({ workItemId: id, ...runningRef(w, id), usageDelta: { toolCalls: 51 } }),
    },
  },
  '[row active --timer.execution_lease_expired--> active]': {
    perform: { how: 'the Execution Lease times out: no Event, renewal is refused', act: elapse(601), after: (w, id) => expectRefused(w, () => renew(w, id), 'WORK_LEASE_EXPIRED', id) },
  },
  '[row queued --timer.ownership_lease_expired--> queued]': {
    perform: { how: 'the start-by deadline passes: no Event, start is refused', act: elapse(3601), after: (w, id) => expectRefused(w, () => start(w, id), 'WORK_LEASE_EXPIRED', id) },
  },
  '[row blocked --timer.ownership_lease_expired--> blocked]': {
    perform: {
      how: 'the blocked lease passes: no Event, unblocking re-opens the WorkItem',
      act: elapse(601),
      after: async (w, id) => {
        await ACTIONS['work.unblock']!(w, id, {})
        expect(w.item(id).doc.state).toBe('open')
      },
    },
  },
  [`[row open --${DEPENDENCY}--> open]`]: {
    perform: { how: 'the Coordinator adds a dependency; the contract is revised', before: another, after: async (w, id) => expect(w.item(id).doc.contract.contractVersion).toBe(2) },
    refuse: { from: 'offered', how: 'an offer holds a commitment to the contract', before: another, code: 'INVALID_STATE_TRANSITION' },
  },
  [`[row failed --${DEPENDENCY}--> failed]`]: {
    perform: { how: 'the Coordinator adds a dependency before re-offering', before: another },
    refuse: {
      how: 'the new edge would close a cycle',
      code: 'INVALID_COMMAND',
      before: async (w, id, s) => {
        s.other = wid(w.fresh('dependent'))
        await coordinatorOf(w).workAuthorize({ workItemId: s.other, contract: contract({ dependencyWorkItemIds: [id] }) })
      },
    },
  },
}

/** Brings a new WorkItem to `from` (`none`: a fresh ID, nothing authorized). */
async function prepare(w: World, from: Reachable | 'none', overrides: Partial<WorkContract> | undefined): Promise<string> {
  if (from === 'none') return wid(w.fresh('new'))
  return reach(w, from, overrides === undefined ? {} : { contract: overrides })
}

/** The state of WorkItem `id`, `none` while no WorkItem has that ID. */
function stateOf(w: World, id: string): string {
  return w.group().workItems.get(id)?.doc.state ?? 'none'
}

/** The Events a transaction appended for WorkItem (or proposal) `id`. */
function appendedFor(receipt: Receipt | undefined, id: string): string[] {
  const mine = (receipt?.events ?? []).filter((e) => e.workItemId === id || (e.payload as { proposalId?: string }).proposalId === id)
  return kinds(mine)
}

function performTest(c: RowCase, step: Step): void {
  it(`${c.tag} ${step.how}`, async () => {
    const w = await started()
    const s: Scratch = {}
    const id = await prepare(w, step.from ?? (c.row.from as Reachable), step.contract)
    await step.before?.(w, id, s)
    const head = w.group().head
    const receipt = await (step.act ?? ACTIONS[c.row.event]!)(w, id, s)
    expect(stateOf(w, id)).toBe(c.row.to)
    const appended = appendedFor(receipt, id)
    expect(appended.filter((k) => !(c.row.emits as readonly string[]).includes(k))).toEqual([])
    // §10.2: a row that appends nothing changes no log; one that does appends at least one of its kinds.
    if (c.row.emits.length === 0) expect(appended).toEqual([])
    else expect(appended.length).toBeGreaterThan(0)
    if (receipt === undefined) expect(w.group().head).toBe(head)
    await step.after?.(w, id, s)
  })
}

function refuseTest(c: RowCase, step: Refusal): void {
  it(`${c.refusal} ${step.how}: ${step.code}`, async () => {
    const w = await started()
    const s: Scratch = {}
    const from = step.from ?? (c.row.from as Reachable)
    const id = await prepare(w, from, step.contract)
    await step.before?.(w, id, s)
    await expectRefused(w, () => (step.act ?? ACTIONS[c.row.event]!)(w, id, s), step.code, from === 'none' ? undefined : id)
  })
}

describe('every row of the WorkItem machine, through @weft/client', () => {
  rowTests(WORK_ITEM_ROW_CASES, PLANS, performTest, refuseTest)

  it('has no plan for a row the machine does not have', () => {
    expect(Object.keys(PLANS).filter((tag) => !WORK_ITEM_ROW_CASES.some((c) => c.tag === tag))).toEqual([])
  })
})
