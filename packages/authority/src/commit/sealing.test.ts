import { ProtocolError, sign, type SigningKey } from '@weft/codec'
import type { Event } from '@weft/spec'
import fc from 'fast-check'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { cast, T0 } from '@weft/testkit/fixtures'
import { createDeferredSealer } from './deferred-sealing.js'
import { createEagerSealer, type CommandHashSource, type EventSealer, type SealerOptions } from './sealing.js'
import type { UnsignedEvent } from './transact.js'

/** The sealer the pipeline picks for `deferSignatures`. */
function sealerOf(key: SigningKey, { deferSignatures = false, ...options }: SealerOptions & { readonly deferSignatures?: boolean } = {}): EventSealer {
  return deferSignatures ? createDeferredSealer(key, options) : createEagerSealer(key, options)
}

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

/**
 * Seals one envelope as a transaction of its own and commits it, as the pipeline does with a
 * receipt: a deferring sealer computes the Event's signature and `commandHash` from there.
 */
function sealOne(sealer: EventSealer, event: UnsignedEvent, commandHash?: CommandHashSource): Event {
  const sealed = sealer(event, commandHash)
  const transaction = { events: [sealed] }
  sealer.commit(
    commandHash === undefined
      ? transaction
      : {
          ...transaction,
          get commandHash() {
            return commandHash.commandHash
          },
        },
  )
  return sealed
}

describe('the eager and the deferring sealer', () => {
  it('signs in the transaction exactly as the codec signs under the event profile', () => {
    const { key, signs } = countingKey()
    const stored = sealOne(sealerOf(key), unsigned())
    expect(signs()).toBe(1)
    expect(stored.signature).toEqual(expected(unsigned()).signature)
    expect(stored).toEqual(expected(unsigned()))
  })

  it('seals the envelope in place: deep-frozen, shared objects frozen with it, -0 stored as 0', () => {
    for (const deferSignatures of [false, true]) {
      const event = unsigned()
      const shared = { type: 'text', text: 'hello', weight: -0 }
      ;(event.payload as { content: object[] }).content = [shared]
      const stored = sealOne(sealerOf(cast.authority.key, { deferSignatures }), event)
      expect(stored).toBe(event)
      const content = (stored.payload as { content: { text: string; weight: number }[] }).content
      expect([stored, stored.payload, stored.actor, stored.cause, stored.signature, content, content[0]].every((o) => Object.isFrozen(o))).toBe(true)
      expect(content[0]).toBe(shared)
      expect(Object.is(shared.weight, 0)).toBe(true)
      expect(() => ((stored.payload as Record<string, unknown>)['messageId'] = 'x')).toThrow(TypeError)
      expect(() => (shared.text = 'changed by a reducer')).toThrow(TypeError)
      expect(stored.signature).toEqual(expected({ ...unsigned(), payload: { ...unsigned().payload, content: [{ type: 'text', text: 'hello', weight: 0 }] } } as UnsignedEvent).signature)
    }
  })

  it('copies an object someone else froze only when it holds a -0 the signed text writes as 0', () => {
    const frozen = Object.freeze({ n: -0, s: 'kept' })
    const untouched = Object.freeze({ n: 1 })
    const event = { ...unsigned(), payload: { messageId: 'urn:weft:test:message:1', a: frozen, b: untouched } } as unknown as UnsignedEvent
    const stored = sealOne(sealerOf(cast.authority.key), event)
    const payload = stored.payload as unknown as { a: { n: number }; b: object }
    expect(payload.a).not.toBe(frozen)
    expect(Object.is(payload.a.n, 0) && Object.isFrozen(payload.a)).toBe(true)
    expect(payload.b).toBe(untouched)
  })

  it('with deferSignatures, signs once, on the first read of the signature, with the same signature', () => {
    const { key, signs } = countingKey()
    const stored = sealOne(sealerOf(key, { deferSignatures: true }), unsigned())
    expect(stored.kind).toBe('message.posted')
    expect(signs()).toBe(0)
    expect(JSON.parse(JSON.stringify(stored))).toEqual(expected(unsigned()))
    expect(signs()).toBe(1)
    expect(structuredClone(stored)).toEqual(expected(unsigned()))
    expect(stored.signature).toEqual(expected(unsigned()).signature)
    expect(signs()).toBe(1)
    expect(Object.isFrozen(stored)).toBe(true)
  })

  it('with deferSignatures, keeps no unread Event of a sealer nobody holds any more', async () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const { key } = countingKey()
    // A second sealer stays alive and unread throughout, as another Authority of the process would.
    const other = sealerOf(key, { deferSignatures: true })
    const kept = sealOne(other, unsigned('kept'))
    let dropped: WeakRef<object> | undefined
    ;(() => {
      const sealer = sealerOf(key, { deferSignatures: true })
      // As in the pipeline, the dropped Authority's Events name its own copy of its Principal.
      const event = { ...unsigned('dropped'), acceptedBy: { ...cast.authority.actor } } as UnsignedEvent
      dropped = new WeakRef(sealOne(sealer, event))
    })()
    // WeakRef targets live to the end of the job that made them; the collection comes after.
    await new Promise((resolve) => setTimeout(resolve, 0))
    gc()
    expect(dropped!.deref()).toBeUndefined()
    // The surviving sealer's Event still signs on first read, as before.
    expect(kept.signature).toEqual(expected(unsigned('kept')).signature)
  })

  it('with deferSignatures, signs an Event only once its transaction is committed, reading its commandHash there', () => {
    const hash = `sha256:${'12'.repeat(32)}`
    const sealer = sealerOf(cast.authority.key, { deferSignatures: true })
    const first = sealer(unsigned('first'), { commandHash: hash })
    const second = sealer(unsigned('second'), { commandHash: hash })
    expect(() => first.signature).toThrow(/never committed/)
    sealer.commit({ events: [first, second], commandHash: hash })
    expect(second.commandHash).toBe(hash)
    expect(first.signature).toEqual(expected({ ...unsigned('first'), commandHash: hash } as UnsignedEvent).signature)
    expect(second.signature).toEqual(expected({ ...unsigned('second'), commandHash: hash } as UnsignedEvent).signature)
    const orphan = sealer(unsigned('orphan'), { commandHash: hash })
    sealer.commit({ events: [orphan] })
    expect(() => orphan.commandHash).toThrow(/without one/)
    // The accessors find their sealer through `acceptedBy`: an envelope without an object there is refused, every time.
    const unbound = { ...unsigned('unbound'), acceptedBy: cast.authority.actor.id } as unknown as UnsignedEvent
    for (let i = 0; i < 2; i++) expect(() => sealer(unbound)).toThrow(/needs an acceptedBy object/)
  })

  it('with deferSignatures, finds the sealer of an Event whose acceptedBy the seal replaced with a frozen copy', () => {
    // Someone else froze it with a -0 inside, which the signed text writes as 0: the seal copies it.
    const frozen = Object.freeze({ ...cast.authority.actor, weight: -0 })
    const event = { ...unsigned('copied'), acceptedBy: frozen } as unknown as UnsignedEvent
    const stored = sealOne(sealerOf(cast.authority.key, { deferSignatures: true }), event)
    expect(stored.acceptedBy).not.toBe(frozen)
    expect(stored.signature).toEqual(expected({ ...event, acceptedBy: { ...cast.authority.actor, weight: 0 } } as unknown as UnsignedEvent).signature)
  })

  it('adds a lazily supplied commandHash after the other members, read once and only with the signature when deferred', () => {
    const hash = `sha256:${'ab'.repeat(32)}`
    for (const deferSignatures of [false, true]) {
      let reads = 0
      const { key, signs } = countingKey()
      const stored = sealOne(sealerOf(key, { deferSignatures }), unsigned(), {
        get commandHash() {
          return (reads++, hash)
        },
      })
      expect([reads, signs()]).toEqual(deferSignatures ? [0, 0] : [1, 1])
      expect(JSON.parse(JSON.stringify(stored))).toEqual(expected({ ...unsigned(), commandHash: hash }))
      expect(Object.keys(stored).slice(0, 3)).toEqual(['protocolVersion', 'eventId', 'kind'])
      expect(Object.keys(stored).slice(-2)).toEqual(['commandHash', 'signature'])
      expect([reads, signs()]).toEqual([1, 1])
    }
  })

  it('refuses an envelope its check rejects, and one outside the JCS data model, before signing', () => {
    const { key, signs } = countingKey()
    const seen: Event[] = []
    const rejecting = sealerOf(key, { check: (event) => (seen.push(event), false) })
    expect(() => rejecting(unsigned())).toThrow(/message.posted: the Event envelope fails its schema/)
    expect(seen[0]?.signature).toMatchObject({ algorithm: 'Ed25519', keyId: key.keyId, createdAt: T0 })
    const nonFinite = { ...unsigned(), payload: { n: Number.NaN } } as unknown as UnsignedEvent
    for (const deferSignatures of [false, true]) {
      expect(() => sealOne(sealerOf(key, { deferSignatures }), nonFinite)).toThrow(ProtocolError)
    }
    expect(signs()).toBe(0)
  })
})

describe('signing input', () => {
  // The sealer writes the signing input with JSON.stringify when the sorted copy allows it; these
  // payloads probe every place where that text could part from RFC 8785.
  const tricky: Record<string, unknown>[] = [
    { '10': 'ten', '9': 'nine', '1a': 'not an index', b: [{ '2': 2, '10': 10 }] },
    { text: 'quote " backslash \\ tab \t newline \n nul \u0000 unit \u001f del \u007f', emoji: '\u{1F600}', accents: 'é\u2028' },
    { numbers: [1e21, 1e-7, -0, 0.1, 123456789012345680000, -1.5e-300, Number.MAX_SAFE_INTEGER] },
    JSON.parse('{"__proto__":{"polluted":true},"toJSON":"not a function","z":1}') as Record<string, unknown>,
    { nested: { deep: [[[{ b: 1, a: 2 }]]] }, empty: {}, none: [] },
  ]

  it('is the RFC 8785 form for every payload, in both modes, with and without a lazily supplied commandHash', () => {
    const hash = `sha256:${'cd'.repeat(32)}`
    for (const payload of tricky) {
      const event = { ...unsigned(), payload } as UnsignedEvent
      for (const deferSignatures of [false, true]) {
        const plain = sealOne(sealerOf(cast.authority.key, { deferSignatures }), event)
        expect(JSON.parse(JSON.stringify(plain))).toEqual(JSON.parse(JSON.stringify(expected(event))))
        const hashed = sealOne(sealerOf(cast.authority.key, { deferSignatures }), event, { commandHash: hash })
        expect(hashed.signature).toEqual(expected({ ...event, commandHash: hash } as UnsignedEvent).signature)
      }
    }
  })

  it('lets a deferred check read placeholders, then the real members', () => {
    const seen: unknown[] = []
    const hash = `sha256:${'ef'.repeat(32)}`
    const stored = sealOne(sealerOf(cast.authority.key, { deferSignatures: true, check: (e) => (seen.push(e.commandHash, e.signature.value), true) }), unsigned(), { commandHash: hash })
    expect(seen).toEqual([`sha256:${'0'.repeat(64)}`, 'A'.repeat(86)])
    expect(stored.commandHash).toBe(hash)
    expect(stored.signature).toEqual(expected({ ...unsigned(), commandHash: hash } as UnsignedEvent).signature)
  })
})

describe('differential: both sealers and the codec', () => {
  it('property: for any JSON payload, the eager and the deferred Event are the codec-signed Event, byte for byte', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.oneof(fc.string({ maxLength: 3 }), fc.constantFrom('0', '10', '9', 'é')), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 }), fc.boolean(), (payload, hashed) => {
        const hash = hashed ? { commandHash: `sha256:${'5a'.repeat(32)}` } : undefined
        const event = (): UnsignedEvent => ({ ...unsigned(), payload: structuredClone(payload) }) as UnsignedEvent
        const reference = JSON.stringify(expected({ ...event(), ...hash } as UnsignedEvent))
        for (const deferSignatures of [false, true]) {
          const sealed = sealOne(sealerOf(cast.authority.key, { deferSignatures }), event(), hash)
          expect(JSON.parse(JSON.stringify(sealed))).toEqual(JSON.parse(reference))
          expect(sealed.signature).toEqual(JSON.parse(reference).signature)
        }
      }),
      { numRuns: 150 },
    )
  })
})
