/**
 * The Fenced Lease (`lease.schema.json`, §7.2, §11.3): a time-bounded, epoch-fenced right held by
 * one Agent session: coordinating a Mission, owning a WorkItem, executing it, or holding it
 * blocked.
 * @module
 */
import Type, { type Static } from 'typebox'
import { constant, document, oneOfValues } from '../schema.js'
import { Id, PositiveInteger, SafeInteger, Timestamp } from './common.js'

/** Lease types: Coordinator (§7.2), ownership, execution and blocked (§11.3, §11.4). */
export const LEASE_TYPES = ['coordinator', 'ownership', 'execution', 'blocked'] as const

/** A lease type. */
export type LeaseType = (typeof LEASE_TYPES)[number]

/** Lease types bound to a WorkItem and an Ownership Epoch. */
export const WORK_ITEM_LEASE_TYPES = ['ownership', 'execution', 'blocked'] as const

/** Lease states; every state but `active` is closed and says when and why (§11.3). */
export const LEASE_STATES = ['active', 'expired', 'revoked', 'released'] as const

/** A lease state. */
export type LeaseState = (typeof LEASE_STATES)[number]

/**
 * A Fenced Lease (§11.3). A Coordinator lease carries the Coordinator Epoch; WorkItem leases carry
 * the WorkItem and Ownership Epoch, and an ownership lease its start-by deadline. An execution
 * lease has no Coordinator Epoch, start-by, grace or capability-token member. `lastRenewedAt` is
 * present exactly when `renewalCount` is positive, and `closedAt`/`closureReason` exactly when
 * the lease is no longer active.
 */
export const Lease = Type.Object(
  {
    leaseId: Id,
    leaseType: oneOfValues(LEASE_TYPES),
    missionId: Id,
    groupId: Id,
    workItemId: Type.Optional(Id),
    holderAgentId: Id,
    sessionEpoch: PositiveInteger,
    coordinatorEpoch: Type.Optional(PositiveInteger),
    ownershipEpoch: Type.Optional(PositiveInteger),
    startBy: Type.Optional(Timestamp),
    issuedAt: Timestamp,
    startsAt: Timestamp,
    expiresAt: Timestamp,
    graceExpiresAt: Type.Optional(Timestamp),
    state: oneOfValues(LEASE_STATES),
    renewalCount: SafeInteger,
    lastRenewedAt: Type.Optional(Timestamp),
    closedAt: Type.Optional(Timestamp),
    closureReason: Type.Optional(Type.String({ pattern: '\\S', maxLength: 512 })),
  },
  {
    additionalProperties: false,
    allOf: [
      {
        if: { properties: { leaseType: constant('coordinator') }, required: ['leaseType'] },
        then: { required: ['coordinatorEpoch'] },
      },
      {
        if: { properties: { leaseType: oneOfValues(WORK_ITEM_LEASE_TYPES) }, required: ['leaseType'] },
        then: { required: ['workItemId', 'ownershipEpoch'] },
      },
      {
        if: { properties: { leaseType: constant('ownership') }, required: ['leaseType'] },
        then: { required: ['startBy'] },
      },
      {
        if: { properties: { leaseType: constant('execution') }, required: ['leaseType'] },
        then: {
          not: {
            anyOf: [
              { required: ['coordinatorEpoch'] },
              { required: ['startBy'] },
              { required: ['graceExpiresAt'] },
              // Not a member of this schema (additionalProperties rejects it anyway); kept as the
              // normative file spells it.
              { required: ['capabilityTokenId'] },
            ],
          },
        },
      },
      {
        if: { properties: { renewalCount: { minimum: 1 } }, required: ['renewalCount'] },
        then: { required: ['lastRenewedAt'] },
      },
      {
        if: { properties: { renewalCount: constant(0) }, required: ['renewalCount'] },
        then: { not: { required: ['lastRenewedAt'] } },
      },
      {
        if: { properties: { state: constant('active') }, required: ['state'] },
        then: { not: { anyOf: [{ required: ['closedAt'] }, { required: ['closureReason'] }] } },
        else: { required: ['closedAt', 'closureReason'] },
      },
    ],
  },
)

/** A Fenced Lease. */
export type Lease = Static<typeof Lease>

/** `lease.schema.json` (§11.3, §21). */
export const leaseDocument = document('lease', 'lease.schema.json', 'MissionWeaveProtocol 0.1 Fenced Lease', Lease)
