/**
 * `weft serve` as a real process on loopback (§17): Agents on the WebSocket binding and the owner
 * on the control endpoint drive a Mission's WorkItems; the structured log reports what happened;
 * `weft inspect` reads the data directory while the server runs and after it stopped; SIGTERM
 * under load stops it with exit code 0 and loses no acknowledged Command (§4, §16).
 *
 * The steps share one server and build on each other, in order.
 */
import { join } from 'node:path'
import type { Client } from '@weft/client'
import { ProtocolError } from '@weft/codec'
import type { EventPayload } from '@weft/spec'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main, type CliIo } from '../src/bin.js'
import type { Inspection, WorkItemLine } from '../src/serve/inspect.js'
import { loadOrganization, ORGANIZATION_FILE, STORE_FILE } from '../src/serve/organization.js'
import { openSqliteAuthorityStore } from '@weft/store-sqlite'
import {
  acceptAndStart,
  artifact,
  authorizeWork,
  checkLog,
  dataDir,
  evidence,
  groupOf,
  offerWork,
  openMission,
  party,
  people,
  postLoad,
  removeTemporaryDirs,
  startServe,
  stop,
  storedGroupLog,
  wid,
  type LogLine,
  type Party,
  type ServeProcess,
} from './serve-world.js'

const GROUP = groupOf('serve')
const MISSION = 'urn:weft:serve-test:mission:serve'

let dir: string
let server: ServeProcess
let p: Party
let coordinator: Client
let worker1: Client
let worker2: Client

beforeAll(async () => {
  dir = await dataDir()
  server = await startServe(dir)
  p = party(server, GROUP)
})

afterAll(async () => {
  await p?.close()
  if (server?.child.exitCode === null) await stop(server, 'SIGKILL')
  await removeTemporaryDirs()
})

/** Runs `weft …` in this process and returns its exit code and output. */
async function weft(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = ''
  let err = ''
  const io: CliIo = { stdout: (t) => void (out += t), stderr: (t) => void (err += t), interactive: false }
  const code = await main(argv, io)
  return { code, out, err }
}

describe('weft serve', () => {
  it('registers the Agent Cards of organization.json and opens a session per handshake', async () => {
    const registered = server.log.filter((l) => l.msg === 'agent card registered').map((l) => l['agentId'])
    expect(registered.sort()).toEqual([people.coordinator, people.reviewer, people.worker1, people.worker2].map((x) => x.actor.id).sort())
    coordinator = await p.connect('coordinator')
    worker1 = await p.connect('worker1')
    worker2 = await p.connect('worker2')
    // Each handshake opened a Session Epoch through the control plane before it completed (§6.3).
    const sessions = server.log.filter((l) => l.msg === 'command accepted' && l['kind'] === 'ext.missionweaveprotocol.identity.session_open')
    const { controlPlane } = await loadOrganization(join(dir, ORGANIZATION_FILE))
    expect(sessions.map((l) => l['actorId'])).toEqual(Array(3).fill(controlPlane.actor.id))
    expect(server.log.filter((l) => l.msg === 'connection opened')).toHaveLength(3)
  })

  it('carries a Mission and its WorkItems through their states', async () => {
    await openMission(p, coordinator, 'serve')
    // a: verified with usage and an Artifact; b: active with usage; c: queued; d: open.
    await authorizeWork(coordinator, 'a', [10, 10_000, 50])
    for (const name of ['b', 'c', 'd']) await authorizeWork(coordinator, name, [5, 5000, 20])
    await offerWork(coordinator, 'a', worker1)
    await offerWork(coordinator, 'b', worker2)
    await offerWork(coordinator, 'c', worker1)
    const a = await acceptAndStart(worker1, 'a')
    await worker1.coreResourceUsageRecord({
      workItemId: wid('a'),
      ownershipEpoch: a.epoch,
      executionLeaseId: a.leaseId,
      usageDelta: { financialMicrounits: 1_500_000, modelTokens: 1200, toolCalls: 3 },
    })
    const manifest = artifact(MISSION, GROUP, wid('a'), people.worker1)
    await worker1.artifactPublish({ artifact: manifest, ownershipEpoch: a.epoch, executionLeaseId: a.leaseId })
    await worker1.workSubmit({
      workItemId: wid('a'),
      ownershipEpoch: a.epoch,
      executionLeaseId: a.leaseId,
      artifactIds: [manifest.artifactId],
      evidence: [evidence(MISSION, GROUP, wid('a'), people.worker1)],
    })
    const verified = await coordinator.workAcceptResult({ workItemId: wid('a'), evidence: [evidence(MISSION, GROUP, wid('a'), people.reviewer)] })
    expect(verified.events.map((e) => e.kind)).toContain('work.result.accepted')
    const b = await acceptAndStart(worker2, 'b')
    await worker2.coreResourceUsageRecord({ workItemId: wid('b'), ownershipEpoch: b.epoch, executionLeaseId: b.leaseId, usageDelta: { modelTokens: 500, toolCalls: 2 } })
    await worker1.workAcceptOffer({ workItemId: wid('c'), ownershipLeaseSeconds: 3600 })
  })

  it('logs every Command accepted, and every refusal with its §19 code, one JSON line each', async () => {
    // worker2 was never offered c: the Authority refuses, and the connection goes on.
    const refusal = await worker2.workAcceptOffer({ workItemId: wid('c'), ownershipLeaseSeconds: 3600 }).then(
      () => expect.fail('accepted an offer made to another Agent'),
      (e: unknown) => e as ProtocolError,
    )
    expect(refusal).toBeInstanceOf(ProtocolError)
    const line = await server.waitLog((l) => l.msg === 'command refused' && l['actionId'] === refusal.relatedActionId)
    expect(line).toMatchObject({ level: 'info', code: refusal.code, kind: 'work.accept_offer', actorId: people.worker2.actor.id })
    const accepted = server.log.filter((l): l is LogLine => l.msg === 'command accepted' && l['groupId'] === GROUP).map((l) => l['kind'])
    expect(accepted.slice(0, 5)).toEqual(['mission.create', 'membership.change', 'membership.change', 'membership.change', 'work.authorize'])
    expect(accepted.filter((k) => k === 'work.start')).toHaveLength(2)
    for (const l of server.log) expect(typeof l['time'] === 'string' && ['info', 'warn', 'error'].includes(l['level'] as string)).toBe(true)
  })

  it('is read by weft inspect while it runs (WAL readers beside the writer)', async () => {
    const { code, out } = await weft('inspect', '--data', dir, '--json')
    expect(code).toBe(0)
    const inspection = JSON.parse(out) as Inspection
    const group = inspection.groups.find((g) => g.groupId === GROUP)!
    const items: Record<string, WorkItemLine> = Object.fromEntries(group.workItems.map((w) => [w.workItemId.split(':').pop(), w]))
    expect(Object.fromEntries(Object.entries(items).map(([k, w]) => [k, [w.state, w.owner, w.ownershipEpoch]]))).toEqual({
      a: ['verified', people.worker1.actor.id, 1],
      b: ['active', people.worker2.actor.id, 1],
      c: ['queued', people.worker1.actor.id, 1],
      d: ['open', undefined, undefined],
    })
    expect(items['b']!.executionLeaseExpiresAt).toMatch(/^\d{4}-/)
    const live = group.leases.filter((l) => l.live).map((l) => `${l.leaseType} ${l.workItemId?.split(':').pop() ?? '-'}`)
    expect(live.sort()).toEqual(['coordinator -', 'execution b', 'ownership b', 'ownership c'])
    const ledger = Object.fromEntries(group.budget.map((b) => [b.scope === 'mission' ? 'mission' : b.id.split(':').pop(), b.dimensions]))
    // Verified a keeps what it consumed reserved (1.50 USD, 1200 tokens); b, c and d reserve their budgets.
    expect(ledger['mission']!.financialMicrounits).toEqual({ allocated: 100_000_000, source: 'own', reserved: 16_500_000, used: 1_500_000, remaining: 98_500_000 })
    expect(ledger['mission']!.modelTokens).toEqual({ allocated: 1_000_000, source: 'own', reserved: 16_200, used: 1700, remaining: 998_300 })
    expect(ledger['a']!.toolCalls).toEqual({ allocated: 50, source: 'own', reserved: 0, used: 3, remaining: 47 })
    expect(ledger['b']!.modelTokens).toEqual({ allocated: 5000, source: 'own', reserved: 0, used: 500, remaining: 4500 })
    expect(ledger['b']!.computeSeconds).toEqual({ allocated: null, source: 'unlimited', reserved: 0, used: 0, remaining: null })
    expect(group.head).toBe(storedGroupLog(dir, GROUP).length)
  })

  it('stops on SIGTERM under load with exit code 0; every acknowledged Command is on disk once and nothing else', async () => {
    const known = [...p.receipts]
    const created = p.receipts.find((r) => r.kind === 'mission.create')!.events[0]!.payload as EventPayload<'mission.created'>
    let signalled = false
    const load = await postLoad(worker1, created.conversation.conversationId, (n) => {
      if (n < 40 || signalled) return
      signalled = true
      server.child.kill('SIGTERM')
    })
    expect(await server.exited).toEqual({ code: 0, signal: null })
    const tail = server.log.slice(server.log.findIndex((l) => l.msg === 'shutting down')).map((l) => l.msg)
    expect(tail).toEqual(['shutting down', 'connection closed', 'connection closed', 'connection closed', 'stopped'])
    expect(load.refused).toEqual(new Map())
    expect(load.acknowledged.size).toBeGreaterThanOrEqual(40)
    // A graceful stop answers every Command it applied before closing the connections.
    expect(checkLog(storedGroupLog(dir, GROUP), known, load)).toEqual(new Set())
  })

  it('a graceful stop leaves a signed state checkpoint at the head, from which the next start resumes (§7.4, §16)', async () => {
    const store = openSqliteAuthorityStore(join(dir, STORE_FILE))
    let retained: number
    try {
      retained = [...store.allEvents()].length
      expect(store.checkpoint()?.manifest.position).toBe(retained)
    } finally {
      store.close()
    }
    const again = await startServe(dir)
    try {
      const opened = await again.waitLog((l) => l.msg === 'store opened')
      expect(opened.groupEvents).toBe(storedGroupLog(dir, GROUP).length)
      await again.waitLog((l) => l.msg === 'listening')
      expect(again.log.filter((l) => l.level === 'warn')).toEqual([])
    } finally {
      expect(await stop(again, 'SIGTERM')).toEqual({ code: 0, signal: null })
    }
    // Nothing was accepted in between, so the stop kept the checkpoint it found.
    const after = openSqliteAuthorityStore(join(dir, STORE_FILE))
    try {
      expect(after.checkpoint()?.manifest.position).toBe(retained)
    } finally {
      after.close()
    }
  })

  it('weft inspect prints the stopped directory: Events, WorkItems, leases and the ledger', async () => {
    const { code, out } = await weft('inspect', '--data', dir, '--group', GROUP, '--last', '3')
    expect(code).toBe(0)
    const head = storedGroupLog(dir, GROUP).length
    expect(out).toContain(`Mission ${MISSION} (active), ${head} Events`)
    expect(out).toContain(`Events (3 of ${head})`)
    expect(out).toMatch(new RegExp(`\\n  ${head}\\s+\\S+\\s+message\\.posted\\s+agent:${people.worker1.actor.id}\\n`))
    expect(out).toMatch(new RegExp(`${wid('b')}\\s+active\\s+${people.worker2.actor.id}\\s+1\\s`))
    expect(out).toMatch(new RegExp(`${wid('d')}\\s+open\\s+-\\s+-`))
    expect(out).toMatch(new RegExp(`Mission ${MISSION}\\s+money\\s+100\\.00 USD\\s+16\\.50 USD\\s+1\\.50 USD\\s+98\\.50 USD`))
    expect(out).toMatch(new RegExp(`WorkItem ${wid('a')}\\s+tool calls\\s+50\\s+0\\s+3\\s+47`))
    expect(await weft('inspect', '--data', dir, '--group', 'urn:weft:serve-test:group:none')).toMatchObject({ code: 2, err: expect.stringContaining('no Group urn:weft:serve-test:group:none') })
    expect(await weft('inspect', '--data', join(dir, 'missing'))).toMatchObject({ code: 2, err: expect.stringContaining('weft serve --init') })
  })
})
