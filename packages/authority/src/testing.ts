/**
 * `@weft/authority/testing`: the Organization a test or an example needs, in one call.
 *
 * Every consumer of the Authority starts the same way: Ed25519 keys for its humans, Agents and
 * services, a Registry binding them (§6.4), an Agent Card per Agent signed by the control plane
 * (§6.1), an Authority whose policy names that control plane, the cards registered, a session
 * opened per Agent (§6.3), and a client per Principal that learns its epochs from every receipt.
 * {@link createTestOrganization} does all of it from a list of names.
 *
 * The keys are derived from the Organization ID and the names, so every run has the same
 * identities: they are test keys and protect nothing.
 *
 * @example
 * ```ts
 * import { createTestOrganization } from '@weft/authority/testing'
 *
 * const org = createTestOrganization({ humans: ['owner'], agents: ['coordinator', 'worker'] })
 * const { authority, clientOf } = await org.start({ groupId: 'urn:example:group:1' })
 * await clientOf(org.humans.owner).missionCreate(payload) // coordinatorAgentId: org.agents.coordinator.actor.id
 * ```
 * @packageDocumentation
 */
import { createHash } from 'node:crypto'
import { createClient, type Client, type Transport } from '@weft/client'
import { encodeBase64url, isAbsoluteUri, isProtocolTimestamp, keyPairFromSeed, Registry, sign, UsageError, type SigningKey } from '@weft/codec'
import type { Actor, AgentCapability, AgentCard, CapabilityRef } from '@weft/spec'
import { createAuthority } from './authority.js'
import type { Clock } from '@weft/codec/time'
import type { Authority, AuthorityOptions } from './commit/pipeline.js'

/** The capability of an Agent whose spec names none: every Agent Card states at least one (§6.1). */
export const TEST_CAPABILITY: CapabilityRef = Object.freeze({ id: 'weft.test.general', version: '1.0.0' })

/** A Principal of a test Organization with its signing key. */
export interface TestPrincipal<T extends Actor['type'] = Actor['type']> {
  /** The name it was given; the last segment of its ID. */
  readonly name: string
  readonly actor: { readonly type: T; readonly id: string }
  readonly signingKey: SigningKey
  /**
   * The RFC 8032 seed of its key (32 bytes, a fresh copy on every read): what a key file holds, for a test
   * that signs where no `SigningKey` object can go, such as a web page that imports the key into
   * WebCrypto. Test keys protect nothing.
   */
  readonly seed: Uint8Array
}

/** An Agent of a test Organization: its key and the Agent Card the control plane signed for it. */
export interface TestAgent extends TestPrincipal<'agent'> {
  readonly card: AgentCard
}

/** What an Agent's card states besides its identity (§6.1). */
export interface TestAgentSpec<N extends string = string> {
  readonly name: N
  /**
   * Its capabilities: `{ id, version }` (the schemas, their hashes and the verification Evidence
   * are made up from the ID) or complete Agent Card capabilities. Default: {@link TEST_CAPABILITY}.
   */
  readonly capabilities?: readonly (CapabilityRef | AgentCapability)[]
  /** Its isolated execution slots. Default 1. */
  readonly maxConcurrency?: number
  /** The name of the human accountable for it. Default: the first human, or the control plane when there is none. */
  readonly owner?: string
  /** Default `active`; `deprecated` or `revoked` stop the Agent (§6.1). */
  readonly status?: AgentCard['status']
}

/** The names of a test Organization's Principals. */
export interface TestOrganizationOptions<H extends string = string, A extends string = string, S extends string = string> {
  /** Default `urn:weft:test:org`; every ID and key ID starts with it. */
  readonly organizationId?: string
  /** The humans (MissionOwners, approvers). */
  readonly humans?: readonly H[]
  /** The Agents, by name or with what their cards state. */
  readonly agents?: readonly (A | TestAgentSpec<A>)[]
  /** Further Organization services besides the Authority's own and the control plane. */
  readonly services?: readonly S[]
  /** When every key becomes valid and every card is issued (§6.4). Default `2026-01-01T00:00:00Z`. */
  readonly validFrom?: string
}

/** What {@link TestOrganization.open} and {@link TestOrganization.start} do besides creating the Authority. */
export interface TestOpenOptions {
  /** The Group that Group-scoped Commands of the clients name when their options name none. */
  readonly groupId?: string
  /** Open a session for every Agent, as the control plane does after a HELLO (§6.3). Default `true`. */
  readonly sessions?: boolean
  /** The clients' time for `issuedAt`; for `start`, the Authority's clock too. Default: the wall clock. */
  readonly clock?: Clock
}

/** The client of a Principal of the Organization; the same client on every call. */
export type ClientOf = (who: TestPrincipal) => Client

/** A started test Organization: its Authority and a client per Principal. */
export interface TestSession {
  readonly authority: Authority
  readonly clientOf: ClientOf
}

/** The Organization {@link createTestOrganization} made: Principals, keys, Registry and cards. */
export interface TestOrganization<H extends string = string, A extends string = string, S extends string = string> {
  readonly organizationId: string
  readonly humans: { readonly [K in H]: TestPrincipal<'human'> }
  readonly agents: { readonly [K in A]: TestAgent }
  readonly services: { readonly [K in S]: TestPrincipal<'service'> }
  /** The Authority's own service, `authority`: it signs every Event. */
  readonly authorityService: TestPrincipal<'service'>
  /** The control plane, `control-plane`: it signs the Agent Cards, registers them and opens sessions (`policy.controlPlane`). */
  readonly controlPlane: TestPrincipal<'service'>
  /** Every Principal: the humans, the Agents, the services, the control plane and the Authority's service. */
  readonly everyone: readonly TestPrincipal[]
  /** The Registry evidence binding every key, valid from `validFrom` (§6.4 stage 4). */
  readonly registry: Registry
  /** What `createAuthority` needs of the Organization: `{ ...org.authorityOptions, store }` and so on. */
  readonly authorityOptions: Pick<AuthorityOptions, 'registry' | 'keys'> & { readonly policy: { readonly controlPlane: readonly string[] } }
  /**
   * Registers every Agent Card on `authority` as the control plane and, unless `sessions` is
   * `false`, opens a session per Agent; resolves with the clients, which saw those receipts.
   */
  open(authority: Authority, options?: TestOpenOptions): Promise<ClientOf>
  /** Creates an Authority for the Organization (`options` added to {@link authorityOptions}) and {@link open}s it. */
  start(options?: Partial<Omit<AuthorityOptions, 'registry' | 'keys'>> & TestOpenOptions): Promise<TestSession>
}

const DEFAULT_ORGANIZATION = 'urn:weft:test:org'
const DEFAULT_VALID_FROM = '2026-01-01T00:00:00Z'

/** `sha256:` of `text`, to fill a capability's schema hashes. */
function hashOf(text: string): string {
  return `sha256:${createHash('sha256').update(text).digest('hex')}`
}

/**
 * Builds a test Organization from the names of its Principals: a key for each (derived from the
 * Organization ID, type and name, so reproducible), the Registry binding them all, the Authority's
 * service and the control plane, and an Agent Card per Agent signed by the control plane. Nothing
 * runs until {@link TestOrganization.start} or {@link TestOrganization.open}.
 * @throws UsageError for a name given twice within a type (the services `authority` and
 * `control-plane` are taken), an Agent's owner that is not one of the humans, a bad `organizationId`
 * or `validFrom`.
 * @example
 * ```ts
 * const org = createTestOrganization({ humans: ['owner'], agents: ['coordinator', { name: 'worker', capabilities: [{ id: 'example.build', version: '1.0.0' }] }] })
 * const { authority, clientOf } = await org.start({ groupId })
 * org.agents.worker.card // the Agent Card, registered; org.registry binds org.agents.worker.signingKey
 * ```
 */
export function createTestOrganization<const H extends string = never, const A extends string = never, const S extends string = never>(
  options: TestOrganizationOptions<H, A, S> = {},
): TestOrganization<H, A, S> {
  const organizationId = options.organizationId ?? DEFAULT_ORGANIZATION
  const validFrom = options.validFrom ?? DEFAULT_VALID_FROM
  if (!isAbsoluteUri(organizationId)) throw new UsageError(`createTestOrganization: organizationId must be an absolute URI, got ${JSON.stringify(organizationId)}`)
  if (!isProtocolTimestamp(validFrom)) throw new UsageError(`createTestOrganization: validFrom must be an RFC 3339 UTC timestamp, got ${JSON.stringify(validFrom)}`)

  const principal = <T extends Actor['type']>(type: T, name: string): TestPrincipal<T> => {
    // Distinct Organizations get distinct keys: §6.4 forbids one public key under two Principals.
    const seed = createHash('sha256').update(`weft-test-key\u0000${organizationId}\u0000${type}\u0000${name}`).digest()
    return Object.freeze({
      name,
      actor: Object.freeze({ type, id: `${organizationId}:${type}:${name}` }),
      signingKey: Object.freeze({ keyId: `${organizationId}:key:${type}:${name}`, pair: keyPairFromSeed(seed) }),
      get seed(): Uint8Array {
        return Uint8Array.from(seed)
      },
    })
  }
  const byName = <T extends Actor['type'], P extends TestPrincipal<T>>(type: T, names: readonly string[], make: (name: string) => P, taken: readonly string[] = []): Record<string, P> => {
    const out: Record<string, P> = {}
    for (const name of names) {
      if (name in out || taken.includes(name)) throw new UsageError(`createTestOrganization: the ${type} name ${JSON.stringify(name)} is given twice or taken`)
      out[name] = make(name)
    }
    return Object.freeze(out)
  }

  const authorityService = principal('service', 'authority')
  const controlPlane = principal('service', 'control-plane')
  const services = byName('service', options.services ?? [], (name) => principal('service', name), ['authority', 'control-plane'])
  const humans = byName('human', options.humans ?? [], (name) => principal('human', name))
  const firstHuman = Object.values(humans)[0]
  const specs: readonly TestAgentSpec[] = (options.agents ?? []).map((a) => (typeof a === 'string' ? { name: a } : a))

  const card = (agent: TestPrincipal<'agent'>, spec: TestAgentSpec): AgentCard => {
    const owner = spec.owner === undefined ? (firstHuman ?? controlPlane) : humans[spec.owner]
    if (owner === undefined) throw new UsageError(`createTestOrganization: the owner ${JSON.stringify(spec.owner)} of Agent ${agent.name} is not one of the humans`)
    const capabilities = (spec.capabilities ?? [TEST_CAPABILITY]).map(
      (c): AgentCapability =>
        'inputSchema' in c
          ? c
          : {
              id: c.id,
              version: c.version,
              inputSchema: `${organizationId}:schema:${c.id}:input`,
              inputSchemaHash: hashOf(`${c.id} ${c.version} input`),
              outputSchema: `${organizationId}:schema:${c.id}:output`,
              outputSchemaHash: hashOf(`${c.id} ${c.version} output`),
              constraints: {},
              verifiedEvidence: [`${organizationId}:evidence:${agent.name}:${c.id}`],
            },
    )
    const content: Omit<AgentCard, 'signature'> = {
      agentId: agent.actor.id,
      organizationId,
      cardVersion: 1,
      displayName: agent.name,
      owner: owner.actor,
      status: spec.status ?? 'active',
      protocolVersions: ['0.1'],
      endpoints: [{ transport: 'wss', uri: `wss://agents.test.invalid/${agent.name}` }],
      publicKeys: [{ keyId: agent.signingKey.keyId, algorithm: 'Ed25519', publicKey: encodeBase64url(agent.signingKey.pair.publicKey), validFrom }],
      capabilities,
      maxConcurrency: spec.maxConcurrency ?? 1,
      issuedAt: validFrom,
    }
    // §6.1: the Organization issues and signs the card; the control plane is its issuing service.
    return sign('agent-card', content, controlPlane.signingKey) as unknown as AgentCard
  }
  const agentSpecs = new Map(specs.map((s) => [s.name, s]))
  const agents = byName(
    'agent',
    specs.map((s) => s.name),
    (name): TestAgent => {
      const base = principal('agent', name)
      // Not a spread: it would turn the `seed` getter into one shared array.
      return Object.freeze({
        name: base.name,
        actor: base.actor,
        signingKey: base.signingKey,
        get seed(): Uint8Array {
          return base.seed
        },
        card: card(base, agentSpecs.get(name)!),
      })
    },
  )

  const everyone: readonly TestPrincipal[] = Object.freeze([...Object.values(humans), ...Object.values(agents), ...Object.values(services), controlPlane, authorityService])
  const registry = Registry.fromEvidence({
    organizationId,
    bindings: everyone.map((p) => ({ keyId: p.signingKey.keyId, principal: p.actor, algorithm: 'Ed25519', publicKey: encodeBase64url(p.signingKey.pair.publicKey), validFrom, validityHistory: [] })),
  })
  if (!registry.valid) throw new UsageError(`createTestOrganization: the Registry evidence is refused (${registry.problem?.fault} at ${registry.problem?.path}: ${registry.problem?.detail})`)
  const authorityOptions = Object.freeze({
    registry,
    keys: { authority: authorityService.actor, signingKey: authorityService.signingKey },
    policy: Object.freeze({ controlPlane: Object.freeze([controlPlane.actor.id]) }),
  })

  const open = async (authority: Authority, openOptions: TestOpenOptions = {}): Promise<ClientOf> => {
    const inner = authority.connect()
    const clients = new Map<TestPrincipal, Client>()
    // Every receipt is shown to every client, as a subscription would show it, so each learns the
    // Session and Membership Epochs its next Command must carry (§6.3, §8).
    const transport: Transport = {
      async submit(command, bytes) {
        const receipt = await inner.submit(command, bytes)
        for (const c of clients.values()) c.observe(receipt.events)
        return receipt
      },
    }
    const clock = openOptions.clock
    // The Authority's service signs Events, never Commands: it gets no client.
    for (const p of everyone) {
      if (p === authorityService) continue
      clients.set(
        p,
        createClient({
          actor: p.actor,
          signingKey: p.signingKey,
          transport,
          ...(openOptions.groupId === undefined ? {} : { groupId: openOptions.groupId }),
          ...(clock === undefined ? {} : { clock }),
        }),
      )
    }
    const registrar = clients.get(controlPlane)!
    for (const agent of Object.values<TestAgent>(agents)) await registrar.registryAgentCardRegister({ card: agent.card })
    if (openOptions.sessions !== false) for (const agent of Object.values<TestAgent>(agents)) await registrar.identitySessionOpen({ agentId: agent.actor.id })
    return (who) => {
      const client = clients.get(who)
      if (client === undefined) throw new UsageError(`${who.actor.id} has no client: it is not a Principal of ${organizationId} that signs Commands`)
      return client
    }
  }

  return Object.freeze({
    organizationId,
    humans: humans as TestOrganization<H, A, S>['humans'],
    agents: agents as TestOrganization<H, A, S>['agents'],
    services: services as TestOrganization<H, A, S>['services'],
    authorityService,
    controlPlane,
    everyone,
    registry,
    authorityOptions,
    open,
    async start(startOptions: Partial<Omit<AuthorityOptions, 'registry' | 'keys'>> & TestOpenOptions = {}): Promise<TestSession> {
      // One `clock` serves both: the Authority's time and the clients' `issuedAt`.
      const { groupId, sessions, ...rest } = startOptions
      const authority = createAuthority({ ...rest, registry, keys: authorityOptions.keys, policy: { ...rest.policy, controlPlane: rest.policy?.controlPlane ?? authorityOptions.policy.controlPlane } })
      const clock = rest.clock
      const clientOf = await open(authority, { ...(groupId === undefined ? {} : { groupId }), ...(sessions === undefined ? {} : { sessions }), ...(clock === undefined ? {} : { clock }) })
      return { authority, clientOf }
    },
  })
}
