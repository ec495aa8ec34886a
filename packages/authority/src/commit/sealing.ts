/**
 * The seal of a transaction's Events (§4.6, §6.4, §15.2): each envelope becomes the Event in place,
 * with no copy. Every member is deep-frozen where it stands (an accepted Event is immutable), so
 * the objects it shares with the handler's draft (and, through it, with the Command or earlier
 * Events) are frozen with it; the log, every reader and the reducers get that one object. It is
 * signed with the Authority's key under the `event` profile: the signing input is the canonical
 * envelope without `signature`, signed time `occurredAt`.
 *
 * Two sealers share the {@link EventSealer} interface: {@link createEagerSealer} here signs in the
 * transaction; the deferring one of `./deferred-sealing.ts` signs when the signature is first read.
 * Both give every reader the same signature over the same bytes.
 * @module
 */
import { canonicalBytes, encodeBase64url, freezeMembers, type JcsForm, type SignatureEnvelope, type SigningKey } from '@weft/codec'
import type { Event } from '@weft/spec'
import type { UnsignedEvent } from './transact.js'

/** How a sealer checks what it seals. */
export interface SealerOptions {
  /** Checks the envelope (with a placeholder signature value) before it is signed; `false` is a pipeline or handler bug. */
  readonly check?: (event: Event) => boolean
}

/**
 * Seals one envelope. `commandHash`, when given, supplies the envelope's `commandHash` member
 * (which `event` must then lack, and which follows the other members). A sealer that signs at once
 * reads it at once; a deferring one reads the hash, when first needed, from the transaction given
 * to {@link EventSealer.commit}, and `commandHash` only says that the member is there.
 *
 * Members keep their order (then `commandHash`, and `signature`). An envelope outside the JCS data
 * model throws, so such an Event is never accepted; `-0` is stored as `0`, as the signed text has it.
 */
export interface EventSealer {
  (event: UnsignedEvent, commandHash?: CommandHashSource): Event
  /**
   * Binds the Events of one committed transaction, sealed by this sealer, to what their deferred
   * members are computed from (a no-op unless signatures are deferred). A deferred Event's
   * `signature` and `commandHash` can be read once its transaction is committed; the pipeline
   * commits before the store or any reader sees the Events.
   */
  commit(transaction: SealedTransaction): void
}

/** Where a sealer reads a Command's signing hash: an object whose `commandHash` may compute on first read (the trusted path's `Decoded`). */
export interface CommandHashSource {
  readonly commandHash: string
}

/**
 * One committed transaction as a deferring sealer keeps it until a reader needs it: its Events, and
 * where those sealed with a `commandHash` read it (the pipeline's stored receipt, which holds both).
 */
export interface SealedTransaction {
  readonly events: readonly Event[]
  readonly commandHash?: string
}

/** The length of an Ed25519 signature (64 bytes) in unpadded base64url. */
const PLACEHOLDER_SIGNATURE = 'A'.repeat(86)
/** A well-formed stand-in for a signing hash not computed yet, for the envelope check. */
export const PLACEHOLDER_HASH = `sha256:${'0'.repeat(64)}`

/** What both sealers sign with: the Authority's key, as §6.4's `event` profile uses it. */
export interface EventSigner {
  /** The signature envelope over a sealed envelope's signing input (see {@link signingBytes}). */
  sign(top: Record<string, unknown>, form: JcsForm): SignatureEnvelope
  /** A well-formed signature envelope with a placeholder value, for the check before signing. */
  placeholder(top: Record<string, unknown>): SignatureEnvelope
}

/** The {@link EventSigner} of `key`. */
export function eventSigner(key: SigningKey): EventSigner {
  const envelope = (occurredAt: string, value: string): SignatureEnvelope => Object.freeze({ algorithm: 'Ed25519', keyId: key.keyId, createdAt: occurredAt, value })
  return {
    sign: (top, form) => envelope(top['occurredAt'] as string, encodeBase64url(key.pair.sign(signingBytes(top, form)))),
    placeholder: (top) => envelope(top['occurredAt'] as string, PLACEHOLDER_SIGNATURE),
  }
}

/** The sealer that signs every Event in its transaction. */
export function createEagerSealer(key: SigningKey, options: SealerOptions = {}): EventSealer {
  const { check } = options
  const signer = eventSigner(key)
  const sealer = (event: UnsignedEvent, commandHash?: CommandHashSource): Event => {
    const top = ownEnvelope(event)
    const form = freezeMembers(top)
    if (check !== undefined) {
      // The placeholders hold the members' places; the real values overwrite them below.
      if (commandHash !== undefined) top['commandHash'] = PLACEHOLDER_HASH
      top['signature'] = signer.placeholder(top)
      if (!check(top as unknown as Event)) refuseEnvelope(top)
    }
    if (commandHash !== undefined) top['commandHash'] = commandHash.commandHash
    top['signature'] = signer.sign(top, form)
    return Object.freeze(top) as unknown as Event
  }
  return Object.assign(sealer, { commit: () => {} })
}

/** The envelope object to seal: `event` itself, or a shallow copy when someone froze it already. */
export function ownEnvelope(event: UnsignedEvent): Record<string, unknown> {
  return Object.isFrozen(event) ? { ...event } : (event as unknown as Record<string, unknown>)
}

/** Throws the error of an envelope its check refused. */
export function refuseEnvelope(top: Record<string, unknown>): never {
  throw new Error(`${top['kind'] as string}: the Event envelope fails its schema`)
}

/**
 * The §6.4 signing input of a sealed envelope: every member but `signature`, `commandHash` in its
 * RFC 8785 place, written as `form` allows (the form of the members without those two).
 */
export function signingBytes(top: Record<string, unknown>, form: JcsForm): Uint8Array {
  const unsigned: Record<string, unknown> = {}
  const hash = top['commandHash']
  let pending = hash !== undefined
  for (const name of Object.keys(top)) {
    if (name === 'signature' || name === 'commandHash') continue
    if (pending && name > 'commandHash') {
      unsigned['commandHash'] = hash
      pending = false
    }
    // An own "__proto__" member stays data, as JSON.parse makes it.
    if (name === '__proto__') Object.defineProperty(unsigned, name, { value: top[name], enumerable: true, writable: true, configurable: true })
    else unsigned[name] = top[name]
  }
  if (pending) unsigned['commandHash'] = hash
  return canonicalBytes(unsigned, form)
}
