/**
 * The Presence Record (`presence-record.schema.json`, §6.2): ephemeral liveness and capacity of
 * an Agent, kept apart from its Agent Card and usually carried in `PING` frames (§17.3).
 * @module
 */
import Type, { type Static } from 'typebox'
import { document, oneOfValues } from '../schema.js'
import { CapabilityRef, Id, PositiveInteger, SafeInteger, Timestamp } from './common.js'

/** Reported online states of an Agent (§6.2). */
export const PRESENCE_STATUSES = ['online', 'busy', 'away', 'draining', 'offline'] as const

/** A reported online state. */
export type PresenceStatus = (typeof PRESENCE_STATUSES)[number]

/** Reported availability of one capability. */
export const CAPABILITY_AVAILABILITY_STATUSES = ['available', 'degraded', 'unavailable'] as const

/** A capability availability state. */
export type CapabilityAvailabilityStatus = (typeof CAPABILITY_AVAILABILITY_STATUSES)[number]

/** Current execution slots and queue length; the Agent Card states the maximum (§11.1). */
export const PresenceCapacity = Type.Object(
  {
    maxSlots: PositiveInteger,
    activeSlots: SafeInteger,
    availableSlots: SafeInteger,
    queuedItems: SafeInteger,
  },
  { additionalProperties: false },
)

/** Current capacity of an Agent. */
export type PresenceCapacity = Static<typeof PresenceCapacity>

/** Whether one versioned capability can be served right now. */
export const CapabilityAvailability = Type.Object(
  {
    capability: CapabilityRef,
    status: oneOfValues(CAPABILITY_AVAILABILITY_STATUSES),
  },
  { additionalProperties: false },
)

/** Availability of one capability. */
export type CapabilityAvailability = Static<typeof CapabilityAvailability>

/**
 * A Presence Record (§6.2), bound to the Session Epoch it was reported under. It is never an
 * acceptance or a lease renewal, and a stale one is ignored; it needs no signature of its own.
 */
export const PresenceRecord = Type.Object(
  {
    agentId: Id,
    sessionEpoch: PositiveInteger,
    status: oneOfValues(PRESENCE_STATUSES),
    capacity: PresenceCapacity,
    capabilityAvailability: Type.Array(CapabilityAvailability),
    estimatedResponseMs: Type.Optional(SafeInteger),
    lastHeartbeat: Timestamp,
    expiresAt: Timestamp,
  },
  { additionalProperties: false },
)

/** A Presence Record. */
export type PresenceRecord = Static<typeof PresenceRecord>

/** `presence-record.schema.json` (§6.2, §21). */
export const presenceRecordDocument = document(
  'presenceRecord',
  'presence-record.schema.json',
  'MissionWeaveProtocol 0.1 Presence Record',
  PresenceRecord,
)
