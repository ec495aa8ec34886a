/**
 * Key validity in `organization.json` (§6.4): `validFrom`, `validUntil` and `revokedAt` of a
 * Principal reach the Registry evidence the Authority verifies with, so a Command signed outside
 * its key's interval is refused with `AUTH_INVALID_SIGNATURE` and an Agent whose key is no longer
 * valid cannot open a session; a misspelt member of a principal stops the server.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createClient } from '@weft/client'
import { connectWebSocket } from '@weft/client/wire'
import { ProtocolError } from '@weft/codec'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main, type CliIo } from '../src/bin.js'
import { controlTransport } from '../src/serve/control.js'
import { ORGANIZATION_FILE, type OrganizationFile, type PrincipalEntry } from '../src/serve/organization.js'
import { dataDir, DAY, groupOf, iso, missionPayload, party, people, person, principalEntry, removeTemporaryDirs, startServe, stop, type Party, type Person, type ServeProcess } from './serve-world.js'

const MINUTE = 60_000
const now = Date.now()

/** Principals whose keys are outside their interval now, each with the members that put it there. */
const cast: readonly (readonly [Person, Partial<PrincipalEntry>])[] = [
  [person('human', 'retired', 41), { revokedAt: iso(now - MINUTE) }],
  [person('human', 'lapsed', 42), { validUntil: iso(now - MINUTE) }],
  [person('human', 'early', 43), { validFrom: iso(now + DAY) }],
  [person('agent', 'revoked-agent', 44), { revokedAt: iso(now - MINUTE) }],
]
const [retired, lapsed, early, revokedAgent] = cast.map(([p]) => p) as [Person, Person, Person, Person]

let dir: string
let server: ServeProcess
let p: Party

beforeAll(async () => {
  dir = await dataDir()
  const path = join(dir, ORGANIZATION_FILE)
  const file = JSON.parse(await readFile(path, 'utf8')) as OrganizationFile
  await writeFile(path, JSON.stringify({ ...file, principals: [...file.principals, ...cast.map(([who, validity]) => ({ ...principalEntry(who), ...validity }))] }))
  server = await startServe(dir)
  p = party(server, groupOf('keys'))
  // mission.create names a Coordinator with an open session (§7.1).
  await p.connect('coordinator')
})

afterAll(async () => {
  await p?.close()
  if (server?.child.exitCode === null) await stop(server, 'SIGKILL')
  await removeTemporaryDirs()
})

/** Submits `mission.create` for Mission `name` as `who`, its Command signed at `signedAt`; the §19 code of the refusal, or `accepted`. */
async function createMission(who: Person, name: string, signedAt = Date.now()): Promise<string> {
  const client = createClient({ actor: who.actor, signingKey: who.key, transport: controlTransport(server.controlUrl), groupId: groupOf(name), clock: { now: () => signedAt } })
  return client.missionCreate(missionPayload(name)).then(
    () => 'accepted',
    (e: unknown) => (e instanceof ProtocolError ? e.code : String(e)),
  )
}

describe('weft serve: key validity of organization.json (§6.4)', () => {
  it('refuses a Command signed after its key was revoked or expired, or before it was valid, with AUTH_INVALID_SIGNATURE', async () => {
    expect(await createMission(retired, 'retired')).toBe('AUTH_INVALID_SIGNATURE')
    expect(await createMission(lapsed, 'lapsed')).toBe('AUTH_INVALID_SIGNATURE')
    expect(await createMission(early, 'early')).toBe('AUTH_INVALID_SIGNATURE')
    await server.waitLog((l) => l.msg === 'command refused' && l['actorId'] === early.actor.id)
    const refused = server.log.filter((l) => l.msg === 'command refused' && l['kind'] === 'mission.create').map((l) => [l['actorId'], l['code']])
    expect(refused).toEqual([retired, lapsed, early].map((who) => [who.actor.id, 'AUTH_INVALID_SIGNATURE']))
  })

  it('evaluates the interval at the protected signed time: a fresh Command signed before the revocation is accepted', async () => {
    expect(await createMission(retired, 'before-revocation', now - 2 * MINUTE)).toBe('accepted')
    expect(await createMission(lapsed, 'before-expiry', now - 2 * MINUTE)).toBe('accepted')
  })

  it('refuses the handshake of an Agent whose key was revoked', async () => {
    const refused = await connectWebSocket({ url: server.url, actor: revokedAgent.actor, signingKey: revokedAgent.key, reconnect: false, heartbeatMs: 0 }).then(
      async (c) => {
        await c.close()
        return 'session opened'
      },
      (e: unknown) => (e instanceof ProtocolError ? e.code : String(e)),
    )
    expect(refused).toBe('AUTH_INVALID_SIGNATURE')
    await server.waitLog((l) => l.msg === 'handshake refused: key is not valid now')
    const opened = server.log.filter((l) => l.msg === 'command accepted' && l['kind'] === 'ext.missionweaveprotocol.identity.session_open')
    expect(opened).toHaveLength(1)
  })
})

describe('organization.json members', () => {
  it('refuses an unknown member of a principal in one line naming it, with exit code 2', async () => {
    const bad = await dataDir()
    const path = join(bad, ORGANIZATION_FILE)
    const file = JSON.parse(await readFile(path, 'utf8')) as OrganizationFile
    const principals = file.principals.map((entry, i) => (i === 2 ? { ...entry, revokedAtt: iso(now) } : entry))
    await writeFile(path, JSON.stringify({ ...file, principals }))
    let err = ''
    const io: CliIo = { stdout: () => undefined, stderr: (t) => void (err += t), interactive: false }
    expect(await main(['serve', '--data', bad, '--port', '0', '--insecure-loopback'], io)).toBe(2)
    expect(err).toBe(`weft serve: organization.json: principals[2] (${people.worker1.actor.id}) has an unknown member "revokedAtt"\n`)
  })
})
