/**
 * `weft principal add|list` through the `weft` bin: a human and an Agent added to a directory
 * made by `weft serve --init --no-human`, their private keys in files of their own (mode 0600, never in
 * `organization.json`), fresh key IDs (§6.4), and a server started afterwards that opens the new
 * Agent's session (§6.3) and takes the new human's signed Command on the control endpoint.
 */
import { execFile } from 'node:child_process'
import { readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { createClient } from '@weft/client'
import { connectWebSocket } from '@weft/client/wire'
import { decodeBase64url, keyPairFromSeed } from '@weft/codec'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main, type CliIo } from '../src/bin.js'
import { readKeyFile } from '../src/principal.js'
import { controlTransport } from '../src/serve/control.js'
import { ORGANIZATION_FILE, type OrganizationFile } from '../src/serve/organization.js'
import { missionPayload, removeTemporaryDirs, startServe, stop, temporaryDir, type ServeProcess } from './serve-world.js'

const CLI = fileURLToPath(new URL('..', import.meta.url))
// The bin as bin/weft.mjs runs it without dist/, with absolute paths so that the working
// directory can be a scratch one: the default key file is written there.
const TSX = pathToFileURL(join(CLI, '..', '..', 'node_modules', 'tsx', 'dist', 'loader.mjs')).href
const BIN = join(CLI, 'src', 'bin-run.ts')

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs `weft ...args` as a child process in `cwd`. */
function weft(args: readonly string[], cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--conditions=@weft/source', '--import', TSX, BIN, ...args], { cwd }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : Number((error as { code?: unknown }).code), stdout, stderr })
    })
  })
}

/** An in-memory CLI io for {@link main}. */
function capture(): CliIo & { out: string; err: string } {
  const io = { out: '', err: '', interactive: false, stdout: (t: string) => void (io.out += t), stderr: (t: string) => void (io.err += t) }
  return io
}

/** The contents of the directory's `organization.json`. */
async function organization(dir: string): Promise<OrganizationFile> {
  return JSON.parse(await readFile(join(dir, ORGANIZATION_FILE), 'utf8')) as OrganizationFile
}

let cwd: string
let data: string
let added: { human: Run; agent: Run }
let server: ServeProcess | undefined

beforeAll(async () => {
  cwd = await temporaryDir()
  data = join(cwd, 'org')
  const init = await weft(['serve', '--init', '--no-human', '--data', data], cwd)
  expect(init.code).toBe(0)
  const human = await weft(['principal', 'add', 'human', '--data', data, '--name', 'ada'], cwd)
  const agent = await weft(
    [
      'principal',
      'add',
      'agent',
      '--data',
      data,
      '--name',
      'builder',
      '--capability',
      'example.build@1.0.0',
      '--capability',
      'example.test@2.1.0',
      '--max-concurrency',
      '2',
      '--endpoint',
      'wss://agents.example/builder',
    ],
    cwd,
  )
  added = { human, agent }
}, 60_000)

afterAll(async () => {
  if (server !== undefined && server.child.exitCode === null) await stop(server, 'SIGKILL')
  await removeTemporaryDirs()
})

describe('weft principal add', () => {
  it('adds a human and an Agent by public key; each private key goes to a file of its own with mode 0600', async () => {
    expect([added.human.code, added.human.stderr]).toEqual([0, ''])
    expect([added.agent.code, added.agent.stderr]).toEqual([0, ''])
    const org = await organization(data)
    expect((await stat(join(data, ORGANIZATION_FILE))).mode & 0o777).toBe(0o600)
    expect(org.principals.map((p) => [p.type, p.id])).toEqual([
      ['human', `${org.organizationId}:human:ada`],
      ['agent', `${org.organizationId}:agent:builder`],
    ])
    const text = await readFile(join(data, ORGANIZATION_FILE), 'utf8')
    for (const [name, entry] of [
      ['ada', org.principals[0]!],
      ['builder', org.principals[1]!],
    ] as const) {
      const path = join(cwd, `${name}.key.json`)
      expect((await stat(path)).mode & 0o777).toBe(0o600)
      const key = JSON.parse(await readFile(path, 'utf8')) as { format: string; principal: unknown; keyId: string; publicKey: string; seed: string }
      expect(key).toMatchObject({ format: 'weft.key/1', principal: { type: entry.type, id: entry.id }, keyId: entry.keyId, publicKey: entry.publicKey })
      // The public key in the file is the one of the private key handed out, and the secret is nowhere in the Organization file.
      expect(Buffer.from(keyPairFromSeed(decodeBase64url(key.seed)!).publicKey).toString('base64url')).toBe(entry.publicKey)
      expect(text).not.toContain(key.seed)
      expect(entry.validFrom! >= org.createdAt).toBe(true)
    }
    // §6.4: every key ID distinct from every other, the services' included.
    const keyIds = [org.authority.keyId, org.controlPlane.keyId, ...org.principals.map((p) => p.keyId)]
    expect(new Set(keyIds).size).toBe(4)
  })

  it('states the Agent Card: the only human as owner, the capabilities, endpoints and concurrency given', async () => {
    const org = await organization(data)
    const card = org.principals[1]!.card!
    expect(card).toMatchObject({
      displayName: 'builder',
      owner: { type: 'human', id: org.principals[0]!.id },
      endpoints: [{ transport: 'wss', uri: 'wss://agents.example/builder' }],
      maxConcurrency: 2,
    })
    expect(card.capabilities.map((c) => `${c.id}@${c.version}`)).toEqual(['example.build@1.0.0', 'example.test@2.1.0'])
  })

  it('prints how to connect and that a running server needs a restart', () => {
    expect(added.agent.stdout).toContain('connectWebSocket(')
    expect(added.agent.stdout).toContain("readFile('builder.key.json'")
    expect(added.human.stdout).toContain('controlTransport(')
    expect(added.human.stdout).toContain("readKeyFile('ada.key.json')")
    for (const run of [added.human, added.agent]) expect(run.stdout).toMatch(/reads organization\.json only when it starts/)
  })

  it("a server started afterwards opens the new Agent's session with the written key file and takes the human's Commands", async () => {
    server = await startServe(data)
    const org = await organization(data)
    const builder = org.principals[1]!
    await server.waitLog((l) => l.msg === 'agent card registered' && l['agentId'] === builder.id)
    // The Agent loads its key file as the printed snippet does, with @weft/codec alone.
    const file = JSON.parse(await readFile(join(cwd, 'builder.key.json'), 'utf8')) as { keyId: string; seed: string; principal: { type: 'agent'; id: string } }
    const signingKey = { keyId: file.keyId, pair: keyPairFromSeed(decodeBase64url(file.seed)!) }
    const conn = await connectWebSocket({ url: server.url, actor: file.principal, signingKey, reconnect: false, heartbeatMs: 0 })
    try {
      expect(conn.sessionEpoch()).toBeGreaterThanOrEqual(1)
      // The human signs on the control endpoint: a Mission with the new Agent as its Coordinator.
      const ada = await readKeyFile(join(cwd, 'ada.key.json'))
      const groupId = `${org.organizationId}:group:first`
      const owner = createClient({ actor: ada.actor, signingKey: ada.signingKey, transport: controlTransport(server.controlUrl), groupId })
      const receipt = await owner.missionCreate({ ...missionPayload('first'), coordinatorAgentId: builder.id })
      expect(receipt.events.map((e) => e.kind)).toContain('mission.created')
    } finally {
      await conn.close()
    }
  })

  it('refuses an ID already in the file, leaving the file as it was', async () => {
    const before = await readFile(join(data, ORGANIZATION_FILE), 'utf8')
    const org = await organization(data)
    for (const argv of [
      ['principal', 'add', 'human', '--data', data, '--name', 'ada', '--key-out', join(cwd, 'ada-2.key.json')],
      ['principal', 'add', 'human', '--data', data, '--name', 'other', '--id', org.principals[1]!.id, '--key-out', join(cwd, 'other.key.json')],
      ['principal', 'add', 'human', '--data', data, '--name', 'other', '--id', org.controlPlane.id, '--key-out', join(cwd, 'other.key.json')],
    ]) {
      const io = capture()
      expect(await main(argv, io)).toBe(2)
      expect(io.err).toMatch(/^weft principal: .*already has .* urn:weft:org:.*\n$/)
      expect(io.err.split('\n')).toHaveLength(2)
    }
    expect(await readFile(join(data, ORGANIZATION_FILE), 'utf8')).toBe(before)
    await expect(stat(join(cwd, 'ada-2.key.json'))).rejects.toThrow(/ENOENT/)
    await expect(stat(join(cwd, 'other.key.json'))).rejects.toThrow(/ENOENT/)
  })

  it('never overwrites an existing key file, and then adds nothing', async () => {
    const before = await readFile(join(data, ORGANIZATION_FILE), 'utf8')
    const existing = join(cwd, 'grace.key.json')
    await writeFile(existing, 'an older key\n')
    const run = await weft(['principal', 'add', 'human', '--data', data, '--name', 'grace'], cwd)
    expect(run.code).toBe(2)
    expect(run.stderr).toBe(`weft principal: grace.key.json exists already; a key file is never overwritten (choose another --key-out, or move it away)\n`)
    expect(await readFile(existing, 'utf8')).toBe('an older key\n')
    expect(await readFile(join(data, ORGANIZATION_FILE), 'utf8')).toBe(before)
  })

  it('issues a fresh key ID even for a name whose principal was removed (§6.4: a key ID is never reused)', async () => {
    const dir = join(await temporaryDir(), 'org')
    expect(await main(['serve', '--init', '--no-human', '--data', dir], capture())).toBe(0)
    const keys = join(dir, '..')
    expect(await main(['principal', 'add', 'human', '--data', dir, '--name', 'lin', '--key-out', join(keys, 'a.key.json')], capture())).toBe(0)
    const first = await organization(dir)
    await writeFile(join(dir, ORGANIZATION_FILE), JSON.stringify({ ...first, principals: [] }))
    expect(await main(['principal', 'add', 'human', '--data', dir, '--name', 'lin', '--key-out', join(keys, 'b.key.json')], capture())).toBe(0)
    const second = await organization(dir)
    expect(second.principals[0]!.id).toBe(first.principals[0]!.id)
    expect(second.principals[0]!.keyId).not.toBe(first.principals[0]!.keyId)
    expect(second.principals[0]!.publicKey).not.toBe(first.principals[0]!.publicKey)
    // Rewritten by rename, still its owner's alone.
    expect((await stat(join(dir, ORGANIZATION_FILE))).mode & 0o777).toBe(0o600)
  })

  it('answers bad arguments with one line and exit code 2, writing nothing', async () => {
    const dir = join(await temporaryDir(), 'org')
    expect(await main(['serve', '--init', '--no-human', '--data', dir], capture())).toBe(0)
    const before = await readFile(join(dir, ORGANIZATION_FILE), 'utf8')
    const out = join(dir, '..', 'x.key.json')
    const cases: readonly (readonly [readonly string[], RegExp])[] = [
      [['principal', 'add', 'human', '--name', 'x', '--key-out', out], /--data DIR is required/],
      [['principal', 'add', 'robot', '--data', dir, '--name', 'x', '--key-out', out], /human or agent/],
      [['principal', 'add', 'human', '--data', dir, '--key-out', out], /--name NAME is required/],
      [['principal', 'add', 'human', '--data', dir, '--name', 'a b', '--key-out', out], /--name/],
      [['principal', 'add', 'human', '--data', dir, '--name', 'x', '--id', 'not a uri', '--key-out', out], /--id must be an absolute URI/],
      [['principal', 'add', 'human', '--data', dir, '--name', 'x', '--capability', 'a.b@1.0.0', '--key-out', out], /--capability is for Agents only/],
      [['principal', 'add', 'agent', '--data', dir, '--name', 'x', '--owner', 'urn:nobody', '--capability', 'a.b@1.0.0', '--key-out', out], /--owner urn:nobody is not/],
      [['principal', 'add', 'agent', '--data', dir, '--name', 'x', '--capability', 'a.b@1.0.0', '--key-out', out], /--owner ID is required/],
      [['principal', 'add', 'human', '--data', join(dir, 'absent'), '--name', 'x', '--key-out', out], /does not exist; create it with weft serve --init/],
      [['principal', 'add', 'human', '--data', dir, '--name', 'x', '--frobnicate', '--key-out', out], /frobnicate/],
      [['principal', 'remove', '--data', dir], /add or list/],
    ]
    for (const [argv, message] of cases) {
      const io = capture()
      expect([argv.join(' '), await main(argv, io)]).toEqual([argv.join(' '), 2])
      expect(io.err).toMatch(message)
      expect(io.err.split('\n')).toHaveLength(2)
    }
    // An Agent needs an owner: with one human in the file it is the default; a capability is required and checked.
    expect(await main(['principal', 'add', 'human', '--data', dir, '--name', 'owner', '--key-out', join(dir, '..', 'owner.key.json')], capture())).toBe(0)
    const withOwner = await readFile(join(dir, ORGANIZATION_FILE), 'utf8')
    expect(withOwner).not.toBe(before)
    for (const [argv, message] of [
      [['principal', 'add', 'agent', '--data', dir, '--name', 'x', '--key-out', out], /--capability ID@VERSION is required/],
      [['principal', 'add', 'agent', '--data', dir, '--name', 'x', '--capability', 'Build', '--key-out', out], /--capability Build/],
      [['principal', 'add', 'agent', '--data', dir, '--name', 'x', '--capability', 'a.b@1.0.0', '--max-concurrency', '0', '--key-out', out], /--max-concurrency/],
      [['principal', 'add', 'agent', '--data', dir, '--name', 'x', '--capability', 'a.b@1.0.0', '--endpoint', 'http://x', '--key-out', out], /--endpoint/],
      // What no flag check covers is refused as weft serve would refuse the card on its next start (§6.1).
      [
        ['principal', 'add', 'agent', '--data', dir, '--name', 'x', '--capability', 'a.b@1.0.0', '--display-name', '', '--key-out', out],
        /Agent Card of .* would be refused \(SCHEMA_VALIDATION_FAILED: \/card\/displayName/,
      ],
    ] as const) {
      const io = capture()
      expect([argv.join(' '), await main(argv, io)]).toEqual([argv.join(' '), 2])
      expect(io.err).toMatch(message)
    }
    expect(await readFile(join(dir, ORGANIZATION_FILE), 'utf8')).toBe(withOwner)
    await expect(stat(out)).rejects.toThrow(/ENOENT/)
  })
})

describe('weft principal list', () => {
  it('lists the services and every principal with its key and validity', async () => {
    const run = await weft(['principal', 'list', '--data', data], cwd)
    expect([run.code, run.stderr]).toEqual([0, ''])
    const org = await organization(data)
    const rows = run.stdout.trim().split('\n')
    for (const p of [org.authority, org.controlPlane, ...org.principals]) expect(rows.some((row) => row.includes(p.id) && row.includes(p.keyId))).toBe(true)
    expect(rows.find((row) => row.includes(org.principals[1]!.id))).toMatch(/^agent\b.*card builder.*example\.build@1\.0\.0/)
    expect(run.stdout).not.toContain(org.authority.seed)
    const json = await weft(['principal', 'list', '--data', data, '--json'], cwd)
    expect((JSON.parse(json.stdout) as { id: string }[]).map((p) => p.id)).toEqual([org.authority.id, org.controlPlane.id, ...org.principals.map((p) => p.id)])
  })
})
