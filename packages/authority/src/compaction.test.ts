import { ProtocolError, sha256Tagged, UsageError, utf8Encode } from '@weft/codec'
import { describe, expect, it } from 'vitest'
import { compactHead, headSnapshot, post, retained, startedKept, type KeptWorld } from '../test/fixtures-recovery.js'
import { cast } from '../test/fixtures.js'
import { createWorld } from '../test/world.js'
import { buildGroupSnapshot, signGroupSnapshot, snapshotArtifactHash } from './snapshots.js'

/** The §19 code and details of what `run` throws (fails when it returns). */
function thrown(run: () => unknown): { code: string; details: Record<string, unknown> | undefined } {
  try {
    run()
  } catch (error) {
    if (error instanceof ProtocolError) return { code: error.code, details: error.details }
    throw error
  }
  throw new Error('expected a ProtocolError')
}

/** A kept world with `n` more Messages in its Group. */
async function withMessages(n: number): Promise<KeptWorld> {
  const kept = await startedKept()
  for (let i = 0; i < n; i++) await post(kept.w)
  return kept
}

describe('paged reads of the online log (§16)', () => {
  it('page with hasMore and nextAfterSequence up to the head, never cutting silently', async () => {
    const { w } = await withMessages(4)
    const head = w.group().head
    const seen: number[] = []
    let after = 0
    for (;;) {
      const page = w.authority.eventPage(w.groupId, after, 3)
      expect(page.events.length).toBeLessThanOrEqual(3)
      expect(page.head).toBe(head)
      seen.push(...page.events.map((e) => e.sequence!))
      after = page.nextAfterSequence
      if (!page.hasMore) break
    }
    expect(seen).toEqual(Array.from({ length: head }, (_, i) => i + 1))
    expect(w.authority.eventPage(w.groupId, head, 3)).toEqual({ events: [], nextAfterSequence: head, hasMore: false, head })
    for (const bad of [0, -1, 1.5]) expect(() => w.authority.eventPage(w.groupId, 0, bad)).toThrow(UsageError)
  })
})

describe('compaction behind a signed Group Snapshot (§7.4, §16)', () => {
  it('takes Events up to the snapshot off the online log; a read from below is CURSOR_TOO_OLD with the reference', async () => {
    const kept = await withMessages(3)
    const { w, store } = kept
    const before = w.authority.replayState()
    const through = w.group().head
    const record = compactHead(kept, 'urn:weft:test:snapshot:first')
    expect(record).toMatchObject({ groupId: w.groupId, throughSequence: through, snapshotHash: snapshotArtifactHash(record.snapshot) })
    expect(sha256Tagged(utf8Encode(record.image))).toBe(record.snapshot.stateHash)
    expect(w.authority.snapshot(w.groupId)).toBe(record)
    const tooOld = thrown(() => w.authority.events(w.groupId))
    expect(tooOld).toEqual({
      code: 'CURSOR_TOO_OLD',
      details: {
        groupId: w.groupId,
        afterSequence: 0,
        snapshotId: 'urn:weft:test:snapshot:first',
        throughSequence: through,
        snapshotHash: record.snapshotHash,
        stateHash: record.snapshot.stateHash,
        oldestSequence: through + 1,
      },
    })
    expect(thrown(() => w.authority.eventPage(w.groupId, through - 1, 10)).code).toBe('CURSOR_TOO_OLD')
    expect(w.authority.events(w.groupId, through)).toEqual([])
    // The state is unchanged and still the fold of the retained history; the store serves only the online part.
    expect(w.authority.state).toEqual(before)
    expect(w.authority.replayState()).toEqual(before)
    expect(store.groupEvents(w.groupId, 0)).toEqual([])
    expect(retained(store, w.groupId).map((e) => e.sequence)).toEqual(Array.from({ length: through }, (_, i) => i + 1))
    // The log continues from the head.
    await post(w)
    expect(w.authority.events(w.groupId, through).map((e) => e.sequence)).toEqual([through + 1])
  })

  it('accepts a snapshot that lags the head, checking it against the state at its own sequence', async () => {
    const kept = await withMessages(2)
    const { w } = kept
    const snapshot = headSnapshot(kept, 'urn:weft:test:snapshot:lagging')
    await post(w)
    await post(w)
    const record = w.authority.compact(w.groupId, snapshot)
    expect(record.throughSequence).toBe(snapshot.throughSequence)
    expect(sha256Tagged(utf8Encode(record.image))).toBe(snapshot.stateHash)
    expect(w.authority.events(w.groupId, snapshot.throughSequence).map((e) => e.sequence)).toEqual([snapshot.throughSequence + 1, snapshot.throughSequence + 2])
  })

  it('moves forward only: a second compaction must pass the first one', async () => {
    const kept = await withMessages(1)
    const first = headSnapshot(kept, 'urn:weft:test:snapshot:a')
    // The signed text is accepted as well as the object.
    kept.w.authority.compact(kept.w.groupId, JSON.stringify(first))
    expect(thrown(() => kept.w.authority.compact(kept.w.groupId, first)).code).toBe('INVALID_COMMAND')
    await post(kept.w)
    expect(compactHead(kept, 'urn:weft:test:snapshot:b').throughSequence).toBe(first.throughSequence + 1)
  })

  it('refuses a snapshot that does not verify, of another Group, or beyond the head, changing nothing', async () => {
    const kept = await withMessages(1)
    const { w } = kept
    const good = headSnapshot(kept, 'urn:weft:test:snapshot:good')
    const forge = (change: (s: ReturnType<typeof buildGroupSnapshot>) => ReturnType<typeof buildGroupSnapshot>) =>
      signGroupSnapshot(change(buildGroupSnapshot(w.group(), retained(kept.store, w.groupId), { snapshotId: 'urn:weft:test:snapshot:forged', createdBy: { type: 'service', id: cast.controlPlane.actor.id }, createdAt: good.createdAt })), cast.controlPlane.key)
    const cases: [string, unknown, string][] = [
      ['tampered bytes', { ...good, stateHash: `sha256:${'e'.repeat(64)}` }, 'AUTH_INVALID_SIGNATURE'],
      ['a state hash the Group never had', forge((s) => ({ ...s, stateHash: `sha256:${'e'.repeat(64)}` })), 'INVALID_COMMAND'],
      ['Event IDs out of order', forge((s) => ({ ...s, eventIds: [...s.eventIds].reverse() })), 'INVALID_COMMAND'],
      ['another Group', { ...good, groupId: 'urn:weft:test:group:other' }, 'INVALID_COMMAND'],
      ['beyond the head', forge((s) => ({ ...s, throughSequence: s.throughSequence + 1 })), 'INVALID_COMMAND'],
    ]
    for (const [, snapshot, code] of cases) expect(thrown(() => w.authority.compact(w.groupId, snapshot as typeof good)).code).toBe(code)
    expect(thrown(() => w.authority.compact('urn:weft:test:group:nowhere', good)).code).toBe('GROUP_NOT_FOUND')
    expect(thrown(() => w.authority.compact(w.groupId, '{"groupId":"a","groupId":"b"}')).code).toBe('PROTOCOL_VIOLATION')
    expect(w.authority.snapshot(w.groupId)).toBeUndefined()
    expect(w.authority.events(w.groupId).length).toBe(w.group().head)
  })

  it('needs a store that keeps snapshots', async () => {
    const base = await startedKept()
    const { compact: _compact, snapshot: _snapshot, ...plain } = base.store
    const w = createWorld({ store: plain })
    expect(() => w.authority.compact(base.w.groupId, headSnapshot(base, 'urn:weft:test:snapshot:x'))).toThrow(UsageError)
  })
})
