/**
 * `weft serve` as an operator meets it, through the bin: the next step `--init` prints starts the
 * server exactly as printed; a start that does not say how to listen names the flags that do; a
 * missing certificate file, a port in use (the WebSocket one and the control one) and a failed
 * listen nobody awaited each end in one line and their exit code, never a stack trace; and one data
 * directory serves one server at a time (a second start is refused while `weft inspect` still
 * reads it), surviving `kill -9` of the holder.
 */
import { existsSync, readFileSync } from 'node:fs'
import { createServer, type AddressInfo, type Server } from 'node:net'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { STORE_FILE } from '../src/serve/organization.js'
import { literal, oneLine, runProcess, runWeft } from './cli-run.js'
import { dataDir, removeTemporaryDirs, startServe, stop, temporaryDir, tearDown, WEFT, type ServeProcess } from './serve-world.js'

const servers: ServeProcess[] = []
const blockers: Server[] = []
afterAll(async () => {
  await Promise.all(blockers.map((b) => new Promise((resolve) => b.close(resolve))))
  await tearDown(servers)
  await removeTemporaryDirs()
})

/** The lock file `weft serve` keeps beside the store while it runs. */
const lockOf = (dir: string): string => join(dir, `${STORE_FILE}.lock`)

/** A port held by a listener of this process for the rest of the file. */
async function heldPort(): Promise<number> {
  const server = createServer()
  blockers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

describe('weft serve --init', () => {
  it('prints a next step that starts the server exactly as printed', async () => {
    // A space in the path: the printed command must quote it for the shell.
    const dir = join(await temporaryDir(), 'acme org')
    const init = await runWeft(['serve', '--init', '--data', dir])
    expect(init.code, init.stderr).toBe(0)
    const step = /(weft serve --data .*)$/m.exec(init.stdout)?.[1]
    expect(step, init.stdout).toBeDefined()
    // The printed line through a shell, nothing added; `weft` is the bin as bin/weft.mjs runs it without dist/.
    const [node, ...rest] = [process.execPath, ...WEFT]
    const weftFunction = `weft() { exec "$WEFT_NODE" ${rest.map((a) => `'${a}'`).join(' ')} "$@"; }`
    const run = await runProcess(['/bin/sh', '-c', `${weftFunction}; ${step}`], { env: { WEFT_NODE: node! } })
    expect(run.listening, `${step}\n${run.stderr}`).toBe(true)
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toContain(`"path":${JSON.stringify(join(dir, STORE_FILE))}`)
  })
})

describe('weft serve refusals: one line and the documented exit code', () => {
  it('names --tls-cert/--tls-key and --insecure-loopback when told neither, before creating a store', async () => {
    const dir = await dataDir()
    const run = await runWeft(['serve', '--data', dir, '--port', '0'])
    expect(run.code).toBe(2)
    const line = oneLine(run)
    expect(line).toMatch(/^weft serve: say how to listen: --tls-cert FILE --tls-key FILE .*, or --insecure-loopback /)
    expect(line).not.toContain('createWireServer')
    expect(existsSync(join(dir, STORE_FILE))).toBe(false)
  })

  it('names a missing --tls-cert file', async () => {
    const dir = await dataDir()
    const cert = join(dir, 'missing-cert.pem')
    const run = await runWeft(['serve', '--data', dir, '--port', '0', '--tls-cert', cert, '--tls-key', join(dir, 'missing-key.pem')])
    expect(run.code).toBe(2)
    expect(oneLine(run)).toBe(`weft serve: --tls-cert ${cert}: no such file or directory (ENOENT)`)
  })

  it('says which port is in use and which flag changes it, the WebSocket port and the control port', async () => {
    const dir = await dataDir()
    const port = await heldPort()
    const ws = await runWeft(['serve', '--data', dir, '--insecure-loopback', '--port', String(port)])
    expect(ws.listening).toBe(false)
    expect(ws.code).toBe(1)
    expect(oneLine(ws)).toBe(`weft serve: the WebSocket port 127.0.0.1:${port} is in use (EADDRINUSE): stop the process listening there, or choose another --port (0 picks a free port)`)
    const control = await runWeft(['serve', '--data', dir, '--insecure-loopback', '--port', '0', '--control-port', String(port)])
    expect(control.code).toBe(1)
    expect(oneLine(control)).toBe(`weft serve: the control port 127.0.0.1:${port} is in use (EADDRINUSE): stop the process listening there, or choose another --control-port (0 picks a free port)`)
    // Refused before the store was opened, and the lock let go.
    expect(existsSync(lockOf(dir))).toBe(false)
  })

  it('reports a listen that fails where nothing awaits it (the port taken after the check) on one line', async () => {
    const dir = await dataDir()
    const port = await freePort()
    // The WebSocket server's listen fails as it does when another process takes the port between
    // the check and the listen: an 'error' event, which the server library leaves unhandled.
    const fault = [
      "import http from 'node:http'",
      'const listen = http.Server.prototype.listen',
      'let failed = false',
      'http.Server.prototype.listen = function (...args) {',
      '  if (failed) return listen.apply(this, args)',
      '  failed = true',
      "  const error = Object.assign(new Error('listen EADDRINUSE: address already in use 127.0.0.1:' + args[0]), { code: 'EADDRINUSE', errno: -98, syscall: 'listen', address: '127.0.0.1', port: args[0] })",
      "  process.nextTick(() => this.emit('error', error))",
      '  return this',
      '}',
    ].join('\n')
    const run = await runWeft(['serve', '--data', dir, '--insecure-loopback', '--port', String(port)], { node: ['--import', `data:text/javascript,${encodeURIComponent(fault)}`] })
    expect(run.listening).toBe(false)
    expect(run.code).toBe(1)
    expect(run.stderr).not.toContain('    at ')
    const lines = run.stderr.trimEnd().split('\n')
    expect(lines.at(-1)).toBe(`weft serve: cannot listen on 127.0.0.1:${port}: the address is in use (EADDRINUSE): stop the process listening there, or choose another port (0 picks a free one)`)
    // Everything before it is the JSON log of the start.
    for (const line of lines.slice(0, -1)) expect(() => JSON.parse(line), line).not.toThrow()
    expect(existsSync(lockOf(dir))).toBe(false)
  })
})

describe('one weft serve per data directory', () => {
  it('refuses a second server naming the directory and the holder, lets inspect read, and restarts after kill -9', async () => {
    const dir = await dataDir()
    const first = await startServe(dir)
    servers.push(first)
    const second = await runWeft(['serve', '--data', dir, '--port', '0', '--insecure-loopback', '--control-port', '0'])
    expect(second.listening, second.stderr).toBe(false)
    expect(second.code).toBe(4)
    expect(oneLine(second)).toMatch(
      new RegExp(`^weft serve: the data directory ${literal(dir)} is in use by another weft serve \\(process ${first.child.pid}, since \\d{4}-\\d\\d-\\d\\dT[\\d:]+Z\\): stop that server first`),
    )

    // Readers take no lock: inspect reads the log the running server writes.
    const inspected = await runWeft(['inspect', '--data', dir])
    expect(inspected.code, inspected.stderr).toBe(0)
    expect(inspected.stdout).toMatch(/^Organization urn:weft:org:\S+: 4 Agents, 0 Groups/)

    // A kill leaves the lock behind; the next start finds its holder gone and takes it over.
    expect(await stop(first, 'SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' })
    expect(JSON.parse(readFileSync(lockOf(dir), 'utf8'))).toMatchObject({ pid: first.child.pid })
    const restarted = await startServe(dir)
    servers.push(restarted)
    expect(JSON.parse(readFileSync(lockOf(dir), 'utf8'))).toMatchObject({ pid: restarted.child.pid })
    // A clean stop removes it.
    expect(await stop(restarted, 'SIGTERM')).toEqual({ code: 0, signal: null })
    expect(existsSync(lockOf(dir))).toBe(false)
  })
})
