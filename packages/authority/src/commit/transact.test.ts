import { sign } from '@weft/codec'
import { EVENT_CATALOG, type Event } from '@weft/spec'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { cast, T0 } from '@weft/testkit/fixtures'
import type { AnyEventDraft } from './handler.js'
import { createTunedSteps } from './materialize-tuned.js'
import { emptyState, type ActorRef, type GroupState } from '../model.js'
import { createDeferredSealer } from './deferred-sealing.js'
import { createEagerSealer } from './sealing.js'
import { materialize, plainSteps, type TransactionCause, type TransactionSteps, type UnsignedEvent } from './transact.js'

/** The Group the materialize tests stamp their Events with. */
const GROUP_ID = 'urn:weft:test:group:one'

const expected = (event: UnsignedEvent): Event => sign('event', event, cast.authority.key) as unknown as Event

describe('materialize', () => {
  it('continues Group sequences and aggregate revisions draft by draft within one transaction', () => {
    const state = emptyState()
    // Only the head and the revisions matter to materialize.
    state.groups.set(GROUP_ID, { head: 4, revisions: new Map([['message:urn:weft:test:message:1', 2]]) } as unknown as GroupState)
    const post = (messageId: string): AnyEventDraft => ({ kind: 'message.posted', payload: { messageId } }) as unknown as AnyEventDraft
    let n = 0
    const cause = { type: 'command' as const, id: 'urn:weft:test:action:1', actor: cast.worker1.actor as ActorRef, correlationId: 'urn:weft:test:correlation:1', groupId: GROUP_ID }
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
    expect(state.groups.get(GROUP_ID)!.head).toBe(4)
  })

  it('builds envelopes with members in RFC 8785 order, which the sealer signs as the codec does', () => {
    const state = emptyState()
    state.groups.set(GROUP_ID, { head: 0, revisions: new Map() } as unknown as GroupState)
    const cause = { type: 'command' as const, id: 'urn:weft:test:action:1', actor: cast.worker1.actor as ActorRef, correlationId: 'urn:weft:test:correlation:1', groupId: GROUP_ID }
    const drafts = [
      { kind: 'message.posted', payload: { messageId: 'urn:weft:test:message:1', content: [{ type: 'text', text: 'hi' }] }, workItemId: 'urn:weft:test:work:1' },
    ] as unknown as AnyEventDraft[]
    const seal = createEagerSealer(cast.authority.key)
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

describe('differential: the tuned steps and the reference steps', () => {
  const groups = ['urn:weft:test:group:one', 'urn:weft:test:group:two', 'urn:weft:test:group:new']
  const ids = ['urn:weft:test:thing:1', 'urn:weft:test:thing:2']
  // Group Events of several aggregates, Organization Events, and a kind that opens a Group.
  const kinds = ['message.posted', 'work.started', 'membership.changed', 'mission.created', 'ext.missionweaveprotocol.registry.agent_card_registered']
  for (const kind of kinds) expect(EVENT_CATALOG.some((e) => e.kind === kind)).toBe(true)
  const draftArb = fc.record(
    {
      kind: fc.constantFrom(...kinds),
      payload: fc.record({ messageId: fc.constantFrom(...ids), workItemId: fc.constantFrom(...ids), membershipId: fc.constantFrom(...ids), note: fc.string() }),
      groupId: fc.constantFrom(...groups),
      workItemId: fc.constantFrom(...ids),
      conversationId: fc.constantFrom(...ids),
      actor: fc.constant(cast.worker2.actor as ActorRef),
    },
    { requiredKeys: ['kind', 'payload'] },
  ) as unknown as fc.Arbitrary<AnyEventDraft>
  const causeArb = fc.record(
    {
      type: fc.constantFrom('command', 'timer') as fc.Arbitrary<TransactionCause['type']>,
      id: fc.constant('urn:weft:test:action:1'),
      actor: fc.constant(cast.worker1.actor as ActorRef),
      correlationId: fc.constant('urn:weft:test:correlation:1'),
      groupId: fc.constantFrom(...groups),
      commandHash: fc.constant(`sha256:${'77'.repeat(32)}`),
    },
    { requiredKeys: ['type', 'id', 'actor', 'correlationId'] },
  )

  /** A state with two existing Groups at heads 3 and 0, one aggregate revision known. */
  function stateOf() {
    const state = emptyState()
    state.groups.set(groups[0]!, { head: 3, revisions: new Map([[`message:${ids[0]}`, 2]]) } as unknown as GroupState)
    state.groups.set(groups[1]!, { head: 0, revisions: new Map() } as unknown as GroupState)
    return state
  }

  /** The transaction's Events through `steps`, or the error it throws. */
  function run(steps: TransactionSteps, cause: TransactionCause, drafts: readonly AnyEventDraft[], deferSignatures: boolean): string {
    let n = 0
    const seal = (deferSignatures ? createDeferredSealer : createEagerSealer)(cast.authority.key)
    try {
      const events = steps.materialize(stateOf(), cause, structuredClone(drafts), {
        now: T0,
        newId: () => `urn:weft:test:event:${++n}`,
        authority: Object.freeze({ ...cast.authority.actor }) as ActorRef,
        sign: (e) => seal(e),
      })
      seal.commit(cause.commandHash === undefined ? { events } : { events, commandHash: cause.commandHash })
      // Text keeps member order: byte-identical Events, signatures included.
      return JSON.stringify(events)
    } catch (error) {
      return `throws ${(error as Error).message} after ${n} IDs`
    }
  }

  it('property: any transaction gives byte-identical signed Events (or the same error), eager or deferred', () => {
    fc.assert(
      fc.property(causeArb, fc.array(draftArb, { minLength: 1, maxLength: 4 }), fc.boolean(), (cause, drafts, deferSignatures) => {
        expect(run(createTunedSteps(), cause, drafts, deferSignatures)).toBe(run(plainSteps, cause, drafts, deferSignatures))
      }),
      { numRuns: 300 },
    )
  })

  it('property: folding the Events leaves the same heads and revisions', () => {
    const noReducers = new Proxy({}, { get: () => () => {} }) as never
    fc.assert(
      fc.property(causeArb, fc.array(draftArb, { minLength: 1, maxLength: 4 }), (cause, drafts) => {
        const fold = (steps: TransactionSteps) => {
          const state = stateOf()
          let n = 0
          let events: Event[]
          try {
            events = steps.materialize(state, cause, drafts, { now: T0, newId: () => `urn:weft:test:event:${++n}`, authority: cast.authority.actor as ActorRef, sign: (e) => e as Event })
          } catch {
            return 'throws'
          }
          try {
            steps.apply(state, events, noReducers)
          } catch (error) {
            return `apply throws ${(error as Error).message}`
          }
          return JSON.stringify([[...state.groups].map(([id, g]) => [id, g.head, [...g.revisions]]), state.org.log.length])
        }
        expect(fold(createTunedSteps())).toBe(fold(plainSteps))
      }),
      { numRuns: 200 },
    )
  })
})
