import { GENERIC_WIRE_MESSAGES, ProtocolError, sign } from '@weft/codec'
import type { Event } from '@weft/spec'
import { signedVerifier } from '@weft/validators/signed'
import { beforeEach, describe, expect, it } from 'vitest'
import type { Authority } from '../src/commit/pipeline.js'
import { agentCard, cast, command, GROUP, testClock, testRegistry, type TestClock, refusal, signed } from '@weft/testkit/fixtures'
import { inGroup, missionCreatePayload, started, testAuthority, workerMembership } from './fixtures-pipeline.js'

let clock: TestClock
let authority: Authority

beforeEach(async () => {
  ;({ clock, authority } = await started())
})

/** Everything a refusal must leave untouched. */
function snapshot(a: Authority): unknown {
  return { state: structuredClone(a.state), events: a.events(GROUP).length, org: a.organizationEvents().length }
}

/** Submits, expects a refusal with `code` at ingress `stage`, and checks that nothing changed. */
async function refusedAt(bytes: string | Uint8Array, code: string, stage: string): Promise<ProtocolError> {
  const before = snapshot(authority)
  const error = await refusal(authority.submit(bytes))
  expect({ code: error.code, stage: authority.audit().at(-1)?.stage }).toEqual({ code, stage })
  expect(snapshot(authority)).toEqual(before)
  return error
}

const coordinatorEnvelope = (extra: Record<string, unknown> = {}) => inGroup(cast.coordinator, { coordinatorEpoch: 1, ...extra })

describe('ingress, step by step', () => {
  it('1. refuses a Command over the size limit as PROTOCOL_VIOLATION', async () => {
    authority = testAuthority(clock, { maxCommandBytes: 400 })
    const bytes = signed('mission.cancel', { reason: 'x'.repeat(400) }, cast.owner, inGroup(cast.owner), clock)
    await refusedAt(bytes, 'PROTOCOL_VIOLATION', 'size')
  })

  it('2. refuses text that is not strict JSON as PROTOCOL_VIOLATION', async () => {
    await refusedAt('{"actionId":"a","actionId":"b"}', 'PROTOCOL_VIOLATION', 'parse')
    await refusedAt(new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), 'PROTOCOL_VIOLATION', 'parse')
  })

  it('3. refuses an envelope off the Command schema, naming the Action ID', async () => {
    const doc = command('mission.cancel', { reason: 'r' }, cast.owner, inGroup(cast.owner), clock) as unknown as Record<string, unknown>
    const { correlationId: _dropped, ...rest } = doc
    const error = await refusedAt(JSON.stringify(sign('command', rest, cast.owner.key)), 'SCHEMA_VALIDATION_FAILED', 'schema')
    expect(error.relatedActionId).toBe(doc['actionId'])
  })

  it('3. refuses a payload off its kind’s schema, with the issues', async () => {
    const bytes = signed('membership.change', { ...workerMembership(cast.worker1), role: 'boss' } as never, cast.coordinator, inGroup(cast.coordinator), clock)
    const error = await refusedAt(bytes, 'SCHEMA_VALIDATION_FAILED', 'payload')
    expect(JSON.stringify(error.details)).toContain('role')
  })

  it('3. refuses an uncatalogued ext. kind as INVALID_COMMAND', async () => {
    await refusedAt(signed('ext.acme.tools.frobnicate' as never, {} as never, cast.owner, inGroup(cast.owner), clock), 'INVALID_COMMAND', 'kind')
  })

  it('3. refuses a critical extension it cannot interpret, and relays a noncritical one', async () => {
    const extension = (critical: boolean) => ({ 'urn:weft:test:profile': { version: '1.0.0', critical, data: { any: 1 } } })
    const cancel = (critical: boolean) => signed('mission.renew_coordinator', { leaseSeconds: 60 }, cast.coordinator, coordinatorEnvelope({ extensions: extension(critical) }), clock)
    await refusedAt(cancel(true), 'UNKNOWN_CRITICAL_EXTENSION', 'extensions')
    expect((await authority.submit(cancel(false))).events).toHaveLength(1)
  })

  it('4. refuses a broken signature with the generic message; the stage stays in audit', async () => {
    const doc = command('mission.cancel', { reason: 'signed' }, cast.owner, inGroup(cast.owner), clock)
    const tampered = JSON.stringify({ ...doc, payload: { reason: 'changed' } })
    const error = await refusedAt(tampered, 'AUTH_INVALID_SIGNATURE', 'signature')
    expect(error.message).toBe(GENERIC_WIRE_MESSAGES.AUTH_INVALID_SIGNATURE)
    expect(JSON.stringify(error.toWire('2026-07-15T00:00:00Z'))).not.toContain('signature-mismatch')
    expect(authority.audit().at(-1)).toMatchObject({ reason: 'signature-mismatch', actionId: doc.actionId, kind: 'mission.cancel' })
  })

  it('4. refuses a key the Registry does not bind (stage key-resolution)', async () => {
    const stranger = { actor: cast.owner.actor, key: { ...cast.worker1.key, keyId: 'urn:weft:test:key:unknown' } }
    await refusedAt(signed('mission.cancel', { reason: 'r' }, stranger, inGroup(cast.owner), clock), 'AUTH_INVALID_SIGNATURE', 'key-resolution')
  })

  it('5. refuses a Command issued outside the freshness window, either way', async () => {
    const early = testClock(clock.nowMs - 301_000)
    await refusedAt(signed('mission.cancel', { reason: 'r' }, cast.owner, inGroup(cast.owner), early), 'AUTH_INVALID_SIGNATURE', 'freshness')
    const late = testClock(clock.nowMs + 301_000)
    await refusedAt(signed('mission.cancel', { reason: 'r' }, cast.owner, inGroup(cast.owner), late), 'AUTH_INVALID_SIGNATURE', 'freshness')
    expect(authority.audit().at(-1)?.reason).toBe('issued-in-the-future')
    const edge = testClock(clock.nowMs - 300_000)
    await expect(authority.submit(signed('mission.renew_coordinator', { leaseSeconds: 60 }, cast.coordinator, coordinatorEnvelope(), edge))).resolves.toMatchObject({ duplicate: false })
  })

  it('7. refuses a Session Epoch other than the current one', async () => {
    const renew = (sessionEpoch: number) => signed('mission.renew_coordinator', { leaseSeconds: 60 }, cast.coordinator, coordinatorEnvelope({ sessionEpoch }), clock)
    await refusedAt(renew(2), 'AUTH_STALE_SESSION', 'session')
    await authority.submit(signed('ext.missionweaveprotocol.identity.session_open', { agentId: cast.coordinator.actor.id }, cast.controlPlane, {}, clock))
    await refusedAt(renew(1), 'AUTH_STALE_SESSION', 'session')
    expect(authority.audit().at(-1)?.reason).toBe('session-epoch-fenced')
    expect((await authority.submit(renew(2))).events).toHaveLength(1)
  })

  it('8. refuses a Command naming an absent Group as GROUP_NOT_FOUND', async () => {
    await refusedAt(signed('mission.cancel', { reason: 'r' }, cast.owner, inGroup(cast.owner, { groupId: 'urn:weft:test:group:none' }), clock), 'GROUP_NOT_FOUND', 'group')
  })

  it('8. lets mission.create name a Group that does not exist yet', async () => {
    const receipt = await authority.submit(signed('mission.create', missionCreatePayload(), cast.owner, { groupId: 'urn:weft:test:group:two' }, clock))
    expect(receipt.events.map((e) => [e.kind, e.groupId, e.sequence])).toEqual([['mission.created', 'urn:weft:test:group:two', 1]])
  })

  it('8. answers an actor that never held a Membership as for an absent Group: GROUP_NOT_FOUND (§17.2)', async () => {
    const error = await refusedAt(signed('membership.end', { membershipId: 'urn:x:m', reason: 'r' }, cast.worker1, inGroup(cast.worker1), clock), 'GROUP_NOT_FOUND', 'membership')
    expect([error.message, authority.audit().at(-1)?.reason]).toEqual(['group not found', 'no-membership'])
  })

  it('8. refuses a Membership Epoch other than the current one as MEMBERSHIP_STALE', async () => {
    await refusedAt(signed('mission.cancel', { reason: 'r' }, cast.owner, inGroup(cast.owner, { membershipEpoch: 2 }), clock), 'MEMBERSHIP_STALE', 'membership')
  })

  it('8. an ended Membership: its own epoch is no Membership, an older one is fenced', async () => {
    const grant = () => authority.submit(signed('membership.change', workerMembership(cast.worker1), cast.coordinator, inGroup(cast.coordinator), clock))
    await grant()
    await grant()
    await authority.submit(signed('membership.end', { membershipId: workerMembership(cast.worker1).membershipId, reason: 'done' }, cast.coordinator, inGroup(cast.coordinator), clock))
    const byWorker = (membershipEpoch: number) => signed('membership.end', { membershipId: 'urn:x:m', reason: 'r' }, cast.worker1, inGroup(cast.worker1, { membershipEpoch }), clock)
    await refusedAt(byWorker(2), 'MEMBERSHIP_REQUIRED', 'membership')
    await refusedAt(byWorker(1), 'MEMBERSHIP_STALE', 'membership')
  })

  it('8. authorizes a service by the control-plane policy, not by Membership', async () => {
    await refusedAt(signed('mission.cancel', { reason: 'r' }, cast.registry, { groupId: GROUP }, clock), 'AUTH_FORBIDDEN', 'membership')
    expect((await authority.submit(signed('mission.cancel', { reason: 'policy' }, cast.controlPlane, { groupId: GROUP }, clock))).events).toHaveLength(1)
  })

  it('9. refuses a Coordinator Epoch that is not current, from anyone but the Coordinator, or under an expired lease', async () => {
    await refusedAt(signed('mission.renew_coordinator', { leaseSeconds: 60 }, cast.coordinator, coordinatorEnvelope({ coordinatorEpoch: 2 }), clock), 'AUTH_STALE_COORDINATOR', 'coordinator')
    await authority.submit(signed('membership.change', workerMembership(cast.worker1), cast.coordinator, inGroup(cast.coordinator), clock))
    // §19: the current epoch from an Agent who is not the Coordinator is not fenced; it lacks the role.
    await refusedAt(signed('mission.renew_coordinator', { leaseSeconds: 60 }, cast.worker1, inGroup(cast.worker1, { coordinatorEpoch: 1 }), clock), 'AUTH_FORBIDDEN', 'coordinator')
    expect(authority.audit().at(-1)?.reason).toBe('not-the-coordinator')
    clock.advance(86_400)
    await refusedAt(signed('mission.renew_coordinator', { leaseSeconds: 60 }, cast.coordinator, coordinatorEnvelope(), clock), 'AUTH_STALE_COORDINATOR', 'coordinator')
    expect(authority.audit().at(-1)?.reason).toBe('coordinator-lease-expired')
  })

  it('10. refuses an issuer type the catalog does not allow for the kind', async () => {
    await refusedAt(signed('work.start', { workItemId: 'urn:x:w', ownershipEpoch: 1, executionLeaseSeconds: 60 }, cast.owner, inGroup(cast.owner), clock), 'AUTH_FORBIDDEN', 'role')
  })

  it('11. compares expectedRevision with the revision of the kind’s aggregate', async () => {
    const change = (expectedRevision?: number) =>
      signed('membership.change', workerMembership(cast.worker1), cast.coordinator, inGroup(cast.coordinator, expectedRevision === undefined ? {} : { expectedRevision }), clock)
    await refusedAt(change(1), 'REVISION_CONFLICT', 'revision')
    expect((await authority.submit(change(0))).events[0]?.aggregateRevision).toBe(1)
    const error = await refusedAt(change(2), 'REVISION_CONFLICT', 'revision')
    expect(error.details).toEqual({ expectedRevision: 2, currentRevision: 1 })
    expect((await authority.submit(change(1))).events[0]?.aggregateRevision).toBe(2)
    // The Mission aggregate is the Group's; mission.created made it revision 1.
    await refusedAt(signed('mission.renew_coordinator', { leaseSeconds: 60 }, cast.coordinator, coordinatorEnvelope({ expectedRevision: 2 }), clock), 'REVISION_CONFLICT', 'revision')
    expect((await authority.submit(signed('mission.renew_coordinator', { leaseSeconds: 60 }, cast.coordinator, coordinatorEnvelope({ expectedRevision: 1 }), clock))).events).toHaveLength(1)
  })

  it('12. passes a handler’s refusal through, with the Action ID; any other failure is INTERNAL_ERROR', async () => {
    const cancel = (reason: string) => command('work.cancel', { workItemId: 'urn:x:w', reason }, cast.owner, inGroup(cast.owner), clock)
    const doc = cancel('no')
    const refused = await refusedAt(JSON.stringify(doc), 'INVALID_STATE_TRANSITION', 'handler')
    expect(refused.relatedActionId).toBe(doc.actionId)
    expect(authority.audit().at(-1)).toMatchObject({ reason: 'the test WorkItem cannot be cancelled', actor: cast.owner.actor, groupId: GROUP })
    const bug = await refusedAt(JSON.stringify(cancel('throw')), 'INTERNAL_ERROR', 'handler')
    expect(bug.message).not.toContain('handler bug')
    expect(authority.audit().at(-1)?.detail).toBe('handler bug')
    await refusedAt(JSON.stringify(cancel('wrong kind')), 'INTERNAL_ERROR', 'commit')
  })

  it('12. verifies embedded Signed Documents through ctx.verifyDocument', async () => {
    const card = { ...agentCard(cast.worker1, 2), displayName: 'forged' }
    await refusedAt(signed('ext.missionweaveprotocol.registry.agent_card_register', { card }, cast.controlPlane, {}, clock), 'AUTH_INVALID_SIGNATURE', 'agent-card:signature')
    expect(authority.audit().at(-1)?.reason).toBe('signature-mismatch')
  })
})

describe('ordering', () => {
  it('answers a Command failing two checks with the earlier one', async () => {
    await authority.submit(signed('membership.change', workerMembership(cast.worker1), cast.coordinator, inGroup(cast.coordinator), clock))
    const stale = testClock(clock.nowMs - 600_000)
    const approval = { approvalId: 'urn:x:a', workItemId: 'urn:x:w', ownershipEpoch: 1, operations: ['write'], resources: [], budget: { currency: 'USD', financialLimit: 1 }, expiresInSeconds: 60 }
    const tamper = (text: string) => JSON.stringify({ ...JSON.parse(text), correlationId: 'urn:weft:test:correlation:2' })
    const cases: [string, string | Uint8Array, string][] = [
      ['size before parse', '{'.repeat(2 << 20), 'size'],
      ['signature before freshness', tamper(signed('mission.cancel', { reason: 'r' }, cast.owner, inGroup(cast.owner), stale)), 'signature'],
      ['kind before freshness', signed('ext.acme.tools.frobnicate' as never, {} as never, cast.owner, inGroup(cast.owner), stale), 'kind'],
      ['freshness before membership', signed('mission.cancel', { reason: 'r' }, cast.worker2, inGroup(cast.worker2), stale), 'freshness'],
      ['session before membership', signed('mission.cancel', { reason: 'r' }, cast.worker2, inGroup(cast.worker2, { sessionEpoch: 5 }), clock), 'session'],
      [
        'membership before coordinator',
        signed('mission.renew_coordinator', { leaseSeconds: 60 }, cast.coordinator, coordinatorEnvelope({ membershipEpoch: 3, coordinatorEpoch: 3 }), clock),
        'membership',
      ],
      ['coordinator before role', signed('approval.grant_execution', approval, cast.coordinator, coordinatorEnvelope({ coordinatorEpoch: 2 }), clock), 'coordinator'],
      ['role before revision', signed('work.start', { workItemId: 'urn:x:w', ownershipEpoch: 1, executionLeaseSeconds: 60 }, cast.owner, inGroup(cast.owner, { expectedRevision: 9 }), clock), 'role'],
      ['revision before handler', signed('work.cancel', { workItemId: 'urn:x:w', reason: 'no' }, cast.owner, inGroup(cast.owner, { expectedRevision: 9 }), clock), 'revision'],
    ]
    const stages: string[] = []
    for (const [, bytes] of cases) {
      await refusal(authority.submit(bytes))
      stages.push(authority.audit().at(-1)!.stage)
    }
    expect(stages).toEqual(cases.map(([, , stage]) => stage))
  })
})

describe('transactions', () => {
  it('a reducer failure is INTERNAL_ERROR: nothing stored, the state is what it was, the log goes on', async () => {
    const before = snapshot(authority)
    const live = authority.state
    await refusedAt(signed('mission.cancel', { reason: 'reducer bug' }, cast.owner, inGroup(cast.owner), clock), 'INTERNAL_ERROR', 'commit')
    expect(snapshot(authority)).toEqual(before)
    expect(authority.state).toBe(live)
    expect(authority.group(GROUP)?.mission.state).toBe('active')
    const next = await authority.submit(signed('mission.renew_coordinator', { leaseSeconds: 60 }, cast.coordinator, coordinatorEnvelope(), clock))
    expect(next.events[0]?.sequence).toBe(authority.events(GROUP).length)
  })

  it('signs every Event and numbers each Group’s Events 1, 2, 3, … without a gap', async () => {
    await authority.submit(signed('membership.change', workerMembership(cast.worker1), cast.coordinator, inGroup(cast.coordinator), clock))
    await authority.submit(signed('mission.create', missionCreatePayload(), cast.owner, { groupId: 'urn:weft:test:group:two' }, clock))
    await refusal(authority.submit(signed('mission.cancel', { reason: 'reducer bug' }, cast.owner, inGroup(cast.owner), clock)))
    await authority.submit(signed('mission.renew_coordinator', { leaseSeconds: 60 }, cast.coordinator, coordinatorEnvelope(), clock))
    const registry = testRegistry()
    const all: Event[] = [...authority.organizationEvents()]
    for (const groupId of [GROUP, 'urn:weft:test:group:two']) {
      const events = authority.events(groupId)
      expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1))
      expect(authority.group(groupId)?.head).toBe(events.length)
      all.push(...events)
    }
    expect(authority.events(GROUP, 1).map((e) => e.sequence)).toEqual([2, 3])
    for (const event of all) {
      const result = signedVerifier.verify('event', JSON.stringify(event), registry)
      expect(result.ok ? event.acceptedBy : result.reason).toEqual(cast.authority.actor)
      expect(Object.isFrozen(event.payload)).toBe(true)
    }
  })

  it('receipts resolve through connect(); refusals reject with a ProtocolError', async () => {
    const transport = authority.connect()
    const doc = command('mission.renew_coordinator', { leaseSeconds: 60 }, cast.coordinator, coordinatorEnvelope(), clock)
    const receipt = await transport.submit(doc as never, JSON.stringify(doc))
    expect(receipt).toMatchObject({ actionId: doc.actionId, actor: cast.coordinator.actor, kind: 'mission.renew_coordinator', groupId: GROUP, duplicate: false })
    expect(receipt.events.map((e) => e.kind)).toEqual(['mission.coordinator.renewed'])
    expect(receipt.events[0]?.commandHash).toBe(receipt.commandHash)
    const error = await refusal(transport.submit(doc as never, '{}'))
    expect(error).toBeInstanceOf(ProtocolError)
    expect(error.code).toBe('SCHEMA_VALIDATION_FAILED')
  })

  it('submitCommand serializes; submitTrusted skips the signatures but not the checks', async () => {
    const doc = command('mission.renew_coordinator', { leaseSeconds: 60 }, cast.coordinator, coordinatorEnvelope(), clock)
    expect((await authority.submitCommand(doc)).actionId).toBe(doc.actionId)
    const forged = { ...command('mission.renew_coordinator', { leaseSeconds: 90 }, cast.coordinator, coordinatorEnvelope(), clock), payload: { leaseSeconds: 120 } }
    expect(authority.submitTrusted(forged).events).toHaveLength(1)
    const stale = command('mission.renew_coordinator', { leaseSeconds: 60 }, cast.coordinator, coordinatorEnvelope({ coordinatorEpoch: 2 }), clock)
    expect(() => authority.submitTrusted(stale)).toThrow(expect.objectContaining({ code: 'AUTH_STALE_COORDINATOR' }))
    const card = { ...agentCard(cast.worker1, 2), displayName: 'unsigned change' }
    expect(authority.submitTrusted(command('ext.missionweaveprotocol.registry.agent_card_register', { card }, cast.controlPlane, {}, clock)).events).toHaveLength(1)
    const { signature: _s, ...unsignedCard } = card
    expect(() => authority.submitTrusted(command('ext.missionweaveprotocol.registry.agent_card_register', { card: unsignedCard as never }, cast.controlPlane, {}, clock))).toThrow(
      expect.objectContaining({ code: 'SCHEMA_VALIDATION_FAILED' }),
    )
  })

  it('refuses bad options with a UsageError', () => {
    expect(() => testAuthority(clock, { maxCommandBytes: -1 })).toThrow(/maxCommandBytes/)
  })
})
