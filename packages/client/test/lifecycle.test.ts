import { ProtocolError } from '@weft/codec'
import { describe, expect, it } from 'vitest'
import { CLOSE_CODES } from '../src/wire/frames.js'
import { advance, currentLink, endingOf, reconnectDelayMs, terminalError, type Lifecycle, type LifecycleInput } from '../src/wire/lifecycle.js'
import type { Link } from '../src/wire/link.js'

// The machine only compares links by identity, so two distinct objects stand for two sockets.
const link = { name: 'first' } as unknown as Link
const other = { name: 'second' } as unknown as Link
const timer = setTimeout(() => {}, 0)
clearTimeout(timer)
const refused = new ProtocolError('AUTH_FORBIDDEN', 'no')
const fenced = new ProtocolError('AUTH_STALE_SESSION', 'fenced')

const phases: Record<Lifecycle['phase'], Lifecycle> = {
  connecting: { phase: 'connecting' },
  open: { phase: 'open', link },
  closing: { phase: 'closing', link },
  reconnecting: { phase: 'reconnecting', attempts: 2 },
  'backing-off': { phase: 'backing-off', attempts: 3, timer },
  closed: { phase: 'closed', terminal: undefined },
}

const inputs: Record<LifecycleInput['on'], LifecycleInput> = {
  'session-opened': { on: 'session-opened', link: other },
  'socket-closed': { on: 'socket-closed', link, terminal: undefined, reconnect: true },
  'retry-scheduled': { on: 'retry-scheduled', timer },
  'retry-due': { on: 'retry-due' },
  'attempt-refused': { on: 'attempt-refused', error: refused },
  'close-requested': { on: 'close-requested' },
}

/** Every transition of the table in `lifecycle.ts`: [from, input, to]. */
const table: [Lifecycle['phase'], LifecycleInput['on'], Lifecycle][] = [
  ['connecting', 'session-opened', { phase: 'open', link: other }],
  ['reconnecting', 'session-opened', { phase: 'open', link: other }],
  ['open', 'socket-closed', { phase: 'reconnecting', attempts: 0 }],
  ['open', 'close-requested', { phase: 'closing', link }],
  ['closing', 'socket-closed', { phase: 'closed', terminal: undefined }],
  ['reconnecting', 'retry-scheduled', { phase: 'backing-off', attempts: 3, timer }],
  ['backing-off', 'retry-due', { phase: 'reconnecting', attempts: 3 }],
  ['reconnecting', 'attempt-refused', { phase: 'closed', terminal: refused }],
  ['reconnecting', 'close-requested', { phase: 'closed', terminal: undefined }],
  ['backing-off', 'close-requested', { phase: 'closed', terminal: undefined }],
  ['connecting', 'close-requested', { phase: 'closed', terminal: undefined }],
]

describe('the connection lifecycle', () => {
  it.each(table)('%s, on %s, moves as the table says', (from, on, to) => {
    expect(advance(phases[from], inputs[on])).toEqual(to)
  })

  it('leaves the phase as it is (the same object) for every input that does not apply', () => {
    const moves = new Set(table.map(([from, on]) => `${from} ${on}`))
    let unchanged = 0
    for (const [from, state] of Object.entries(phases)) {
      for (const [on, input] of Object.entries(inputs)) {
        if (moves.has(`${from} ${on}`)) continue
        expect(advance(state, input), `${from} on ${on}`).toBe(state)
        unchanged++
      }
    }
    // 6 phases × 6 inputs, less the 11 transitions.
    expect(unchanged).toBe(25)
  })

  it('ends an open session for good when the server ended it or reconnecting is off, and ignores an old socket', () => {
    expect(advance(phases.open, { on: 'socket-closed', link, terminal: fenced, reconnect: true })).toEqual({ phase: 'closed', terminal: fenced })
    expect(advance(phases.open, { on: 'socket-closed', link, terminal: undefined, reconnect: false })).toEqual({ phase: 'closed', terminal: undefined })
    expect(advance(phases.open, { on: 'socket-closed', link: other, terminal: undefined, reconnect: true })).toBe(phases.open)
  })

  it('gives the current link while open or closing, and the terminal error only when closed', () => {
    expect(Object.entries(phases).map(([phase, state]) => [phase, currentLink(state)])).toEqual([
      ['connecting', undefined],
      ['open', link],
      ['closing', link],
      ['reconnecting', undefined],
      ['backing-off', undefined],
      ['closed', undefined],
    ])
    expect(terminalError({ phase: 'closed', terminal: refused })).toBe(refused)
    expect(terminalError(phases.open)).toBeUndefined()
  })
})

describe('endingOf', () => {
  it('ends the connection when a newer session fenced it (§6.3) or the server refused it, else leaves reconnecting to help', () => {
    expect(endingOf(CLOSE_CODES.sessionFenced, undefined, 4)).toMatchObject({ code: 'AUTH_STALE_SESSION', details: { sessionEpoch: 4 } })
    expect(endingOf(1000, fenced, 4)).toBe(fenced)
    expect(endingOf(CLOSE_CODES.authenticationFailed, undefined, 4)).toMatchObject({ code: 'AUTH_REQUIRED' })
    expect(endingOf(CLOSE_CODES.authenticationFailed, refused, 4)).toBe(refused)
    expect(endingOf(1006, undefined, 4)).toBeUndefined()
    expect(endingOf(1001, refused, 4)).toBeUndefined()
  })
})

describe('reconnectDelayMs', () => {
  const policy = { initialDelayMs: 100, maxDelayMs: 5_000 } as Parameters<typeof reconnectDelayMs>[0]
  const bytes = (b: number) => () => new Uint8Array([b, 0, 0, 0])

  it('grows exponentially from half to the whole of the base, capped, and never before the refusal allows', () => {
    expect(reconnectDelayMs(policy, 0, bytes(0), 0)).toBe(50)
    expect(reconnectDelayMs(policy, 0, bytes(255), 0)).toBe(100)
    expect(reconnectDelayMs(policy, 3, bytes(255), 0)).toBe(800)
    expect(reconnectDelayMs(policy, 40, bytes(255), 0)).toBe(5_000)
    expect(reconnectDelayMs(policy, 0, bytes(0), 2_000)).toBe(2_000)
  })
})
