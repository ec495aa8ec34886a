/**
 * @weft/client: typed, signed MissionWeaveProtocol 0.1 Commands. One builder per Command kind
 * (generated from the `@weft/spec` catalog) fills the §15.1 envelope — IDs, Group, Session,
 * Membership and Coordinator Epochs — signs it (§6.4) and hands the exact bytes to a transport.
 *
 * @example
 * ```ts
 * import { createClient } from '@weft/client'
 *
 * const owner = createClient({ actor: { type: 'human', id: ownerId }, signingKey, transport: authority.connect() })
 * const receipt = await owner.missionCreate(payload, { groupId: newGroupId })
 * owner.epochs.membership(newGroupId) // learned from the mission.created Event
 * ```
 * @packageDocumentation
 */
export { createClient } from './client.js'
export type { Client, ClientCore, ClientOptions } from './client.js'
export type { CommandOptions, Receipt, Transport } from './sender.js'
export type { BuiltCommand, SignedCommand } from './envelope.js'
export type { Epochs, EpochSetting } from './epochs.js'
export { COMMAND_BUILDER_NAMES } from './gen/builders.js'
export type { CommandBuilders } from './gen/builders.js'
// Executors derive their side-effect idempotency keys here (§11.4, §16).
export { sideEffectKey, attemptKey, retryBackoffMs } from './side-effects.js'
export type { SideEffectScope } from './side-effects.js'

// Library-author surface: the pieces createClient is made of, for custom senders and transports.
export { bindBuilders } from './gen/builders.js'
export type { CommandSender } from './sender.js'
export { buildCommand, buildCommandAsync, envelopeEpochs } from './envelope.js'
export type { EnvelopeSource } from './envelope.js'
export { createEpochs } from './epochs.js'
export { newUrnUuid, systemRandom, timestampOf } from '@weft/codec/time'
export type { Clock, RandomSource } from '@weft/codec/time'
export type { EventFeed, FeedGroup, FeedHandlers, FeedSubscription } from './feed.js'
