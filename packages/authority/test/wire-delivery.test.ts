/**
 * Subscriptions over the WebSocket binding (§16, §17.2, §17.3): several Groups on one connection,
 * replay then live without a gap, resumption after a reconnect, ACK Cursors, per-Group
 * backpressure, hidden Groups and Presence on PING.
 */
import type { FeedHandlers } from '@weft/client'
import type { ProtocolError } from '@weft/codec'
import type { Event, PresenceRecord } from '@weft/spec'
import { validators } from '@weft/validators'
import { afterEach, describe, expect, it } from 'vitest'
import { compactHead, startedKept } from '@weft/testkit/recovery'
import { cast, GROUP } from '@weft/testkit/fixtures'
import { dropAgent, GROUP_TWO, oneTo, post, rawSocket, sequencesByGroup, until, wireWorld, withSecondGroup, type WireWorld } from './wire-world.js'

let world: WireWorld | undefined
afterEach(async () => {
  await world?.close()
  world = undefined
})

/** The sequences of `groupId` worker1 may see (§8: a late joiner's history starts at its Membership). */
function visible(ww: WireWorld, groupId: string): number[] {
  return ww.delivery.replay(cast.worker1.actor, groupId, 0).events.map((e) => e.sequence!)
}

/** Handlers that keep what they receive. */
function recorder(): FeedHandlers & { readonly events: Event[]; readonly errors: [string, ProtocolError][] } {
  const events: Event[] = []
  const errors: [string, ProtocolError][] = []
  return { events, errors, onEvent: (e) => events.push(e), onError: (error, groupId) => errors.push([groupId, error]) }
}

/** worker1 connected and subscribed from the start to {@link GROUP} and a second Group. */
async function bothGroups() {
  world = await wireWorld()
  const two = await withSecondGroup(world.w)
  const { conn } = await world.connect('worker1')
  const seen = recorder()
  conn.feed.subscribe(
    [
      { groupId: GROUP, afterSequence: 0 },
      { groupId: GROUP_TWO, afterSequence: 0 },
    ],
    seen,
  )
  return { ww: world, two, conn, seen }
}

describe('one connection, every Group (§17.1, §17.2)', () => {
  it('multiplexes two Groups, each replayed and then live in its own sequence order', async () => {
    const { ww, two, conn, seen } = await bothGroups()
    for (let i = 0; i < 3; i++) {
      await post(ww.w)
      await post(two)
    }
    await conn.ping()
    expect(sequencesByGroup(seen.events)).toEqual({ [GROUP]: visible(ww, GROUP), [GROUP_TWO]: visible(ww, GROUP_TWO) })
    expect(seen.events.map((e) => e.eventId)).toEqual([...new Set(seen.events.map((e) => e.eventId))])
  })

  it('switches from replay to live without a gap or a repeat', async () => {
    world = await wireWorld()
    await post(world.w, 5)
    const { conn } = await world.connect('worker2')
    const seen = recorder()
    conn.feed.subscribe([{ groupId: GROUP, afterSequence: 3 }], seen)
    // Committed while the replay frames are still on their way.
    await post(world.w, 4)
    await conn.ping()
    const head = world.w.group().head
    expect(seen.events.map((e) => e.sequence)).toEqual(oneTo(head).slice(3))
    expect(seen.events).toEqual(world.w.authority.events(GROUP, 3))
  })

  it('refuses a Group the Agent may not read with GROUP_NOT_FOUND, alone, while the others flow', async () => {
    world = await wireWorld()
    const { conn } = await world.connect('worker1')
    const seen = recorder()
    conn.feed.subscribe(
      [
        { groupId: 'urn:weft:test:group:hidden', afterSequence: 0 },
        { groupId: GROUP, afterSequence: 0 },
      ],
      seen,
    )
    await conn.ping()
    expect(seen.errors.map(([groupId, e]) => [groupId, e.code])).toEqual([['urn:weft:test:group:hidden', 'GROUP_NOT_FOUND']])
    expect(sequencesByGroup(seen.events)).toEqual({ [GROUP]: visible(world, GROUP) })
  })
})

describe('below a compaction point (§16, §19)', () => {
  it('answers a SUBSCRIBE from below with an ERROR frame whose snapshotArtifactHash is the snapshot reference [error CURSOR_TOO_OLD]', async () => {
    const kept = await startedKept()
    await post(kept.w, 2)
    const record = compactHead(kept, 'urn:weft:test:snapshot:wire')
    world = await wireWorld({ world: kept.w })
    // The frame as it travels.
    const raw = await rawSocket(world.server.url)
    try {
      expect(await raw.hello('worker1')).toMatchObject({ phase: 'server_accept' })
      raw.send({ protocolVersion: '0.1', frameId: 'urn:weft:test:frame:sub-old', frameType: 'SUBSCRIBE', subscriptionId: 'urn:weft:test:sub:old', groups: [{ groupId: GROUP, afterSequence: 0 }] })
      const frame = await raw.nextError('CURSOR_TOO_OLD')
      expect(validators.websocketFrame.errors(frame)).toEqual([])
      expect(frame.error).toMatchObject({
        relatedFrameId: 'urn:weft:test:frame:sub-old',
        groupId: GROUP,
        snapshotArtifactHash: record.snapshotHash,
        details: { snapshotHash: record.snapshotHash, throughSequence: record.throughSequence },
      })
    } finally {
      raw.close()
    }
    // The error the client reads back from it.
    const { conn } = await world.connect('worker1')
    const seen = recorder()
    conn.feed.subscribe([{ groupId: GROUP, afterSequence: 0 }], seen)
    await conn.ping()
    expect(seen.errors.map(([g, e]) => [g, e.code, e.snapshotArtifactHash])).toEqual([[GROUP, 'CURSOR_TOO_OLD', record.snapshotHash]])
  })
})

describe('reconnect (§16)', () => {
  it('resubscribes every Group from the last Event handed out: nothing lost, nothing repeated', async () => {
    const { ww, two, conn, seen } = await bothGroups()
    await post(ww.w, 2)
    await conn.ping()
    dropAgent(ww.server, cast.worker1.actor.id)
    await until(conn, 'reconnecting')
    // History written while the Agent was away.
    await post(ww.w, 3)
    await post(two, 2)
    await until(conn, 'open')
    await post(ww.w, 1)
    await conn.ping()
    expect(sequencesByGroup(seen.events)).toEqual({ [GROUP]: visible(ww, GROUP), [GROUP_TWO]: visible(ww, GROUP_TWO) })
    expect(visible(ww, GROUP).at(-1)).toBe(ww.w.group().head)
  })

  it('records ACK Cursors in the delivery and repeats them after a reconnect', async () => {
    world = await wireWorld()
    const { conn } = await world.connect('worker1')
    const seen = recorder()
    conn.feed.subscribe([{ groupId: GROUP, afterSequence: 0 }], seen)
    await post(world.w, 2)
    await conn.ping()
    const last = seen.events.at(-1)!.sequence!
    await conn.feed.ack(GROUP, last)
    await conn.ping()
    expect(world.delivery.cursor(cast.worker1.actor, GROUP)).toBe(last)
    // An ACK beyond the head is refused on its own; the connection and the Cursor stay.
    await conn.feed.ack(GROUP, last + 50)
    await conn.ping()
    expect(seen.errors.map(([g, e]) => [g, e.code])).toEqual([[GROUP, 'INVALID_COMMAND']])
    expect(world.delivery.cursor(cast.worker1.actor, GROUP)).toBe(last)
    expect(conn.status).toBe('open')
  })
})

describe('backpressure (§17.3)', () => {
  it('pauses only the Group whose window is full, tells the Agent, and resumes it from ACKs without a gap', async () => {
    world = await wireWorld({ server: { maxUnackedPerGroup: 4, retryAfterMs: 250 } })
    const two = await withSecondGroup(world.w)
    const { conn } = await world.connect('worker1')
    const seen = recorder()
    const headOne = world.w.group().head
    const headTwo = two.group().head
    conn.feed.subscribe(
      [
        { groupId: GROUP, afterSequence: headOne },
        { groupId: GROUP_TWO, afterSequence: headTwo },
      ],
      seen,
    )
    await post(world.w, 10)
    await conn.ping()
    const paused = seen.errors.filter(([, e]) => e.code === 'BACKPRESSURE')
    expect(paused.map(([g, e]) => [g, e.retryable, e.details?.['retryAfterMs']])).toEqual([[GROUP, true, 250]])
    expect(sequencesByGroup(seen.events)).toEqual({ [GROUP]: [1, 2, 3, 4].map((n) => headOne + n) })
    // The other Group is not held back by the paused one.
    await post(two, 3)
    await conn.ping()
    expect(sequencesByGroup(seen.events)[GROUP_TWO]).toEqual(oneTo(3).map((n) => headTwo + n))
    // ACKs reopen the paused Group window by window until it has caught up.
    for (let rounds = 0; sequencesByGroup(seen.events)[GROUP]!.length < 10 && rounds < 10; rounds++) {
      await conn.feed.ack(GROUP, sequencesByGroup(seen.events)[GROUP]!.at(-1)!)
      await conn.ping()
    }
    expect(sequencesByGroup(seen.events)).toEqual({ [GROUP]: oneTo(10).map((n) => headOne + n), [GROUP_TWO]: oneTo(3).map((n) => headTwo + n) })
  })
})

describe('PING (§6.2, §17.3)', () => {
  it('echoes the nonce and keeps the Presence Record of the connected Agent only', async () => {
    world = await wireWorld()
    const { conn } = await world.connect('worker1')
    const presence: PresenceRecord = {
      agentId: cast.worker1.actor.id,
      sessionEpoch: conn.sessionEpoch(),
      status: 'online',
      capacity: { maxSlots: 2, activeSlots: 1, availableSlots: 1, queuedItems: 0 },
      capabilityAvailability: [],
      lastHeartbeat: '2026-07-15T00:00:00Z',
      expiresAt: '2026-07-15T00:05:00Z',
    }
    await conn.ping(presence)
    expect(world.server.presence(cast.worker1.actor.id)).toEqual(presence)
    await expect(conn.ping({ ...presence, agentId: cast.worker2.actor.id })).rejects.toMatchObject({ code: 'AUTH_FORBIDDEN' })
    await expect(conn.ping({ ...presence, sessionEpoch: conn.sessionEpoch() - 1 })).rejects.toMatchObject({ code: 'AUTH_STALE_SESSION' })
    expect(world.server.presence(cast.worker2.actor.id)).toBeUndefined()
  })
})
