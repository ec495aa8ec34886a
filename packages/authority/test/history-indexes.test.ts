import type { Evidence, ResourceBudget } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { childrenOf, setReservation } from '../src/domain/work-index.js'
import { acceptEvidence } from '../src/domain/evidence.js'
import { limitsOf, type Usage } from '../src/domain/work-budget.js'
import { zeroUsage } from '../src/domain/budget-limits.js'
import { reservedUnder } from '../src/domain/work-contract.js'
import { emptyState, type GroupState } from '../src/model.js'
import { applyEvents, type ReducerTable } from '../src/commit/transact.js'
import { seedItem } from './fixtures-missions.js'
import { accept, authorize, exec, item, offer, reducers, start, submit, wid, world, type World } from './fixtures-work.js'
import { cast, contract, evidence } from '@weft/testkit/fixtures'
import { seedGroup } from './fixtures-state.js'

// The indexes that keep a Command's cost independent of the history (§12 budgets, §7.3 progress)
// must always equal what a scan of the state gives, live and after a replay of the log.

/** What the children of `parentId` reserve, by scanning every WorkItem of the Group. */
function scanned(group: GroupState, parentId: string | undefined, selfId = ''): Usage {
  const total = zeroUsage()
  for (const r of group.workItems.values()) {
    if (r.parentWorkItemId !== parentId || r.doc.workItemId === selfId) continue
    const l = limitsOf(r.reservedBudget)
    for (const d of Object.keys(total) as (keyof Usage)[]) total[d] += l[d] ?? 0
  }
  return total
}

const indexed = (group: GroupState, parentId: string | undefined, selfId = ''): Usage => ({ ...zeroUsage(), ...limitsOf(reservedUnder(group, parentId, selfId, 'USD')) })

const budget = (toolCallLimit: number): ResourceBudget => ({ currency: 'USD', financialLimit: 1.25, modelTokenLimit: 100, toolCallLimit })

/** A parent, two children and a top-level sibling; one child ends verified, one fails, the sibling is offered. */
function history(): World {
  const w = world()
  authorize(w, wid('parent'))
  authorize(w, wid('sibling'), { budget: budget(3) })
  for (const name of ['a', 'b']) exec(w, 'work.authorize', { workItemId: wid(name), contract: contract({ budget: budget(7) }), parentWorkItemId: wid('parent') }, cast.coordinator)
  offer(w, wid('a'))
  accept(w, wid('a'))
  const run = start(w, wid('a'))
  submit(w, wid('a'), run)
  exec(w, 'work.accept_result', { workItemId: wid('a'), evidence: [evidence(w.group, wid('a'), cast.reviewer)] }, cast.coordinator)
  exec(w, 'work.cancel', { workItemId: wid('b'), reason: 'not needed' }, cast.coordinator)
  offer(w, wid('sibling'))
  return w
}

describe('reservation sums per parent (§4.11, §12)', () => {
  it('equal a scan of the Group after authorizations, results, cancellations and offers', () => {
    const w = history()
    // The ended children gave back their unused budget, so the sums moved with them.
    expect(limitsOf(item(w, wid('b')).reservedBudget).toolCalls).toBe(0)
    for (const parent of [undefined, wid('parent')]) expect(indexed(w.group, parent)).toEqual(scanned(w.group, parent))
    expect(indexed(w.group, wid('parent')).financialMicrounits).toBeLessThan(2_500_000)
    expect(indexed(w.group, undefined, wid('sibling'))).toEqual(scanned(w.group, undefined, wid('sibling')))
    expect(indexed(w.group, wid('parent'), wid('a'))).toEqual(scanned(w.group, wid('parent'), wid('a')))
  })

  it('are rebuilt by a replay of the log', () => {
    const w = history()
    const replayed = emptyState()
    const group = seedGroup(replayed)
    applyEvents(replayed, w.log, reducers as ReducerTable)
    for (const parent of [undefined, wid('parent')]) expect(indexed(group, parent)).toEqual(indexed(w.group, parent))
  })

  it('count WorkItems stored without the reducers, and follow later reservations of them', () => {
    const w = world()
    authorize(w, wid('first'))
    const seeded = seedItem(w.group, 'seeded', 'open')
    expect(indexed(w.group, undefined)).toEqual(scanned(w.group, undefined))
    setReservation(w.group, seeded, budget(1))
    expect(indexed(w.group, undefined)).toEqual(scanned(w.group, undefined))
    expect(indexed(w.group, undefined).toolCalls).toBe(limitsOf(item(w, wid('first')).reservedBudget).toolCalls! + 1)
  })
})

describe('child index (§4.11)', () => {
  it('lists children per parent in authorization order, hand-seeded records included', () => {
    const w = history()
    expect([...childrenOf(w.group, wid('parent'))].map((r) => r.doc.workItemId)).toEqual([wid('a'), wid('b')])
    const late = seedItem(w.group, 'late', 'open')
    expect([...childrenOf(w.group, undefined)].map((r) => r.doc.workItemId)).toEqual([wid('parent'), wid('sibling'), late.doc.workItemId])
    expect(childrenOf(w.group, wid('a'))).toHaveLength(0)
  })
})

describe('accepted Evidence (§7.3)', () => {
  it('appends each Evidence ID once, also after the array was filled by hand', () => {
    const w = world()
    const [e1, e2] = [evidence(w.group, wid('x'), cast.reviewer), { ...evidence(w.group, wid('x'), cast.worker1), evidenceId: 'urn:weft:test:evidence:2' } as Evidence]
    acceptEvidence(w.group, [e1, e1])
    expect(w.group.acceptedEvidence.map((e) => e.evidenceId)).toEqual([e1.evidenceId])
    w.group.acceptedEvidence.push(e2)
    acceptEvidence(w.group, [e2, e1])
    expect(w.group.acceptedEvidence.map((e) => e.evidenceId)).toEqual([e1.evidenceId, e2.evidenceId])
  })
})
