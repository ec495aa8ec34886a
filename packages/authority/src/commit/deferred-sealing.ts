/**
 * The deferring {@link EventSealer}: an Event is sealed (checked and deep-frozen) in its
 * transaction as by `createEagerSealer`, but signed the first time its `signature` (or a lazily
 * supplied `commandHash`) is read: by serializing, copying or reading the member. Every Event a
 * reader can reach carries the same signature over the same bytes (§15.2); the RFC 8785 form and
 * the Ed25519 operation move off the commit path, which matters to in-process simulators on the
 * trusted path. `sealing.test.ts` proves both sealers give the codec's own signatures.
 *
 * The bookkeeping is module state on purpose: one pair of accessors serves the Events of every
 * deferring sealer (see {@link LAZY_SIGNATURE}), so an accessor finds its Event's sealer through
 * a member the Event has anyway (`acceptedBy`), in weak maps that drop whatever nobody holds.
 * @module
 */
import { jcsFormOf, freezeMembers, type SignatureEnvelope, type SigningKey } from '@weft/codec'
import type { Event } from '@weft/spec'
import { eventSigner, ownEnvelope, PLACEHOLDER_HASH, refuseEnvelope, type CommandHashSource, type EventSealer, type SealedTransaction, type SealerOptions } from './sealing.js'
import type { UnsignedEvent } from './transact.js'

/** What a lazily signed Event's accessors compute, once, and what from. */
interface LazyEvent {
  readonly sign: SignFn
  /** The committed transaction the Event belongs to: where its `commandHash` is read. */
  readonly transaction: SealedTransaction
  hashValue?: string
  signature?: SignatureEnvelope
}

/** How a sealer signs a sealed envelope. */
type SignFn = (top: Record<string, unknown>) => SignatureEnvelope

/**
 * The transactions one deferring sealer committed since the accessors last ran. Committing only
 * appends here (no map entry or object per Event on the commit path); the first read of a lazy
 * member of one of the sealer's Events moves the batch into {@link lazyEvents}, so the bookkeeping
 * is paid for by readers, once per Event.
 */
interface LazyBatch {
  readonly sign: SignFn
  readonly pending: SealedTransaction[]
}

/**
 * The batches of the deferring sealers, by the `acceptedBy` object of the Events each sealed: a
 * pipeline's own frozen copy of its Principal, shared by all its Events. An Authority that is
 * dropped takes its unread Events with it (the key lives as long as one of its Events does, or its
 * Authority).
 */
const batchesByAuthority = new WeakMap<object, LazyBatch[]>()

/** Registers `batch` under an `acceptedBy` value its sealer met. */
function registerBatch(authority: unknown, batch: LazyBatch): void {
  if (typeof authority !== 'object' || authority === null) throw new Error('a deferring sealer needs an acceptedBy object')
  const list = batchesByAuthority.get(authority)
  if (list === undefined) batchesByAuthority.set(authority, [batch])
  else if (!list.includes(batch)) list.push(batch)
}

/** The lazily signed Events read at least once since sealing (or committed before such a read), out of readers' sight. */
const lazyEvents = new WeakMap<object, LazyEvent>()

/** The Event a sealer's check is reading, and what its signature reads as meanwhile (see {@link SealerOptions.check}). */
let checking: { readonly event: object; readonly placeholder: SignatureEnvelope } | undefined

/** What `event`'s accessors compute from, after indexing the transactions committed since the last read. */
function lazyOf(event: object): LazyEvent {
  const known = lazyEvents.get(event)
  if (known !== undefined) return known
  const acceptedBy = (event as { acceptedBy?: unknown }).acceptedBy
  const batches = typeof acceptedBy === 'object' && acceptedBy !== null ? batchesByAuthority.get(acceptedBy) : undefined
  for (const { sign, pending } of batches ?? []) {
    for (const transaction of pending) {
      const { events } = transaction
      for (let i = 0; i < events.length; i++) lazyEvents.set(events[i]!, { sign, transaction })
    }
    pending.length = 0
  }
  const lazy = lazyEvents.get(event)
  if (lazy === undefined) throw new Error('a lazily signed Event whose transaction was never committed')
  return lazy
}

// One pair of accessors shared by every lazily signed Event of every sealer (rather than closures
// per Event or per sealer) keeps the Events on shared hidden classes: creating one costs a fraction
// as much, and code reading Events of several Authorities stays monomorphic.
const LAZY_HASH: PropertyDescriptor = {
  enumerable: true,
  get(this: object): string {
    if (checking?.event === this) return PLACEHOLDER_HASH
    const lazy = lazyOf(this)
    if (lazy.hashValue !== undefined) return lazy.hashValue
    const hash = lazy.transaction.commandHash
    if (hash === undefined) throw new Error('an Event sealed with a commandHash, committed in a transaction without one')
    return (lazy.hashValue = hash)
  },
}

const LAZY_SIGNATURE: PropertyDescriptor = {
  enumerable: true,
  get(this: Record<string, unknown>): SignatureEnvelope {
    if (checking?.event === this) return checking.placeholder
    const lazy = lazyOf(this)
    // §6.4: the signing input is the envelope without `signature` (with `commandHash` resolved).
    return (lazy.signature ??= lazy.sign(this))
  },
}

/** The sealer that signs each Event when its `signature` (or lazily supplied `commandHash`) is first read. */
export function createDeferredSealer(key: SigningKey, options: SealerOptions = {}): EventSealer {
  const { check } = options
  const signer = eventSigner(key)
  // The signing form is found again when the Event is signed, so nothing per Event is kept on the commit path.
  const batch: LazyBatch = { sign: (top) => signer.sign(top, jcsFormOf(top, LAZY_MEMBERS)), pending: [] }
  let registered: unknown
  const sealer = (event: UnsignedEvent, commandHash?: CommandHashSource): Event => {
    const top = ownEnvelope(event)
    freezeMembers(top)
    // After the seal, which may replace a member with a frozen copy. Nearly always the same
    // object, the pipeline's Principal: registered once.
    if (top['acceptedBy'] !== registered) {
      registerBatch(top['acceptedBy'], batch)
      registered = top['acceptedBy']
    }
    // The accessors are in place before the check, which reads placeholders through them, so the
    // Event keeps one shape from birth (no member changes from data to accessor).
    if (commandHash !== undefined) Object.defineProperty(top, 'commandHash', LAZY_HASH)
    Object.defineProperty(top, 'signature', LAZY_SIGNATURE)
    if (check !== undefined) {
      checking = { event: top, placeholder: signer.placeholder(top) }
      try {
        if (!check(top as unknown as Event)) refuseEnvelope(top)
      } finally {
        checking = undefined
      }
    }
    return Object.freeze(top) as unknown as Event
  }
  // One entry per transaction, an object the log keeps anyway (the receipt).
  return Object.assign(sealer, { commit: (transaction: SealedTransaction) => void batch.pending.push(transaction) })
}

/** The members a deferred Event computes, which `signingBytes` places itself. */
const LAZY_MEMBERS: readonly string[] = ['signature', 'commandHash']
