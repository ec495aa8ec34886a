import { ProtocolError, sign, type SigningKey } from '@weft/codec'
import type { Event } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { cast, T0 } from '../test/fixtures.js'
import { createEventSealer, type UnsignedEvent } from './transact.js'

/** An unsigned `message.posted` envelope, as `materialize` builds it. */
function unsigned(text = 'hello'): UnsignedEvent {
  return {
    protocolVersion: '0.1',
    eventId: 'urn:uuid:00000000-0000-4000-8000-000000000001',
    kind: 'message.posted',
    actor: cast.worker1.actor,
    cause: { type: 'command', id: 'urn:weft:test:action:1' },
    correlationId: 'urn:weft:test:correlation:1',
    groupId: 'urn:weft:test:group:one',
    sequence: 7,
    aggregateRevision: 1,
    occurredAt: T0,
    payload: { messageId: 'urn:weft:test:message:1', content: [{ type: 'text', text }] },
    acceptedBy: cast.authority.actor,
  } as UnsignedEvent
}

/** The Authority key, counting how often it signs. */
function countingKey(): { key: SigningKey; signs: () => number } {
  let n = 0
  const pair = cast.authority.key.pair
  return { key: { keyId: cast.authority.key.keyId, pair: { publicKey: pair.publicKey, sign: (m) => (n++, pair.sign(m)) } }, signs: () => n }
}

const expected = (event: UnsignedEvent): Event => sign('event', event, cast.authority.key) as unknown as Event

describe('createEventSealer', () => {
  it('signs in the transaction exactly as the codec signs under the event profile', () => {
    const { key, signs } = countingKey()
    const { stored, live } = createEventSealer(key)(unsigned())
    expect(signs()).toBe(1)
    expect(stored.signature).toEqual(expected(unsigned()).signature)
    expect(stored).toEqual(expected(unsigned()))
    expect(live).toEqual(stored)
  })

  it('gives the log a deep-frozen copy and the reducers a mutable one that shares nothing with it or with the draft', () => {
    const event = unsigned()
    const { stored, live } = createEventSealer(cast.authority.key)(event)
    expect(Object.isFrozen(stored) && Object.isFrozen(stored.payload) && Object.isFrozen(stored.signature)).toBe(true)
    expect(() => ((stored.payload as Record<string, unknown>)['messageId'] = 'x')).toThrow(TypeError)
    ;(live.payload as { content: { text: string }[] }).content[0]!.text = 'changed by a reducer'
    ;(event.payload as { content: { text: string }[] }).content[0]!.text = 'changed by the handler'
    expect(stored).toEqual(expected(unsigned()))
  })

  it('with deferSignatures, signs once, on the first read of the signature, with the same signature', () => {
    const { key, signs } = countingKey()
    const { stored, live } = createEventSealer(key, { deferSignatures: true })(unsigned())
    expect(stored.kind).toBe('message.posted')
    expect(signs()).toBe(0)
    expect(JSON.parse(JSON.stringify(stored))).toEqual(expected(unsigned()))
    expect(signs()).toBe(1)
    expect(structuredClone(stored)).toEqual(expected(unsigned()))
    expect(live.signature).toEqual(stored.signature)
    expect(signs()).toBe(1)
    expect(Object.isFrozen(stored)).toBe(true)
  })

  it('refuses an envelope its check rejects, and one outside the JCS data model, before signing', () => {
    const { key, signs } = countingKey()
    const seen: Event[] = []
    const rejecting = createEventSealer(key, { check: (event) => (seen.push(event), false) })
    expect(() => rejecting(unsigned())).toThrow(/message.posted: the Event envelope fails its schema/)
    expect(seen[0]?.signature).toMatchObject({ algorithm: 'Ed25519', keyId: key.keyId, createdAt: T0 })
    const nonFinite = { ...unsigned(), payload: { n: Number.NaN } } as unknown as UnsignedEvent
    for (const deferSignatures of [false, true]) {
      expect(() => createEventSealer(key, { deferSignatures })(nonFinite)).toThrow(ProtocolError)
    }
    expect(signs()).toBe(0)
  })
})
