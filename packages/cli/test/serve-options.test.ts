/**
 * `weft serve` in this process: `--init` and the Organization file, the options and `--config`
 * file, the stop signals, Agent Card registration when the file changes (§6.1), the control
 * endpoint's refusals (§6.3: Agents use their session), and TLS 1.3 (§17.1).
 */
import { execFileSync } from 'node:child_process'
import { EventEmitter } from 'node:events'
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createClient } from '@weft/client'
import { connectWebSocket } from '@weft/client/wire'
import { ProtocolError } from '@weft/codec'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { main, type CliIo } from '../src/bin.js'
import { controlTransport } from '../src/serve/control.js'
import { loadOrganization, ORGANIZATION_FILE, type OrganizationFile } from '../src/serve/organization.js'
import { serveCommand } from '../src/serve/command.js'
import { startServer, type RunningServer } from '../src/serve/serve.js'
import { dataDir, groupOf, missionPayload, people, principalEntry, removeTemporaryDirs, temporaryDir, type LogLine } from './serve-world.js'

let running: RunningServer | undefined
afterEach(async () => {
  await running?.close()
  running = undefined
})
afterAll(removeTemporaryDirs)

/** An in-memory CLI io. */
function capture(): CliIo & { out: string; err: string } {
  const io = { out: '', err: '', interactive: false, stdout: (t: string) => void (io.out += t), stderr: (t: string) => void (io.err += t) }
  return io
}

const lines = (text: string): LogLine[] =>
  text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as LogLine)

describe('weft serve --init', () => {
  it('writes a new Organization readable by its owner only and prints its Registry bindings', async () => {
    const dir = join(await temporaryDir(), 'data')
    const io = capture()
    expect(await main(['serve', '--init', '--data', dir], io)).toBe(0)
    const path = join(dir, ORGANIZATION_FILE)
    expect((await stat(path)).mode & 0o777).toBe(0o600)
    const org = await loadOrganization(path)
    // The first human, whose private key is in a key file of its own beside it (§5: the console's first user).
    expect(org.file.principals.map((p) => [p.type, p.id])).toEqual([['human', `${org.organizationId}:human:owner`]])
    const keyFile = join(dir, 'owner.key.json')
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600)
    expect(JSON.parse(await readFile(keyFile, 'utf8'))).toMatchObject({ format: 'weft.key/1', principal: { type: 'human', id: org.file.principals[0]!.id }, keyId: org.file.principals[0]!.keyId })
    expect(io.out).toContain(`Sign in there as\n${org.file.principals[0]!.id} by loading the key file\n  ${keyFile}\n`)
    expect(io.out).toContain(`Organization ${org.organizationId}`)
    const printed = JSON.parse(io.out.slice(io.out.indexOf('bindings:\n') + 10, io.out.indexOf('\n\nNext'))) as { bindings: { keyId: string; principal: { id: string } }[] }
    expect(printed.bindings.map((b) => [b.principal.id, b.keyId])).toEqual([
      [org.authority.actor.id, org.authority.signingKey.keyId],
      [org.controlPlane.actor.id, org.controlPlane.signingKey.keyId],
    ])
    const again = capture()
    expect(await main(['serve', '--init', '--data', dir], again)).toBe(2)
    expect(again.err).toContain('exists already')
    expect(await readFile(path, 'utf8')).toBe(JSON.stringify(org.file, null, 2) + '\n')
    // --no-human: the Organization alone; an existing key file is never overwritten.
    const bare = join(await temporaryDir(), 'bare')
    expect(await main(['serve', '--init', '--no-human', '--data', bare], capture())).toBe(0)
    expect((await loadOrganization(join(bare, ORGANIZATION_FILE))).file.principals).toEqual([])
    const taken = join(await temporaryDir(), 'taken')
    await mkdir(taken)
    await writeFile(join(taken, 'ada.key.json'), 'an older key\n')
    const refused = capture()
    expect(await main(['serve', '--init', '--human', 'ada', '--data', taken], refused)).toBe(2)
    expect(refused.err).toContain('ada.key.json exists already; a key file is never overwritten')
    expect(await readFile(join(taken, 'ada.key.json'), 'utf8')).toBe('an older key\n')
    await expect(stat(join(taken, ORGANIZATION_FILE))).rejects.toThrow(/ENOENT/)
  })
})

describe('weft serve options', () => {
  it('refuses bad arguments and a malformed Organization with exit code 2', async () => {
    const dir = await dataDir()
    const cases: [string[], string][] = [
      [['serve'], '--data DIR is required'],
      [['serve', '--data', dir, '--port', '0'], 'insecureLoopback'],
      [['serve', '--data', dir, '--tls-cert', 'cert.pem'], '--tls-cert and --tls-key go together'],
      [['serve', '--data', dir, '--port', '70000'], '--port must be a port number'],
      [['serve', '--data', dir, '--bogus'], "Unknown option '--bogus'"],
    ]
    for (const [argv, message] of cases) {
      const io = capture()
      expect([argv.join(' '), await main(argv, io)]).toEqual([argv.join(' '), 2])
      expect(io.err).toContain(message)
    }
    const file = JSON.parse(await readFile(join(dir, ORGANIZATION_FILE), 'utf8')) as OrganizationFile
    await writeFile(join(dir, ORGANIZATION_FILE), JSON.stringify({ ...file, principals: [{ ...principalEntry(people.worker1), card: undefined }] }))
    const io = capture()
    expect(await main(['serve', '--data', dir, '--port', '0', '--insecure-loopback'], io)).toBe(2)
    expect(io.err).toContain('principals[0].card is required for an Agent')
  })

  it('takes its defaults from --config, runs until SIGINT and stops with exit code 0', async () => {
    const dir = await dataDir()
    const config = join(dir, 'serve.json')
    await writeFile(config, JSON.stringify({ port: 0, controlPort: 0, insecureLoopback: true, policy: { maxCommandBytes: 4096 } }))
    const signals = new EventEmitter()
    const io = capture()
    const exit = serveCommand(['--data', dir, '--config', config], io, signals as never)
    await new Promise<void>((resolve) => {
      const poll = (): void => (io.err.includes('"listening"') ? resolve() : void setImmediate(poll))
      poll()
    })
    const listening = lines(io.err).find((l) => l.msg === 'listening')!
    // mission.create names a Coordinator with an open session (§7.1): its handshake opens one.
    const coordinator = await connectWebSocket({ url: listening['url'] as string, actor: people.coordinator.actor, signingKey: people.coordinator.key, reconnect: false, heartbeatMs: 0 })
    const owner = createClient({ actor: people.owner.actor, signingKey: people.owner.key, transport: controlTransport(listening['controlUrl'] as string), groupId: groupOf('config') })
    // policy.maxCommandBytes from the file bounds what the control endpoint takes.
    const big = { ...missionPayload('config'), objective: 'x'.repeat(5000) }
    expect(await owner.missionCreate(big).catch((e: unknown) => e)).toMatchObject({ code: 'PROTOCOL_VIOLATION' })
    expect((await owner.missionCreate(missionPayload('config'))).events[0]?.kind).toBe('mission.created')
    await coordinator.close()
    signals.emit('SIGINT', 'SIGINT')
    expect(await exit).toBe(0)
    expect(lines(io.err).slice(-2)).toMatchObject([{ msg: 'shutting down', signal: 'SIGINT' }, { msg: 'stopped' }])
    expect(signals.listenerCount('SIGINT') + signals.listenerCount('SIGTERM')).toBe(0)

    await writeFile(config, JSON.stringify({ port: 0, tls: { cert: 'c.pem' }, colour: 'blue' }))
    const bad = capture()
    expect(await serveCommand(['--data', dir, '--config', config], bad, signals as never)).toBe(2)
    expect(bad.err).toContain('unknown member(s) colour')
  })

  it('registers a new Agent Card version only when organization.json states something new (§6.1)', async () => {
    const dir = await dataDir()
    const registered = async (): Promise<unknown[]> => {
      const log: LogLine[] = []
      running = await startServer({ dataDir: dir, port: 0, insecureLoopback: true, log: (entry) => log.push(entry) })
      await running.close()
      running = undefined
      return log.filter((l) => l.msg === 'agent card registered').map((l) => [String(l['agentId']).split(':').pop(), l['cardVersion']])
    }
    expect(await registered()).toEqual([
      ['coordinator', 1],
      ['worker-1', 1],
      ['worker-2', 1],
      ['reviewer', 1],
    ])
    expect(await registered()).toEqual([])
    const path = join(dir, ORGANIZATION_FILE)
    const file = JSON.parse(await readFile(path, 'utf8')) as OrganizationFile
    const principals = file.principals.map((p) => (p.id === people.worker2.actor.id ? { ...p, card: { ...p.card!, maxConcurrency: 4 } } : p))
    await writeFile(path, JSON.stringify({ ...file, principals }))
    expect(await registered()).toEqual([['worker-2', 2]])
  })

  it('takes only human and service Commands on the control endpoint, POST /commands only', async () => {
    const dir = await dataDir()
    running = await startServer({ dataDir: dir, port: 0, insecureLoopback: true, controlPort: 0 })
    const agent = createClient({ actor: people.worker1.actor, signingKey: people.worker1.key, transport: controlTransport(running.controlUrl!), groupId: groupOf('x') })
    agent.epochs.setSession(1)
    agent.epochs.setMembership(groupOf('x'), 1)
    const refused = await agent.workAcceptOffer({ workItemId: 'urn:weft:serve-test:work:x', ownershipLeaseSeconds: 60 }).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(ProtocolError)
    expect((refused as ProtocolError).code).toBe('AUTH_FORBIDDEN')
    expect((await fetch(`${running.controlUrl}/commands`)).status).toBe(405)
    expect((await fetch(`${running.controlUrl}/elsewhere`, { method: 'POST', body: '{}' })).status).toBe(404)
    const garbage = await fetch(`${running.controlUrl}/commands`, { method: 'POST', body: '{"kind":' })
    expect([garbage.status, ((await garbage.json()) as { error: { code: string } }).error.code]).toEqual([400, 'PROTOCOL_VIOLATION'])
  })

  it('speaks wss with TLS 1.3 given a certificate and key (§17.1)', async () => {
    const dir = await dataDir()
    const cert = join(dir, 'cert.pem')
    const key = join(dir, 'key.pem')
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '2',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    )
    const log: LogLine[] = []
    running = await startServer({ dataDir: dir, port: 0, tls: { cert: await readFile(cert), key: await readFile(key) }, log: (entry) => log.push(entry) })
    expect(running.url).toMatch(/^wss:\/\/127\.0\.0\.1:\d+$/)
    const conn = await connectWebSocket({ url: running.url, actor: people.worker1.actor, signingKey: people.worker1.key, ca: await readFile(cert, 'utf8'), reconnect: false, heartbeatMs: 0 })
    expect(conn.sessionEpoch()).toBe(1)
    await conn.close()
    expect(log.find((l) => l.msg === 'connection opened')?.['detail']).toContain('TLSv1.3')
  })
})
