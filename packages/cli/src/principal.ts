/**
 * `weft principal add|list`: registers a human or an Agent of the Organization in a data
 * directory's `organization.json` without anyone hand-editing keys into it.
 *
 * `add` generates a fresh Ed25519 key pair. The private key goes to a key file of the person's own
 * (mode 0600, created, never overwritten); only the public part goes into `organization.json`:
 * the ID, a new key ID (§6.4: a key ID is never reused), the public key, `validFrom`, and for an
 * Agent the card the Organization states about it (§6.1). The file is replaced atomically (a
 * temporary file in the same directory, then a rename), so a server starting at that moment reads
 * the old file or the new one, never half of one.
 *
 * `weft serve` reads `organization.json` once, when it starts: a running server learns of the new
 * principal on its next start, which is also when it registers the new Agent Card.
 * @module
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { closeSync, fchmodSync, fsyncSync, openSync, writeSync } from 'node:fs'
import { readFile, rename, unlink } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { parseArgs } from 'node:util'
import { createAuthority } from '@weft/authority'
import { createClient } from '@weft/client'
import { decodeBase64url, encodeBase64url, isAbsoluteUri, isProtocolTimestamp, keyPairFromSeed, ProtocolError, UsageError, type SigningKey } from '@weft/codec'
import type { Actor, AgentCard } from '@weft/spec'
import { cardsToRegister, loadOrganization, ORGANIZATION_FILE, type CardTemplate, type Organization, type OrganizationFile, type PrincipalEntry } from './serve/organization.js'

/** The `format` member of a version 1 key file. */
export const KEY_FILE_FORMAT = 'weft.key/1'

/**
 * A key file as `weft principal add` writes it (JSON, mode 0600): one Principal's Ed25519 private
 * key, with what a program needs to sign as that Principal. Load it with {@link readKeyFile}, or
 * with `@weft/codec` alone: `keyPairFromSeed(decodeBase64url(file.seed))`.
 */
export interface KeyFile {
  readonly format: typeof KEY_FILE_FORMAT
  readonly organizationId: string
  /** Who signs with the key: the `actor` of its Commands, the `agentId` of its HELLO. */
  readonly principal: { readonly type: 'human' | 'agent'; readonly id: string }
  /** The key's ID in the Organization's Registry, the `signature.keyId` of what it signs. */
  readonly keyId: string
  /** The Ed25519 public key, base64url of 32 bytes, as `organization.json` binds it. */
  readonly publicKey: string
  /** The private key: the RFC 8032 Ed25519 seed, base64url of 32 bytes. A secret. */
  readonly seed: string
  /** The key signs nothing dated earlier (§6.4). */
  readonly validFrom: string
  /** The key signs nothing dated at or after it (§6.4), when it has a planned expiry. */
  readonly validUntil?: string
}

/** A Principal's identity and signing key, as read from its key file. */
export interface LoadedKey {
  readonly organizationId: string
  readonly actor: KeyFile['principal']
  readonly signingKey: SigningKey
}

/**
 * Reads the key file at `path` (written by `weft principal add`) into the `actor` and
 * `signingKey` that `createClient` and `connectWebSocket` take.
 * @throws UsageError when the file is not a key file of this format or its key does not match its public key.
 * @example
 * ```ts
 * const { actor, signingKey } = await readKeyFile('ada.key.json')
 * const ada = createClient({ actor, signingKey, transport: controlTransport('http://127.0.0.1:7444') })
 * ```
 */
export async function readKeyFile(path: string): Promise<LoadedKey> {
  let value: unknown
  try {
    value = JSON.parse(await readFile(path, 'utf8'))
  } catch (error) {
    throw new UsageError(`${path} is not a readable key file: ${(error as Error).message}`)
  }
  const file = value as Partial<KeyFile> | null
  const principal = file?.principal
  if (file?.format !== KEY_FILE_FORMAT || (principal?.type !== 'human' && principal?.type !== 'agent') || typeof principal.id !== 'string' || typeof file.keyId !== 'string') {
    throw new UsageError(`${path} is not a ${KEY_FILE_FORMAT} key file`)
  }
  const seed = typeof file.seed === 'string' ? decodeBase64url(file.seed) : undefined
  if (seed?.length !== 32) throw new UsageError(`${path}: seed must be 32 bytes in base64url`)
  const pair = keyPairFromSeed(seed)
  if (encodeBase64url(pair.publicKey) !== file.publicKey) throw new UsageError(`${path}: the seed does not belong to publicKey`)
  return { organizationId: String(file.organizationId), actor: { type: principal.type, id: principal.id }, signingKey: { keyId: file.keyId, pair } }
}

// ---------------------------------------------------------------------------------------------
// Files
// ---------------------------------------------------------------------------------------------

/**
 * Creates `path` with mode 0600 (set on the descriptor, so the umask cannot widen it) holding
 * `text`, flushed to disk before it returns.
 * @throws the `node:fs` error; `EEXIST` when `path` exists, which is left as it was.
 */
function createPrivateFileSynced(path: string, text: string): void {
  const fd = openSync(path, 'wx', 0o600)
  try {
    fchmodSync(fd, 0o600)
    writeSync(fd, text)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/** Flushes the directory entry of a rename; some file systems refuse it on directories, which costs only durability, not correctness. */
function syncDirectory(dir: string): void {
  try {
    const fd = openSync(dir, 'r')
    try {
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
  } catch {
    // Best effort, see above.
  }
}

async function removeQuietly(path: string): Promise<void> {
  await unlink(path).catch(() => undefined)
}

// ---------------------------------------------------------------------------------------------
// weft principal add
// ---------------------------------------------------------------------------------------------

/** Names become file names and the last segment of IDs, so they stay to a portable alphabet. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/** The pattern of a capability ID in the Agent Card schema (§6.1). */
const CAPABILITY_ID = /^[a-z0-9]+(?:[.-][a-z0-9]+)+$/

/** Semantic Versioning 2.0.0, as the schema's `semver` reads it. */
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/

/** What the short form `--capability ID@VERSION` states as both schemas: the empty JSON Schema, which any value satisfies. */
const ANY_SCHEMA = 'urn:weft:schema:any'
const ANY_SCHEMA_HASH = `sha256:${createHash('sha256').update('{}').digest('hex')}`

const AGENT_OPTIONS = ['display-name', 'description', 'owner', 'capability', 'max-concurrency', 'endpoint'] as const

/** `ms` as a second-precision RFC 3339 UTC timestamp (§2). */
function secondsOf(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')
}

interface AddRequest {
  readonly type: 'human' | 'agent'
  readonly dataDir: string
  readonly name: string
  readonly id?: string
  readonly keyOut: string
  readonly validFrom: string
  readonly validUntil?: string
  readonly agent?: {
    readonly displayName: string
    readonly description?: string
    readonly owner?: string
    readonly capabilities: readonly { readonly id: string; readonly version: string }[]
    readonly maxConcurrency: number
    readonly endpoints: readonly string[]
  }
}

function parseAdd(args: readonly string[], now: number): AddRequest {
  const { values, positionals } = parseArgs({
    args: [...args],
    strict: true,
    allowPositionals: true,
    options: {
      data: { type: 'string' },
      name: { type: 'string' },
      id: { type: 'string' },
      'key-out': { type: 'string' },
      'valid-from': { type: 'string' },
      'valid-until': { type: 'string' },
      'display-name': { type: 'string' },
      description: { type: 'string' },
      owner: { type: 'string' },
      capability: { type: 'string', multiple: true },
      'max-concurrency': { type: 'string' },
      endpoint: { type: 'string', multiple: true },
    },
  })
  const [type, ...extra] = positionals
  if (type !== 'human' && type !== 'agent') throw new UsageError(`add takes human or agent, got ${type ?? 'nothing'}`)
  if (extra.length > 0) throw new UsageError(`unexpected argument ${extra[0]}`)
  if (values.data === undefined) throw new UsageError('--data DIR is required')
  if (values.name === undefined) throw new UsageError('--name NAME is required')
  if (!NAME.test(values.name)) throw new UsageError(`--name must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit; got ${JSON.stringify(values.name)}`)
  if (values.id !== undefined && !isAbsoluteUri(values.id)) throw new UsageError(`--id must be an absolute URI, got ${JSON.stringify(values.id)}`)
  const validFrom = values['valid-from'] ?? secondsOf(now)
  if (!isProtocolTimestamp(validFrom)) throw new UsageError(`--valid-from must be an RFC 3339 UTC timestamp, got ${validFrom}`)
  const validUntil = values['valid-until']
  if (validUntil !== undefined && !(isProtocolTimestamp(validUntil) && Date.parse(validUntil) > Date.parse(validFrom)))
    throw new UsageError(`--valid-until must be an RFC 3339 UTC timestamp after ${validFrom}, got ${validUntil}`)
  const base: AddRequest = {
    type: type as AddRequest['type'],
    dataDir: values.data,
    name: values.name,
    ...(values.id === undefined ? {} : { id: values.id }),
    keyOut: values['key-out'] ?? `${values.name}.key.json`,
    validFrom,
    ...(validUntil === undefined ? {} : { validUntil }),
  }
  if (type === 'human') {
    const misplaced = AGENT_OPTIONS.find((option) => values[option] !== undefined)
    if (misplaced !== undefined) throw new UsageError(`--${misplaced} is for Agents only`)
    return base
  }
  const capabilities = (values.capability ?? []).map((text) => {
    const at = text.lastIndexOf('@')
    const [id, version] = [text.slice(0, at), text.slice(at + 1)]
    if (at < 0 || !CAPABILITY_ID.test(id) || !SEMVER.test(version))
      throw new UsageError(`--capability ${text}: expected ID@VERSION, an ID like example.build (lower case, dotted) and a semantic version like 1.0.0`)
    return { id, version }
  })
  // §6.1: an Agent Card states at least one governed capability.
  if (capabilities.length === 0) throw new UsageError('--capability ID@VERSION is required for an Agent (repeat it for several)')
  const maxConcurrency = values['max-concurrency'] === undefined ? 1 : Number(values['max-concurrency'])
  if (!Number.isSafeInteger(maxConcurrency) || maxConcurrency < 1) throw new UsageError(`--max-concurrency must be a positive integer, got ${values['max-concurrency']}`)
  const endpoints = values.endpoint ?? [`wss://agents.invalid/${values.name}`]
  // §17.1: v0.1 Agents are reached over WebSocket with TLS only.
  for (const uri of endpoints) if (!uri.startsWith('wss://') || !isAbsoluteUri(uri)) throw new UsageError(`--endpoint must be a wss:// URI, got ${uri}`)
  return {
    ...base,
    agent: {
      displayName: values['display-name'] ?? values.name,
      ...(values.description === undefined ? {} : { description: values.description }),
      ...(values.owner === undefined ? {} : { owner: values.owner }),
      capabilities,
      maxConcurrency,
      endpoints,
    },
  }
}

/** Every ID and key of the file, services included, with what holds it. */
function taken(file: OrganizationFile): { readonly ids: Map<string, string>; readonly keys: Map<string, string> } {
  const ids = new Map<string, string>([
    [file.authority.id, 'the Authority service'],
    [file.controlPlane.id, 'the control plane service'],
  ])
  const keys = new Map<string, string>([
    [file.authority.keyId, file.authority.id],
    [file.controlPlane.keyId, file.controlPlane.id],
  ])
  for (const p of file.principals) {
    ids.set(p.id, `a ${p.type}`)
    keys.set(p.keyId, p.id)
    keys.set(p.publicKey, p.id)
  }
  return { ids, keys }
}

/** The accountable owner of a new Agent's card: `--owner`, or the file's only human. */
function ownerOf(file: OrganizationFile, owner: string | undefined): Actor {
  if (owner !== undefined) {
    const services = [file.authority.id, file.controlPlane.id]
    const entry = file.principals.find((p) => p.id === owner)
    if (entry !== undefined) return { type: entry.type, id: entry.id }
    if (services.includes(owner)) return { type: 'service', id: owner }
    throw new UsageError(`--owner ${owner} is not a principal of the Organization; add the human first (weft principal add human)`)
  }
  const humans = file.principals.filter((p) => p.type === 'human')
  if (humans.length === 1) return { type: 'human', id: humans[0]!.id }
  throw new UsageError(
    humans.length === 0
      ? '--owner ID is required: no human in organization.json is accountable for the Agent yet (weft principal add human first)'
      : `--owner ID is required: organization.json has ${humans.length} humans (${humans.map((h) => h.id).join(', ')})`,
  )
}

/** The card template of `--capability`, `--endpoint` and the rest (§6.1). */
function cardTemplate(file: OrganizationFile, name: string, agent: NonNullable<AddRequest['agent']>): CardTemplate {
  return {
    displayName: agent.displayName,
    ...(agent.description === undefined ? {} : { description: agent.description }),
    owner: ownerOf(file, agent.owner),
    endpoints: agent.endpoints.map((uri) => ({ transport: 'wss', uri })),
    capabilities: agent.capabilities.map(({ id, version }) => ({
      id,
      version,
      inputSchema: ANY_SCHEMA,
      inputSchemaHash: ANY_SCHEMA_HASH,
      outputSchema: ANY_SCHEMA,
      outputSchemaHash: ANY_SCHEMA_HASH,
      constraints: {},
      // The Organization's own statement is the Evidence behind a capability declared this way.
      verifiedEvidence: [`${file.organizationId}:evidence:declared:${name}:${id}:${version}`],
    })),
    maxConcurrency: agent.maxConcurrency,
  }
}

/**
 * Registers the new Agent's card on a throwaway in-memory Authority of the new file, as
 * `weft serve` will on its next start: a card it would refuse (a schema rule, a key) is refused now,
 * before anything is written, instead of stopping the server later.
 */
async function rehearseCard(org: Organization, agentId: string, now: number): Promise<void> {
  const authority = createAuthority({ registry: org.registry, keys: { authority: org.authority.actor, signingKey: org.authority.signingKey }, policy: { controlPlane: [org.controlPlane.actor.id] } })
  const card = cardsToRegister(org, () => undefined, secondsOf(now)).find((c: AgentCard) => c.agentId === agentId)
  if (card === undefined) throw new Error(`no card was stated for ${agentId}`)
  const registrar = createClient({ actor: org.controlPlane.actor, signingKey: org.controlPlane.signingKey, transport: authority.connect() })
  try {
    await registrar.registryAgentCardRegister({ card })
  } catch (error) {
    const refusal = ProtocolError.from(error)
    // The schema's first complaint names the member at fault.
    const issue = (refusal.details as { issues?: readonly { path?: string; message?: string }[] } | undefined)?.issues?.[0]
    const where = issue === undefined ? '' : `: ${issue.path ?? ''} ${issue.message ?? ''}`
    throw new UsageError(`the Agent Card of ${agentId} would be refused (${refusal.code}${where})`)
  }
}

/** What {@link addPrincipal} did. */
interface Added {
  readonly entry: PrincipalEntry
  readonly orgPath: string
  readonly keyOut: string
}

async function addPrincipal(request: AddRequest, now: number): Promise<Added> {
  const orgPath = join(request.dataDir, ORGANIZATION_FILE)
  let before: string
  try {
    before = await readFile(orgPath, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new UsageError(`${orgPath} does not exist; create it with weft serve --init --data ${request.dataDir}`)
    throw error
  }
  const org = await loadOrganization(orgPath)
  const file = org.file
  const id = request.id ?? `${file.organizationId}:${request.type}:${request.name}`
  const { ids, keys } = taken(file)
  const holder = ids.get(id)
  if (holder !== undefined) throw new UsageError(`${orgPath} already has ${holder} ${id}; choose another --name or --id`)

  // §6.4: a key ID is never reused, not even one a removed principal held, so it carries a UUID.
  const keyId = `${file.organizationId}:key:${request.type}:${request.name}:${randomUUID()}`
  const seed = randomBytes(32)
  const publicKey = encodeBase64url(keyPairFromSeed(seed).publicKey)
  for (const value of [keyId, publicKey]) {
    const owner = keys.get(value)
    if (owner !== undefined) throw new UsageError(`${orgPath} already has the key ${value} (of ${owner}); run again for a fresh one`)
  }
  const validity = { validFrom: request.validFrom, ...(request.validUntil === undefined ? {} : { validUntil: request.validUntil }) }
  const entry: PrincipalEntry = {
    type: request.type,
    id,
    keyId,
    publicKey,
    ...validity,
    ...(request.agent === undefined ? {} : { card: cardTemplate(file, request.name, request.agent) }),
  }

  // The file as it is, one principal longer: members the loader does not keep are not dropped.
  const raw = JSON.parse(before) as Record<string, unknown>
  const next = `${JSON.stringify({ ...raw, principals: [...((raw['principals'] as unknown[] | undefined) ?? []), entry] }, null, 2)}\n`
  const temporary = join(dirname(orgPath), `.${ORGANIZATION_FILE}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`)
  createPrivateFileSynced(temporary, next)
  let keyWritten = false
  try {
    // The new file must load as weft serve loads it, and the new card register as it will.
    let updated: Organization
    try {
      updated = await loadOrganization(temporary)
    } catch (error) {
      if (error instanceof UsageError) throw new UsageError(error.message.split(temporary).join(orgPath))
      throw error
    }
    if (entry.card !== undefined) await rehearseCard(updated, id, now)

    const keyFile: KeyFile = { format: KEY_FILE_FORMAT, organizationId: file.organizationId, principal: { type: request.type, id }, keyId, publicKey, seed: encodeBase64url(seed), ...validity }
    try {
      createPrivateFileSynced(request.keyOut, `${JSON.stringify(keyFile, null, 2)}\n`)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'EEXIST') throw new UsageError(`${request.keyOut} exists already; a key file is never overwritten (choose another --key-out, or move it away)`)
      if (code === 'ENOENT') throw new UsageError(`cannot create ${request.keyOut}: its directory does not exist`)
      throw error
    }
    keyWritten = true
    // Another writer in the meantime would lose its principal to this rename: refuse instead.
    if ((await readFile(orgPath, 'utf8')) !== before) throw new UsageError(`${orgPath} changed while the principal was being added; nothing was added, run the command again`)
    await rename(temporary, orgPath)
    syncDirectory(dirname(orgPath))
    return { entry, orgPath, keyOut: request.keyOut }
  } catch (error) {
    await removeQuietly(temporary)
    // A key nobody's file binds is useless; one that exists already was not ours to remove.
    if (keyWritten) await removeQuietly(request.keyOut)
    throw error
  }
}

/** The lines `add` prints: what was added, where the key is, when a server sees it, how to use it. */
function addedText(added: Added): string {
  const { entry, keyOut } = added
  const file = keyOut
  const lines = [`Added ${entry.type} ${entry.id} to ${added.orgPath}`, `  key ${entry.keyId}, valid from ${entry.validFrom}${entry.validUntil === undefined ? '' : ` until ${entry.validUntil}`}`]
  if (entry.card !== undefined) {
    const c = entry.card
    lines.push(`  card "${c.displayName}", owner ${c.owner.id}, ${c.capabilities.map((x) => `${x.id}@${x.version}`).join(', ')}, max concurrency ${c.maxConcurrency}`)
    if (c.endpoints.some((e) => e.uri.startsWith('wss://agents.invalid/'))) lines.push(`  endpoint ${c.endpoints[0]!.uri} is a placeholder: give --endpoint, or edit the card in organization.json`)
  }
  lines.push(
    `The private key is in ${file} (mode 600), and nowhere else: organization.json holds only the public key.`,
    'Hand it to whoever signs as this principal, and keep it secret.',
    '',
    'A running weft serve does not see this principal yet: it reads organization.json only when it starts.',
    `Restart it${entry.card === undefined ? '' : ' (it then registers the Agent Card)'}; with several servers on one database, put this organization.json on each first.`,
    '',
  )
  if (entry.type === 'agent') {
    lines.push(
      'Connect the Agent (TypeScript, with @weft/client and @weft/codec):',
      '',
      "  import { readFile } from 'node:fs/promises'",
      "  import { createClient } from '@weft/client'",
      "  import { connectWebSocket } from '@weft/client/wire'",
      "  import { decodeBase64url, keyPairFromSeed } from '@weft/codec'",
      '',
      `  const key = JSON.parse(await readFile('${file}', 'utf8'))`,
      '  const signingKey = { keyId: key.keyId, pair: keyPairFromSeed(decodeBase64url(key.seed)!) }',
      "  const conn = await connectWebSocket({ url: 'wss://HOST:7443', actor: key.principal, signingKey })",
      '  const agent = createClient({ actor: key.principal, signingKey, transport: conn.transport })',
      '  agent.epochs.setSession(conn.sessionEpoch())',
      '',
      "(url: the server's, from its `listening` log line; ws://127.0.0.1:PORT with --insecure-loopback.)",
    )
  } else {
    lines.push(
      'Sign Commands on the control endpoint (weft serve --control-port PORT; loopback only), TypeScript:',
      '',
      "  import { createClient } from '@weft/client'",
      "  import { controlTransport, readKeyFile } from '@weft/cli/serve'",
      '',
      `  const { actor, signingKey } = await readKeyFile('${file}')`,
      "  const human = createClient({ actor, signingKey, transport: controlTransport('http://127.0.0.1:PORT') })",
      '  await human.missionCreate(payload, { groupId })',
    )
  }
  return `${lines.join('\n')}\n`
}

// ---------------------------------------------------------------------------------------------
// weft principal list
// ---------------------------------------------------------------------------------------------

/** One row of `list`. */
interface Row {
  readonly type: PrincipalEntry['type']
  readonly id: string
  readonly keyId: string
  readonly validFrom: string
  readonly validUntil?: string
  readonly revokedAt?: string
  readonly role?: string
  readonly card?: { readonly displayName: string; readonly status: string; readonly capabilities: readonly string[]; readonly maxConcurrency: number; readonly owner: string }
}

function rowsOf(file: OrganizationFile): Row[] {
  const service = (entry: OrganizationFile['authority'], role: string): Row => ({ type: 'service', id: entry.id, keyId: entry.keyId, validFrom: file.createdAt, role })
  return [
    service(file.authority, 'Authority: signs every Event'),
    service(file.controlPlane, 'control plane: opens sessions, registers Agent Cards'),
    ...file.principals.map(
      (p): Row => ({
        type: p.type,
        id: p.id,
        keyId: p.keyId,
        validFrom: p.validFrom ?? file.createdAt,
        ...(p.validUntil === undefined ? {} : { validUntil: p.validUntil }),
        ...(p.revokedAt === undefined ? {} : { revokedAt: p.revokedAt }),
        ...(p.card === undefined
          ? {}
          : {
              card: {
                displayName: p.card.displayName,
                status: p.card.status ?? 'active',
                capabilities: p.card.capabilities.map((c) => `${c.id}@${c.version}`),
                maxConcurrency: p.card.maxConcurrency,
                owner: p.card.owner.id,
              },
            }),
      }),
    ),
  ]
}

function rowText(row: Row): string {
  const validity = [`from ${row.validFrom}`, ...(row.validUntil === undefined ? [] : [`until ${row.validUntil}`]), ...(row.revokedAt === undefined ? [] : [`revoked ${row.revokedAt}`])].join(', ')
  const what =
    row.role ??
    (row.card === undefined
      ? ''
      : `card ${row.card.displayName} (${row.card.status}, owner ${row.card.owner}, ${row.card.maxConcurrency} slot${row.card.maxConcurrency === 1 ? '' : 's'}): ${row.card.capabilities.join(' ')}`)
  return [row.type.padEnd(7), row.id, row.keyId, validity, what].filter((part) => part !== '').join('  ')
}

// ---------------------------------------------------------------------------------------------
// The command
// ---------------------------------------------------------------------------------------------

/**
 * `weft principal` on its command-line arguments (after `principal`): `add human|agent` or `list`.
 * Errors are one line on `stderr`.
 * @param now - Milliseconds since the epoch: the default `validFrom` and the rehearsed card's time.
 * @returns 0 on success; 2 when nothing was done (bad arguments, a duplicate ID, an existing key
 * file, a bad `organization.json`); 1 when a file could not be read or written.
 */
export async function principalCommand(args: readonly string[], io: { readonly stdout: (text: string) => void; readonly stderr: (text: string) => void }, now: number = Date.now()): Promise<number> {
  const [sub, ...rest] = args
  try {
    if (sub === 'add') {
      io.stdout(addedText(await addPrincipal(parseAdd(rest, now), now)))
      return 0
    }
    if (sub === 'list') {
      const { values } = parseArgs({ args: rest, strict: true, allowPositionals: false, options: { data: { type: 'string' }, json: { type: 'boolean' } } })
      if (values.data === undefined) throw new UsageError('--data DIR is required')
      const org = await loadOrganization(join(values.data, ORGANIZATION_FILE))
      const rows = rowsOf(org.file)
      io.stdout(values.json === true ? `${JSON.stringify(rows, null, 2)}\n` : rows.map((row) => `${rowText(row)}\n`).join(''))
      return 0
    }
    throw new UsageError(`expected add or list, got ${sub ?? 'nothing'}`)
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`weft principal: ${error.message}\n`)
      return 2
    }
    // parseArgs: unknown or malformed options.
    if (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS')) {
      io.stderr(`weft principal: ${error.message}\n`)
      return 2
    }
    io.stderr(`weft principal: ${String((error as Error).message ?? error).split('\n')[0]}\n`)
    return 1
  }
}
