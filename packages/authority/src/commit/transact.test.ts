import { canonicalizeOrThrow, ProtocolError, sign, type SigningKey } from '@weft/codec'
import { commandInfo, type Event } from '@weft/spec'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { cast, T0 } from '../../test/fixtures.js'
import type { AnyEventDraft } from './handler.js'
import { emptyState, type ActorRef, type GroupState } from '../model.js'
import { createDraftCheck, createEventSealer, frozenJson, materialize, type CommandHashSource, type EventSealer, type UnsignedEvent } from './transact.js'

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
  sealer.commit(commandHash === undefined ? transaction : { ...transaction, get commandHash() { return commandHash.commandHash } })
  return sealed
}

describe('createEventSealer', () => {
  it('signs in the transaction exactly as the codec signs under the event profile', () => {
    const { key, signs } = countingKey()
    const stored = sealOne(createEventSealer(key), unsigned())
    expect(signs()).toBe(1)
    expect(stored.signature).toEqual(expected(unsigned()).signature)
    expect(stored).toEqual(expected(unsigned()))
  })

  it('seals the envelope in place: deep-frozen, shared objects frozen with it, -0 stored as 0', () => {
    for (const deferSignatures of [false, true]) {
      const event = unsigned()
      const shared = { type: 'text', text: 'hello', weight: -0 }
      ;(event.payload as { content: object[] }).content = [shared]
      const stored = sealOne(createEventSealer(cast.authority.key, { deferSignatures }), event)
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
    const stored = sealOne(createEventSealer(cast.authority.key), event)
    const payload = stored.payload as unknown as { a: { n: number }; b: object }
    expect(payload.a).not.toBe(frozen)
    expect(Object.is(payload.a.n, 0) && Object.isFrozen(payload.a)).toBe(true)
    expect(payload.b).toBe(untouched)
  })

  it('with deferSignatures, signs once, on the first read of the signature, with the same signature', () => {
    const { key, signs } = countingKey()
    const stored = sealOne(createEventSealer(key, { deferSignatures: true }), unsigned())
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
    const other = createEventSealer(key, { deferSignatures: true })
    const kept = sealOne(other, unsigned('kept'))
    let dropped: WeakRef<object> | undefined
    ;(() => {
      const sealer = createEventSealer(key, { deferSignatures: true })
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
    const sealer = createEventSealer(cast.authority.key, { deferSignatures: true })
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
    const stored = sealOne(createEventSealer(cast.authority.key, { deferSignatures: true }), event)
    expect(stored.acceptedBy).not.toBe(frozen)
    expect(stored.signature).toEqual(expected({ ...event, acceptedBy: { ...cast.authority.actor, weight: 0 } } as unknown as UnsignedEvent).signature)
  })

  it('adds a lazily supplied commandHash after the other members, read once and only with the signature when deferred', () => {
    const hash = `sha256:${'ab'.repeat(32)}`
    for (const deferSignatures of [false, true]) {
      let reads = 0
      const { key, signs } = countingKey()
      const stored = sealOne(createEventSealer(key, { deferSignatures }), unsigned(), { get commandHash() { return reads++, hash } })
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
    const rejecting = createEventSealer(key, { check: (event) => (seen.push(event), false) })
    expect(() => rejecting(unsigned())).toThrow(/message.posted: the Event envelope fails its schema/)
    expect(seen[0]?.signature).toMatchObject({ algorithm: 'Ed25519', keyId: key.keyId, createdAt: T0 })
    const nonFinite = { ...unsigned(), payload: { n: Number.NaN } } as unknown as UnsignedEvent
    for (const deferSignatures of [false, true]) {
      expect(() => sealOne(createEventSealer(key, { deferSignatures }), nonFinite)).toThrow(ProtocolError)
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
    // biome-ignore lint/suspicious/noProto: the test is that a `__proto__` key stays an own, frozen member
    expect(Object.is(inner['__proto__']!.x, 0)).toBe(true)
    // biome-ignore lint/suspicious/noProto: as above
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
        const plain = sealOne(createEventSealer(cast.authority.key, { deferSignatures }), event)
        expect(JSON.parse(JSON.stringify(plain))).toEqual(JSON.parse(JSON.stringify(expected(event))))
        const hashed = sealOne(createEventSealer(cast.authority.key, { deferSignatures }), event, { commandHash: hash })
        expect(hashed.signature).toEqual(expected({ ...event, commandHash: hash } as UnsignedEvent).signature)
      }
    }
  })

  it('lets a deferred check read placeholders, then the real members', () => {
    const seen: unknown[] = []
    const hash = `sha256:${'ef'.repeat(32)}`
    const stored = sealOne(createEventSealer(cast.authority.key, { deferSignatures: true, check: (e) => (seen.push(e.commandHash, e.signature.value), true) }), unsigned(), { commandHash: hash })
    expect(seen).toEqual([`sha256:${'0'.repeat(64)}`, 'A'.repeat(86)])
    expect(stored.commandHash).toBe(hash)
    expect(stored.signature).toEqual(expected({ ...unsigned(), commandHash: hash } as UnsignedEvent).signature)
  })
})

describe('materialize', () => {
  it('continues Group sequences and aggregate revisions draft by draft within one transaction', () => {
    const state = emptyState()
    const base = unsigned()
    // Only the head and the revisions matter to materialize.
    state.groups.set(base.groupId!, { head: 4, revisions: new Map([['message:urn:weft:test:message:1', 2]]) } as unknown as GroupState)
    const post = (messageId: string): AnyEventDraft => ({ kind: 'message.posted', payload: { messageId } } as unknown as AnyEventDraft)
    let n = 0
    const cause = { type: 'command' as const, id: 'urn:weft:test:action:1', actor: cast.worker1.actor as ActorRef, correlationId: 'urn:weft:test:correlation:1', groupId: base.groupId! }
    const events = materialize(state, cause, [post('urn:weft:test:message:1'), post('urn:weft:test:message:2'), post('urn:weft:test:message:1')], {
      now: T0,
      newId: () => `urn:weft:test:event:${++n}`,
      authority: cast.authority.actor as ActorRef,
      sign: (event) => event,
    })
    expect(events.map((e) => [e.sequence, e.aggregateRevision])).toEqual([
      [5, 3],
      [6, 1],
      [7, 4],
    ])
    expect(state.groups.get(base.groupId!)!.head).toBe(4)
  })

  it('builds envelopes with members in RFC 8785 order, which the sealer signs as the codec does', () => {
    const state = emptyState()
    const base = unsigned()
    state.groups.set(base.groupId!, { head: 0, revisions: new Map() } as unknown as GroupState)
    const cause = { type: 'command' as const, id: 'urn:weft:test:action:1', actor: cast.worker1.actor as ActorRef, correlationId: 'urn:weft:test:correlation:1', groupId: base.groupId! }
    const drafts = [{ kind: 'message.posted', payload: { messageId: 'urn:weft:test:message:1', content: [{ type: 'text', text: 'hi' }] }, workItemId: 'urn:weft:test:work:1' }] as unknown as AnyEventDraft[]
    const seal = createEventSealer(cast.authority.key)
    const [event] = materialize(state, cause, drafts, { now: T0, newId: () => 'urn:weft:test:event:1', authority: cast.authority.actor as ActorRef, sign: (e) => seal(e) })
    const { signature: _signature, ...envelope } = event!
    expect(Object.keys(envelope)).toEqual(Object.keys(envelope).sort())
    // Plain objects, as literals would be; the payload a shallow copy of the draft's, sharing what it holds.
    expect([event, event!.cause].map((o) => Object.getPrototypeOf(o))).toEqual([Object.prototype, Object.prototype])
    expect(event!.payload).not.toBe(drafts[0]!.payload)
    expect(event!.payload).toEqual(drafts[0]!.payload)
    expect((event!.payload as { content: unknown }).content).toBe((drafts[0]!.payload as { content: unknown }).content)
    expect(event!.signature).toEqual(expected(envelope as UnsignedEvent).signature)
  })
})

describe('createDraftCheck', () => {
  const rule = commandInfo('message.post')
  const message = {
    messageId: 'urn:weft:test:message:1',
    conversationId: 'urn:weft:test:conversation:1',
    missionId: 'urn:weft:test:mission:one',
    groupId: 'urn:weft:test:group:one',
    kind: 'message',
    author: cast.worker1.actor,
    authority: false,
    content: [{ type: 'text', text: 'hello' }],
    committedAt: T0,
  }
  const draftOf = (overrides: Record<string, unknown>): AnyEventDraft => ({ kind: 'message.posted', payload: message, ...overrides }) as unknown as AnyEventDraft
  const check = createDraftCheck(cast.authority.actor as ActorRef)

  it('passes drafts the catalog allows, with payloads and envelope members that conform', () => {
    for (const payloads of [true, false]) expect(() => check([draftOf({ conversationId: message.conversationId, actor: cast.authority.actor })], rule, T0, payloads)).not.toThrow()
  })

  it('refuses a kind the Command may not emit, a payload off its schema, and envelope members off the Event schema', () => {
    const refusals: [AnyEventDraft[], string, RegExp][] = [
      [[draftOf({ kind: 'work.started' })], T0, /may not emit work.started/],
      [[draftOf({ payload: { ...message, authority: true } })], T0, /message.posted payload fails its schema/],
      [[draftOf({ workItemId: 'not a URI' })], T0, /envelope fails its schema/],
      [[draftOf({ conversationId: 42 })], T0, /envelope fails its schema/],
      [[draftOf({ groupId: `urn:x:${'a'.repeat(600)}` })], T0, /envelope fails its schema/],
      [[draftOf({ actor: { ...cast.worker1.actor, name: 'extra' } })], T0, /envelope fails its schema/],
      [[draftOf({ actor: { type: 'robot', id: cast.worker1.actor.id } })], T0, /envelope fails its schema/],
      [[draftOf({})], '2026-07-15 00:00:00', /envelope fails its schema/],
      [[draftOf({})], `${T0.slice(0, 11)}24:00:00.000Z`, /envelope fails its schema/],
      [[draftOf({ workItemId: 'urn:weft:test:work:1' }), draftOf({ workItemId: 'urn:weft:test:work:1 ' })], T0, /envelope fails its schema/],
    ]
    for (const [drafts, now, reason] of refusals) expect(() => check(drafts, rule, now, true)).toThrow(reason)
    // Without the payload schema, the catalog and the envelope members are still checked.
    const offSchema = draftOf({ payload: { ...message, authority: true } })
    expect(() => check([offSchema], rule, T0, false)).not.toThrow()
    for (const [drafts, now, reason] of refusals.filter(([, , r]) => !/payload/.test(r.source))) expect(() => check(drafts, rule, now, false)).toThrow(reason)
  })

  it('refuses every draft when the Authority Principal itself is off the actor schema', () => {
    const broken = createDraftCheck({ type: 'service', id: 'not a URI' })
    expect(() => broken([draftOf({})], rule, T0, false)).toThrow(/envelope fails its schema/)
  })
})
