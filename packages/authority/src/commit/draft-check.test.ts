import { commandInfo } from '@weft/spec'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { cast, T0 } from '@weft/testkit/fixtures'
import type { AnyEventDraft } from './handler.js'
import type { ActorRef } from '../model.js'
import { createCachedDraftCheck } from './draft-check-cached.js'
import { createDraftCheck, type DraftCheck } from './draft-check.js'

for (const [name, createCheck] of [
  ['the reference draft check', createDraftCheck],
  ['the cached draft check', createCachedDraftCheck],
] as const) {
  describe(name, () => {
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
    const check = createCheck(cast.authority.actor as ActorRef)

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
      const broken = createCheck({ type: 'service', id: 'not a URI' })
      expect(() => broken([draftOf({})], rule, T0, false)).toThrow(/envelope fails its schema/)
    })
  })
}

describe('differential: the cached and the reference draft check', () => {
  const rule = commandInfo('message.post')
  const valid = ['urn:weft:test:a', 'urn:weft:test:b']
  const invalid = ['not a URI', 'urn:weft:test:a ', `urn:x:${'a'.repeat(600)}`, 42]
  const member = fc.option(fc.constantFrom(...valid, ...invalid), { nil: undefined })
  const actors = [cast.worker1.actor, Object.freeze({ ...cast.worker2.actor }), { type: 'robot', id: valid[0] }, { ...cast.worker1.actor, name: 'x' }]
  const draftArb = fc.record({
    kind: fc.constantFrom('message.posted', 'work.started'),
    payload: fc.constant({}),
    groupId: member,
    conversationId: member,
    workItemId: member,
    actor: fc.option(fc.constantFrom(...actors), { nil: undefined }),
  }) as unknown as fc.Arbitrary<AnyEventDraft>
  const nowArb = fc.constantFrom(T0, `${T0.slice(0, 11)}23:59:59.999Z`, `${T0.slice(0, 11)}24:00:00.000Z`, '2026-07-15 00:00:00', '2026-02-30T00:00:00Z', '2026-07-16T00:00:00.5Z')

  /** Each transaction's outcome through one check, in order: the check keeps memory across them. */
  const outcomes = (check: DraftCheck, transactions: readonly (readonly [readonly AnyEventDraft[], string])[]): string[] =>
    transactions.map(([drafts, now]) => {
      try {
        check(drafts, rule, now, false)
        return 'ok'
      } catch (error) {
        return (error as Error).message
      }
    })

  it('property: over any run of transactions, the cached check refuses exactly what the reference check refuses', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.array(draftArb, { maxLength: 3 }), nowArb), { maxLength: 12 }), (transactions) => {
        const authority = cast.authority.actor as ActorRef
        expect(outcomes(createCachedDraftCheck(authority), transactions)).toEqual(outcomes(createDraftCheck(authority), transactions))
      }),
      { numRuns: 300 },
    )
  })
})
