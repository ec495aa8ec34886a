/**
 * What a slot needs from its Worker (§11.1): the WorkItem with its assignment facts, the lease and
 * retry timing, and the Worker's services (identity, local store, offline buffer, Command
 * building and submission, Artifact sink, capability tokens). `createWorker` implements
 * {@link SlotHost}; a custom runtime can too.
 * @module
 */
import type { SigningKey } from '@weft/codec'
// Inline `type` rather than `import type`: API Extractor reports the two forms differently, and
// the public report (etc/worker.api.md) has these as plain imports.
import { type BuiltCommand, type CommandOptions, type Receipt } from '@weft/client'
import type { CapabilityRef, CommandKind, CommandPayload, WorkContract } from '@weft/spec'
import type { WorkSnapshot } from './executor.js'
import type { OfflineBuffer } from './offline.js'
import type { WorkerStore } from './seams.js'

/** The WorkItem a slot runs, with the assignment facts its Commands and manifests cite. */
export interface SlotWork extends WorkSnapshot {
  /** The Agent Card version the assignment pinned (§6.1). */
  readonly agentCardVersion: number
  /** The capability versions the assignment pinned (§6.1). */
  readonly capabilityPins: readonly CapabilityRef[]
}

/** Lease and retry timing of a slot. */
export interface SlotTiming {
  /** Execution Lease length asked for at start and renewal. */
  readonly leaseSeconds: number
  /** Ownership kept after a checkpoint, for resumption (§11.3). */
  readonly resumeWithinSeconds: number
  /** Ownership kept while blocked (§11.4). */
  readonly blockedLeaseSeconds: number
  /** Base delay of retry back-off, ms. */
  readonly baseRetryDelayMs: number
}

/** Where Artifact bytes go (structurally the `BlobStore` of `@weft/authority`). */
export interface ArtifactSink {
  put(bytes: Uint8Array, mediaType?: string): Promise<string>
}

/** What a capability token is bound to (§12). */
export interface TokenScope {
  readonly workItemId: string
  readonly ownershipEpoch: number
  readonly executionLeaseId: string
  readonly sessionEpoch: number
  readonly expiresAt: string
}

/** The services of the Worker a slot uses. */
export interface SlotHost {
  readonly actor: { readonly type: 'agent'; readonly id: string }
  readonly signingKey: SigningKey
  readonly store: WorkerStore
  readonly offline: OfflineBuffer
  readonly timing: SlotTiming
  readonly blobs: ArtifactSink | undefined
  /** The retrieval URI of Artifact bytes with content hash `hash`. */
  artifactUri(hash: string): string
  /** The capability token of a lease (§12), or `undefined` when the Worker has no Authorization Service hook. */
  tokenFor(scope: TokenScope): unknown
  now(): number
  newId(): string
  /** Builds and signs a Command (Action ID, epochs, `issuedAt` of now). */
  build<K extends CommandKind>(kind: K, payload: CommandPayload<K>, options?: CommandOptions): BuiltCommand<K>
  /** Submits a built Command; a transport failure marks the Worker offline before it rethrows. */
  submit(built: BuiltCommand): Promise<Receipt>
  /** The expected run time of one attempt of `contract`, ms. */
  expectedDurationMs(contract: WorkContract): number
}
