import { encodeBase64url, ProtocolError, Registry, sha256Tagged, UsageError, type KeyResolver } from '@weft/codec'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ARCHIVED_GROUP, countingFolds, expectSameFold, foldedWorld, foldTableEntries, resigned, withCheckpoint } from '@weft/testkit/checkpoint'
import { seededRandom, cast, ORG } from '@weft/testkit/fixtures'
import { compactHead, headSnapshot, post, type KeptWorld } from '@weft/testkit/recovery'
import { reach, runningOf, started, type World } from '@weft/testkit/world'
import { createAuthority } from '../authority.js'
import { encodeStateImage, STATE_IMAGE_TABLES } from './checkpoint-image.js'
import { historyPosition, signCheckpointManifest, type AuthorityWarning } from './checkpoint.js'
import { createDelivery } from '../delivery/delivery.js'
import type { Authority } from '../commit/pipeline.js'
import { createMemoryStore, type AuthorityStore, type SnapshotRecord, type StateCheckpoint } from './store.js'

/** A new Authority over `store` as a restart makes it, its warnings collected in `warnings`. */
function reopen(w: World, store: AuthorityStore, warnings: AuthorityWarning[] = [], registry: KeyResolver = w.registry): Authority {
  return createAuthority({
    registry,
    keys: { authority: { type: 'service', id: cast.authority.actor.id }, signingKey: cast.authority.key },
    clock: { now: () => w.clock.nowMs },
    random: seededRandom(),
    policy: { controlPlane: [cast.controlPlane.actor.id], maxMessagesPerMinute: 100 },
    store,
    onWarning: (warning) => void warnings.push(warning),
  })
}

/** A folded world over a checkpointing memory store, its main Group compacted (and so checkpointed) at the head, then two more Messages. */
async function checkpointed(): Promise<KeptWorld & { readonly record: SnapshotRecord; readonly checkpoint: StateCheckpoint }> {
  const store = createMemoryStore({ checkpoints: true })
  const w = await foldedWorld(store)
  const record = compactHead({ w, store }, 'urn:weft:test:snapshot:checkpointed')
  const checkpoint = store.checkpoint!()!
  await post(w)
  await post(w)
  return { w, store, record, checkpoint }
}

/** The Event sequences `authority` serves for the world's Group after the compaction point. */
function onlineSequences(authority: Authority, groupId: string, through: number): number[] {
  return authority.events(groupId, through).map((e) => e.sequence!)
}

describe('restore from a state checkpoint (§7.4, §16)', () => {
  it('resumes from the verified image at its position, folding only what came after, to the state a full fold gives', async () => {
    const { w, store, record, checkpoint } = await checkpointed()
    expect(checkpoint.manifest).toMatchObject({
      position: historyPosition(w.authority.state) - 2,
      snapshots: [{ groupId: w.groupId, throughSequence: record.throughSequence, snapshotHash: record.snapshotHash }],
    })
    const counted = countingFolds(store)
    const warnings: AuthorityWarning[] = []
    const restored = reopen(w, counted, warnings)
    expect(counted.folds()).toBe(0)
    expect(warnings).toEqual([])
    expectSameFold(restored.state, w.authority.state)
    expectSameFold(restored.state, restored.replayState())
    // Every ledger table had something to carry.
    const carried = new Set(Object.keys(foldTableEntries(restored.state)).map((key) => key.split(' ')[0]))
    expect([...carried].sort()).toEqual(STATE_IMAGE_TABLES.map((t) => t.member).sort())
    expect(restored.snapshot(w.groupId)).toEqual(record)
    expect(restored.group(ARCHIVED_GROUP)!.group.state).toBe('archived')
  })

  it('goes on accepting Commands with contiguous sequences, and stays the fold of its log', async () => {
    const { w, store, record } = await checkpointed()
    const restored = reopen(w, store)
    const head = restored.group(w.groupId)!.head
    const receipt = await restored.submit(
      w.as.worker2.build('message.post', { messageId: 'urn:weft:test:message:after', conversationId: w.group().group.mainConversationId, content: [{ type: 'text', text: 'after' }] }).bytes,
    )
    expect(receipt.events.map((e) => e.sequence)).toEqual([head + 1])
    expect(onlineSequences(restored, w.groupId, record.throughSequence)).toEqual(Array.from({ length: head + 1 - record.throughSequence }, (_, i) => record.throughSequence + 1 + i))
    // The fold tables came back too: the charged WorkItem's ledger continues from its restored usage.
    const charged = [...restored.group(w.groupId)!.workItems.values()].find((r) => r.doc.state === 'active')!.doc.workItemId
    const { epoch, leaseId } = runningOf(w, charged)
    const usage = { workItemId: charged, ownershipEpoch: epoch, executionLeaseId: leaseId, usageDelta: { toolCalls: 1, modelTokens: 100 } }
    const next = await restored.submit(w.as.worker1.build('ext.missionweaveprotocol.core.resource_usage_record', usage).bytes)
    expect(next.events[0]!.payload).toMatchObject({ cumulativeUsage: { toolCalls: 2, modelTokens: 200 } })
    expectSameFold(restored.state, restored.replayState())
  })

  it('answers a replay from below the compaction point with CURSOR_TOO_OLD and the signed snapshot reference', async () => {
    const { w, store, record } = await checkpointed()
    const restored = reopen(w, store)
    const details = { groupId: w.groupId, snapshotId: record.snapshot.snapshotId, throughSequence: record.throughSequence, snapshotHash: record.snapshotHash, stateHash: record.snapshot.stateHash }
    expect(() => restored.events(w.groupId)).toThrow(expect.objectContaining({ code: 'CURSOR_TOO_OLD', details: { ...details, afterSequence: 0, oldestSequence: record.throughSequence + 1 } }))
    const delivery = createDelivery(restored)
    let refused: unknown
    try {
      delivery.subscribe(cast.worker1.actor, [{ groupId: w.groupId, afterSequence: 0 }], { onEvent: () => undefined })
    } catch (error) {
      refused = error
    }
    expect(refused).toBeInstanceOf(ProtocolError)
    expect(refused).toMatchObject({ code: 'CURSOR_TOO_OLD', details: expect.objectContaining(details) })
    expect(delivery.snapshot(cast.worker1.actor, w.groupId)).toMatchObject({ snapshot: record.snapshot, image: record.image })
    delivery.close()
  })

  it('checkpoints on demand, with or without compaction, and the next restart resumes from the latest', async () => {
    const store = createMemoryStore({ checkpoints: true })
    const w = await started({ store })
    const first = w.authority.checkpoint()
    await reach(w, 'verified')
    const second = w.authority.checkpoint()
    expect(second.position).toBeGreaterThan(first.position)
    expect(store.checkpoint!()!.manifest).toEqual(second)
    const counted = countingFolds(store)
    expectSameFold(reopen(w, counted).state, w.authority.state)
    expect(counted.folds()).toBe(0)
  })
})

describe('a state checkpoint that fails a check (§7.4)', () => {
  /** Expects no Authority to start over `store`, with a UsageError matching `reason`. */
  function expectRefused(w: World, store: AuthorityStore, reason: RegExp): void {
    let error: unknown
    try {
      reopen(w, store)
    } catch (thrown) {
      error = thrown
    }
    expect(error).toBeInstanceOf(UsageError)
    expect((error as Error).message).toMatch(reason)
  }

  it('refuses tampered image bytes, a tampered signature or manifest, and another signer', async () => {
    const { w, store, checkpoint } = await checkpointed()
    const image = checkpoint.image.slice()
    image[image.length >> 1] = image[image.length >> 1]! ^ 1
    expectRefused(w, withCheckpoint(store, { ...checkpoint, image }), /does not verify: the image does not hash/)
    const value = checkpoint.manifest.signature.value
    const flipped = `${value.slice(0, 10)}${value[10] === 'A' ? 'B' : 'A'}${value.slice(11)}`
    expectRefused(w, withCheckpoint(store, { ...checkpoint, manifest: { ...checkpoint.manifest, signature: { ...checkpoint.manifest.signature, value: flipped } } }), /signature/)
    expectRefused(w, withCheckpoint(store, { ...checkpoint, manifest: { ...checkpoint.manifest, position: checkpoint.manifest.position - 1 } }), /signature: the signature does not verify/)
    const { signature: _signature, ...unsigned } = checkpoint.manifest
    expectRefused(w, withCheckpoint(store, { ...checkpoint, manifest: signCheckpointManifest(unsigned, cast.worker1.key) }), /signature: key .* is not bound to/)
  })

  it('refuses a position beyond the retained history, or another Event there', async () => {
    const { w, store, checkpoint } = await checkpointed()
    const total = [...store.allEvents()].length
    expectRefused(
      w,
      withCheckpoint(
        store,
        resigned(checkpoint, (m) => ({ ...m, position: total + 5 })),
      ),
      /does not reach that position/,
    )
    expectRefused(
      w,
      withCheckpoint(
        store,
        resigned(checkpoint, (m) => ({ ...m, lastEventId: 'urn:uuid:00000000-0000-4000-8000-000000000000' })),
      ),
      /the Event there is/,
    )
  })

  it('refuses snapshot records that are not the ones it signed, or do not verify', async () => {
    const { w, store, record } = await checkpointed()
    const change = (edit: (r: SnapshotRecord) => SnapshotRecord | undefined): AuthorityStore => ({ ...store, snapshot: (groupId) => (groupId === w.groupId ? edit(record) : store.snapshot!(groupId)) })
    expectRefused(
      w,
      change(() => undefined),
      /snapshot record of Group .* does not match the state checkpoint: the store holds none/,
    )
    expectRefused(
      w,
      change((r) => ({ ...r, snapshotHash: `sha256:${'e'.repeat(64)}` })),
      /does not match the state checkpoint: the stored reference is/,
    )
    expectRefused(
      w,
      change((r) => ({ ...r, image: r.image.replace('"groupId"', '"groupId" ') })),
      /does not match the state checkpoint: the state image does not hash/,
    )
    expectRefused(
      w,
      change((r) => ({ ...r, snapshot: { ...r.snapshot, createdAt: '2026-07-15T00:00:01Z' } })),
      /does not match the state checkpoint: signature/,
    )
  })
})

describe('an authentic state checkpoint that cannot be used', () => {
  it('is not read when this build keeps other fold tables or image formats: a warning, then the full fold', async () => {
    const { w, store, checkpoint } = await checkpointed()
    const text = new TextDecoder().decode(checkpoint.image)
    for (const image of [text.replace('"weft-state-image/1"', '"weft-state-image/999"'), text.replace('"budget.itemUsage"', '"budget.elsewhere"')]) {
      const bytes = new TextEncoder().encode(image)
      const counted = countingFolds(
        withCheckpoint(
          store,
          resigned(checkpoint, (m) => ({ ...m, imageHash: sha256Tagged(bytes), imageBytes: bytes.byteLength }), bytes),
        ),
      )
      const warnings: AuthorityWarning[] = []
      const restored = reopen(w, counted, warnings)
      expect(warnings.map((x) => x.kind)).toEqual(['checkpoint-unreadable'])
      expect(counted.folds()).toBe(1)
      expectSameFold(restored.state, w.authority.state)
    }
  })

  it('is signed with a key revoked since: a warning, then the full fold', async () => {
    const { w, store } = await checkpointed()
    const revoked = Registry.fromEvidence({
      organizationId: ORG,
      bindings: Object.values(cast).map((m) => ({
        keyId: m.key.keyId,
        principal: m.actor,
        algorithm: 'Ed25519',
        publicKey: encodeBase64url(m.key.pair.publicKey),
        validFrom: '2026-01-01T00:00:00Z',
        validityHistory: m === cast.authority ? [{ sequence: 1, recordedAt: '2026-12-01T00:00:00Z', revokedAt: '2026-12-01T00:00:00Z' }] : [],
      })),
    }) as Registry
    const warnings: AuthorityWarning[] = []
    const counted = countingFolds(store)
    const restored = reopen(w, counted, warnings, revoked)
    expect(warnings.map((x) => [x.kind, x.message])).toEqual([['checkpoint-unreadable', expect.stringMatching(/revoked at 2026-12-01/)]])
    expect(counted.folds()).toBe(1)
    expectSameFold(restored.state, w.authority.state)
  })

  it('is overtaken by a later compaction it does not name: a warning, then the full fold', async () => {
    const { w, store, checkpoint } = await checkpointed()
    compactHead({ w, store }, 'urn:weft:test:snapshot:later')
    const warnings: AuthorityWarning[] = []
    const restored = reopen(w, withCheckpoint(store, checkpoint), warnings)
    expect(warnings.map((x) => x.kind)).toEqual(['checkpoint-stale'])
    expectSameFold(restored.state, w.authority.state)
  })

  it('a compaction whose checkpoint is not saved stands, and says so', async () => {
    const store = createMemoryStore({ checkpoints: true })
    const warnings: AuthorityWarning[] = []
    const full: AuthorityStore = {
      ...store,
      saveCheckpoint: () => {
        throw new Error('disk full')
      },
    }
    const w = await started({ store: full })
    const world = reopen(w, full, warnings)
    const record = world.compact(w.groupId, headSnapshot({ w, store }, 'urn:weft:test:snapshot:unsaved'))
    expect(world.snapshot(w.groupId)).toBe(record)
    expect(warnings.map((x) => [x.kind, (x.cause as Error).message])).toEqual([['checkpoint-not-saved', 'disk full']])
    expect(store.checkpoint!()).toBeUndefined()
  })

  it('leaves a store without checkpoint members as it was: a full fold, and checkpoint() refused', async () => {
    const store = countingFolds(createMemoryStore())
    const w = await started({ store })
    expect(() => w.authority.checkpoint()).toThrow(UsageError)
    const before = store.folds()
    expectSameFold(reopen(w, store).state, w.authority.state)
    expect(store.folds()).toBe(before + 1)
  })
})

describe('what a state image carries', () => {
  it('keeps no state beside the state: no WeakMap, WeakSet or installed accessor in the domain and log sources', () => {
    // Every ledger and index is a member of the Authority state (model.ts), so a checkpoint can
    // carry or rebuild it; a table keyed by state objects would be state an image silently loses.
    const sources = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [join(dir, e.name)] : []))
    const files = [...sources(join(import.meta.dirname, '..', 'domain')), ...sources(import.meta.dirname)]
    expect(files.some((file) => file.endsWith(join('domain', 'work-budget.ts')))).toBe(true)
    const hidden = files.flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/new Weak(?:Map|Set)\b|defineProperty\((?![^,]*,[^,]*,\s*\{\s*value\b)/g)].map((m) => `${file}: ${m[0]}`))
    expect(hidden).toEqual([])
    expect(STATE_IMAGE_TABLES.map((t) => t.name)).toEqual([
      'budget.itemUsage',
      'budget.missionUsage',
      'evidence.submissions',
      'leases.closed',
      'policy.snapshots',
      'retry.ledgers',
      'runaway.grantsByTarget',
      'runaway.rings',
    ])
  })

  it('refuses a state holding what it cannot carry, naming where', async () => {
    const w = await started()
    const state = w.authority.replayState()
    ;(state.groups.get(w.groupId)!.mission as unknown as Record<string, unknown>)['x'] = () => 1
    expect(() => encodeStateImage(state)).toThrow(/function at body\.0\.groups\.1\.0\.mission\.x/)
  })
})
