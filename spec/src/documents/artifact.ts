/**
 * The Artifact manifest (`artifact.schema.json`, §13.1): the signed description of immutable,
 * content-addressed output stored outside the Event log, with its full provenance.
 * @module
 */
import Type, { type Static } from 'typebox'
import { document } from '../schema.js'
import { CapabilityRef, Classification, Extensions, Id, PositiveInteger, SafeInteger, Sha256, Signature, Timestamp } from './common.js'
import { MEDIA_TYPE_PATTERN } from './work-contract.js'

/** The producing Agent with its card and capability versions (§6.1, §13.1). */
export const ArtifactProducer = Type.Object(
  {
    agentId: Id,
    agentCardVersion: PositiveInteger,
    capabilities: Type.Array(CapabilityRef, { minItems: 1 }),
  },
  { additionalProperties: false },
)

/** The producer of an Artifact. */
export type ArtifactProducer = Static<typeof ArtifactProducer>

/** A tool and the version of it that took part in producing the Artifact. */
export const ToolVersion = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    version: Type.String({ minLength: 1, maxLength: 200 }),
  },
  { additionalProperties: false },
)

/** A tool version. */
export type ToolVersion = Static<typeof ToolVersion>

/** A model (provider, model, version) that took part in producing the Artifact. */
export const ModelVersion = Type.Object(
  {
    provider: Type.String({ minLength: 1, maxLength: 200 }),
    model: Type.String({ minLength: 1, maxLength: 200 }),
    version: Type.String({ minLength: 1, maxLength: 200 }),
  },
  { additionalProperties: false },
)

/** A model version. */
export type ModelVersion = Static<typeof ModelVersion>

/**
 * An Artifact manifest (§13.1). `contentHash` is the content's identity; `uri` is only where to
 * fetch it, and the hash is checked on retrieval. Source hashes form the provenance graph. Signed
 * by the producing Agent over `createdAt` (§6.4).
 */
export const Artifact = Type.Object(
  {
    artifactId: Id,
    contentHash: Sha256,
    uri: Type.String({ format: 'uri' }),
    sizeBytes: SafeInteger,
    mediaType: Type.String({ pattern: MEDIA_TYPE_PATTERN }),
    schemaUri: Type.String({ format: 'uri' }),
    producer: ArtifactProducer,
    missionId: Id,
    groupId: Id,
    workItemId: Id,
    sourceArtifactHashes: Type.Array(Sha256, { uniqueItems: true }),
    toolVersions: Type.Array(ToolVersion),
    modelVersions: Type.Array(ModelVersion),
    classification: Classification,
    createdAt: Timestamp,
    extensions: Type.Optional(Extensions),
    signature: Signature,
  },
  { additionalProperties: false },
)

/** An Artifact manifest. */
export type Artifact = Static<typeof Artifact>

/** `artifact.schema.json` (§13.1, §21). */
export const artifactDocument = document('artifact', 'artifact.schema.json', 'MissionWeaveProtocol 0.1 Artifact Manifest', Artifact)
