/**
 * The Organization a `weft serve` data directory serves: its identity file `organization.json`,
 * read into the Registry, service keys and Agent Cards the Group Authority needs.
 *
 * The file holds two Organization services with their private keys (the Authority, which signs
 * every Event, and the control plane, which opens Agent sessions and registers Agent Cards, §6.1,
 * §6.3) and the public keys of every other Principal: the humans who own Missions and the Agents
 * that connect over the WebSocket binding. Seeds are base64url (32 bytes); the file is written
 * with mode 0600 because they are secrets.
 * @module
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { readFile, stat } from 'node:fs/promises'
import { canonicalizeOrThrow, decodeBase64url, encodeBase64url, isAbsoluteUri, isProtocolTimestamp, keyPairFromSeed, Registry, sign, UsageError, type SigningKey } from '@weft/codec'
import type { Actor, AgentCard } from '@weft/spec'
import { createPrivateFile } from './files.js'

/** The `format` member of a version 1 `organization.json`. */
export const ORGANIZATION_FORMAT = 'weft.organization/1'

/** The name of the identity file inside a data directory. */
export const ORGANIZATION_FILE = 'organization.json'

/** The name of the store file inside a data directory (`@weft/store-sqlite`). */
export const STORE_FILE = 'authority.db'

/** A service whose private key lives in the file. */
export interface ServiceEntry {
  readonly id: string
  readonly keyId: string
  /** The Ed25519 seed, base64url of 32 bytes. */
  readonly seed: string
}

/**
 * What the Organization states about one of its Agents in its Agent Card (§6.1). The server adds
 * the identity members (`agentId`, `organizationId`, `publicKeys`), the version and the time, and
 * signs the card with the control plane's key.
 */
export interface CardTemplate {
  readonly displayName: string
  readonly description?: string
  /** The Principal accountable for the Agent. */
  readonly owner: Actor
  /** Default `active`; `revoked` (final) or `deprecated` stop the Agent: its sessions end and its Commands are refused (§6.1). */
  readonly status?: AgentCard['status']
  /** Default `['0.1']`. */
  readonly protocolVersions?: readonly string[]
  readonly endpoints: AgentCard['endpoints']
  readonly capabilities: AgentCard['capabilities']
  readonly maxConcurrency: number
}

/** A human, Agent or further service of the Organization, by its public key. */
export interface PrincipalEntry {
  readonly type: 'human' | 'agent' | 'service'
  readonly id: string
  readonly keyId: string
  /** The Ed25519 public key, base64url of 32 bytes. */
  readonly publicKey: string
  /** The key signs nothing dated earlier (inclusive, §6.4). Default: the file's `createdAt`. */
  readonly validFrom?: string
  /** The key signs nothing dated at or after it (exclusive, §6.4): its planned expiry. */
  readonly validUntil?: string
  /** The key was revoked: it signs nothing dated at or after it (exclusive, §6.4). */
  readonly revokedAt?: string
  /** An Agent's card (required for Agents: an unregistered Agent cannot open a session, §6.3). */
  readonly card?: CardTemplate
}

/** The contents of `organization.json`. */
export interface OrganizationFile {
  readonly format: typeof ORGANIZATION_FORMAT
  readonly organizationId: string
  /** When the file was made; the default `validFrom` of every key. */
  readonly createdAt: string
  readonly authority: ServiceEntry
  readonly controlPlane: ServiceEntry
  readonly principals: readonly PrincipalEntry[]
}

/** A service of the Organization with its signing key. */
export interface Service {
  readonly actor: { readonly type: 'service'; readonly id: string }
  readonly signingKey: SigningKey
}

/** An Organization loaded from its file: what `createAuthority` and `createWireServer` take. */
export interface Organization {
  readonly file: OrganizationFile
  readonly organizationId: string
  /** Every key binding of the file (§6.4 stage 4). */
  readonly registry: Registry
  /** The Group Authority: signs every Event. */
  readonly authority: Service
  /** The control plane: opens Agent sessions and registers Agent Cards (`policy.controlPlane`). */
  readonly controlPlane: Service
}

/**
 * Fresh identities for a new Organization: random IDs and seeds for the Authority and the control
 * plane, and no other Principal yet.
 */
export function newOrganization(now: Date = new Date()): OrganizationFile {
  const base = `urn:weft:org:${randomUUID()}`
  const service = (name: string): ServiceEntry => ({ id: `${base}:service:${name}`, keyId: `${base}:key:${name}`, seed: encodeBase64url(randomBytes(32)) })
  return {
    format: ORGANIZATION_FORMAT,
    organizationId: base,
    createdAt: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    authority: service('authority'),
    controlPlane: service('control-plane'),
    principals: [],
  }
}

/**
 * Writes `file` to `path` with mode 0600 whatever the umask (it holds private seeds).
 * @throws UsageError when `path` exists already: an Organization's keys are never replaced by accident.
 */
export async function writeOrganization(path: string, file: OrganizationFile): Promise<void> {
  try {
    createPrivateFile(path, `${JSON.stringify(file, null, 2)}\n`)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new UsageError(`${path} exists already; remove it first to start a new Organization`)
    throw error
  }
}

/** The validity boundaries of a key besides its start (§6.4). */
type Boundaries = Pick<PrincipalEntry, 'validUntil' | 'revokedAt'>

/** The boundaries `entry` states, without absent members. */
function boundaries(entry: { readonly [K in keyof Boundaries]?: string | undefined }): Boundaries {
  return { ...(entry.validUntil === undefined ? {} : { validUntil: entry.validUntil }), ...(entry.revokedAt === undefined ? {} : { revokedAt: entry.revokedAt }) }
}

/**
 * The public key binding of a key as Registry evidence (§6.4). The file states a key's current
 * boundaries, not their history, so they become one validity-status record, dated at the key's
 * `validFrom`.
 */
function binding(type: PrincipalEntry['type'], id: string, keyId: string, publicKey: string, validFrom: string, status: Boundaries = {}) {
  const stated = boundaries(status)
  const validityHistory = Object.keys(stated).length === 0 ? [] : [{ sequence: 1, recordedAt: validFrom, ...stated }]
  return { keyId, principal: { type, id }, algorithm: 'Ed25519', publicKey, validFrom, validityHistory }
}

/**
 * The public Registry evidence of the Organization: what Agents and other verifiers need to check
 * the Authority's Event signatures and each other's documents.
 */
export function registryEvidence(file: OrganizationFile) {
  const service = (entry: ServiceEntry) => binding('service', entry.id, entry.keyId, encodeBase64url(seedKey(entry, 'service').pair.publicKey), file.createdAt)
  return {
    organizationId: file.organizationId,
    bindings: [service(file.authority), service(file.controlPlane), ...file.principals.map((p) => binding(p.type, p.id, p.keyId, p.publicKey, p.validFrom ?? file.createdAt, p))],
  }
}

function seedKey(entry: ServiceEntry, path: string): SigningKey {
  const seed = decodeBase64url(entry.seed)
  if (seed?.length !== 32) throw new UsageError(`${path}.seed must be 32 bytes in base64url`)
  return { keyId: entry.keyId, pair: keyPairFromSeed(seed) }
}

/**
 * Reads and checks the Organization file at `path`.
 * @throws UsageError naming the member at fault, or the Registry problem of the key bindings.
 */
export async function loadOrganization(path: string): Promise<Organization> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new UsageError(`${path} does not exist; create it with weft serve --init`)
    throw error
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    throw new UsageError(`${path} is not JSON: ${(error as Error).message}`)
  }
  const file = checkFile(parsed)
  const registry = Registry.fromEvidence(registryEvidence(file))
  if (!registry.valid) throw new UsageError(`${path}: the key bindings are not valid Registry evidence (${registry.problem?.fault} at ${registry.problem?.path}: ${registry.problem?.detail})`)
  const service = (entry: ServiceEntry, name: string): Service => ({ actor: { type: 'service', id: entry.id }, signingKey: seedKey(entry, name) })
  return { file, organizationId: file.organizationId, registry, authority: service(file.authority, 'authority'), controlPlane: service(file.controlPlane, 'controlPlane') }
}

/** Whether the file at `path` can be read by anyone but its owner (its seeds are secrets). */
export async function readableByOthers(path: string): Promise<boolean> {
  return ((await stat(path)).mode & 0o077) !== 0
}

type Json = Record<string, unknown>

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function need(condition: boolean, message: string): asserts condition {
  if (!condition) throw new UsageError(`organization.json: ${message}`)
}

/** Refuses members of `value` outside `known`: a misspelt one (`revokedAtt`) would otherwise be dropped silently. */
function onlyKnown(value: Json, known: readonly string[], path: string): void {
  const unknown = Object.keys(value).filter((k) => !known.includes(k))
  need(unknown.length === 0, `${path} has an unknown member${unknown.length === 1 ? '' : 's'} ${unknown.map((k) => JSON.stringify(k)).join(', ')}`)
}

function timestamp(value: unknown, path: string): string | undefined {
  need(value === undefined || (typeof value === 'string' && isProtocolTimestamp(value)), `${path} must be an RFC 3339 timestamp`)
  return value
}

function uri(value: unknown, path: string): string {
  need(typeof value === 'string' && isAbsoluteUri(value), `${path} must be an absolute URI`)
  return value
}

function checkService(value: unknown, path: string): ServiceEntry {
  need(isObject(value), `${path} must be an object { id, keyId, seed }`)
  onlyKnown(value, SERVICE_MEMBERS, path)
  need(typeof value['seed'] === 'string', `${path}.seed must be a base64url string`)
  return { id: uri(value['id'], `${path}.id`), keyId: uri(value['keyId'], `${path}.keyId`), seed: value['seed'] }
}

const PRINCIPAL_TYPES: ReadonlySet<unknown> = new Set(['human', 'agent', 'service'])

const FILE_MEMBERS = ['format', 'organizationId', 'createdAt', 'authority', 'controlPlane', 'principals']
const SERVICE_MEMBERS = ['id', 'keyId', 'seed']
const PRINCIPAL_MEMBERS = ['type', 'id', 'keyId', 'publicKey', 'validFrom', 'validUntil', 'revokedAt', 'card']
const CARD_MEMBERS = ['displayName', 'description', 'owner', 'status', 'protocolVersions', 'endpoints', 'capabilities', 'maxConcurrency']

function checkPrincipal(value: unknown, path: string): PrincipalEntry {
  need(isObject(value), `${path} must be an object { type, id, keyId, publicKey, validFrom?, validUntil?, revokedAt?, card? }`)
  const { type, publicKey, card } = value
  onlyKnown(value, PRINCIPAL_MEMBERS, typeof value['id'] === 'string' ? `${path} (${value['id']})` : path)
  need(PRINCIPAL_TYPES.has(type), `${path}.type must be human, agent or service`)
  need(typeof publicKey === 'string' && decodeBase64url(publicKey)?.length === 32, `${path}.publicKey must be 32 bytes in base64url`)
  const validFrom = timestamp(value['validFrom'], `${path}.validFrom`)
  const validUntil = timestamp(value['validUntil'], `${path}.validUntil`)
  const revokedAt = timestamp(value['revokedAt'], `${path}.revokedAt`)
  // §6.3: the session_open of an Agent's handshake needs its registered card.
  need(type !== 'agent' || isObject(card), `${path}.card is required for an Agent (the Organization registers it, §6.1)`)
  need(type === 'agent' || card === undefined, `${path}.card is for Agents only`)
  if (isObject(card)) {
    onlyKnown(card, CARD_MEMBERS, `${path}.card`)
    need(typeof card['displayName'] === 'string', `${path}.card.displayName must be a string`)
    need(isObject(card['owner']), `${path}.card.owner must be an Actor { type, id }`)
    need(Array.isArray(card['endpoints']) && Array.isArray(card['capabilities']), `${path}.card needs endpoints and capabilities arrays`)
    need(Number.isSafeInteger(card['maxConcurrency']), `${path}.card.maxConcurrency must be an integer`)
  }
  return {
    type: type as PrincipalEntry['type'],
    id: uri(value['id'], `${path}.id`),
    keyId: uri(value['keyId'], `${path}.keyId`),
    publicKey,
    ...(validFrom === undefined ? {} : { validFrom }),
    ...boundaries({ validUntil, revokedAt }),
    ...(isObject(card) ? { card: card as unknown as CardTemplate } : {}),
  }
}

function checkFile(value: unknown): OrganizationFile {
  need(isObject(value), 'the file must hold one JSON object')
  onlyKnown(value, FILE_MEMBERS, 'the file')
  need(value['format'] === ORGANIZATION_FORMAT, `format must be "${ORGANIZATION_FORMAT}"`)
  const { createdAt, principals } = value
  need(typeof createdAt === 'string' && isProtocolTimestamp(createdAt), 'createdAt must be an RFC 3339 timestamp')
  need(principals === undefined || Array.isArray(principals), 'principals must be an array')
  return {
    format: ORGANIZATION_FORMAT,
    organizationId: uri(value['organizationId'], 'organizationId'),
    createdAt,
    authority: checkService(value['authority'], 'authority'),
    controlPlane: checkService(value['controlPlane'], 'controlPlane'),
    principals: (principals ?? []).map((p: unknown, i: number) => checkPrincipal(p, `principals[${i}]`)),
  }
}

/** The members of a card that are the Organization's statement, not its version or signature. */
function cardContent(card: Omit<AgentCard, 'signature'> | AgentCard): string {
  const { cardVersion: _version, issuedAt: _issuedAt, signature: _signature, ...content } = card as AgentCard
  return Buffer.from(canonicalizeOrThrow(content)).toString('utf8')
}

/**
 * The Agent Cards to register so the Registry matches the file (§6.1): for each Agent whose card
 * is absent from `registered` or says something else, its next version, signed by the control plane.
 * @param registered - The current card of each registered Agent, by Agent ID.
 * @param issuedAt - The cards' issue time (§2 timestamp).
 */
export function cardsToRegister(org: Organization, registered: (agentId: string) => AgentCard | undefined, issuedAt: string): AgentCard[] {
  const cards: AgentCard[] = []
  for (const p of org.file.principals) {
    if (p.type !== 'agent' || p.card === undefined) continue
    const current = registered(p.id)
    const t = p.card
    const content = {
      agentId: p.id,
      organizationId: org.organizationId,
      cardVersion: (current?.cardVersion ?? 0) + 1,
      displayName: t.displayName,
      ...(t.description === undefined ? {} : { description: t.description }),
      owner: t.owner,
      status: t.status ?? 'active',
      protocolVersions: t.protocolVersions ?? ['0.1'],
      endpoints: t.endpoints,
      // §6.1: the card states the key's boundaries too, so revoking a key issues a new card version.
      publicKeys: [{ keyId: p.keyId, algorithm: 'Ed25519', publicKey: p.publicKey, validFrom: p.validFrom ?? org.file.createdAt, ...boundaries(p) }],
      capabilities: t.capabilities,
      maxConcurrency: t.maxConcurrency,
      issuedAt,
    }
    if (current !== undefined && cardContent(current) === cardContent(content as Omit<AgentCard, 'signature'>)) continue
    cards.push(sign('agent-card', content, org.controlPlane.signingKey) as unknown as AgentCard)
  }
  return cards
}
