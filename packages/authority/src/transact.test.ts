import { canonicalizeOrThrow, ProtocolError, sign, type SigningKey } from '@weft/codec'
import type { Event } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { cast, T0 } from '../test/fixtures.js'
import { createEventSealer, frozenJson, type UnsignedEvent } from './transact.js'

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
    const stored = createEventSealer(key)(unsigned())
    expect(signs()).toBe(1)
    expect(stored.signature).toEqual(expected(unsigned()).signature)
    expect(stored).toEqual(expected(unsigned()))
  })

  it('returns a deep-frozen copy that shares nothing with the draft, members in RFC 8785 order', () => {
    const event = unsigned()
    const stored = createEventSealer(cast.authority.key)(event)
    const content = (stored.payload as { content: { text: string }[] }).content
    expect([stored, stored.payload, stored.signature, content, content[0]].every((o) => Object.isFrozen(o))).toBe(true)
    expect(() => ((stored.payload as Record<string, unknown>)['messageId'] = 'x')).toThrow(TypeError)
    expect(() => (content[0]!.text = 'changed by a reducer')).toThrow(TypeError)
    ;(event.payload as { content: { text: string }[] }).content[0]!.text = 'changed by the handler'
    expect(stored).toEqual(expected(unsigned()))
    const { signature: _signature, ...envelope } = stored
    expect(JSON.stringify(envelope)).toBe(new TextDecoder().decode(canonicalizeOrThrow(envelope)))
  })

  it('with deferSignatures, signs once, on the first read of the signature, with the same signature', () => {
    const { key, signs } = countingKey()
    const stored = createEventSealer(key, { deferSignatures: true })(unsigned())
    expect(stored.kind).toBe('message.posted')
    expect(signs()).toBe(0)
    expect(JSON.parse(JSON.stringify(stored))).toEqual(expected(unsigned()))
    expect(signs()).toBe(1)
    expect(structuredClone(stored)).toEqual(expected(unsigned()))
    expect(stored.signature).toEqual(expected(unsigned()).signature)
    expect(signs()).toBe(1)
    expect(Object.isFrozen(stored)).toBe(true)
  })

  it('adds a lazily supplied commandHash after the sorted members, read once and only with the signature when deferred', () => {
    const hash = `sha256:${'ab'.repeat(32)}`
    for (const deferSignatures of [false, true]) {
      let reads = 0
      const { key, signs } = countingKey()
      const stored = createEventSealer(key, { deferSignatures })(unsigned(), () => (reads++, hash))
      expect([reads, signs()]).toEqual(deferSignatures ? [0, 0] : [1, 1])
      expect(JSON.parse(JSON.stringify(stored))).toEqual(expected({ ...unsigned(), commandHash: hash }))
      expect(Object.keys(stored).slice(0, 3)).toEqual(['acceptedBy', 'actor', 'aggregateRevision'])
      expect(Object.keys(stored).slice(-2)).toEqual(['commandHash', 'signature'])
      expect([reads, signs()]).toEqual([1, 1])
    }
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

describe('frozenJson', () => {
  it('copies a JSON value deep-frozen, as its canonical form reads back (-0 as 0, own __proto__ as data)', () => {
    const source = JSON.parse('{"b":[1,{"__proto__":{"x":-0}}],"a":"é"}') as unknown
    const copy = frozenJson(source)
    expect(copy).toEqual(JSON.parse(new TextDecoder().decode(canonicalizeOrThrow(source))))
    expect(Object.keys(copy as object)).toEqual(['a', 'b'])
    const inner = (copy as { b: [number, Record<string, { x: number }>] }).b[1]
    expect(Object.getPrototypeOf(inner)).toBe(Object.prototype)
    expect(Object.is(inner['__proto__']!.x, 0)).toBe(true)
    expect(Object.isFrozen(inner) && Object.isFrozen(inner['__proto__'])).toBe(true)
  })

  it('refuses what has no canonical form with the codec reason and path', () => {
    const cyclic: Record<string, unknown> = {}
    cyclic['self'] = cyclic
    const cases: [unknown, string][] = [
      [{ a: [1, Number.POSITIVE_INFINITY] }, 'non-finite-number'],
      [{ a: '\ud800' }, 'lone-surrogate'],
      [{ a: undefined }, 'unsupported-value'],
      [{ a: new Date(0) }, 'unsupported-value'],
      [cyclic, 'unsupported-value'],
    ]
    for (const [value, reason] of cases) {
      expect(() => frozenJson(value)).toThrow(ProtocolError)
      try {
        frozenJson(value)
      } catch (error) {
        expect((error as ProtocolError).details).toMatchObject({ reason })
      }
    }
  })
})
