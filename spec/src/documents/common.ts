/**
 * Shared primitives of MissionWeaveProtocol 0.1 (`common.schema.json`): identifiers, timestamps,
 * hashes, actors, signatures, capability references, budgets, acceptance criteria and extensions.
 *
 * Each primitive is exported twice: its definition in {@link CommonDefs} (what `common.schema.json`
 * holds under `$defs`), and a `$ref` schema of the same name (`Id`, `Timestamp`, ...) that the other
 * documents use, exactly as the normative schemas reference `common.schema.json#/$defs/...`.
 * @module
 */
import Type, { type Static } from 'typebox'
import { anyValue, constant, document, freeObject, oneOfValues, ref } from '../schema.js'

const safeIntegerMax = 9007199254740991

/** One Extension Profile entry of an `extensions` member (§18). */
export interface ExtensionEntry {
  /** Profile semantic version. */
  version: string
  /** Whether a recipient that cannot interpret it must refuse (`UNKNOWN_CRITICAL_EXTENSION`). */
  critical: boolean
  /** Profile data, relayed unchanged when not understood. */
  data: unknown
}

/** Definitions of `common.schema.json` `$defs`, in normative order. */
export const CommonDefs = {
  /** The wire protocol version, always `0.1` (§21). */
  protocolVersion: constant('0.1'),
  /**
   * An identifier: an absolute RFC 3986 URI of at most 512 characters (§2). The pattern and the
   * `not` guard reject IRI-only spellings, whitespace, controls and a trailing line feed.
   */
  id: Type.String({
    format: 'uri',
    pattern: '^[A-Za-z][A-Za-z0-9+.-]*:',
    not: { pattern: "[^A-Za-z0-9._~:/?#\\[\\]@!$&'()*+,;=%-]" },
    maxLength: 512,
  }),
  /** A dotted lower-case kind name, e.g. `work.offer.created`. */
  kind: Type.String({ pattern: '^[a-z][a-z0-9_]*(?:\\.[a-z][a-z0-9_]*)+$', maxLength: 160 }),
  /** An RFC 3339 `date-time`; Weft asserts the §2 timestamp profile. */
  timestamp: Type.String({ format: 'date-time' }),
  /** A non-negative safe JSON integer (§2). */
  safeInteger: Type.Integer({ minimum: 0, maximum: safeIntegerMax }),
  /** A positive safe JSON integer; epochs and sequences start at 1 (§2). */
  positiveInteger: Type.Integer({ minimum: 1, maximum: safeIntegerMax }),
  /** A Semantic Versioning 2.0 version string. */
  semver: Type.String({
    pattern: '^(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)(?:-[0-9A-Za-z.-]+)?(?:\\+[0-9A-Za-z.-]+)?$',
    maxLength: 128,
  }),
  /** Unpadded base64url text (§2; canonical pad bits are checked when decoding). */
  base64url: Type.String({ pattern: '^[A-Za-z0-9_-]+$', minLength: 2, maxLength: 4096 }),
  /** A content hash: `sha256:` and 64 lower-case hexadecimal digits (§2). */
  sha256: Type.String({ pattern: '^sha256:[0-9a-f]{64}$' }),
  /** An ISO 8601 duration limited to days, hours, minutes and seconds. */
  duration: Type.String({
    pattern: '^P(?!$)(?:[0-9]+D)?(?:T(?=[0-9])(?:[0-9]+H)?(?:[0-9]+M)?(?:[0-9]+(?:\\.[0-9]+)?S)?)?$',
    maxLength: 64,
  }),
  /** Who issued a Command or caused an Event (§3). */
  actor: Type.Object(
    {
      type: oneOfValues(['agent', 'human', 'service']),
      id: ref('#/$defs/id', Type.String()),
    },
    { additionalProperties: false },
  ),
  /** An actor that must be an Agent. */
  agentActor: Type.Object({ type: constant('agent'), id: ref('#/$defs/id', Type.String()) }, { additionalProperties: false }),
  /** An actor that must be a human. */
  humanActor: Type.Object({ type: constant('human'), id: ref('#/$defs/id', Type.String()) }, { additionalProperties: false }),
  /** An Ed25519 signature over the document's signing bytes (§6.4). */
  signature: Type.Object(
    {
      algorithm: constant('Ed25519'),
      keyId: ref('#/$defs/id', Type.String()),
      createdAt: ref('#/$defs/timestamp', Type.String()),
      value: ref('#/$defs/base64url', Type.String()),
    },
    { additionalProperties: false },
  ),
  /** A registered Ed25519 public key and its validity interval (§6.1, §6.4). */
  publicKey: Type.Object(
    {
      keyId: ref('#/$defs/id', Type.String()),
      algorithm: constant('Ed25519'),
      publicKey: ref('#/$defs/base64url', Type.String()),
      validFrom: ref('#/$defs/timestamp', Type.String()),
      validUntil: Type.Optional(ref('#/$defs/timestamp', Type.String())),
      revokedAt: Type.Optional(ref('#/$defs/timestamp', Type.String())),
    },
    { additionalProperties: false },
  ),
  /** A versioned, Organization-governed capability (§6.1). */
  capabilityRef: Type.Object(
    {
      id: Type.String({ pattern: '^[a-z0-9]+(?:[.-][a-z0-9]+)+$', maxLength: 200 }),
      version: ref('#/$defs/semver', Type.String()),
    },
    { additionalProperties: false },
  ),
  /** A resource budget; at least one limit is present (§12). */
  budget: Type.Object(
    {
      currency: Type.Optional(Type.String({ pattern: '^[A-Z]{3}$' })),
      financialLimit: Type.Optional(Type.Number({ minimum: 0 })),
      modelTokenLimit: Type.Optional(ref('#/$defs/safeInteger', Type.Integer())),
      toolCallLimit: Type.Optional(ref('#/$defs/safeInteger', Type.Integer())),
      computeSecondsLimit: Type.Optional(ref('#/$defs/safeInteger', Type.Integer())),
      wallClockSecondsLimit: Type.Optional(ref('#/$defs/safeInteger', Type.Integer())),
      externalSideEffectLimit: Type.Optional(ref('#/$defs/safeInteger', Type.Integer())),
    },
    {
      additionalProperties: false,
      anyOf: [
        { required: ['financialLimit', 'currency'] },
        { required: ['modelTokenLimit'] },
        { required: ['toolCallLimit'] },
        { required: ['computeSecondsLimit'] },
        { required: ['wallClockSecondsLimit'] },
        { required: ['externalSideEffectLimit'] },
      ],
    },
  ),
  /** One acceptance criterion of a Work Contract and the Evidence it needs (§10.1, §13.2). */
  acceptanceCriterion: Type.Object(
    {
      criterionId: Type.String({ pattern: '^[a-zA-Z0-9][a-zA-Z0-9._-]{0,127}$' }),
      description: Type.String({ minLength: 1, maxLength: 4000 }),
      evidenceRequired: Type.Array(oneOfValues(['artifact_integrity', 'schema_validation', 'deterministic_test', 'business_rule', 'reviewer_assessment', 'human_review', 'policy_check']), {
        minItems: 1,
        uniqueItems: true,
      }),
    },
    { additionalProperties: false },
  ),
  /** A resource and the operations allowed on it (§12). */
  resourceGrant: Type.Object(
    {
      resource: ref('#/$defs/id', Type.String()),
      operations: Type.Array(Type.String({ pattern: '^[a-z][a-z0-9._:-]*$', maxLength: 128 }), {
        minItems: 1,
        uniqueItems: true,
      }),
      constraints: Type.Optional(freeObject()),
    },
    { additionalProperties: false },
  ),
  /** Data classification of content (§13). */
  classification: oneOfValues(['public', 'internal', 'confidential', 'restricted']),
  /** Extension Profile data keyed by profile URI (§18). */
  extensions: Type.Unsafe<Record<string, ExtensionEntry>>({
    type: 'object',
    propertyNames: { $ref: '#/$defs/id' },
    additionalProperties: Type.Object(
      {
        version: ref('#/$defs/semver', Type.String()),
        critical: Type.Boolean(),
        data: anyValue(),
      },
      { additionalProperties: false },
    ),
  }),
} as const

const commonRef = 'common.schema.json#/$defs/'

/** `$ref` to {@link CommonDefs.protocolVersion}. */
export const ProtocolVersion = ref(`${commonRef}protocolVersion`, CommonDefs.protocolVersion)
/** `$ref` to {@link CommonDefs.id}: an absolute-URI identifier (§2). */
export const Id = ref(`${commonRef}id`, CommonDefs.id)
/** `$ref` to {@link CommonDefs.kind}. */
export const Kind = ref(`${commonRef}kind`, CommonDefs.kind)
/** `$ref` to {@link CommonDefs.timestamp}: an RFC 3339 timestamp (§2). */
export const Timestamp = ref(`${commonRef}timestamp`, CommonDefs.timestamp)
/** `$ref` to {@link CommonDefs.safeInteger}. */
export const SafeInteger = ref(`${commonRef}safeInteger`, CommonDefs.safeInteger)
/** `$ref` to {@link CommonDefs.positiveInteger}. */
export const PositiveInteger = ref(`${commonRef}positiveInteger`, CommonDefs.positiveInteger)
/** `$ref` to {@link CommonDefs.semver}. */
export const Semver = ref(`${commonRef}semver`, CommonDefs.semver)
/** `$ref` to {@link CommonDefs.base64url}. */
export const Base64url = ref(`${commonRef}base64url`, CommonDefs.base64url)
/** `$ref` to {@link CommonDefs.sha256}: a `sha256:` content hash (§2). */
export const Sha256 = ref(`${commonRef}sha256`, CommonDefs.sha256)
/** `$ref` to {@link CommonDefs.duration}. */
export const Duration = ref(`${commonRef}duration`, CommonDefs.duration)
/** `$ref` to {@link CommonDefs.actor}. */
export const Actor = ref(`${commonRef}actor`, CommonDefs.actor)
/** `$ref` to {@link CommonDefs.agentActor}. */
export const AgentActor = ref(`${commonRef}agentActor`, CommonDefs.agentActor)
/** `$ref` to {@link CommonDefs.humanActor}. */
export const HumanActor = ref(`${commonRef}humanActor`, CommonDefs.humanActor)
/** `$ref` to {@link CommonDefs.signature}. */
export const Signature = ref(`${commonRef}signature`, CommonDefs.signature)
/** `$ref` to {@link CommonDefs.publicKey}. */
export const PublicKey = ref(`${commonRef}publicKey`, CommonDefs.publicKey)
/** `$ref` to {@link CommonDefs.capabilityRef}. */
export const CapabilityRef = ref(`${commonRef}capabilityRef`, CommonDefs.capabilityRef)
/** `$ref` to {@link CommonDefs.budget}: a resource budget (§12). */
export const ResourceBudget = ref(`${commonRef}budget`, CommonDefs.budget)
/** `$ref` to {@link CommonDefs.acceptanceCriterion}. */
export const AcceptanceCriterion = ref(`${commonRef}acceptanceCriterion`, CommonDefs.acceptanceCriterion)
/** `$ref` to {@link CommonDefs.resourceGrant}. */
export const ResourceGrant = ref(`${commonRef}resourceGrant`, CommonDefs.resourceGrant)
/** `$ref` to {@link CommonDefs.classification}. */
export const Classification = ref(`${commonRef}classification`, CommonDefs.classification)
/** `$ref` to {@link CommonDefs.extensions}. */
export const Extensions = ref(`${commonRef}extensions`, CommonDefs.extensions)

/** An identifier (absolute URI text). */
export type Id = Static<typeof Id>
/** An RFC 3339 timestamp text, preserved as written (§2). */
export type Timestamp = Static<typeof Timestamp>
/** A `sha256:` content hash. */
export type Sha256 = Static<typeof Sha256>
/** A Command or Event actor. */
export type Actor = Static<typeof Actor>
/** A document signature. */
export type Signature = Static<typeof Signature>
/** A registered public key. */
export type PublicKey = Static<typeof PublicKey>
/** A capability reference. */
export type CapabilityRef = Static<typeof CapabilityRef>
/** A resource budget. */
export type ResourceBudget = Static<typeof ResourceBudget>
/** An acceptance criterion. */
export type AcceptanceCriterion = Static<typeof AcceptanceCriterion>
/** A resource grant. */
export type ResourceGrant = Static<typeof ResourceGrant>
/** A data classification. */
export type Classification = Static<typeof Classification>
/** Extension Profile data keyed by profile URI. */
export type Extensions = Static<typeof Extensions>

/** `common.schema.json`: definitions only. */
export const common = document('common', 'common.schema.json', 'MissionWeaveProtocol 0.1 Common Definitions', Type.Unsafe<never>({ $defs: CommonDefs }))
