/**
 * `createClient`: one signing Principal talking to a Group Authority through a {@link Transport},
 * with a typed builder per Command kind and its fencing epochs tracked as Events arrive.
 * @module
 */
import type { AsyncSigningKey, SigningKey } from '@weft/codec'
import { UsageError } from '@weft/codec/errors'
import type { Actor, CommandKind, CommandPayload, Event } from '@weft/spec'
import { createEpochs, type Epochs, type EpochSetting } from './epochs.js'
import { buildCommand, buildCommandAsync, signsAsynchronously, type BuiltCommand, type EnvelopeSource } from './envelope.js'
import { bindBuilders, type CommandBuilders } from './gen/builders.js'
import { systemClock, systemRandom, type Clock, type RandomSource } from '@weft/codec/time'
import type { CommandOptions, CommandSender, Receipt, Transport } from './sender.js'

/** Options of {@link createClient}. */
export interface ClientOptions {
  /** The Principal that signs every Command (an Agent, a human or an Organization service). */
  readonly actor: Actor
  /**
   * Its Ed25519 key; the Registry must bind `signingKey.keyId` to `actor` (§6.4). Either a
   * synchronous `SigningKey` or an `AsyncSigningKey` such as a
   * browser's non-extractable WebCrypto key (`webCryptoKeyPair`): Commands are then signed with
   * codec's `signAsync`, and only {@link ClientCore.buildAsync} (not `build`) can build them.
   */
  readonly signingKey: SigningKey | AsyncSigningKey
  /** Carries signed Commands to the Authority, e.g. `authority.connect()` of `@weft/authority`. */
  readonly transport: Transport
  /** The Group Group-scoped Commands name when their options name none. */
  readonly groupId?: string
  /** The time for `issuedAt`, `{ now() }` in epoch milliseconds; defaults to the wall clock ({@link systemClock}). */
  readonly clock?: Clock
  /** Random bytes for Action and correlation IDs; defaults to WebCrypto's `getRandomValues` ({@link systemRandom}). */
  readonly random?: RandomSource
  /**
   * Epochs the client starts with, as {@link Epochs.set} takes them (one setting per Group): how a
   * restarted or late-joining runtime acts before it has seen the Events that issued them. Events
   * seen later move them only forward.
   */
  readonly epochs?: EpochSetting | readonly EpochSetting[]
}

/** The hand-written part of a {@link Client}: building, sending, retrying and epochs. */
export interface ClientCore extends CommandSender {
  /** The signing Principal. */
  readonly actor: Actor
  /** The default Group of this client, if any. */
  readonly groupId: string | undefined
  /**
   * The epochs this client carries, shared by every {@link ClientCore.withGroup} view. Learned
   * from each receipt automatically; set them by hand ({@link Epochs.set}, or `epochs` of
   * {@link ClientOptions}) or {@link ClientCore.observe} subscribed Events when they arrive
   * another way. One Command can carry other epochs through its {@link CommandOptions}.
   */
  readonly epochs: Epochs
  /**
   * Builds and signs a Command without sending it (§15.1 envelope, §6.4 signature), with a key
   * that signs synchronously.
   * @throws UsageError when a Group or an epoch the envelope needs is unknown, or the key signs
   * asynchronously (use {@link ClientCore.buildAsync}).
   */
  build<K extends CommandKind>(kind: K, payload: CommandPayload<K>, options?: CommandOptions): BuiltCommand<K>
  /**
   * {@link ClientCore.build} with a key of either kind, e.g. a WebCrypto key whose signature
   * resolves later (`webCryptoKeyPair` of `@weft/codec`).
   * @throws UsageError (as a rejection) when a Group or an epoch the envelope needs is unknown.
   */
  buildAsync<K extends CommandKind>(kind: K, payload: CommandPayload<K>, options?: CommandOptions): Promise<BuiltCommand<K>>
  /**
   * Builds, signs and submits a Command; resolves to the {@link Receipt} after learning epochs
   * from its Events. A refusal rejects with the transport's `ProtocolError` as is; a local
   * misuse rejects with a `UsageError` before anything is sent.
   */
  send<K extends CommandKind>(kind: K, payload: CommandPayload<K>, options?: CommandOptions): Promise<Receipt>
  /**
   * Submits an already built Command again, byte for byte: the unchanged retry of §19 (same Action
   * ID, same signature), answered by the original receipt if the first attempt was accepted. After
   * a fencing error or an expired `issuedAt`, build a new Command instead.
   */
  resend(built: BuiltCommand): Promise<Receipt>
  /** Learns epochs from Events received outside a receipt, e.g. from a subscription; same as `epochs.observe`. */
  observe(events: Iterable<Event>): void
  /** A client for the same Principal, transport and epochs whose default Group is `groupId`. */
  withGroup(groupId: string): Client
}

/** A client: one typed builder per Command kind (`missionCreate`, `workAcceptOffer`, ...) plus {@link ClientCore}. */
export type Client = CommandBuilders & ClientCore

const ACTOR_TYPES: ReadonlySet<string> = new Set(['agent', 'human', 'service'])

function checkOptions(options: ClientOptions): void {
  const { actor, signingKey, transport, groupId, clock, random } = options
  if (typeof actor?.id !== 'string' || !ACTOR_TYPES.has(actor.type)) throw new UsageError('createClient: actor must be { type: agent | human | service, id }')
  if (typeof signingKey?.keyId !== 'string' || typeof signingKey.pair?.sign !== 'function')
    throw new UsageError('createClient: signingKey must be { keyId, pair } with an Ed25519 key pair (synchronous, or asynchronous such as webCryptoKeyPair)')
  if (typeof transport?.submit !== 'function') throw new UsageError('createClient: transport must have a submit(command, bytes) method')
  if (groupId !== undefined && typeof groupId !== 'string') throw new UsageError('createClient: groupId must be a string')
  if (clock !== undefined && typeof clock?.now !== 'function') throw new UsageError('createClient: clock must be { now(): number } returning epoch milliseconds')
  if (random !== undefined && typeof random !== 'function') throw new UsageError('createClient: random must be a function (size) => Uint8Array')
  if (options.epochs !== undefined && (typeof options.epochs !== 'object' || options.epochs === null))
    throw new UsageError('createClient: epochs must be { session?, groupId?, membership?, coordinator? } or a list of them')
}

/**
 * Creates a client for one Principal.
 * @throws UsageError on malformed options.
 * @example
 * ```ts
 * const worker = createClient({ actor: { type: 'agent', id: workerId }, signingKey, transport, groupId })
 * worker.epochs.set({ session: 1, groupId, membership: 1 }) // or observe session_opened and membership.changed
 * const receipt = await worker.workAcceptOffer({ workItemId, ownershipLeaseSeconds: 600 }, { expectedRevision: 3 })
 * // A restarted runtime starts with the epochs it was told (§6.3: the new session's, §8: its Membership's):
 * const restarted = createClient({ actor, signingKey, transport, groupId, epochs: { session: 2, groupId, membership: 3 } })
 * ```
 */
export function createClient(options: ClientOptions): Client {
  checkOptions(options)
  const actor: Actor = Object.freeze({ type: options.actor.type, id: options.actor.id })
  const epochs = createEpochs(actor)
  const settings: readonly EpochSetting[] = options.epochs === undefined ? [] : Array.isArray(options.epochs) ? options.epochs : [options.epochs as EpochSetting]
  for (const setting of settings) epochs.set(setting)
  const shared = {
    actor,
    epochs,
    signingKey: options.signingKey,
    clock: options.clock ?? systemClock,
    random: options.random ?? systemRandom,
    transport: options.transport,
  }
  return clientFor(shared, options.groupId)
}

type Shared = Omit<EnvelopeSource, 'groupId'> & { readonly transport: Transport }

function clientFor(shared: Shared, groupId: string | undefined): Client {
  const source: EnvelopeSource = { ...shared, groupId }
  const deliver = async (built: BuiltCommand): Promise<Receipt> => {
    const receipt = await shared.transport.submit(built.command, built.bytes)
    shared.epochs.observe(receipt.events)
    return receipt
  }
  const key = shared.signingKey
  const core: ClientCore = {
    actor: shared.actor,
    groupId,
    epochs: shared.epochs,
    build: (kind, payload, options) => buildCommand(source, kind, payload, options),
    buildAsync: (kind, payload, options) => buildCommandAsync(source, kind, payload, options),
    // async so that a UsageError from building rejects the promise instead of throwing synchronously.
    send: async (kind, payload, options) => {
      // A synchronous key keeps the synchronous path (no promise around its signature); a key
      // known to sign asynchronously goes through codec's signAsync (§6.4, same bytes signed).
      if (signsAsynchronously(key)) return deliver(await buildCommandAsync(source, kind, payload, options))
      let built: BuiltCommand
      try {
        built = buildCommand(source, kind, payload, options)
      } catch (thrown) {
        // A `sign` that is no async function but returned a promise: it is known now, build again.
        if (!signsAsynchronously(key)) throw thrown
        built = await buildCommandAsync(source, kind, payload, options)
      }
      return deliver(built)
    },
    resend: async (built) => deliver(built),
    observe: (events) => shared.epochs.observe(events),
    withGroup: (next) => {
      if (typeof next !== 'string') throw new UsageError('withGroup: groupId must be a string')
      return clientFor(shared, next)
    },
  }
  return { ...bindBuilders(core), ...core }
}
