/**
 * The Context Package (`context-package.schema.json`, §13.3): a signed, versioned summary of a
 * scope of Group history, handed to late joiners and replacement Coordinators. It summarizes
 * history; it never replaces it.
 * @module
 */
import Type, { type Static } from 'typebox'
import { document } from '../schema.js'
import { AgentActor, Extensions, Id, PositiveInteger, Sha256, Signature, Timestamp } from './common.js'

/** The Group Events a package summarizes: a sequence range and the Event IDs in it. */
export const SourceEventRange = Type.Object(
  {
    fromSequence: PositiveInteger,
    toSequence: PositiveInteger,
    eventIds: Type.Array(Id, { minItems: 1, uniqueItems: true }),
  },
  { additionalProperties: false },
)

/** The source Event range of a Context Package. */
export type SourceEventRange = Static<typeof SourceEventRange>

/** A decision restated in the package, citing the Events it came from. */
export const ContextDecision = Type.Object(
  {
    description: Type.String({ minLength: 1, maxLength: 4000 }),
    sourceEventIds: Type.Array(Id, { minItems: 1, uniqueItems: true }),
  },
  { additionalProperties: false },
)

/** A decision of a Context Package. */
export type ContextDecision = Static<typeof ContextDecision>

/**
 * A Context Package (§13.3), signed by its generating Agent over `generatedAt` (§6.4). A new
 * version links to the one it supersedes through `previousContextPackageId`.
 */
export const ContextPackage = Type.Object(
  {
    contextPackageId: Id,
    version: PositiveInteger,
    previousContextPackageId: Type.Optional(Id),
    missionId: Id,
    groupId: Id,
    workItemId: Type.Optional(Id),
    sourceEventRange: SourceEventRange,
    artifactHashes: Type.Array(Sha256, { uniqueItems: true }),
    summary: Type.String({ minLength: 1, maxLength: 50000 }),
    decisions: Type.Array(ContextDecision),
    constraints: Type.Array(Type.String({ minLength: 1, maxLength: 4000 })),
    unresolvedQuestions: Type.Array(Type.String({ minLength: 1, maxLength: 4000 })),
    generatedBy: AgentActor,
    generatedAt: Timestamp,
    extensions: Type.Optional(Extensions),
    signature: Signature,
  },
  { additionalProperties: false },
)

/** A Context Package. */
export type ContextPackage = Static<typeof ContextPackage>

/** `context-package.schema.json` (§13.3, §21). */
export const contextPackageDocument = document('contextPackage', 'context-package.schema.json', 'MissionWeaveProtocol 0.1 Context Package', ContextPackage)
