/**
 * The receipt of an accepted Command (§15.1): stored frozen for every retry, and the caller's copy.
 * @module
 */
import type { Receipt } from '@weft/client'
import type { Event } from '@weft/spec'
import type { AnyCommand } from './handler.js'
import type { Decoded } from '../ingress/decode.js'
import type { ActorRef } from '../model.js'
import type { StoredReceipt } from '../log/store.js'

/**
 * The receipt of an accepted Command: frozen as stored, or with `duplicate` as the caller gets it. Its
 * `commandHash` member is the hash when `decoded` already knows it, else an accessor that reads
 * `decoded.commandHash` (which computes once) on access.
 */
export function receiptOf(command: AnyCommand, actor: ActorRef, events: readonly Event[], acceptedAt: string, decoded: Decoded): StoredReceipt
export function receiptOf(command: AnyCommand, actor: ActorRef, events: readonly Event[], acceptedAt: string, decoded: Decoded, duplicate: boolean): Receipt
export function receiptOf(command: AnyCommand, actor: ActorRef, events: readonly Event[], acceptedAt: string, decoded: Decoded, duplicate?: boolean): StoredReceipt {
  const known = decoded.knownHash
  const receipt = (known === undefined ? new LazyHashReceipt(decoded) : {}) as Record<string, unknown>
  receipt['actionId'] = command.actionId
  receipt['actor'] = actor
  receipt['kind'] = command.kind
  if (command.groupId !== undefined) receipt['groupId'] = command.groupId
  receipt['events'] = events
  receipt['acceptedAt'] = acceptedAt
  if (duplicate !== undefined) receipt['duplicate'] = duplicate
  if (known !== undefined) receipt['commandHash'] = known
  else Object.defineProperty(receipt, 'commandHash', LAZY_COMMAND_HASH)
  // The stored receipt answers every retry, so it is frozen; the caller's copy is the caller's.
  return (duplicate === undefined ? Object.freeze(receipt) : receipt) as unknown as StoredReceipt
}

/**
 * A receipt whose `commandHash` is read from the source of the trusted path's lazy signing hash,
 * kept in a private field: out of readers' sight (JSON, spreads, equality see the members only),
 * and cheaper to set than a hidden property.
 */
class LazyHashReceipt {
  readonly #source: Decoded

  constructor(source: Decoded) {
    this.#source = source
  }

  /** The signing hash, computed by the source on its first read. */
  static hashOf(receipt: LazyHashReceipt): string {
    return receipt.#source.commandHash
  }
}

// One accessor shared by every lazy receipt keeps receipts on shared hidden classes (see `./deferred-sealing.ts`).
const LAZY_COMMAND_HASH: PropertyDescriptor = {
  enumerable: true,
  get(this: LazyHashReceipt): string {
    return LazyHashReceipt.hashOf(this)
  },
}
