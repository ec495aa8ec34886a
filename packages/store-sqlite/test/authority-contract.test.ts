/**
 * One set of expectations, run against the in-memory store of @weft/authority and the SQLite
 * store alike: whatever the memory store answers, the SQLite store must answer the same.
 */
import { createMemoryStore, type AuthorityStore, type StoredReceipt } from '@weft/authority'
import type { Event } from '@weft/spec'
import { beforeAll, describe, expect, it } from 'vitest'
import { openSqliteAuthorityStore } from '../src/index.js'
import { scenarioLog, type Transaction } from './world-log.js'

let log: readonly Transaction[]
let all: Event[]
let groupIds: string[]

beforeAll(async () => {
  log = await scenarioLog()
  all = log.flatMap((t) => t.events)
  groupIds = [...new Set(all.flatMap((e) => (e.groupId === undefined ? [] : [e.groupId])))]
})

const STORES: [string, () => AuthorityStore & { close?: () => void }][] = [
  ['memory', createMemoryStore],
  ['sqlite', () => openSqliteAuthorityStore(':memory:')],
]

/** What a store holds, read through every reader. */
function contents(store: AuthorityStore, transactions: readonly Transaction[] = log) {
  return {
    organization: store.organizationEvents(),
    groups: Object.fromEntries(groupIds.map((g) => [g, store.groupEvents(g)])),
    all: [...store.allEvents()],
    receipts: transactions.map((t) => store.receipt(`${t.receipt.actor.type}:${t.receipt.actor.id}`, t.receipt.actionId)),
  }
}

/** A copy of `event` moved to `sequence` under a new Event ID. */
const moved = (event: Event, sequence: number, tag: string): Event => ({ ...event, eventId: `${event.eventId}:${tag}`, sequence })
/** A receipt of a new Action ID. */
const fresh = (receipt: StoredReceipt, tag: string): StoredReceipt => ({ ...receipt, actionId: `${receipt.actionId}:${tag}` })

describe.each(STORES)('the %s Authority store', (_name, open) => {
  const filled = (): AuthorityStore => {
    const store = open()
    for (const t of log) store.appendTransaction(t.events, t.receipt)
    return store
  }

  it('reads back every transaction: Organization log, Group logs, acceptance order, receipts', () => {
    const store = filled()
    expect(groupIds.length).toBeGreaterThanOrEqual(2)
    expect(log.some((t) => t.events.length > 1)).toBe(true)
    expect(contents(store)).toEqual({
      organization: all.filter((e) => e.groupId === undefined),
      groups: Object.fromEntries(groupIds.map((g) => [g, all.filter((e) => e.groupId === g)])),
      all,
      receipts: log.map((t) => t.receipt),
    })
    expect(store.receipt('agent:urn:weft:test:agent:nobody', log[0]!.receipt.actionId)).toBeUndefined()
    expect(store.groupEvents('urn:weft:test:group:absent')).toEqual([])
  })

  it('reads a window of a Group log: above a position, at most a limit', () => {
    const store = filled()
    const groupId = groupIds[0]!
    const logOf = all.filter((e) => e.groupId === groupId)
    const cases: [number, number][] = [
      [0, Number.POSITIVE_INFINITY],
      [3, Number.POSITIVE_INFINITY],
      [3, 4],
      [2.7, 2],
      [-5, 1],
      [0, 0],
      [logOf.length, 10],
      [logOf.length + 5, 10],
    ]
    for (const [after, limit] of cases) {
      const from = Math.max(0, Math.floor(after))
      expect([after, limit, store.groupEvents(groupId, after, limit).map((e) => e.sequence)]).toEqual([
        after,
        limit,
        logOf.filter((e) => (e.sequence as number) > from).slice(0, limit === Number.POSITIVE_INFINITY ? undefined : limit).map((e) => e.sequence),
      ])
    }
  })

  it('hands out immutable Events (§4.6)', () => {
    const store = filled()
    const [event] = store.groupEvents(groupIds[0]!, 0, 1)
    expect(Object.isFrozen(event)).toBe(true)
    expect(Object.isFrozen(event!.payload)).toBe(true)
    expect(Object.isFrozen(event!.actor)).toBe(true)
  })

  it('refuses a sequence gap, a repeated sequence (fork) and a reused receipt key, appending nothing', () => {
    const store = filled()
    const before = contents(store)
    const groupId = groupIds[0]!
    const last = store.groupEvents(groupId).at(-1)!
    const head = last.sequence as number
    const template = log.find((t) => t.events.every((e) => e.groupId === groupId))!
    expect(() => store.appendTransaction([moved(last, head + 2, 'gap')], fresh(template.receipt, 'gap'))).toThrow()
    expect(() => store.appendTransaction([moved(last, head, 'fork')], fresh(template.receipt, 'fork'))).toThrow()
    expect(() => store.appendTransaction([moved(last, head + 1, 'reuse')], template.receipt)).toThrow()
    expect(contents(store)).toEqual(before)
    // The refusals left the head where it was: the next sequence is still accepted.
    store.appendTransaction([moved(last, head + 1, 'next')], fresh(template.receipt, 'next'))
    expect(store.groupEvents(groupId, head).map((e) => e.eventId)).toEqual([`${last.eventId}:next`])
  })

  it('appends a transaction that fails midway not at all', () => {
    const store = filled()
    const before = contents(store)
    const groupId = groupIds[0]!
    const last = store.groupEvents(groupId).at(-1)!
    const head = last.sequence as number
    const organization = all.find((e) => e.groupId === undefined)!
    const template = log.at(-1)!
    // Two good Events (one Organization, one continuing the Group), then a gap.
    const events = [{ ...organization, eventId: `${organization.eventId}:midway` }, moved(last, head + 1, 'a'), moved(last, head + 3, 'b')]
    expect(() => store.appendTransaction(events, fresh(template.receipt, 'midway'))).toThrow()
    expect(contents(store)).toEqual(before)
    expect(store.receipt(`${template.receipt.actor.type}:${template.receipt.actor.id}`, `${template.receipt.actionId}:midway`)).toBeUndefined()
  })

  it('counts sequences per Group, and several Groups in one transaction', () => {
    const store = open()
    const [a, b] = groupIds as [string, string]
    const base = all.find((e) => e.groupId === a)!
    const receipt = log[0]!.receipt
    const event = (groupId: string, sequence: number, tag: string): Event => ({ ...moved(base, sequence, tag), groupId })
    store.appendTransaction([event(a, 1, 'a1'), event(b, 1, 'b1'), event(a, 2, 'a2')], fresh(receipt, 'both'))
    expect(() => store.appendTransaction([event(b, 3, 'b3')], fresh(receipt, 'skip'))).toThrow()
    store.appendTransaction([event(b, 2, 'b2')], fresh(receipt, 'b2'))
    expect([a, b].map((g) => store.groupEvents(g).map((e) => e.eventId.split(':').at(-1)))).toEqual([
      ['a1', 'a2'],
      ['b1', 'b2'],
    ])
    expect([...store.allEvents()].map((e) => e.eventId.split(':').at(-1))).toEqual(['a1', 'b1', 'a2', 'b2'])
  })
})
