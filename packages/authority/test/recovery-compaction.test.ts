/**
 * Recovery over a real Authority driven by signed Commands (§7.4, §16): compaction leaves the
 * state exactly what a never-compacted twin fed the same Commands holds, before and after a
 * restart; a subscriber told `CURSOR_TOO_OLD` restores the signed snapshot and resumes after it;
 * a redaction is served as a signed tombstone that keeps every Event ID and sequence.
 */
import type { Event } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { createDelivery } from '../src/delivery/delivery.js'
import { REDACTION_EXTENSION } from '../src/delivery/redaction.js'
import { buildGroupSnapshot, signGroupSnapshot, verifyGroupSnapshot, verifySnapshotImage } from '../src/log/snapshots.js'
import { compactHead, expectSigned, post, restart, retained, startedKept, type KeptWorld } from '@weft/testkit/recovery'
import { cast } from '@weft/testkit/fixtures'
import { checkpoint, offer, reach, type World } from '@weft/testkit/world'

/** The same Commands for both twins: WorkItems in several states, Messages, a re-offer. */
async function script(w: World, round: number): Promise<void> {
  const active = await reach(w, 'active', { name: `active-${round}` })
  await reach(w, 'blocked', { name: `blocked-${round}` })
  await post(w, `round ${round}`)
  await checkpoint(w, active)
  const open = await reach(w, 'open', { name: `open-${round}` })
  await offer(w, open, ['worker2'])
  await post(w, `round ${round} done`)
}

/** The sequences of `events`. */
function sequencesOf(events: readonly Event[]): number[] {
  return events.map((e) => e.sequence!)
}

describe('compaction and restore against a never-compacted twin (§7.4, §16)', () => {
  it('leave the state equal to the twin’s after compaction, after more Commands, and after a restart', async () => {
    const compacted = await startedKept()
    const twin = await startedKept()
    for (const kept of [compacted, twin]) await script(kept.w, 1)
    compactHead(compacted, 'urn:weft:test:snapshot:one')
    expect(compacted.w.authority.state).toEqual(twin.w.authority.state)
    for (const kept of [compacted, twin]) await script(kept.w, 2)
    compactHead(compacted, 'urn:weft:test:snapshot:two')
    for (const kept of [compacted, twin]) await script(kept.w, 3)
    expect(compacted.w.authority.state).toEqual(twin.w.authority.state)
    expect(compacted.w.authority.replayState()).toEqual(twin.w.authority.state)
    const restored = restart(compacted)
    expect(restored.state).toEqual(twin.w.authority.state)
    // The retained history is the twin's log, Event for Event.
    expect(retained(compacted.store, compacted.w.groupId)).toEqual(twin.w.authority.events(twin.w.groupId))
    const through = restored.snapshot(compacted.w.groupId)!.throughSequence
    expect(restored.events(compacted.w.groupId, through)).toEqual(twin.w.authority.events(twin.w.groupId, through))
  })
})

describe('a subscriber below the compaction point (§16)', () => {
  it('gets CURSOR_TOO_OLD, restores the verified snapshot and its state image, and resumes after it without a gap', async () => {
    const kept = await startedKept()
    const { w } = kept
    await post(w)
    const record = compactHead(kept, 'urn:weft:test:snapshot:subscriber')
    await post(w)
    const delivery = createDelivery(w.authority)
    const worker = cast.worker1.actor
    const got: Event[] = []
    const handlers = { onEvent: (e: Event) => void got.push(e) }
    let refused: unknown
    try {
      delivery.subscribe(worker, [{ groupId: w.groupId, afterSequence: 0 }], handlers)
    } catch (error) {
      refused = error
    }
    expect(refused).toMatchObject({ code: 'CURSOR_TOO_OLD', details: { snapshotId: record.snapshot.snapshotId, throughSequence: record.throughSequence, snapshotHash: record.snapshotHash } })
    const point = delivery.snapshot(worker, w.groupId)!
    const restored = verifySnapshotImage(point, w.registry)
    expect(restored.ok && restored.resumeAfterSequence).toBe(record.throughSequence)
    expect(restored.ok && restored.content['groupId']).toBe(w.groupId)
    delivery.subscribe(worker, [{ groupId: w.groupId, afterSequence: record.throughSequence }], handlers)
    await post(w)
    expect(sequencesOf(got)).toEqual([record.throughSequence + 1, record.throughSequence + 2])
    expectSigned(w, got)
  })

  it('refuses a restore point whose image, snapshot signature or Group does not hold', async () => {
    const kept = await startedKept()
    const { snapshot, image } = compactHead(kept, 'urn:weft:test:snapshot:checked')
    const { signature: _signature, ...unsigned } = snapshot
    const reasonOf = (point: Parameters<typeof verifySnapshotImage>[0]) => {
      const result = verifySnapshotImage(point, kept.w.registry)
      return result.ok ? 'accepted' : `${result.stage}: ${result.reason}`
    }
    expect(reasonOf({ snapshot, image })).toBe('accepted')
    expect(reasonOf({ snapshot: JSON.stringify(snapshot), image })).toBe('accepted')
    expect(reasonOf({ snapshot, image: image.replace('"throughSequence":', '"throughSequence": ') })).toMatch(/^state: the state image does not hash/)
    expect(reasonOf({ snapshot: signGroupSnapshot(unsigned, cast.worker1.key), image })).toMatch(/^signature:/)
    expect(reasonOf({ snapshot: { ...snapshot, throughSequence: snapshot.throughSequence + 1 }, image })).toMatch(/^signature:/)
  })
})

describe('redaction as an auditable tombstone (§7.4, §9.1)', () => {
  /** A world where worker1 posted a secret and a plain Message, and the Coordinator redacted the secret. */
  async function redacted(): Promise<{ kept: KeptWorld; secret: Event; plain: Event; redaction: Event }> {
    const kept = await startedKept()
    const { w } = kept
    const [secret] = (await post(w, 'the password is hunter2')).events
    const [plain] = (await post(w, 'all green')).events
    const [redaction] = (
      await w.as.coordinator.messageRedact({
        messageId: 'urn:weft:test:message:redaction',
        targetMessageId: (secret!.payload as { messageId: string }).messageId,
        content: [{ type: 'text', text: 'Removed: a credential was posted.' }],
        reason: 'Security policy: credentials are never kept in Conversations.',
      })
    ).events
    return { kept, secret: secret!, plain: plain!, redaction: redaction! }
  }

  it('serves the redacted Message as a signed tombstone with the same Event ID and sequence, on every read path [command message.redact] [event message.redacted]', async () => {
    const { kept, secret, plain, redaction } = await redacted()
    const { w } = kept
    const log = w.authority.events(w.groupId)
    const tombstone = log.find((e) => e.eventId === secret.eventId)!
    expect(sequencesOf(log)).toEqual(Array.from({ length: w.group().head }, (_, i) => i + 1))
    expect(log.map((e) => e.eventId)).toEqual(retained(kept.store, w.groupId).map((e) => e.eventId))
    expect(tombstone).toMatchObject({ sequence: secret.sequence, kind: 'message.posted', aggregateRevision: secret.aggregateRevision, occurredAt: secret.occurredAt })
    expect(tombstone.payload).toMatchObject({ messageId: (secret.payload as { messageId: string }).messageId, content: [{ type: 'text', text: 'Removed: a credential was posted.' }] })
    expect(tombstone.extensions?.[REDACTION_EXTENSION]).toEqual({
      version: '1.0.0',
      critical: false,
      data: { redactionMessageId: 'urn:weft:test:message:redaction', originalSignature: secret.signature.value },
    })
    expectSigned(w, log)
    expect(log.find((e) => e.eventId === plain.eventId)).toEqual(plain)
    expect(log.find((e) => e.eventId === redaction.eventId)).toEqual(redaction)
    // Replay, paged reads and delivery never serve the content.
    const replayed = createDelivery(w.authority).replay(cast.worker2.actor, w.groupId, 0, 500).events
    const paged = w.authority.eventPage(w.groupId, 0, 500).events
    for (const served of [log, replayed, paged]) expect(JSON.stringify(served)).not.toContain('hunter2')
    // The original stays in the retained audit log and the state; both still fold to the same state.
    expect(retained(kept.store, w.groupId).find((e) => e.eventId === secret.eventId)).toEqual(secret)
    expect(w.authority.replayState()).toEqual(w.authority.state)
  })

  it('keeps snapshots built from the served log valid, and serves the tombstone again after a restart', async () => {
    const { kept, secret } = await redacted()
    const { w } = kept
    const served = w.authority.events(w.groupId)
    const unsigned = buildGroupSnapshot(w.group(), served, {
      snapshotId: 'urn:weft:test:snapshot:served',
      createdBy: { type: 'service', id: cast.controlPlane.actor.id },
      createdAt: new Date(w.clock.nowMs).toISOString(),
    })
    const verdict = verifyGroupSnapshot(signGroupSnapshot(unsigned, cast.controlPlane.key), { registry: w.registry, events: retained(kept.store, w.groupId), group: w.group() })
    expect(verdict.ok).toBe(true)
    const through = secret.sequence! - 1
    const restored = restart(kept)
    expect(JSON.stringify(restored.events(w.groupId, through))).not.toContain('hunter2')
    expect(restored.events(w.groupId, through)[0]).toEqual(w.authority.events(w.groupId, through)[0])
  })
})
