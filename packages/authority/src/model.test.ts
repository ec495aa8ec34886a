import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { actorKey, aggregateKey, type ActorRef } from './model.js'

describe('actorKey', () => {
  it('is `type:id` for any sequence of actors, whatever it remembered from earlier calls', () => {
    const actor = fc.record({ type: fc.constantFrom('agent', 'human', 'service'), id: fc.constantFrom('urn:a', 'urn:b', 'urn:c', 'urn:d', 'urn:e', 'urn:f', 'urn:a:b') }) as fc.Arbitrary<ActorRef>
    fc.assert(
      fc.property(fc.array(actor, { maxLength: 30 }), (actors) => {
        for (const a of actors) expect(actorKey({ type: a.type, id: `${a.id}` })).toBe(`${a.type}:${a.id}`)
      }),
    )
  })

  it('tells actors apart that share an ID but not a type', () => {
    expect(actorKey({ type: 'agent', id: 'urn:x' })).toBe('agent:urn:x')
    expect(actorKey({ type: 'human', id: 'urn:x' })).toBe('human:urn:x')
    expect(actorKey({ type: 'agent', id: 'urn:x' })).toBe('agent:urn:x')
  })
})

describe('aggregateKey', () => {
  it('is `type:id` for any sequence of aggregates, the empty ID included', () => {
    const types = ['workItem', 'mission', 'message', 'membership'] as const
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...types), fc.constantFrom('', 'urn:w:1', 'urn:w:2', 'urn:w:3', 'urn:w:4', 'urn:w:5')), { maxLength: 30 }), (pairs) => {
        for (const [type, id] of pairs) expect(aggregateKey(type, `${id}`)).toBe(`${type}:${id}`)
      }),
    )
  })
})
