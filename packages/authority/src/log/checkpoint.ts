/**
 * State checkpoints (§7.4, §16): an image of the whole Authority state at a position P of the
 * retained history, kept by the store, so a restart resumes from P instead of folding every Event
 * ever accepted.
 *
 * **What vouches for an image.** The Authority signs a manifest ({@link CheckpointManifest}) with
 * its own Event key: the position, the ID of the Event at P, the SHA-256 of the image, and the
 * snapshot record (reference hash and sequence) of every compacted Group at P. The signature is
 * Ed25519 over `weft-authority-checkpoint/1`, a newline, and the RFC 8785 text of the manifest
 * without `signature`; the tag keeps it from ever reading as an Event or document signature.
 *
 * **What a restore checks** ({@link resumeFromCheckpoint}), before it uses an image:
 * 1. the signature, by a key the Registry binds to this Authority (a key revoked since vouches for
 *    nothing: the image is not used);
 * 2. the image hash;
 * 3. that the retained history reaches P with the Event the manifest names there;
 * 4. that each snapshot record the manifest names is still the store's record, and verifies on its
 *    own as a subscriber verifies one (§16: §6.4 signature, image hash against the signed
 *    `stateHash`, Group and sequence) with the reference hash recomputed; where P sits exactly at
 *    the Group's snapshot sequence, the record's image must also be the restored Group's
 *    `snapshotImage`. The Event IDs and Policy Log were checked against the log when the Group was
 *    compacted, before this Authority signed a manifest naming the record.
 * Then it reads the image and folds only the Events after P.
 *
 * A failure of 1–4 means the store was tampered with or damaged: a `UsageError`, and no Authority
 * starts. An authentic image this build cannot read (written by another version of this package,
 * another image format, other ledger tables, a parse failure) or one that a later compaction has
 * overtaken is not used: the restore warns and folds the whole retained history, as without a
 * checkpoint.
 *
 * `replayState()` always folds the whole retained history: it is the audit of what a checkpoint
 * restored, and of the Events before P, which a restore from it does not read.
 * @module
 */
import process from 'node:process'
import { canonicalizeOrThrow, decodeBase64url, encodeBase64url, sha256Tagged, UsageError, utf8Encode, verifyEd25519, type KeyResolver, type SigningKey } from '@weft/codec'
import { decodeStateImage, encodeStateImage, STATE_IMAGE_FORMAT } from './checkpoint-image.js'
import type { EventReducers } from '../gen/reducers.js'
import type { ActorRef, AuthorityState } from '../model.js'
import { snapshotArtifactHash, snapshotImage, verifySnapshotImage } from './snapshots.js'
import type { AuthorityStore, CheckpointManifest, CheckpointSnapshotRef, SnapshotRecord, StateCheckpoint } from './store.js'
import { applyEvents, storedEvent } from '../commit/transact.js'

/** The checkpoint profile: the manifest `format` and the domain-separation tag of its signature. */
export const CHECKPOINT_FORMAT = 'weft-authority-checkpoint/1'

/** Something a restore or a checkpoint did not do as asked, and did instead (see {@link AuthorityWarning}). */
export type AuthorityWarningKind = 'checkpoint-unreadable' | 'checkpoint-stale' | 'checkpoint-not-saved'

/**
 * A warning of the Authority: it took a slower path than it could have, and why. `checkpoint-unreadable`
 * and `checkpoint-stale`: a restore folded the whole retained history because the stored
 * checkpoint, though authentic, could not be used (this build does not read it, its key was revoked
 * since, or a later compaction overtook it). `checkpoint-not-saved`: a compaction succeeded
 * but the checkpoint after it was not saved (`cause` says why).
 */
export interface AuthorityWarning {
  readonly kind: AuthorityWarningKind
  readonly message: string
  readonly cause?: unknown
}

/** The default warning hook: a Node process warning (type `WeftWarning`, code the kind), on stderr unless the host listens. */
export function emitWarning(warning: AuthorityWarning): void {
  process.emitWarning(warning.message, { type: 'WeftWarning', code: warning.kind })
}

/** A store with the three checkpoint members. */
type CheckpointStore = AuthorityStore & Required<Pick<AuthorityStore, 'eventsAfter' | 'checkpoint' | 'saveCheckpoint'>>

/** Whether `store` keeps state checkpoints (all three members, see `store.ts`). */
export function keepsCheckpoints(store: AuthorityStore): store is CheckpointStore {
  return typeof store.eventsAfter === 'function' && typeof store.checkpoint === 'function' && typeof store.saveCheckpoint === 'function'
}

/** What {@link saveCheckpoint} needs: the store, the live state, and who signs. */
export interface CheckpointWriterOptions {
  readonly store: AuthorityStore
  readonly state: AuthorityState
  readonly authority: { readonly type: 'service'; readonly id: string }
  readonly signingKey: SigningKey
  /** The Authority clock as a timestamp text. */
  readonly now: () => string
}

/**
 * The position of `state` in the retained history it is the fold of: every Event is either an
 * Organization Event (kept in `org.log`) or a Group Event (counted by its Group's head sequence).
 */
export function historyPosition(state: AuthorityState): number {
  let position = state.org.log.length
  for (const group of state.groups.values()) position += group.head
  return position
}

/**
 * Writes a checkpoint of `options.state` (the live state, the fold of the store's whole retained
 * history) into the store, replacing the one before.
 * @returns The signed manifest.
 * @throws UsageError when the store keeps no checkpoints, the history is empty, the state is not at
 * the end of the store's history, or the state holds what an image cannot carry (naming where).
 */
export function saveCheckpoint(options: CheckpointWriterOptions): CheckpointManifest {
  const { store, state } = options
  if (!keepsCheckpoints(store)) throw new UsageError('checkpoint: the store keeps no checkpoints (it lacks eventsAfter, checkpoint and saveCheckpoint)')
  const position = historyPosition(state)
  if (position === 0) throw new UsageError('checkpoint: the history is empty')
  // The state must be the fold of exactly the store's history: its P-th Event is the last one.
  const after = store.eventsAfter(position - 1)[Symbol.iterator]()
  const last = after.next()
  const beyond = last.done === true ? undefined : after.next()
  after.return?.()
  if (last.done === true || beyond?.done !== true) throw new UsageError(`checkpoint: the state (position ${position}) is not at the end of the store's retained history`)
  const image = encodeStateImage(state)
  const unsigned: Omit<CheckpointManifest, 'signature'> = {
    format: CHECKPOINT_FORMAT,
    imageFormat: STATE_IMAGE_FORMAT,
    authority: { type: 'service', id: options.authority.id },
    position,
    lastEventId: last.value.eventId,
    imageHash: sha256Tagged(image),
    imageBytes: image.byteLength,
    snapshots: snapshotRefs(store, state),
    createdAt: options.now(),
    // At the end of the history, so the store's current heads are the heads at P (`log-proof.ts`).
    ...(store.logHeads === undefined ? {} : { logHeads: store.logHeads() }),
  }
  const manifest = signCheckpointManifest(unsigned, options.signingKey)
  store.saveCheckpoint({ manifest, image })
  return manifest
}

/**
 * Signs a checkpoint manifest with the Authority's key: Ed25519 over the profile tag, a newline and
 * the RFC 8785 text of `unsigned` (see the module notes).
 */
export function signCheckpointManifest(unsigned: Omit<CheckpointManifest, 'signature'>, signingKey: SigningKey): CheckpointManifest {
  const value = encodeBase64url(signingKey.pair.sign(signingInput(unsigned)))
  return Object.freeze({ ...unsigned, signature: Object.freeze({ algorithm: 'Ed25519' as const, keyId: signingKey.keyId, value }) })
}

/** The snapshot record of every compacted Group of `state`, in Group ID order. */
function snapshotRefs(store: AuthorityStore, state: AuthorityState): CheckpointSnapshotRef[] {
  const refs: CheckpointSnapshotRef[] = []
  for (const groupId of [...state.groups.keys()].sort()) {
    const record = store.snapshot?.(groupId)
    if (record !== undefined) refs.push(Object.freeze({ groupId, throughSequence: record.throughSequence, snapshotHash: record.snapshotHash }))
  }
  return refs
}

const PROFILE_TAG = utf8Encode(`${CHECKPOINT_FORMAT}\n`)

/** The signed bytes: the profile tag, a newline, and the RFC 8785 text of the manifest without `signature`. */
function signingInput(unsigned: Omit<CheckpointManifest, 'signature'>): Uint8Array {
  const body = canonicalizeOrThrow(unsigned)
  const bytes = new Uint8Array(PROFILE_TAG.byteLength + body.byteLength)
  bytes.set(PROFILE_TAG)
  bytes.set(body, PROFILE_TAG.byteLength)
  return bytes
}

/** What {@link resumeFromCheckpoint} reads and whom it tells. */
export interface ResumeOptions {
  /** The Authority the checkpoint must be of, and signed by (through a key the Registry binds to it). */
  readonly authority: ActorRef
  /** Told when an authentic checkpoint is not used (see {@link AuthorityWarning}). */
  readonly onWarning: (warning: AuthorityWarning) => void
}

/**
 * The state of an Authority over `store` resumed from its stored checkpoint: the verified image at
 * P, then the fold of the Events after P (see the module notes for every check). `undefined` when
 * there is no checkpoint to resume from, or when an authentic one cannot be used (after
 * `onWarning`): the caller then folds the whole history.
 * @throws UsageError naming the failed check when the checkpoint or a snapshot record it names does not verify.
 */
export function resumeFromCheckpoint(store: AuthorityStore, reducers: EventReducers, registry: KeyResolver, options: ResumeOptions): AuthorityState | undefined {
  if (!keepsCheckpoints(store)) return undefined
  const checkpoint = store.checkpoint()
  if (checkpoint === undefined) return undefined
  const refusal = checkpointRefusal(checkpoint, registry, options.authority)
  const at = `restore: the state checkpoint at position ${String(checkpoint.manifest?.position)}`
  if (refusal !== undefined) throw new UsageError(`${at} does not verify: ${refusal}`)
  const { manifest } = checkpoint
  // A key revoked since: the signature proves nothing about when it was made, so the image is not trusted.
  const signer = registry.resolve(manifest.signature.keyId)
  if (signer.ok && signer.key.revokedAt !== undefined) {
    options.onWarning({ kind: 'checkpoint-unreadable', message: `${at} is signed with key ${manifest.signature.keyId}, revoked at ${signer.key.revokedAt.text}; folding the whole retained history` })
    return undefined
  }
  const tail = store.eventsAfter(manifest.position - 1)[Symbol.iterator]()
  try {
    const last = tail.next()
    if (last.done === true) throw new UsageError(`${at} does not verify: the retained history does not reach that position`)
    if (last.value.eventId !== manifest.lastEventId) throw new UsageError(`${at} does not verify: the Event there is ${last.value.eventId}, the checkpoint names ${manifest.lastEventId}`)
    const records = new Map<string, SnapshotRecord>()
    for (const ref of manifest.snapshots) {
      const record = signedRecord(store, ref, registry)
      if (record === 'overtaken') return stale(options, `Group ${ref.groupId} was compacted again after the checkpoint`)
      records.set(ref.groupId, record)
    }
    const decoded = decodeStateImage(checkpoint.image)
    if (!decoded.ok) {
      options.onWarning({ kind: 'checkpoint-unreadable', message: `${at} is authentic but this build does not read it (${decoded.reason}); folding the whole retained history` })
      return undefined
    }
    const { state } = decoded
    for (const [groupId, record] of records) requireGroupAt(state, groupId, record)
    // A compaction the checkpoint does not name happened after it: its record is checked by the full fold.
    for (const groupId of state.groups.keys()) if (!records.has(groupId) && store.snapshot?.(groupId) !== undefined) return stale(options, `Group ${groupId} was compacted after the checkpoint`)
    const known = new Set(state.groups.keys())
    for (let next = tail.next(); next.done !== true; next = tail.next()) {
      const stored = next.value
      applyEvents(state, [storedEvent(stored)], reducers)
    }
    for (const groupId of state.groups.keys())
      if (!known.has(groupId) && store.snapshot?.(groupId) !== undefined) return stale(options, `Group ${groupId} was created and compacted after the checkpoint`)
    return state
  } finally {
    tail.return?.()
  }
}

function stale(options: ResumeOptions, why: string): undefined {
  options.onWarning({ kind: 'checkpoint-stale', message: `restore: the state checkpoint is older than the store's snapshots (${why}); folding the whole retained history` })
  return undefined
}

/** Why a stored checkpoint is not authentic (manifest shape, signature, image hash), or `undefined`. */
export function checkpointRefusal({ manifest, image }: StateCheckpoint, registry: KeyResolver, authority: ActorRef): string | undefined {
  if (typeof manifest !== 'object' || manifest === null || !(image instanceof Uint8Array)) return 'the stored checkpoint is malformed'
  if (manifest.format !== CHECKPOINT_FORMAT) return `the checkpoint format ${JSON.stringify(manifest.format)} is not ${CHECKPOINT_FORMAT}`
  if (!Number.isSafeInteger(manifest.position) || manifest.position < 1) return 'the position is not a positive integer'
  if (!Array.isArray(manifest.snapshots)) return 'the snapshot references are malformed'
  if (manifest.authority?.type !== authority.type || manifest.authority.id !== authority.id) return `it is the checkpoint of ${String(manifest.authority?.id)}, not of ${authority.id}`
  const { signature, ...unsigned } = manifest
  if (signature?.algorithm !== 'Ed25519' || typeof signature.keyId !== 'string' || typeof signature.value !== 'string') return 'signature: the signature envelope is malformed'
  const resolved = registry.resolve(signature.keyId)
  if (!resolved.ok) return `signature: key ${signature.keyId}: ${resolved.reason}`
  if (resolved.key.principal.type !== authority.type || resolved.key.principal.id !== authority.id) return `signature: key ${signature.keyId} is not bound to ${authority.id}`
  const value = decodeBase64url(signature.value)
  if (value === undefined) return 'signature: the signature value is not canonical base64url'
  let input: Uint8Array
  try {
    input = signingInput(unsigned)
  } catch {
    return 'signature: the manifest has no canonical form'
  }
  if (!verifyEd25519(resolved.key.publicKey, input, value)) return 'signature: the signature does not verify'
  if (sha256Tagged(image) !== manifest.imageHash) return 'the image does not hash to the signed image hash'
  return undefined
}

/**
 * The store's snapshot record of `ref.groupId` once it verifies on its own (§16), or `'overtaken'`
 * when the Group was compacted further since the checkpoint.
 * @throws UsageError when the record is missing, is not the one the checkpoint names, or does not verify.
 */
function signedRecord(store: AuthorityStore, ref: CheckpointSnapshotRef, registry: KeyResolver): SnapshotRecord | 'overtaken' {
  const record = store.snapshot?.(ref.groupId)
  const refuse = (why: string): never => {
    throw new UsageError(`restore: the snapshot record of Group ${ref.groupId} does not match the state checkpoint: ${why}`)
  }
  if (record === undefined) return refuse('the store holds none')
  if (record.throughSequence > ref.throughSequence) return 'overtaken'
  if (record.throughSequence !== ref.throughSequence || record.snapshotHash !== ref.snapshotHash) {
    return refuse(`the stored reference is ${record.snapshotHash} at ${record.throughSequence}, the checkpoint signed ${ref.snapshotHash} at ${ref.throughSequence}`)
  }
  const verified = verifySnapshotImage({ snapshot: record.snapshot, image: record.image }, registry)
  if (!verified.ok) return refuse(verified.reason)
  if (verified.snapshot.groupId !== ref.groupId || verified.snapshot.throughSequence !== record.throughSequence) return refuse('the record and its snapshot name different Groups or sequences')
  if (snapshotArtifactHash(verified.snapshot) !== record.snapshotHash) return refuse('the stored reference is not the hash of the signed snapshot')
  return record
}

/** The restored Group of a named record is at or past its snapshot, and exactly its image when at it. */
function requireGroupAt(state: AuthorityState, groupId: string, record: SnapshotRecord): void {
  const group = state.groups.get(groupId)
  const refuse = (why: string): never => {
    throw new UsageError(`restore: the snapshot record of Group ${groupId} does not match the state checkpoint: ${why}`)
  }
  if (group === undefined) refuse('the checkpoint state has no such Group')
  else if (group.head < record.throughSequence) refuse(`the checkpoint state stops at sequence ${group.head}, before the snapshot sequence ${record.throughSequence}`)
  else if (group.head === record.throughSequence && snapshotImage(group) !== record.image) refuse('the stored state image is not the checkpoint state of the Group')
}
