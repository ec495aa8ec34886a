/**
 * The WorkItem (§10.2) and Mission (§7.1) machines against their tables: for every state and every
 * event (each event of the rows and each Command kind aimed at the aggregate), with guard flags
 * set and unset, the machine moves exactly where a row says and nowhere else. Then the tables
 * themselves: sections, catalogued kinds, reachability, no duplicate rows.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { initialTransition, transition, type AnyStateMachine } from 'xstate'
import { COMMAND_CATALOG, commandInfo, isCommandKind, isEventKind, type AggregateType } from '../src/catalog/index.js'
import { MISSION_STATES } from '../src/documents/mission.js'
import { WORK_ITEM_STATES } from '../src/documents/work-item.js'
import {
  INITIAL_MISSION_STATE,
  INITIAL_WORK_ITEM_STATE,
  MISSION_GUARDS,
  MISSION_INTERNAL_EVENTS,
  MISSION_TRANSITIONS,
  NO_AGGREGATE,
  TERMINAL_MISSION_STATES,
  TERMINAL_WORK_ITEM_STATES,
  WORK_ITEM_GUARDS,
  WORK_ITEM_INTERNAL_EVENTS,
  WORK_ITEM_TRANSITIONS,
  missionMachine,
  workItemMachine,
  type AnyTransitionRow,
} from '../src/machines/index.js'

/**
 * Widens a typed machine for the table-driven loops, which send event types as plain strings.
 * (XState's `AnyStateMachine` is not assignable from a typed machine under
 * `exactOptionalPropertyTypes`, hence the double cast.)
 */
function asAny(machine: unknown): AnyStateMachine {
  return machine as AnyStateMachine
}

interface Case {
  readonly name: string
  readonly machine: AnyStateMachine
  readonly rows: readonly AnyTransitionRow[]
  readonly states: readonly string[]
  readonly terminal: readonly string[]
  readonly initial: string
  readonly guards: readonly string[]
  readonly internalEvents: readonly string[]
  readonly aggregate: AggregateType
}

const cases: readonly Case[] = [
  {
    name: 'WorkItem (§10.2)',
    machine: asAny(workItemMachine),
    rows: WORK_ITEM_TRANSITIONS,
    states: WORK_ITEM_STATES,
    terminal: TERMINAL_WORK_ITEM_STATES,
    initial: INITIAL_WORK_ITEM_STATE,
    guards: Object.keys(WORK_ITEM_GUARDS),
    internalEvents: WORK_ITEM_INTERNAL_EVENTS,
    aggregate: 'workItem',
  },
  {
    name: 'Mission (§7.1)',
    machine: asAny(missionMachine),
    rows: MISSION_TRANSITIONS,
    states: MISSION_STATES,
    terminal: TERMINAL_MISSION_STATES,
    initial: INITIAL_MISSION_STATE,
    guards: Object.keys(MISSION_GUARDS),
    internalEvents: MISSION_INTERNAL_EVENTS,
    aggregate: 'mission',
  },
]

type Flags = Readonly<Record<string, boolean>>

/** The row the table selects for (state, event) under the given guard flags: guarded rows first. */
function expectedRow(rows: readonly AnyTransitionRow[], state: string, event: string, flags: Flags): AnyTransitionRow | undefined {
  const candidates = rows.filter((row) => row.from === state && row.event === event)
  return candidates.find((row) => row.guard !== undefined && flags[row.guard] === true) ?? candidates.find((row) => row.guard === undefined)
}

/** Payloads worth trying: no flag, every flag, and each single flag on its own. */
function flagSets(guards: readonly string[]): Flags[] {
  return [{}, Object.fromEntries(guards.map((g) => [g, true])), ...guards.map((g) => ({ [g]: true })), Object.fromEntries(guards.map((g) => [g, false]))]
}

for (const c of cases) {
  describe(`${c.name} machine`, () => {
    const events = [...new Set([...c.rows.map((row) => row.event), ...COMMAND_CATALOG.filter((entry) => entry.aggregate === c.aggregate).map((entry) => entry.kind), ...c.internalEvents])].sort()
    const snapshotOf = (state: string) => c.machine.resolveState({ value: state, context: undefined })

    it('has exactly the schema states, starting where creation leads', () => {
      expect(Object.keys(c.machine.states)).toEqual([...c.states])
      const [start] = initialTransition(c.machine)
      expect(start.value).toBe(c.initial)
      const created = c.rows.filter((row) => row.from === NO_AGGREGATE && row.to !== NO_AGGREGATE)
      expect(created.length).toBeGreaterThan(0)
      for (const row of created) expect(row.to).toBe(c.initial)
    })

    it('moves exactly as the table says for every state × event × guard outcome', () => {
      let checked = 0
      let moved = 0
      for (const state of c.states) {
        const before = snapshotOf(state)
        for (const type of events) {
          for (const flags of flagSets(c.guards)) {
            const event = { type, ...flags }
            const row = expectedRow(c.rows, state, type, flags)
            const [after] = transition(c.machine, before, event)
            const label = `${state} --${type} ${JSON.stringify(flags)}-->`
            expect(before.can(event), label).toBe(row !== undefined)
            if (row) {
              expect(after.value, label).toBe(row.to)
              moved++
            } else {
              // No row: the machine leaves the snapshot untouched.
              expect(after, label).toBe(before)
            }
            checked++
          }
        }
      }
      expect(checked).toBe(c.states.length * events.length * flagSets(c.guards).length)
      // Every machine row is taken at least once by some payload.
      for (const row of c.rows.filter((r) => r.from !== NO_AGGREGATE)) {
        const flags = row.guard === undefined ? {} : { [row.guard]: true }
        const [after] = transition(c.machine, snapshotOf(row.from), { type: row.event, ...flags })
        expect(after.value, `${row.from} --${row.event}--> ${row.to}`).toBe(row.to)
      }
      expect(moved).toBeGreaterThan(0)
    })

    it('fails a guarded row when its guard does not hold', () => {
      for (const row of c.rows.filter((r) => r.guard !== undefined)) {
        const fallback = c.rows.find((r) => r.from === row.from && r.event === row.event && r.guard === undefined)
        const before = snapshotOf(row.from)
        const [after] = transition(c.machine, before, { type: row.event, [row.guard!]: false })
        if (fallback) expect(after.value).toBe(fallback.to)
        else expect(after).toBe(before)
      }
    })

    it('makes the terminal states final, with no way out', () => {
      for (const state of c.states) {
        const snapshot = snapshotOf(state)
        expect(snapshot.status === 'done', state).toBe(c.terminal.includes(state))
      }
      for (const state of c.terminal) {
        expect(c.rows.filter((row) => row.from === state)).toEqual([])
        for (const type of events) expect(snapshotOf(state).can({ type })).toBe(false)
      }
    })

    it('reaches every state from the initial state (walk over the rows)', () => {
      const seen = new Set([c.initial])
      const queue = [c.initial]
      for (let state = queue.shift(); state !== undefined; state = queue.shift()) {
        for (const row of c.rows.filter((r) => r.from === state)) {
          if (!seen.has(row.to)) {
            seen.add(row.to)
            queue.push(row.to)
          }
        }
      }
      expect([...seen].sort()).toEqual([...c.states].sort())
    })
  })

  describe(`${c.name} table`, () => {
    it('cites §7, §10, §11 or §14 on every row', () => {
      for (const row of c.rows) expect(row.section, `${row.from} --${row.event}-->`).toMatch(/^§(7|10|11|14)(\.\d+)?$/)
    })

    it('appends only catalogued Event kinds, within what the driving Command may emit', () => {
      for (const row of c.rows) {
        for (const kind of row.emits) expect(isEventKind(kind), kind).toBe(true)
        if (isCommandKind(row.event)) {
          const allowed: readonly string[] = commandInfo(row.event).emits
          for (const kind of row.emits) expect(allowed, `${row.event} emits ${kind}`).toContain(kind)
        }
      }
    })

    it('names events by catalogued Command kinds, or by documented timer./system. events', () => {
      for (const row of c.rows) {
        if (!isCommandKind(row.event)) {
          expect(row.event).toMatch(/^(timer|system)\.[a-z_]+$/)
          expect(c.internalEvents).toContain(row.event)
        }
      }
      for (const event of c.internalEvents)
        expect(
          c.rows.some((row) => row.event === event),
          event,
        ).toBe(true)
    })

    it('uses only states of the schema (or none for creation) and only declared guards, each at least once', () => {
      const states = new Set<string>([...c.states, NO_AGGREGATE])
      for (const row of c.rows) {
        expect(states.has(row.from)).toBe(true)
        expect(states.has(row.to)).toBe(true)
        if (row.to === NO_AGGREGATE) expect(row.from).toBe(NO_AGGREGATE)
        if (row.guard !== undefined) expect(c.guards).toContain(row.guard)
      }
      expect([...new Set(c.rows.flatMap((row) => (row.guard ? [row.guard] : [])))].sort()).toEqual([...c.guards].sort())
    })

    it('has no duplicate (from, event, guard)', () => {
      const keys = c.rows.map((row) => `${row.from}|${row.event}|${row.guard ?? ''}`)
      expect(new Set(keys).size).toBe(keys.length)
    })
  })
}

describe('§10.2 and §7.1 rows', () => {
  const has = (rows: readonly AnyTransitionRow[], from: string, event: string, to: string) => rows.some((row) => row.from === from && row.event === event && row.to === to)

  it('lists every row of the §10.2 table', () => {
    const rows = WORK_ITEM_TRANSITIONS
    const unfinished = ['open', 'offered', 'queued', 'active', 'blocked', 'submitted']
    expect(has(rows, 'none', 'work.propose', 'none')).toBe(true)
    expect(has(rows, 'none', 'work.authorize', 'open')).toBe(true)
    for (const from of ['open', 'offered', 'queued', 'active', 'blocked', 'failed']) expect(has(rows, from, 'work.offer', 'offered'), from).toBe(true)
    expect(has(rows, 'offered', 'work.accept_offer', 'queued')).toBe(true)
    expect(has(rows, 'offered', 'timer.offer_expired', 'offered')).toBe(true)
    expect(has(rows, 'queued', 'approval.grant_execution', 'queued')).toBe(true)
    expect(has(rows, 'queued', 'work.start', 'active')).toBe(true)
    expect(has(rows, 'active', 'work.checkpoint', 'queued')).toBe(true)
    expect(has(rows, 'active', 'work.block', 'blocked')).toBe(true)
    expect(has(rows, 'blocked', 'work.unblock', 'queued') && has(rows, 'blocked', 'work.unblock', 'open')).toBe(true)
    expect(has(rows, 'active', 'work.submit', 'submitted')).toBe(true)
    expect(has(rows, 'submitted', 'work.accept_result', 'verified')).toBe(true)
    for (const from of unfinished) {
      expect(has(rows, from, 'work.fail', 'failed'), from).toBe(true)
      expect(has(rows, from, 'work.cancel', 'cancelled'), from).toBe(true)
      expect(has(rows, from, 'system.mission_failed', 'failed'), from).toBe(true)
      expect(has(rows, from, 'system.mission_cancelled', 'cancelled'), from).toBe(true)
    }
    for (const from of unfinished.slice(0, 5)) expect(has(rows, from, 'mission.create_child', 'blocked'), from).toBe(true)
    expect(has(rows, 'blocked', 'system.child_mission_approved', 'verified')).toBe(true)
    expect(has(rows, 'blocked', 'system.child_mission_failed', 'blocked') && has(rows, 'blocked', 'system.child_mission_failed', 'failed')).toBe(true)
  })

  it('lists every row of the §7.1 table', () => {
    const rows = MISSION_TRANSITIONS
    for (const kind of ['mission.create', 'mission.create_follow_up', 'mission.create_child']) expect(has(rows, 'none', kind, 'active'), kind).toBe(true)
    expect(has(rows, 'active', 'mission.submit_for_approval', 'awaiting_approval')).toBe(true)
    expect(has(rows, 'awaiting_approval', 'mission.request_changes', 'active')).toBe(true)
    expect(has(rows, 'awaiting_approval', 'mission.approve', 'approved')).toBe(true)
    for (const from of ['active', 'awaiting_approval']) {
      expect(has(rows, from, 'mission.cancel', 'cancelled') && has(rows, from, 'system.parent_mission_cancelled', 'cancelled'), from).toBe(true)
      expect(has(rows, from, 'mission.terminate', 'failed') && has(rows, from, 'system.child_mission_failed', 'failed'), from).toBe(true)
    }
  })

  it('lets an offer expire without an Event or a state change (§10.2)', () => {
    const row = WORK_ITEM_TRANSITIONS.find((r) => r.event === 'timer.offer_expired')
    expect(row).toMatchObject({ from: 'offered', to: 'offered', emits: [] })
  })
})

describe('the main entry', () => {
  it('stays free of XState: the machines are only on the `@weft/spec/machines` subpath', () => {
    const main = readFileSync(join(import.meta.dirname, '..', 'src', 'index.ts'), 'utf8')
    expect(main).not.toMatch(/machines|xstate/)
  })
})
