/**
 * The Extension Profile (`extension-profile.schema.json`, §18): an Organization-approved, signed
 * declaration of custom Command and Event kinds and data, which can never override core rules.
 * @module
 */
import Type, { type Static } from 'typebox'
import { constant, document } from '../schema.js'
import { Actor, CapabilityRef, Id, Semver, Sha256, Signature, Timestamp } from './common.js'
import { ExtensionKind } from './command.js'

/**
 * An Extension Profile (§18): unique profile URI, semantic version, hashed schema, required
 * capabilities, criticality, the `ext.` kinds it defines, and the Organization approval signed
 * by `approvedBy` over `approvedAt` (§6.4). `overridesCoreInvariants` is always `false`.
 */
export const ExtensionProfile = Type.Object(
  {
    profileUri: Id,
    name: Type.String({ minLength: 1, maxLength: 200 }),
    version: Semver,
    schemaUri: Type.String({ format: 'uri' }),
    schemaHash: Sha256,
    requiredCapabilities: Type.Array(CapabilityRef),
    critical: Type.Boolean(),
    commandKinds: Type.Array(ExtensionKind, { uniqueItems: true }),
    eventKinds: Type.Array(ExtensionKind, { uniqueItems: true }),
    overridesCoreInvariants: constant(false),
    approvedBy: Actor,
    approvedAt: Timestamp,
    signature: Signature,
  },
  { additionalProperties: false },
)

/** An Extension Profile. */
export type ExtensionProfile = Static<typeof ExtensionProfile>

/** `extension-profile.schema.json` (§18, §21). */
export const extensionProfileDocument = document('extensionProfile', 'extension-profile.schema.json', 'MissionWeaveProtocol 0.1 Extension Profile', ExtensionProfile)
