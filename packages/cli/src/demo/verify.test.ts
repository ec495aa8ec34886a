/**
 * The post-run verifier fails what it claims to check: a clean demo run passes every check, and a
 * run whose log, state, side-effect ledger or approvals were tampered with fails the matching one.
 */
import type { Event } from '@weft/spec'
import { beforeAll, describe, expect, it } from 'vitest'
import { runDemo, type DemoWorld } from './run.js'
import { CHECK_NAMES, slotIsolation, verifyRun, type SideEffectAttempt, type SlotInvocation, type VerifySource } from './verify.js'

let world: DemoWorld

beforeAll(async () => {
  ;({ world } = await runDemo({ seed: 1 }))
})

/** The world seen through an Authority whose reads are replaced by `reads`. */
function tampered(reads: Partial<Pick<VerifySource['authority'], 'events' | 'replayState' | 'group'>>, sideEffects: VerifySource['sideEffects'] = world.sideEffects): VerifySource {
  const a = world.authority
  return {
    registry: world.registry,
    plans: world.plans,
    sideEffects,
    slotRuns: () => world.slotRuns(),
    authority: {
      state: a.state,
      organizationEvents: () => a.organizationEvents(),
      events: reads.events ?? ((groupId, after) => a.events(groupId, after)),
      replayState: reads.replayState ?? (() => a.replayState()),
      group: reads.group ?? ((groupId) => a.group(groupId)),
    },
  }
}

/** The names of the checks that failed. */
function failed(source: VerifySource, attempts?: readonly SideEffectAttempt[]): string[] {
  return verifyRun({ world: source, ...(attempts === undefined ? {} : { attempts }) })
    .checks.filter((c) => !c.held)
    .map((c) => c.name)
}

/** The search Group's log with `edit` applied to a deep copy. */
function editedSearchLog(edit: (log: Event[]) => Event[]): VerifySource['authority']['events'] {
  const search = world.plans.search.plan.groupId
  return (groupId, after) => (groupId === search ? edit(structuredClone([...world.authority.events(groupId)])) : world.authority.events(groupId, after))
}

/** An executed attempt of the demo's first external operation. */
function executed(extra: Partial<SideEffectAttempt> = {}): SideEffectAttempt {
  const [key, entry] = [...world.sideEffects][0]!
  return { worker: 'brook#1', workItemId: 'urn:weft:demo:work:search:integration', ownershipEpoch: 1, operationId: entry.operationId, key, atMs: 0, outcome: 'executed', current: true, ...extra }
}

describe('verifyRun', () => {
  it('passes every check on a clean run, in the documented order', () => {
    const v = verifyRun({ world })
    expect(v.checks.map((c) => c.name)).toEqual([...CHECK_NAMES])
    expect(v.checks.filter((c) => !c.held)).toEqual([])
    expect(v.passed).toBe(true)
  })

  it('fails the signature check on a tampered Event (§6.4)', () => {
    const source = tampered({
      events: editedSearchLog((log) => {
        ;(log[4]!.payload as Record<string, unknown>)['tampered'] = true
        return log
      }),
    })
    expect(failed(source)).toEqual(['event-signatures'])
  })

  it('fails the sequence check when an Event is missing from a Group log (§15.2)', () => {
    expect(failed(tampered({ events: editedSearchLog((log) => log.filter((_, i) => i !== 7)) }))).toContain('contiguous-sequences')
  })

  it('fails the fold check when the live state is not the fold of the log (§16)', () => {
    const search = world.plans.search.plan.groupId
    const fold = (): ReturnType<VerifySource['authority']['replayState']> => {
      const state = world.authority.replayState()
      const item = [...state.groups.get(search)!.workItems.values()][0]!
      item.doc = { ...item.doc, state: 'failed' }
      return state
    }
    const v = verifyRun({ world: tampered({ replayState: fold }) })
    expect(v.checks.filter((c) => !c.held).map((c) => c.name)).toEqual(['state-equals-fold'])
    expect(v.checks[0]!.detail).toContain(search)
  })

  it('fails the side-effect check when an external system saw a key twice (§16)', () => {
    const twice = new Map([...world.sideEffects].map(([k, v], i) => [k, { ...v, calls: i === 0 ? 2 : v.calls }]))
    expect(failed(tampered({}, twice))).toEqual(['side-effects-once', 'stale-duplicate-refused'])
  })

  it('fails the refusal check on a stale execution, a key executed twice, or executions the external ledger did not see', () => {
    const clean = [...world.sideEffects].map(([key, v]) => executed({ key, operationId: v.operationId }))
    expect(failed(world, clean)).toEqual([])
    expect(failed(world, [...clean, executed({ outcome: 'refused', code: 'WORK_LEASE_EXPIRED', probe: 'stale' }), executed({ outcome: 'replayed', probe: 'duplicate' })])).toEqual([])
    expect(
      failed(
        world,
        clean.map((a, i) => (i === 0 ? { ...a, current: false } : a)),
      ),
    ).toEqual(['stale-duplicate-refused'])
    expect(failed(world, [...clean, clean[0]!])).toEqual(['stale-duplicate-refused'])
    expect(failed(world, clean.slice(1))).toEqual(['stale-duplicate-refused'])
  })

  it('fails the approval check when a Mission did not end approved', () => {
    const search = world.plans.search.plan.groupId
    const group: VerifySource['authority']['group'] = (groupId) => {
      const g = world.authority.group(groupId)
      return groupId === search && g !== undefined ? { ...g, mission: { ...g.mission, state: 'awaiting_approval' } } : g
    }
    expect(failed(tampered({ group }))).toEqual(['missions-approved'])
  })

  it('fails the Artifact-set check when an approval leaves out a delivered Artifact (§7.3)', () => {
    const source = tampered({
      events: editedSearchLog((log) => {
        const approval = log.findLast((e) => e.kind === 'mission.approved')!.payload as { approval: { artifactHashes: string[] } }
        approval.approval.artifactHashes = approval.approval.artifactHashes.slice(1)
        return log
      }),
    })
    const v = verifyRun({ world: source })
    expect(v.checks.find((c) => c.name === 'exact-artifact-sets')).toMatchObject({ held: false, detail: expect.stringContaining('misses 1 expected') })
  })

  it('fails the isolation check when overlapping slots share a context, token or key, or see another Mission (§11.1)', () => {
    const runs = world.slotRuns()
    const overlapping = (a: SlotInvocation, b: SlotInvocation): boolean => a.worker === b.worker && a.startMs < (b.endMs ?? Infinity) && b.startMs < (a.endMs ?? Infinity)
    const i = runs.findIndex((a) => runs.some((b) => b !== a && overlapping(a, b) && a.expected?.missionId !== b.expected?.missionId))
    const j = runs.findIndex((b, k) => k !== i && overlapping(runs[i]!, b))
    expect(i).toBeGreaterThanOrEqual(0)
    expect(j).toBeGreaterThanOrEqual(0)
    const a = runs[i]!
    const failedWith = (edit: (b: SlotInvocation) => SlotInvocation): string[] => {
      const edited = runs.map((r, k) => (k === j ? edit(r) : r))
      return failed({ ...tampered({}), slotRuns: () => edited })
    }
    expect(failed({ ...tampered({}), slotRuns: () => runs })).toEqual([])
    expect(failedWith((r) => ({ ...r, contextId: a.contextId }))).toEqual(['slot-isolation'])
    expect(failedWith((r) => ({ ...r, tokens: [...r.tokens, ...a.tokens.slice(0, 1)] }))).toEqual(['slot-isolation'])
    expect(failedWith((r) => ({ ...r, seen: [r.seen[0]!, { ...r.seen[1]!, missionId: a.expected!.missionId, workItemId: a.expected!.workItemId }] }))).toEqual(['slot-isolation'])
    const shared = { operationId: 'integrate:release', key: 'sha256:' + '0'.repeat(64) }
    const report = slotIsolation(runs.map((r, k) => (k === i || k === j ? { ...r, sideEffects: [...r.sideEffects, shared] } : r)))
    expect(report.violations.some((v) => v.includes('share side-effect key'))).toBe(true)
  })

  it('fails the isolation check when the audit recorded nothing', () => {
    expect(failed({ ...tampered({}), slotRuns: () => [] })).toEqual(['slot-isolation'])
  })

  it('reports a check that cannot run as failed instead of throwing', () => {
    const broken = tampered({
      events: () => {
        throw new Error('the log is unreadable')
      },
    })
    const v = verifyRun({ world: broken })
    expect(v.passed).toBe(false)
    expect(v.checks.find((c) => c.name === 'contiguous-sequences')?.detail).toContain('the log is unreadable')
  })
})
