import { beforeEach, describe, expect, it } from 'vitest'
import type { Authority } from '../src/commit/pipeline.js'
import { cast, command, GROUP, type TestClock, refusal, signed } from '@weft/testkit/fixtures'
import { inGroup, started, workerMembership } from './fixtures-pipeline.js'

let clock: TestClock
let authority: Authority

beforeEach(async () => {
  ;({ clock, authority } = await started())
})

const renew = (extra: Record<string, unknown> = {}, leaseSeconds = 60) =>
  command('mission.renew_coordinator', { leaseSeconds }, cast.coordinator, inGroup(cast.coordinator, { coordinatorEpoch: 1, ...extra }), clock)

/** The log positions a retry must not move. */
const heads = (a: Authority) => ({ group: a.events(GROUP).length, org: a.organizationEvents().length, head: a.group(GROUP)?.head })

describe('idempotency by (actor, Action ID), §15.1', () => {
  it('answers an exact retry with the original receipt and appends nothing', async () => {
    const bytes = JSON.stringify(renew())
    const first = await authority.submit(bytes)
    const before = heads(authority)
    const again = await authority.submit(bytes)
    expect(again).toEqual({ ...first, duplicate: true })
    expect(first.duplicate).toBe(false)
    expect(heads(authority)).toEqual(before)
  })

  it('treats byte-equivalent canonical content as the same Command (JSON spelled differently)', async () => {
    const doc = renew()
    const first = await authority.submit(JSON.stringify(doc))
    const respelled = JSON.stringify(Object.fromEntries(Object.entries(doc).reverse()), null, 2)
    expect(await authority.submit(respelled)).toMatchObject({ duplicate: true, events: first.events })
  })

  it('refuses the same Action ID with other content as ACTION_ID_COLLISION, appending nothing', async () => {
    const doc = renew()
    await authority.submit(JSON.stringify(doc))
    const before = heads(authority)
    const other = renew({ actionId: doc.actionId }, 120)
    const error = await refusal(authority.submit(JSON.stringify(other)))
    expect({ code: error.code, related: error.relatedActionId, stage: authority.audit().at(-1)?.stage }).toEqual({
      code: 'ACTION_ID_COLLISION',
      related: doc.actionId,
      stage: 'idempotency',
    })
    expect(heads(authority)).toEqual(before)
  })

  it('keys Action IDs per actor', async () => {
    const shared = 'urn:weft:test:action:shared'
    await authority.submit(JSON.stringify(renew({ actionId: shared })))
    const grant = command('membership.change', workerMembership(cast.worker1), cast.coordinator, inGroup(cast.coordinator, { actionId: 'urn:weft:test:action:grant' }), clock)
    await authority.submit(JSON.stringify(grant))
    const byWorker = command('membership.end', { membershipId: `${GROUP}:membership:worker-1`, reason: 'leaving' }, cast.worker1, inGroup(cast.worker1, { actionId: shared }), clock)
    expect(await authority.submit(JSON.stringify(byWorker))).toMatchObject({ duplicate: false, actor: cast.worker1.actor })
  })

  it('records only accepted Commands: a refused Action ID may be used again once corrected', async () => {
    const actionId = 'urn:weft:test:action:corrected'
    const wrong = command('mission.cancel', { reason: 'stop' }, cast.owner, inGroup(cast.owner, { actionId, membershipEpoch: 2 }), clock)
    expect((await refusal(authority.submit(JSON.stringify(wrong)))).code).toBe('MEMBERSHIP_STALE')
    const right = command('mission.cancel', { reason: 'stop' }, cast.owner, inGroup(cast.owner, { actionId }), clock)
    expect(await authority.submit(JSON.stringify(right))).toMatchObject({ duplicate: false, actionId })
  })

  it('still answers a retry after the epochs moved on (idempotency comes before the epoch checks)', async () => {
    const bytes = JSON.stringify(renew())
    const first = await authority.submit(bytes)
    await authority.submit(signed('ext.missionweaveprotocol.identity.session_open', { agentId: cast.coordinator.actor.id }, cast.controlPlane, {}, clock))
    expect(await authority.submit(bytes)).toEqual({ ...first, duplicate: true })
  })

  it('refuses a retry after the freshness window (§19: send a new Command)', async () => {
    const bytes = JSON.stringify(renew())
    await authority.submit(bytes)
    clock.advance(301)
    expect((await refusal(authority.submit(bytes))).code).toBe('AUTH_INVALID_SIGNATURE')
  })

  it('accepts one of two identical Commands submitted together; the other is the duplicate', async () => {
    const bytes = JSON.stringify(renew())
    const before = heads(authority).group
    const receipts = await Promise.all([authority.submit(bytes), authority.connect().submit({}, bytes)])
    expect(receipts.map((r) => r.duplicate)).toEqual([false, true])
    expect(authority.events(GROUP).length).toBe(before + 1)
  })

  it('shares receipts between the trusted path and the signed one', async () => {
    const doc = renew()
    const trusted = authority.submitTrusted(doc)
    expect(authority.submitTrusted(doc)).toEqual({ ...trusted, duplicate: true })
    expect(await authority.submit(JSON.stringify(doc))).toEqual({ ...trusted, duplicate: true })
  })

  it('makes Organization-scoped Commands idempotent too', async () => {
    const open = signed('ext.missionweaveprotocol.identity.session_open', { agentId: cast.worker1.actor.id }, cast.controlPlane, {}, clock)
    await authority.submit(open)
    await authority.submit(open)
    expect(authority.state.org.agents.get(cast.worker1.actor.id)?.sessionEpoch).toBe(2)
  })
})
