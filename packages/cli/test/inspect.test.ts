/**
 * `weft inspect` on a data directory whose Mission has a WorkItem tree and a child Mission
 * (§10.4, §14): the budget ledger books each charge on every level it draws on (§12), as the
 * Authority's own `cumulativeUsage` and `budgetLedger` report it, and shows which limits a budget
 * inherits; leases are judged at the inspection time; and inspection never writes. The server runs
 * in this process, reached over its real sockets.
 */
import { existsSync } from 'node:fs'
import { copyFile } from 'node:fs/promises'
import { join } from 'node:path'
import { budgetLedgerOf } from '@weft/authority'
import type { Client } from '@weft/client'
import { USAGE_DIMENSIONS, type EventPayload } from '@weft/spec'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main, type CliIo } from '../src/bin.js'
import { inspectData, inspectionText, type Inspection, type LedgerCell } from '../src/serve/inspect.js'
import { ORGANIZATION_FILE, STORE_FILE } from '../src/serve/organization.js'
import { startServer, type RunningServer } from '../src/serve/serve.js'
import {
  acceptAndStart,
  authorizeWork,
  contract,
  dataDir,
  DAY,
  groupOf,
  iso,
  missionPayload,
  offerWork,
  openMission,
  party,
  people,
  removeTemporaryDirs,
  temporaryDir,
  wid,
  type Party,
} from './serve-world.js'

const ROOT = groupOf('tree')
const CHILD = groupOf('tree-child')

let dir: string
let server: RunningServer
let p: Party
/** The `cumulativeUsage` the Authority reported with the last charge to `a`. */
let reportedForA: EventPayload<'ext.missionweaveprotocol.core.resource_usage_recorded'>['cumulativeUsage']

/**
 * Root Mission M with WorkItem a (running, worker-1) and a1 below it (accepted by worker-2 and
 * promoted to child Mission C, coordinated by worker-2), whose WorkItem c1 runs for worker-1.
 * c1 is charged 2 tool calls and 50 tokens, then a 3 tool calls. WorkItem p, open, limits only
 * tool calls and inherits the rest from M.
 */
beforeAll(async () => {
  dir = await dataDir()
  server = await startServer({ dataDir: dir, port: 0, insecureLoopback: true, controlPort: 0 })
  p = party({ url: server.url, controlUrl: server.controlUrl! }, ROOT)
  const coordinator = await p.connect('coordinator')
  const worker1 = await p.connect('worker1')
  const worker2 = await p.connect('worker2')
  await openMission(p, coordinator, 'tree')
  await authorizeWork(coordinator, 'a', [10, 10_000, 50])
  await coordinator.workAuthorize({ workItemId: wid('p'), contract: contract({ toolCallLimit: 7 }) })
  await offerWork(coordinator, 'a', worker1)
  const a = await acceptAndStart(worker1, 'a')
  await authorizeWork(coordinator, 'a1', [5, 5000, 20], { parent: 'a' })
  await offerWork(coordinator, 'a1', worker2)
  await worker2.workAcceptOffer({ workItemId: wid('a1'), ownershipLeaseSeconds: 3600 })
  const { missionId: _missionId, budget: _budget, ...base } = missionPayload('tree-child')
  await coordinator.missionCreateChild({
    ...base,
    parentWorkItemId: wid('a1'),
    childMissionId: 'urn:weft:serve-test:mission:tree-child',
    childGroupId: CHILD,
    deadline: iso(Date.now() + 15 * DAY),
    budget: { currency: 'USD', financialLimit: 4, modelTokenLimit: 4000, toolCallLimit: 10 },
    approvalPolicy: { finalHumanApproval: false, highRiskExecutionApproval: true },
    coordinatorAgentId: people.worker2.actor.id,
    childFailurePolicy: 'block_parent_work_item',
  })
  const childCoordinator: Client = worker2.withGroup(CHILD)
  await childCoordinator.membershipChange({ membershipId: `${CHILD}:membership:worker1`, member: people.worker1.actor, role: 'worker', state: 'active', scopes: ['group:read'] })
  const childWorker = worker1.withGroup(CHILD)
  await authorizeWork(childCoordinator, 'c1', [2, 2000, 5], { deadlineDays: 10 })
  await offerWork(childCoordinator, 'c1', childWorker)
  const c1 = await acceptAndStart(childWorker, 'c1')
  await childWorker.coreResourceUsageRecord({ workItemId: wid('c1'), ownershipEpoch: c1.epoch, executionLeaseId: c1.leaseId, usageDelta: { toolCalls: 2, modelTokens: 50 } })
  const charged = await worker1.coreResourceUsageRecord({ workItemId: wid('a'), ownershipEpoch: a.epoch, executionLeaseId: a.leaseId, usageDelta: { toolCalls: 3 } })
  reportedForA = (charged.events[0]!.payload as EventPayload<'ext.missionweaveprotocol.core.resource_usage_recorded'>).cumulativeUsage
})

afterAll(async () => {
  await p?.close()
  await server?.close()
  await removeTemporaryDirs()
})

/** The ledger cells of `dimension` by budget name (`M`, `C`, or the WorkItem's last ID segment). */
function ledger(inspection: Inspection, dimension: (typeof USAGE_DIMENSIONS)[number]): Record<string, LedgerCell> {
  const out: Record<string, LedgerCell> = {}
  for (const g of inspection.groups) for (const b of g.budget) out[b.scope === 'mission' ? (g.groupId === ROOT ? 'M' : 'C') : b.id.split(':').pop()!] = b.dimensions[dimension]
  return out
}

describe('weft inspect', () => {
  it('books each charge on its WorkItem, the parents, the child Mission and up to the root (§12, §14)', async () => {
    const inspection = await inspectData(dir)
    expect(inspection.groups.map((g) => g.groupId)).toEqual([ROOT, CHILD])
    const tools = ledger(inspection, 'toolCalls')
    expect(Object.fromEntries(Object.entries(tools).map(([k, c]) => [k, [c.allocated, c.reserved, c.used, c.remaining]]))).toEqual({
      M: [1000, 57, 5, 995],
      a: [50, 20, 5, 45],
      a1: [20, 10, 2, 18],
      p: [7, 0, 0, 7],
      C: [10, 5, 2, 8],
      c1: [5, 0, 2, 3],
    })
    expect(ledger(inspection, 'modelTokens')['M']).toEqual({ allocated: 1_000_000, source: 'own', reserved: 10_000, used: 50, remaining: 999_950 })
    expect(ledger(inspection, 'externalActions')['c1']).toEqual({ allocated: null, source: 'unlimited', reserved: 0, used: 0, remaining: null })
    // The Authority reported a's cumulative usage (its subtree, child Mission included) with the charge.
    const a = inspection.groups[0]!.budget.find((b) => b.id === wid('a'))!
    expect(Object.fromEntries(USAGE_DIMENSIONS.map((d) => [d, a.dimensions[d].used]))).toEqual(reportedForA)
  })

  it('reads every budget through the Authority’s budget ledger, inherited limits included (§12)', async () => {
    const inspection = await inspectData(dir, { groupId: ROOT })
    const root = inspection.groups[0]!
    const mission = { scope: 'mission', groupId: ROOT, missionId: root.missionId }
    expect(ledger(inspection, 'modelTokens')['p']).toEqual({ allocated: null, source: 'inherited', inheritedFrom: mission, reserved: 0, used: 0, remaining: 999_950 })
    // The figures of the running server's Authority, whose state the log folds into.
    for (const line of root.budget) {
      const query = budgetLedgerOf(server.authority.state, ROOT, line.scope === 'mission' ? undefined : line.id)!
      for (const d of USAGE_DIMENSIONS) {
        const { limit, ...rest } = query.dimensions[d]
        expect([line.id, d, line.dimensions[d]]).toEqual([line.id, d, { allocated: limit, ...rest }])
      }
    }
    const text = inspectionText(inspection)
    expect(text).toMatch(new RegExp(`WorkItem ${wid('p')}\\s+model tokens\\s+inherited from Mission ${root.missionId}\\s+0\\s+0\\s+999950`))
    expect(text).toMatch(new RegExp(`WorkItem ${wid('p')}\\s+money\\s+inherited from Mission ${root.missionId}\\s+0\\.00 USD\\s+0\\.00 USD\\s+`))
  })

  it('shows the promoted WorkItem and the child Group, and judges leases at the inspection time', async () => {
    const now = await inspectData(dir, { groupId: CHILD })
    expect(now.groups.map((g) => [g.groupId, g.missionState, g.workItems.map((w) => [w.workItemId, w.state, w.owner])])).toEqual([[CHILD, 'active', [[wid('c1'), 'active', people.worker1.actor.id]]]])
    expect(now.groups[0]!.leases.map((l) => [l.leaseType, l.holderAgentId, l.live])).toEqual([
      ['coordinator', people.worker2.actor.id, true],
      ['ownership', people.worker1.actor.id, true],
      ['execution', people.worker1.actor.id, true],
    ])
    const later = await inspectData(dir, { groupId: CHILD, now: Date.now() + 2 * DAY })
    expect(later.groups[0]!.leases.map((l) => l.live)).toEqual([false, false, false])
    const root = await inspectData(dir, { groupId: ROOT })
    expect(root.groups[0]!.workItems.find((w) => w.workItemId === wid('a1'))).toMatchObject({ state: 'blocked', owner: people.worker2.actor.id, ownershipEpoch: 1 })
  })

  it('prints tables, and one JSON document with --json', async () => {
    let out = ''
    const io: CliIo = { stdout: (t) => void (out += t), stderr: () => undefined, interactive: false }
    expect(await main(['inspect', '--data', dir], io)).toBe(0)
    expect(out).toBe(inspectionText(await inspectData(dir)))
    expect(out).toMatch(new RegExp(`WorkItem ${wid('a')}\\s+tool calls\\s+50\\s+20\\s+5\\s+45`))
    expect(out).toMatch(/Mission urn:weft:serve-test:mission:tree-child\s+tool calls\s+10\s+5\s+2\s+8/)
    expect(out).toMatch(/^Organization urn:weft:org:\S+: 4 Agents, 2 Groups$/m)
    out = ''
    expect(await main(['inspect', '--data', dir, '--json', '--group', CHILD, '--last', '1'], io)).toBe(0)
    const json = JSON.parse(out) as Inspection
    expect(json.groups.map((g) => [g.groupId, g.events.length, g.events[0]!.sequence === g.head])).toEqual([[CHILD, 1, true]])
  })

  it('never writes: a directory without a store stays without one', async () => {
    const empty = await temporaryDir()
    await copyFile(join(dir, ORGANIZATION_FILE), join(empty, ORGANIZATION_FILE))
    let err = ''
    const io: CliIo = { stdout: () => undefined, stderr: (t) => void (err += t), interactive: false }
    expect(await main(['inspect', '--data', empty], io)).toBe(2)
    expect(err).toContain(`${STORE_FILE} does not exist`)
    expect(existsSync(join(empty, STORE_FILE))).toBe(false)
    expect(await main(['inspect', '--data', empty, '--last', 'x'], io)).toBe(2)
    expect(await main(['inspect'], io)).toBe(2)
  })
})
