import type { Event } from '@weft/spec'
import { beforeAll, describe, expect, it } from 'vitest'
import { cast, GROUP } from '@weft/testkit/fixtures'
import { started, type World } from '@weft/testkit/world'
import { chainLink, LOG_CHAIN_FORMAT, LogProofError, proveLog, type LogHead, type LogProofOptions, type LogRow } from './log-proof.js'
import { createMemoryStore } from './store.js'

let w: World
/** The log as a store reads it back: exact text, filing and chain link, in acceptance order. */
let rows: LogRow[]
let options: LogProofOptions

beforeAll(async () => {
  const store = createMemoryStore()
  w = await started({ store })
  await w.as.worker1.messagePost({ messageId: 'urn:weft:test:message:proof', conversationId: w.group().group.mainConversationId, content: [{ type: 'text', text: 'hello' }] })
  const last = new Map<string, string>()
  rows = [...store.allEvents()].map((event: Event) => {
    const text = JSON.stringify(event)
    const chain = chainLink(last.get(event.groupId ?? '') ?? LOG_CHAIN_FORMAT, text)
    last.set(event.groupId ?? '', chain)
    return { text, groupId: event.groupId ?? null, sequence: event.sequence ?? null, chain }
  })
  options = { registry: w.registry, authority: { type: 'service', id: cast.authority.actor.id } }
})

/** The failure of proving `of`, as its message. */
function refusal(of: LogRow[], extra: Partial<LogProofOptions> = {}): string {
  try {
    proveLog(of, { ...options, ...extra })
  } catch (error) {
    expect(error).toBeInstanceOf(LogProofError)
    return (error as Error).message
  }
  throw new Error('the proof passed')
}

describe('proveLog', () => {
  it('passes a log as the Authority wrote it, checking every signature without an anchor', () => {
    const summary = proveLog(rows, options)
    expect(summary).toMatchObject({ events: rows.length, groups: 1, signatures: rows.length, anchoredAt: 0 })
    expect(summary.heads[0]).toEqual({ sequence: rows.filter((r) => r.groupId === null).length, chain: rows.filter((r) => r.groupId === null).at(-1)!.chain })
  })

  it('proves the Events up to an anchor by their chains alone, and refuses an anchor the chains do not reach', () => {
    // Two Events before the end: the Organization log and the Group both have Events before it.
    const cut = rows.length - 2
    const heads = proveLog(rows.slice(0, cut), options).heads
    const summary = proveLog(rows, { ...options, anchor: { position: cut, heads } })
    expect(summary.signatures).toBe(2)
    // An unsigned stand-in is accepted up to the anchor only because its chain is the one signed.
    const group = heads.find((h) => h.groupId === GROUP)!
    const wrong: LogHead[] = heads.map((h) => (h === group ? { ...h, chain: `sha256:${'0'.repeat(64)}` } : h))
    expect(refusal(rows, { anchor: { position: cut, heads: wrong } })).toBe(
      `the log of group ${GROUP} fails its proof at sequence ${group.sequence}: the chain does not reach the head the state checkpoint signed`,
    )
  })

  it('names the Organization log by its Event number, and refuses an Organization Event stored twice', () => {
    const first = rows.findIndex((r) => r.groupId === null)
    const twice = [...rows.slice(0, first + 1), { ...rows[first]!, chain: null }, ...rows.slice(first + 1)]
    expect(refusal(twice)).toMatch(/^the Organization log fails its proof at Event 2: Event urn:\S+ is stored twice$/)
  })

  it('refuses a remembered head the log does not reach, naming the first missing sequence', () => {
    const head = rows.filter((r) => r.groupId === GROUP).length
    const remembered = [{ groupId: GROUP, sequence: head + 2, chain: `sha256:${'1'.repeat(64)}` }]
    expect(refusal(rows, { remembered })).toBe(`the log of group ${GROUP} fails its proof at sequence ${head + 1}: the Event is missing: the head file remembers sequence ${head + 2} as acknowledged`)
  })
})
