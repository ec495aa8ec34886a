/**
 * The failure suite of §22 end to end: every fault is injected into a real demo run, each held,
 * and the post-run verifier passed. Assertions read the Authority's log and audit trail rather
 * than the suite's own wording, so a fault that was announced but did not bite fails here.
 *
 * Seeds beyond the first come from `WEFT_FAULT_SEEDS` (a count; default 1).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { EventPayload } from '@weft/spec'
import { beforeAll, describe, expect, it } from 'vitest'
import { EXIT, main, type CliIo } from '../src/bin.js'
import { FAULT_NAMES, runFaultSuite, STALE_PROBE_OPERATION, type FaultNotice, type FaultSuiteRun } from '../src/demo/faults.js'
import { CHECK_NAMES } from '../src/demo/verify.js'

const SEEDS = Array.from({ length: Math.max(1, Number(process.env['WEFT_FAULT_SEEDS'] ?? 1)) }, (_, i) => i + 1)

describe('runFaultSuite', () => {
  let run: FaultSuiteRun
  const notices: FaultNotice[] = []

  beforeAll(async () => {
    run = await runFaultSuite({ seed: 1, onNotice: (n) => notices.push(n) })
  })

  it('injects every fault once, each held, and the verifier passes every check', () => {
    const { result } = run
    expect([...result.faults.map((f) => f.name)].sort()).toEqual([...FAULT_NAMES].sort())
    expect(result.faults.filter((f) => !f.held)).toEqual([])
    expect(result.faults.filter((f) => f.observed.startsWith('never injected'))).toEqual([])
    for (const f of result.faults) expect(f.atMs).toBeGreaterThanOrEqual(result.startMs)
    expect(result.faults.map((f) => f.atMs)).toEqual([...result.faults.map((f) => f.atMs)].sort((a, b) => a - b))
    expect(result.verification.checks.map((c) => [c.name, c.held])).toEqual(CHECK_NAMES.map((n) => [n, true]))
    expect(result.approved).toBe(true)
    expect(result.passed).toBe(true)
  })

  it('announces each injected fault before it resolves, in virtual-time order', () => {
    const injected = notices.filter((n) => n.phase === 'inject').map((n) => n.fault)
    const resolved = notices.filter((n) => n.phase !== 'inject').map((n) => n.fault)
    // The demo's own preemption and change request are read from the log after the run.
    expect(injected).toEqual(FAULT_NAMES.filter((f) => f !== 'high-priority-preemption' && f !== 'human-change-request'))
    expect(resolved).toEqual(injected)
    expect(notices.every((n) => n.phase !== 'failed')).toBe(true)
    expect(notices.map((n) => n.atMs)).toEqual([...notices.map((n) => n.atMs)].sort((a, b) => a - b))
  })

  it('leaves the refusals in the Authority audit trail: collision, overflow, fenced Coordinator, late result (§15.1, §12, §7.2, §11.5)', () => {
    const audit = run.world.authority.audit()
    const codes = (kind: string): string[] => audit.filter((a) => a.kind === kind).map((a) => a.code)
    expect(codes('mission.renew_coordinator')).toEqual(expect.arrayContaining(['ACTION_ID_COLLISION']))
    expect(codes('ext.missionweaveprotocol.core.resource_usage_record')).toContain('BUDGET_EXCEEDED')
    expect(codes('mission.renew_coordinator').some((c) => c === 'MEMBERSHIP_REQUIRED' || c === 'AUTH_STALE_COORDINATOR')).toBe(true)
    expect(codes('work.submit')).toEqual(expect.arrayContaining(['WORK_STALE_OWNERSHIP']))
  })

  it('replaced the search Coordinator under the next epoch, and the replacement submitted the approved revision (§7.2)', () => {
    const { authority, plans, principals } = run.world
    const search = authority.group(plans.search.plan.groupId)!
    expect(search.mission.coordinator).toMatchObject({ agentId: principals.agents.get('lark')!.actor.id, coordinatorEpoch: 2 })
    const submitted = authority.events(plans.search.plan.groupId).filter((e) => e.kind === 'mission.submitted_for_approval')
    expect(submitted.at(-1)?.actor.id).toBe(principals.agents.get('lark')!.actor.id)
  })

  it("restarted a Worker under a new Session Epoch that revoked its leases, and reassigned a stalled Worker's WorkItem under a higher Ownership Epoch (§11.3, §11.5)", () => {
    const { authority } = run.world
    const sessions = authority
      .organizationEvents()
      .filter((e) => e.kind === 'ext.missionweaveprotocol.identity.session_opened')
      .map((e) => e.payload as EventPayload<'ext.missionweaveprotocol.identity.session_opened'>)
    expect(sessions.some((p) => p.sessionEpoch === 2)).toBe(true)
    const groups = [...authority.state.groups.keys()].flatMap((g) => authority.events(g))
    expect(groups.filter((e) => e.kind === 'ext.missionweaveprotocol.core.work_execution_lease_revoked').length).toBeGreaterThan(0)
    const fenced = groups.filter((e) => e.kind === 'work.offer.created' && (e.payload as EventPayload<'work.offer.created'>).fencedOwnershipEpoch !== undefined)
    expect(fenced.length).toBeGreaterThan(0)
  })

  it('refused every stale side effect and answered every duplicate from the ledger; each external key ran once (§16)', () => {
    const stale = run.attempts.filter((a) => a.probe === 'stale')
    const duplicate = run.attempts.filter((a) => a.probe === 'duplicate')
    expect(stale.length).toBeGreaterThan(0)
    expect(stale.every((a) => a.outcome === 'refused' && a.operationId === STALE_PROBE_OPERATION)).toBe(true)
    expect(duplicate.length).toBeGreaterThan(0)
    expect(duplicate.every((a) => a.outcome === 'replayed')).toBe(true)
    const executed = run.attempts.filter((a) => a.outcome === 'executed')
    expect(executed.every((a) => a.current === true)).toBe(true)
    expect(new Set(executed.map((a) => a.key)).size).toBe(executed.length)
    expect([...run.world.sideEffects.values()].map((v) => v.calls)).toEqual(executed.map(() => 1))
  })

  it.each(SEEDS.slice(1))('also holds with seed %i', async (seed) => {
    const { result } = await runFaultSuite({ seed })
    expect(result.faults.filter((f) => !f.held).map((f) => `${f.name}: ${f.observed}`)).toEqual([])
    expect(result.verification.checks.filter((c) => !c.held).map((c) => `${c.name}: ${c.detail}`)).toEqual([])
  })
})

describe('weft demo --faults', () => {
  it('prints the fault lines and the checklist, writes the faults into the result and exits 0', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'weft-faults-'))
    try {
      const out: string[] = []
      const io: CliIo = { stdout: (t) => out.push(t), stderr: (t) => out.push(t), interactive: false }
      expect(await main(['demo', '--faults', '--yes', '--report', dir], io)).toBe(EXIT.ok)
      const text = out.join('')
      for (const name of FAULT_NAMES) expect(text).toMatch(new RegExp(`✓ ${name}`))
      expect(text).toContain('[fault]     inject')
      expect(text).toContain(`${CHECK_NAMES.length} of ${CHECK_NAMES.length} checks passed`)
      const saved = JSON.parse(await readFile(join(dir, 'demo-result.json'), 'utf8')) as { faults: { name: string; held: boolean }[]; passed: boolean }
      expect(saved.passed).toBe(true)
      expect(saved.faults.map((f) => f.name).sort()).toEqual([...FAULT_NAMES].sort())
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
