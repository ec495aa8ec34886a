/**
 * Filling and signing a Command envelope (§15.1): which Group ID and which epochs a Command
 * carries for its kind and its issuer, then the §6.4 signature and the exact bytes to send.
 * @module
 */
import { sign, signAsync, type AsyncSigningKey, type SigningKey } from '@weft/codec'
import { UsageError } from '@weft/codec/errors'
import { commandInfo, type Actor, type Command, type CommandKind, type CommandPayload, type EpochName } from '@weft/spec'
import type { Epochs } from './epochs.js'
import { newUrnUuid, timestampOf, type Clock, type RandomSource } from '@weft/codec/time'
import type { CommandOptions } from './sender.js'

/** A signed Command of kind `K`, as sent. */
export type SignedCommand<K extends CommandKind = CommandKind> = Command & {
  readonly kind: K
  readonly payload: CommandPayload<K>
}

/**
 * A built Command: the signed document and its exact JSON text. Keep both to retry unchanged:
 * an unchanged retry resends these bytes, same Action ID included (§19).
 */
export interface BuiltCommand<K extends CommandKind = CommandKind> {
  readonly command: SignedCommand<K>
  readonly bytes: string
}

/** What envelope filling needs from a client. */
export interface EnvelopeSource {
  /** The signing Principal. */
  readonly actor: Actor
  /** The Group used when a Group-scoped Command names none. */
  readonly groupId: string | undefined
  readonly epochs: Epochs
  /**
   * The key that signs every Command: a synchronous one (`keyPairFromSeed`), or an asynchronous
   * one such as a non-extractable WebCrypto key in a browser (`webCryptoKeyPair`), which only
   * {@link buildCommandAsync} can use.
   */
  readonly signingKey: SigningKey | AsyncSigningKey
  readonly clock: Clock
  readonly random: RandomSource
}

/**
 * The smallest epoch set the envelope schema accepts from an issuer the catalog does not list for
 * a kind (`command.schema.json`: every Agent Command carries Session and Membership Epochs, a
 * human Command in an existing Group its Membership Epoch). Such a Command is still built and
 * signed, so that the Authority, not the client, refuses it (`AUTH_FORBIDDEN`).
 */
const SCHEMA_MINIMUM: { readonly [T in Actor['type']]: readonly EpochName[] } = {
  agent: ['session', 'membership'],
  human: ['membership'],
  service: [],
}

/**
 * The epochs a Command of `kind` carries when `actor` issues it (§15.1): the catalog's
 * `requiredEpochs` for the issuer type, plus, for an Agent holding the Coordinator lease of the
 * Group, the Coordinator Epoch, because its authority then comes from that lease (§7.2, §15.1).
 * Services and Organization-scoped Commands carry none.
 * @example
 * ```ts
 * envelopeEpochs('work.offer', 'agent', true)  // ['session', 'membership', 'coordinator']
 * envelopeEpochs('work.offer', 'agent', false) // ['session', 'membership']
 * envelopeEpochs('mission.create', 'human', false) // []
 * ```
 */
export function envelopeEpochs(kind: CommandKind, type: Actor['type'], holdsCoordinatorLease: boolean): readonly EpochName[] {
  const info = commandInfo(kind)
  if (type === 'service' || info.scope === 'organization') return []
  const listed = (info.issuerTypes as readonly string[]).includes(type)
  const base: readonly EpochName[] = listed ? info.requiredEpochs[type] : SCHEMA_MINIMUM[type]
  // Humans never hold the Coordinator lease (§7.2), so only Agents add it.
  if (type !== 'agent' || !holdsCoordinatorLease || base.includes('coordinator')) return base
  return [...base, 'coordinator']
}

/** Why the Command cannot be built, and what to do about it. */
function missing(epoch: EpochName, kind: CommandKind, groupId: string): UsageError {
  switch (epoch) {
    case 'session':
      return new UsageError(
        `${kind} needs this Agent's Session Epoch (§6.3, §15.1) and none is known: open a session first ` +
          `(the Organization issues ext.missionweaveprotocol.identity.session_open), then let the client observe the ` +
          `session_opened Event or call epochs.set({ session })`,
      )
    case 'membership':
      return new UsageError(
        `${kind} needs a Membership Epoch in Group ${groupId} (§8, §15.1) and none is known: join the Group first ` +
          `(a membership.change naming this actor), then let the client observe that Event or call epochs.set({ groupId, membership })`,
      )
    case 'coordinator':
      return new UsageError(
        `${kind} needs the Coordinator Epoch of Group ${groupId} (§7.2, §15.1) and this Agent holds no Coordinator lease there: ` +
          `it must be assigned (mission.created or mission.coordinator.assigned naming it), or call epochs.set({ groupId, coordinator })`,
      )
  }
}

const OVERRIDES = ['session', 'membership', 'coordinator'] as const satisfies readonly EpochName[]

/**
 * The epochs `options` gives this one Command, checked: positive integers, and only those the
 * envelope carries (`carried`), since §15.1 forbids inventing an epoch the issuer does not hold.
 */
function overrides(options: CommandOptions, carried: readonly EpochName[], kind: CommandKind, actor: Actor): Partial<Record<EpochName, number>> {
  const given: Partial<Record<EpochName, number>> = {}
  for (const epoch of OVERRIDES) {
    const value = options[`${epoch}Epoch`]
    if (value === undefined) continue
    if (!Number.isSafeInteger(value) || value < 1) throw new UsageError(`options.${epoch}Epoch must be a positive integer (§2), got ${String(value)}`)
    if (!carried.includes(epoch)) throw new UsageError(`${kind} issued by a ${actor.type} carries no ${epoch} epoch (§15.1); drop options.${epoch}Epoch`)
    given[epoch] = value
  }
  return given
}

/** The Group a Command of `kind` names, or `undefined` for an Organization-scoped kind. */
function groupOf(kind: CommandKind, source: EnvelopeSource, options: CommandOptions): string | undefined {
  if (commandInfo(kind).scope === 'organization') {
    // §15.1: the Organization bootstrap Commands carry no Group ID.
    if (options.groupId !== undefined) throw new UsageError(`${kind} is Organization-scoped and carries no groupId (§15.1)`)
    return undefined
  }
  const groupId = options.groupId ?? source.groupId
  if (groupId === undefined) {
    const what = kind === 'mission.create' || kind === 'mission.create_follow_up' ? 'the ID of the Group it creates' : 'its Group'
    throw new UsageError(`${kind} is Group-scoped and must name ${what} (§15.1): pass options.groupId or create the client with a groupId`)
  }
  return groupId
}

/** A Command envelope ready to sign: every §15.1 member but the signature. */
type Unsigned = Readonly<Record<string, unknown>>

/**
 * Fills the envelope of one Command (§15.1) from `source` and `options`: everything but the §6.4
 * signature, shared by {@link buildCommand} and {@link buildCommandAsync} so that both build
 * the very same document.
 */
function envelopeOf(source: EnvelopeSource, kind: CommandKind, payload: unknown, options: CommandOptions): Unsigned {
  if (commandInfo(kind as string) === undefined) throw new UsageError(`unknown Command kind ${JSON.stringify(kind)}`)
  const { actor, epochs } = source
  const groupId = groupOf(kind, source, options)
  const carried: Partial<Record<'sessionEpoch' | 'membershipEpoch' | 'coordinatorEpoch', number>> = {}
  // An Agent naming a Coordinator Epoch for this Command acts under the lease (§7.2, §15.1).
  const holdsLease = groupId !== undefined && actor.type === 'agent' && (options.coordinatorEpoch !== undefined || epochs.coordinator(groupId) !== undefined)
  const names = groupId === undefined ? [] : envelopeEpochs(kind, actor.type, holdsLease)
  const given = overrides(options, names, kind, actor)
  if (groupId !== undefined) {
    for (const epoch of names) {
      const value = given[epoch] ?? (epoch === 'session' ? epochs.sessionEpoch : epoch === 'membership' ? epochs.membership(groupId) : epochs.coordinator(groupId))
      if (value === undefined) throw missing(epoch, kind, groupId)
      carried[`${epoch}Epoch`] = value
    }
  }
  const issuedAt = options.issuedAt ?? timestampOf(source.clock.now())
  // Envelope members in the order of command.schema.json; absent options stay absent (never `undefined`).
  return {
    protocolVersion: '0.1',
    actionId: options.actionId ?? newUrnUuid(source.random),
    actor: { type: actor.type, id: actor.id },
    ...carried,
    ...(groupId !== undefined && { groupId }),
    ...(options.conversationId !== undefined && { conversationId: options.conversationId }),
    ...(options.workItemId !== undefined && { workItemId: options.workItemId }),
    ...(options.cooperationOverrideGrantId !== undefined && { cooperationOverrideGrantId: options.cooperationOverrideGrantId }),
    kind,
    ...(options.expectedRevision !== undefined && { expectedRevision: options.expectedRevision }),
    correlationId: options.correlationId ?? newUrnUuid(source.random),
    ...(options.causedByEventId !== undefined && { causedByEventId: options.causedByEventId }),
    issuedAt,
    payload,
    ...(options.extensions !== undefined && { extensions: options.extensions }),
  }
}

/** Thrown inside codec's `sign` when the key turned out to sign asynchronously; never escapes this module as is. */
class SignsAsynchronously extends Error {}

const isThenable = (value: unknown): value is PromiseLike<unknown> => typeof (value as { then?: unknown } | null)?.then === 'function'

/** Keys known to sign asynchronously: their pair's `sign` is an async function, or returned a promise once. */
const asyncPairs = new WeakSet<object>()

/** Synchronous stand-ins for the keys given to {@link buildCommand}, one per key, made once. */
const checkedKeys = new WeakMap<object, SigningKey>()

/**
 * Whether `key` is known to sign asynchronously. A pair whose `sign` is an `async` function (as
 * `webCryptoKeyPair`'s is) is known at once; any other is taken as synchronous until one of its
 * signatures comes back as a promise.
 */
export function signsAsynchronously(key: SigningKey | AsyncSigningKey): boolean {
  const pair = key.pair as object
  if (asyncPairs.has(pair)) return true
  if (Object.prototype.toString.call(key.pair.sign) !== '[object AsyncFunction]') return false
  asyncPairs.add(pair)
  return true
}

/**
 * `key` as codec's synchronous `sign` needs it: the same key, but a signature that comes back as
 * a promise stops the signing (the promise is left to settle unobserved) instead of being
 * encoded as if it were bytes.
 */
function checkedKey(key: SigningKey | AsyncSigningKey): SigningKey {
  const known = checkedKeys.get(key)
  if (known !== undefined) return known
  const pair = key.pair
  const checked: SigningKey = {
    keyId: key.keyId,
    pair: {
      get publicKey() {
        return pair.publicKey
      },
      sign(message: Uint8Array): Uint8Array {
        const signature: unknown = pair.sign(message)
        if (isThenable(signature)) {
          asyncPairs.add(pair)
          // Nobody awaits this signature; a rejection must not surface as an unhandled one.
          signature.then(undefined, () => undefined)
          throw new SignsAsynchronously()
        }
        return signature as Uint8Array
      },
    },
  }
  checkedKeys.set(key, checked)
  return checked
}

const asyncKeyRefused = (): UsageError =>
  new UsageError('buildCommand: the signing key signs asynchronously (an AsyncSigningKey, e.g. webCryptoKeyPair in a browser); build with buildCommandAsync, or client.buildAsync')

/**
 * Builds and signs one Command: the envelope members of §15.1 filled from `source` and
 * `options`, the §6.4 signature under `source.signingKey`, and the exact JSON text. An epoch
 * `options` names (`sessionEpoch`, `membershipEpoch`, `coordinatorEpoch`) replaces the one of
 * `source.epochs` for this Command only. The key must sign synchronously; see
 * {@link buildCommandAsync} for a WebCrypto key.
 * @throws UsageError when the kind is unknown, a Group-scoped kind names no Group, an epoch
 * the envelope must carry is neither in `options` nor known to `source.epochs`, `options`
 * names an epoch the envelope does not carry, or the key signs asynchronously.
 */
export function buildCommand<K extends CommandKind>(source: EnvelopeSource, kind: K, payload: CommandPayload<K>, options: CommandOptions = {}): BuiltCommand<K> {
  const key = source.signingKey
  if (signsAsynchronously(key)) throw asyncKeyRefused()
  const unsigned = envelopeOf(source, kind, payload, options)
  let command: SignedCommand<K>
  try {
    command = sign('command', unsigned, checkedKey(key)) as unknown as SignedCommand<K>
  } catch (thrown) {
    if (thrown instanceof SignsAsynchronously) throw asyncKeyRefused()
    throw thrown
  }
  return { command, bytes: JSON.stringify(command) }
}

/**
 * {@link buildCommand} for a key of either kind: a synchronous {@link SigningKey} or an
 * {@link AsyncSigningKey} whose signature resolves later, such as a non-extractable WebCrypto
 * key in a browser (`webCryptoKeyPair` of `@weft/codec`). Same envelope, same checks, same
 * signed bytes (codec's `signAsync`, §6.4).
 * @throws UsageError (as a rejection) for the misuses {@link buildCommand} refuses, before
 * anything is signed.
 * @example
 * ```ts
 * const pair = await webCryptoKeyPair(seed, publicKey) // the private key never leaves WebCrypto
 * const built = await buildCommandAsync({ ...source, signingKey: { keyId, pair } }, 'message.post', payload)
 * ```
 */
export async function buildCommandAsync<K extends CommandKind>(source: EnvelopeSource, kind: K, payload: CommandPayload<K>, options: CommandOptions = {}): Promise<BuiltCommand<K>> {
  const unsigned = envelopeOf(source, kind, payload, options)
  const command = (await signAsync('command', unsigned, source.signingKey)) as unknown as SignedCommand<K>
  return { command, bytes: JSON.stringify(command) }
}
