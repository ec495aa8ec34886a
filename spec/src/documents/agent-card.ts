/**
 * The Agent Card (`agent-card.schema.json`, §6.1): the Organization-signed, versioned identity of
 * an Agent: owner, endpoints, public keys, supported versions, governed capabilities and maximum
 * concurrency. It describes ability, never authorization, and holds no credentials.
 * @module
 */
import Type, { type Static } from 'typebox'
import { constant, document, freeObject, oneOfValues } from '../schema.js'
import { Actor, Extensions, Id, PositiveInteger, ProtocolVersion, PublicKey, Semver, Sha256, Signature, Timestamp } from './common.js'

/** Lifecycle states of an Agent Card. */
export const AGENT_CARD_STATUSES = ['active', 'deprecated', 'revoked'] as const

/** An Agent Card status. */
export type AgentCardStatus = (typeof AGENT_CARD_STATUSES)[number]

/** A reachable endpoint of the Agent; v0.1 only knows WebSocket over TLS (§17.1). */
export const AgentEndpoint = Type.Object(
  {
    transport: constant('wss'),
    uri: Type.String({ format: 'uri', pattern: '^wss://' }),
  },
  { additionalProperties: false },
)

/** An Agent endpoint. */
export type AgentEndpoint = Static<typeof AgentEndpoint>

/**
 * One Organization-governed capability of the Agent (§6.1): its versioned ID, the hashed input and
 * output schemas, constraints, and the Evidence that verified it.
 */
export const AgentCapability = Type.Object(
  {
    id: Type.String({ pattern: '^[a-z0-9]+(?:[.-][a-z0-9]+)+$', maxLength: 200 }),
    version: Semver,
    inputSchema: Type.String({ format: 'uri' }),
    inputSchemaHash: Sha256,
    outputSchema: Type.String({ format: 'uri' }),
    outputSchemaHash: Sha256,
    constraints: freeObject(),
    verifiedEvidence: Type.Array(Id, { minItems: 1, uniqueItems: true }),
  },
  { additionalProperties: false },
)

/** A declared capability of an Agent Card. */
export type AgentCapability = Static<typeof AgentCapability>

/**
 * An Agent Card (§6.1). Signed by an Organization service Principal over `issuedAt` (§6.4);
 * assignments pin its `cardVersion`.
 */
export const AgentCard = Type.Object(
  {
    agentId: Id,
    organizationId: Id,
    cardVersion: PositiveInteger,
    displayName: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 4000 })),
    owner: Actor,
    status: oneOfValues(AGENT_CARD_STATUSES),
    protocolVersions: Type.Array(ProtocolVersion, { minItems: 1, uniqueItems: true }),
    endpoints: Type.Array(AgentEndpoint, { minItems: 1 }),
    publicKeys: Type.Array(PublicKey, { minItems: 1 }),
    capabilities: Type.Array(AgentCapability, { minItems: 1 }),
    maxConcurrency: PositiveInteger,
    issuedAt: Timestamp,
    validUntil: Type.Optional(Timestamp),
    extensions: Type.Optional(Extensions),
    signature: Signature,
  },
  { additionalProperties: false },
)

/** An Agent Card. */
export type AgentCard = Static<typeof AgentCard>

/** `agent-card.schema.json` (§6.1, §21). */
export const agentCardDocument = document('agentCard', 'agent-card.schema.json', 'MissionWeaveProtocol 0.1 Agent Card', AgentCard)
