/**
 * Every row of the Mission machine (`MISSION_TRANSITIONS`, §7.1, §7.2, §14), performed through
 * `@weft/client` against `createAuthority`, one generated test per row; and for every row a Command
 * drives, one test that the Command is refused for the row's reason. Propagated rows
 * (`system.parent_mission_cancelled`, `system.child_mission_failed`) are performed by their cause
 * in the other Mission.
 *
 * The tests are generated from {@link MISSION_ROW_CASES}; `coverage.test.ts` reads the same list.
 */
import type { Receipt } from '@weft/client'
import type { ErrorCode } from '@weft/codec'
import type { ChildFailurePolicy } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import type { AuthorityPolicy } from '../src/policy.js'
import { contextPackage } from './fixtures-missions.js'
import { decision } from '@weft/testkit/documents'
import { cast } from '@weft/testkit/fixtures'
import {
  approveMission,
  CHILD_CONTRACT,
  coordinatorOf,
  expectRefused,
  kinds,
  missionCreate,
  MISSION_ROW_CASES,
  openMission,
  ownerOf,
  promote,
  reach,
  reachMission,
  started,
  submitMission,
  type MissionReachable,
  rowTests,
  type RowCase,
  type World,
} from '@weft/testkit/world'

/** What a step carries from its preparation to its Command. */
interface Scratch {
  /** The view whose Mission the row moves, when it is not the main Group's. */
  target?: World
  child?: World
  workItemId?: string
}

interface Step {
  /** Said in the test title. */
  readonly how: string
  /** Brings the Missions to where the row starts; default: the main Mission to the row's `from`. */
  readonly before?: (w: World, s: Scratch) => Promise<unknown>
  /** The Command; default: {@link ACTIONS} of the row's event. */
  readonly act?: (w: World, s: Scratch) => Promise<Receipt>
  readonly after?: (w: World, s: Scratch) => Promise<unknown>
}

interface Refusal extends Step {
  readonly code: ErrorCode
  readonly policy?: Partial<AuthorityPolicy>
}

interface RowPlan {
  readonly perform?: Step
  readonly refuse?: Refusal
}

const SECOND_GROUP = 'urn:weft:test:group:second'
const FOLLOW_UP_GROUP = 'urn:weft:test:group:follow-up'

/** The Command each Command-driven row sends by default, by the row's event. */
const ACTIONS: Readonly<Record<string, (w: World, s: Scratch) => Promise<Receipt>>> = {
  'mission.create': (w, s) => openMission((s.target = w.in(SECOND_GROUP))),
  'mission.create_follow_up': (w, s) => {
    s.target = w.in(FOLLOW_UP_GROUP)
    return w.as.owner.missionCreateFollowUp({ ...missionCreate('follow-up'), followUpToMissionId: w.group().missionId, reason: 'Remediation.' }, { groupId: FOLLOW_UP_GROUP })
  },
  'mission.create_child': async (w, s) => {
    const { child, receipt } = await promote(w, s.workItemId!)
    s.target = child
    return receipt
  },
  'mission.submit_for_approval': (w) => submitMission(w),
  'mission.request_changes': (w) => w.as.owner.missionRequestChanges({ approval: decision(w.group(), cast.owner, 'changes_requested') }),
  'mission.approve': (w) => approveMission(w),
  'mission.cancel': (w) => ownerOf(w).missionCancel({ reason: 'Priorities changed.' }),
  'mission.terminate': (w) => coordinatorOf(w).missionTerminate({ reason: 'The Mission cannot succeed.' }),
  'mission.assign_coordinator': (w) => ownerOf(w).missionAssignCoordinator({ coordinatorAgentId: cast.reviewer.actor.id, leaseSeconds: 3600, contextPackage: contextPackage(w.group()) }),
  'mission.renew_coordinator': (w) => coordinatorOf(w).missionRenewCoordinator({ leaseSeconds: 3600 }),
}

/** A queued WorkItem to promote. */
const queuedItem = async (w: World, s: Scratch) => {
  s.workItemId = await reach(w, 'queued')
}

/** A child Mission (under `policy`) brought to `state`; the row moves it (or, on failure, its parent). */
const childAt =
  (state: MissionReachable, childFailurePolicy: ChildFailurePolicy = 'block_parent_work_item') =>
  async (w: World, s: Scratch) => {
    await queuedItem(w, s)
    s.child = (await promote(w, s.workItemId!, { childFailurePolicy })).child
    await reachMission(s.child, state, CHILD_CONTRACT)
  }

const NON_TERMINAL = ['active', 'awaiting_approval'] as const

/** A plan for each row of `from` in {@link NON_TERMINAL}, keyed by its row tag. */
function each(tag: (from: string) => string, plan: (from: MissionReachable) => RowPlan): Record<string, RowPlan> {
  return Object.fromEntries(NON_TERMINAL.map((from) => [tag(from), plan(from)]))
}

const PLANS: Readonly<Record<string, RowPlan>> = {
  '[row none --mission.create--> active]': {
    perform: { how: 'a human opens a Mission with its Group and Coordinator lease', after: async (_w, s) => expect(s.target!.group().coordinatorLease.state).toBe('active') },
    refuse: { how: 'the Group exists already (Group IDs are stable)', code: 'INVALID_COMMAND', act: (w) => openMission(w) },
  },
  '[row none --mission.create_follow_up--> active]': {
    perform: {
      how: 'the owner links a follow-up to an approved Mission, which stays approved',
      before: (w) => reachMission(w, 'approved'),
      after: async (w, s) => expect([w.group().mission.state, s.target!.group().mission.followUpToMissionId]).toEqual(['approved', w.group().missionId]),
    },
    refuse: { how: 'the linked Mission is not approved', code: 'INVALID_STATE_TRANSITION' },
  },
  '[row none --mission.create_child--> active]': {
    perform: {
      how: 'the Coordinator promotes a WorkItem; it owns the child',
      before: queuedItem,
      after: async (_w, s) => expect(s.target!.group().mission.missionOwner).toEqual(cast.coordinator.actor),
    },
    refuse: { how: 'the child would exceed the Organization’s Mission depth', before: queuedItem, policy: { maxMissionDepth: 0 }, code: 'RATE_LIMITED' },
  },
  '[row active --mission.submit_for_approval--> awaiting_approval]': {
    perform: { how: 'the Coordinator submits once every WorkItem is verified', before: (w) => reach(w, 'verified') },
    refuse: {
      how: 'a WorkItem is still unfinished',
      before: async (w) => {
        await reach(w, 'verified')
        await reach(w, 'open')
      },
      code: 'INVALID_STATE_TRANSITION',
    },
  },
  '[row awaiting_approval --mission.request_changes--> active]': {
    perform: { how: 'the MissionOwner’s signed change request reopens it', after: async (w) => expect(w.group().submission).toBeUndefined() },
    refuse: {
      how: 'nothing was submitted',
      before: (w) => reach(w, 'verified'),
      act: (w) =>
        w.as.owner.missionRequestChanges({ approval: decision(w.group(), cast.owner, 'changes_requested', { artifactHashes: [...w.group().artifacts.values()].map((a) => a.manifest.contentHash) }) }),
      code: 'INVALID_STATE_TRANSITION',
    },
  },
  '[row awaiting_approval --mission.approve--> approved]': {
    perform: { how: 'the MissionOwner’s signed Approval ends the Coordinator lease', after: async (w) => expect(w.group().coordinatorLease.state).toBe('released') },
    refuse: {
      how: 'a reviewer relaying the owner’s Approval is not the MissionOwner',
      act: (w) => w.as.reviewer.missionApprove({ approval: decision(w.group(), cast.owner, 'approved') }),
      code: 'AUTH_FORBIDDEN',
    },
  },
  ...each(
    (from) => `[row ${from} --mission.cancel--> cancelled]`,
    (from) => ({
      perform: { how: 'the MissionOwner cancels it' },
      refuse:
        from === 'active'
          ? { how: 'the Coordinator must not cancel the Mission', act: (w) => coordinatorOf(w).missionCancel({ reason: 'Done here.' }), code: 'AUTH_FORBIDDEN' }
          : { how: 'a Worker may not cancel the Mission', act: (w) => w.as.worker1.missionCancel({ reason: 'Done here.' }), code: 'AUTH_FORBIDDEN' },
    }),
  ),
  ...each(
    (from) => `[row ${from} --system.parent_mission_cancelled--> cancelled]`,
    (from) => ({
      perform: {
        how: 'the parent Mission is cancelled',
        before: childAt(from),
        act: async (w, s) => {
          s.target = s.child!
          return ownerOf(w).missionCancel({ reason: 'Priorities changed.' })
        },
      },
    }),
  ),
  ...each(
    (from) => `[row ${from} --mission.terminate--> failed]`,
    (from) => ({
      perform: { how: 'the Coordinator terminates it' },
      refuse:
        from === 'active'
          ? {
              how: 'a Worker claiming the Coordinator lease',
              act: (w) => {
                w.as.worker1.epochs.setCoordinator(w.groupId, 1)
                return w.as.worker1.missionTerminate({ reason: 'Stop.' })
              },
              // §19: the current Coordinator Epoch does not make the Worker the Coordinator.
              code: 'AUTH_FORBIDDEN',
            }
          : { how: 'a service outside the control plane may not terminate', act: (w) => w.as.registry.missionTerminate({ reason: 'Stop.' }), code: 'AUTH_FORBIDDEN' },
    }),
  ),
  '[row active --system.child_mission_failed--> failed [childIndispensable]]': {
    perform: {
      how: 'an indispensable child Mission fails',
      before: childAt('active', 'fail_parent_mission'),
      act: (_w, s) => coordinatorOf(s.child!).missionTerminate({ reason: 'The child cannot finish.' }),
      after: async (w, s) => expect(w.item(s.workItemId!).doc.state).toBe('failed'),
    },
  },
  ...each(
    (from) => `[row ${from} --mission.assign_coordinator--> ${from}]`,
    (from) => ({
      perform: {
        how: 'the MissionOwner appoints a new Coordinator under the next epoch',
        after: async (w) => expect(w.group().mission.coordinator).toMatchObject({ agentId: cast.reviewer.actor.id, coordinatorEpoch: 2 }),
      },
      refuse:
        from === 'active'
          ? {
              how: 'a Worker may not appoint',
              act: (w) => w.as.worker1.missionAssignCoordinator({ coordinatorAgentId: cast.worker1.actor.id, leaseSeconds: 60, contextPackage: contextPackage(w.group()) }),
              code: 'AUTH_FORBIDDEN',
            }
          : {
              how: 'the Context Package belongs to another Mission',
              act: (w) =>
                ownerOf(w).missionAssignCoordinator({
                  coordinatorAgentId: cast.reviewer.actor.id,
                  leaseSeconds: 60,
                  contextPackage: contextPackage(w.group(), cast.coordinator, { missionId: 'urn:weft:test:mission:elsewhere', groupId: 'urn:weft:test:group:elsewhere' }),
                }),
              code: 'AUTH_FORBIDDEN',
            },
    }),
  ),
  ...each(
    (from) => `[row ${from} --mission.renew_coordinator--> ${from}]`,
    (from) => ({
      perform: { how: 'the Coordinator extends its lease', after: async (w) => expect(w.group().coordinatorLease.renewalCount).toBe(1) },
      refuse:
        from === 'active'
          ? {
              how: 'under a Coordinator Epoch a reappointment fenced',
              before: (w) => ownerOf(w).missionAssignCoordinator({ coordinatorAgentId: cast.coordinator.actor.id, leaseSeconds: 3600, contextPackage: contextPackage(w.group()) }),
              act: (w) => {
                w.as.coordinator.epochs.setCoordinator(w.groupId, 1)
                return w.as.coordinator.missionRenewCoordinator({ leaseSeconds: 60 })
              },
              code: 'AUTH_STALE_COORDINATOR',
            }
          : {
              how: 'after the lease expired',
              before: async (w) => {
                await reachMission(w, from)
                w.clock.advance(86_401)
              },
              code: 'AUTH_STALE_COORDINATOR',
            },
    }),
  ),
}

/** The default preparation: the main Mission brought to the row's `from`. */
function prepare(from: string): (w: World, s: Scratch) => Promise<unknown> {
  return async (w) => (from === 'none' ? undefined : reachMission(w, from as MissionReachable))
}

function performTest(c: RowCase, step: Step): void {
  it(`${c.tag} ${step.how}`, async () => {
    const w = await started()
    const s: Scratch = {}
    await (step.before ?? prepare(c.row.from))(w, s)
    const receipt = await (step.act ?? ACTIONS[c.row.event]!)(w, s)
    const target = s.target ?? w
    expect(target.group().mission.state).toBe(c.row.to)
    // The Mission's own Events: those of its Group that name no WorkItem.
    const appended = kinds(receipt.events.filter((e) => e.groupId === target.groupId && e.workItemId === undefined))
    expect(appended.filter((k) => !(c.row.emits as readonly string[]).includes(k))).toEqual([])
    expect(appended.length).toBeGreaterThan(0)
    await step.after?.(w, s)
  })
}

function refuseTest(c: RowCase, step: Refusal): void {
  it(`${c.refusal} ${step.how}: ${step.code}`, async () => {
    const w = await started(step.policy === undefined ? {} : { policy: step.policy })
    const s: Scratch = {}
    await (step.before ?? prepare(c.row.from))(w, s)
    const state = w.group().mission.state
    await expectRefused(w, () => (step.act ?? ACTIONS[c.row.event]!)(w, s), step.code)
    expect(w.group().mission.state).toBe(state)
  })
}

describe('every row of the Mission machine, through @weft/client', () => {
  rowTests(MISSION_ROW_CASES, PLANS, performTest, refuseTest)

  it('has no plan for a row the machine does not have', () => {
    expect(Object.keys(PLANS).filter((tag) => !MISSION_ROW_CASES.some((c) => c.tag === tag))).toEqual([])
  })
})
