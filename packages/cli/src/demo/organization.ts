/**
 * The demo's one Organization (§22: one Organization, one logical Group service): its Principals
 * with Ed25519 keys, the Registry evidence binding those keys (§6.4 stage 4), and the Agent
 * Cards its registry service signs (§6.1). Keys are derived from names, so every run of the demo
 * has the same identities; they are demo keys and protect nothing.
 * @module
 */
import { createHash } from 'node:crypto'
import { encodeBase64url, keyPairFromSeed, Registry, sign, type SigningKey } from '@weft/codec'
import type { Actor, AgentCard, CapabilityRef } from '@weft/spec'

/** The Organization's ID. */
export const ORGANIZATION_ID = 'urn:weft:demo:org'

/** When the demo's keys and cards became valid. */
/** When every demo key becomes valid (§6.4). */
export const VALID_FROM = '2026-01-01T00:00:00Z'

/** A Principal of the Organization with its signing key. */
export interface Principal {
  /** A short display name, e.g. `ada`. */
  readonly name: string
  readonly actor: Actor & { readonly type: 'agent' | 'human' | 'service' }
  readonly key: SigningKey
}

/** An Agent Principal. */
export type AgentPrincipal = Principal & { readonly actor: { readonly type: 'agent'; readonly id: string } }

/** A human Principal. */
export type HumanPrincipal = Principal & { readonly actor: { readonly type: 'human'; readonly id: string } }

/** A service Principal. */
export type ServicePrincipal = Principal & { readonly actor: { readonly type: 'service'; readonly id: string } }

/**
 * The Ed25519 seed of the demo Principal `name`: derived from its name, so a run is reproducible
 * and its keys are no secret (the demo is a loopback proof of concept, never a deployment).
 */
export function demoSeed(type: 'agent' | 'human' | 'service', name: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(`weft-demo-key\u0000${type}\u0000${name}`).digest())
}

function principal<T extends 'agent' | 'human' | 'service'>(type: T, name: string): Principal & { readonly actor: { readonly type: T; readonly id: string } } {
  const seed = demoSeed(type, name)
  return { name, actor: { type, id: `urn:weft:demo:${type}:${name}` }, key: { keyId: `urn:weft:demo:key:${type}:${name}`, pair: keyPairFromSeed(seed) } }
}

/** An Agent of the Organization named `name`. */
export function agentPrincipal(name: string): AgentPrincipal {
  return principal('agent', name)
}

/** A human of the Organization named `name`. */
export function humanPrincipal(name: string): HumanPrincipal {
  return principal('human', name)
}

/** A service of the Organization named `name` (the Authority, the control plane, the registry). */
export function servicePrincipal(name: string): ServicePrincipal {
  return principal('service', name)
}

/**
 * The Registry evidence binding every Principal's key (§6.4 stage 4).
 * @throws Error when the evidence is rejected (a programming error of the caller).
 */
export function registryOf(principals: readonly Principal[]): Registry {
  const bindings = principals.map((p) => ({
    keyId: p.key.keyId,
    principal: p.actor,
    algorithm: 'Ed25519',
    publicKey: encodeBase64url(p.key.pair.publicKey),
    validFrom: VALID_FROM,
    validityHistory: [],
  }))
  const result = Registry.fromEvidence({ organizationId: ORGANIZATION_ID, bindings })
  if (!(result instanceof Registry)) throw new Error(`the demo Registry evidence was rejected: ${JSON.stringify(result)}`)
  return result
}

/** What an Agent Card declares besides its identity (§6.1, §11.1). */
export interface CardSpec {
  readonly capabilities: readonly CapabilityRef[]
  /** Declared isolated execution slots. */
  readonly maxConcurrency: number
  readonly description: string
}

/** The Agent Card of `agent`, signed by the Organization's `registry` service on behalf of `owner` (§6.1). */
export function agentCard(agent: AgentPrincipal, spec: CardSpec, owner: Actor, registry: ServicePrincipal, issuedAt: string): AgentCard {
  const hash = (text: string): string => `sha256:${createHash('sha256').update(text).digest('hex')}`
  return sign(
    'agent-card',
    {
      agentId: agent.actor.id,
      organizationId: ORGANIZATION_ID,
      cardVersion: 1,
      displayName: agent.name,
      description: spec.description,
      owner,
      status: 'active',
      protocolVersions: ['0.1'],
      endpoints: [{ transport: 'wss', uri: `wss://agents.demo.invalid/${agent.name}` }],
      publicKeys: [{ keyId: agent.key.keyId, algorithm: 'Ed25519', publicKey: encodeBase64url(agent.key.pair.publicKey), validFrom: VALID_FROM }],
      capabilities: spec.capabilities.map((c) => ({
        id: c.id,
        version: c.version,
        inputSchema: `urn:weft:demo:schema:${c.id}:input`,
        inputSchemaHash: hash(`${c.id} input`),
        outputSchema: `urn:weft:demo:schema:${c.id}:output`,
        outputSchemaHash: hash(`${c.id} output`),
        constraints: {},
        verifiedEvidence: [`urn:weft:demo:evidence:${agent.name}:${c.id}`],
      })),
      maxConcurrency: spec.maxConcurrency,
      issuedAt,
    },
    registry.key,
  ) as unknown as AgentCard
}
