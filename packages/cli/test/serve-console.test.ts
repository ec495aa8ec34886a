/**
 * The web console (§5 human interface) as `weft serve` serves it, through the real process: the
 * console URL printed at start, the app under `/console/` with its Content-Security-Policy (from a
 * stand-in app directory, so the test holds whether or not the app was built), sign-in with the key
 * file `weft serve --init` wrote, the person's WebSocket opening with a server PING, sign-out
 * closing it, `--console-origin` behind a proxy, and `--no-console`.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { decodeBase64url, encodeBase64url, keyPairFromSeed } from '@weft/codec'
import { CONSOLE_PATHS, sessionProtocols, signInTranscriptBytes, type ConsoleSession, type SignInChallenge } from '@weft/console'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { main, type CliIo } from '../src/bin.js'
import { removeTemporaryDirs, temporaryDir, WEFT } from './serve-world.js'

const CLI = fileURLToPath(new URL('..', import.meta.url))

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/** A running `weft serve` with its stdout lines and its `listening` log line. */
interface Served {
  readonly child: ChildProcess
  readonly port: number
  readonly stdout: string[]
  readonly listening: Record<string, unknown>
  readonly exited: Promise<number | null>
}

const running: Served[] = []

/** Starts `weft serve --data dir --port 0 --insecure-loopback ...extra` and waits for it to listen and print its console line (when it has one). */
async function serve(dir: string, extra: readonly string[], expectConsoleLine = true): Promise<Served> {
  const child = spawn(process.execPath, [...WEFT, 'serve', '--data', dir, '--port', '0', '--insecure-loopback', ...extra], { cwd: CLI, stdio: ['ignore', 'pipe', 'pipe'] })
  const stdout: string[] = []
  const stderr: string[] = []
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  let listening: Record<string, unknown> | undefined
  const ready = new Promise<void>((resolve, reject) => {
    const check = (): void => {
      if (listening !== undefined && (!expectConsoleLine || stdout.some((l) => l.startsWith('console: ')))) resolve()
    }
    createInterface({ input: child.stdout! }).on('line', (line) => {
      stdout.push(line)
      check()
    })
    createInterface({ input: child.stderr! }).on('line', (line) => {
      stderr.push(line)
      if (line.includes('"msg":"listening"')) listening = JSON.parse(line) as Record<string, unknown>
      check()
    })
    void exited.then((code) => reject(new Error(`weft serve exited (${code}) first:\n${stderr.join('\n')}`)))
  })
  await ready
  const port = Number(new URL(String(listening!['url'])).port)
  const served = { child, port, stdout, listening: listening!, exited }
  running.push(served)
  return served
}

/** An HTTP request to the server; `origin` is sent as given (browsers send it on every POST). */
async function call(
  port: number,
  path: string,
  init: { method?: string; origin?: string; token?: string; body?: string } = {},
  // biome-ignore lint/suspicious/noExplicitAny: the tests read whatever JSON the server answered, field by field
): Promise<{ status: number; headers: Headers; text: string; json: any }> {
  const headers: Record<string, string> = {}
  if (init.origin !== undefined) headers['origin'] = init.origin
  if (init.token !== undefined) headers['authorization'] = `Bearer ${init.token}`
  if (init.body !== undefined) headers['content-type'] = 'application/json'
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { method: init.method ?? 'GET', headers, redirect: 'manual', ...(init.body === undefined ? {} : { body: init.body }) })
  const text = await response.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, text, json }
}

/** The key file `weft serve --init` wrote, loaded as the page loads it. */
interface KeyFile {
  readonly principal: { readonly type: 'human'; readonly id: string }
  readonly keyId: string
  readonly seed: string
}

/** Signs in as the holder of `key` from a page of `origin`. */
async function signIn(port: number, origin: string, key: KeyFile): Promise<ConsoleSession> {
  const challenge = (await call(port, CONSOLE_PATHS.challenge, { method: 'POST', origin })).json as SignInChallenge
  expect(challenge.origin).toBe(origin)
  const person = { principalId: key.principal.id, keyId: key.keyId }
  const signature = encodeBase64url(keyPairFromSeed(decodeBase64url(key.seed)!).sign(signInTranscriptBytes(challenge, person)))
  const reply = await call(port, CONSOLE_PATHS.signIn, { method: 'POST', origin, body: JSON.stringify({ ...person, challenge: challenge.challenge, signature }) })
  expect(reply.status, reply.text).toBe(200)
  return reply.json as ConsoleSession
}

let dir: string
let appDir: string
let key: KeyFile
let initText: string

beforeAll(async () => {
  const root = await temporaryDir()
  dir = join(root, 'org')
  let out = ''
  const io: CliIo = { stdout: (t) => void (out += t), stderr: (t) => void (out += t), interactive: false }
  expect(await main(['serve', '--init', '--data', dir], io)).toBe(0)
  initText = out
  key = JSON.parse(await readFile(join(dir, 'owner.key.json'), 'utf8')) as KeyFile
  // A stand-in for the built app: the server serves whatever its manifest lists.
  appDir = join(root, 'app')
  await mkdir(appDir)
  await writeFile(join(appDir, 'index.html'), '<!doctype html><title>Weft console</title><script type="module" src="app.js"></script>\n')
  await writeFile(join(appDir, 'app.js'), 'export {}\n')
  await writeFile(join(appDir, 'manifest.json'), JSON.stringify({ files: { 'index.html': { type: 'text/html' }, 'app.js': { type: 'text/javascript' } } }))
}, 60_000)

afterAll(async () => {
  for (const s of running) if (s.child.exitCode === null) s.child.kill('SIGKILL')
  await Promise.all(running.map((s) => s.exited))
  await removeTemporaryDirs()
})

describe('weft serve --init for the console', () => {
  it("writes the first human's key file and says where to sign in with it", () => {
    expect(key.principal.type).toBe('human')
    expect(initText).toContain('The web console is on the same port, at /console/')
    expect(initText).toContain(`  ${join(dir, 'owner.key.json')}\n`)
  })
})

describe('the console on the weft serve listener', () => {
  let served: Served
  let origin: string

  beforeAll(async () => {
    served = await serve(dir, ['--console-app', appDir])
    origin = `http://127.0.0.1:${served.port}`
  }, 60_000)

  it('prints the console URL at start and logs it with `listening`', () => {
    expect(served.stdout).toContain(`console: ${origin}/console/`)
    expect(served.listening['consoleUrl']).toBe(`${origin}/console/`)
  })

  it('serves the app under /console/ with its Content-Security-Policy; the WebSocket binding keeps every other path', async () => {
    const index = await call(served.port, '/console/')
    expect(index.status).toBe(200)
    expect(index.text).toContain('<title>Weft console</title>')
    expect(index.headers.get('content-security-policy')).toBe(CSP)
    expect(index.headers.get('x-content-type-options')).toBe('nosniff')
    expect((await call(served.port, '/console')).headers.get('location')).toBe('/console/')
    expect((await call(served.port, '/')).status).toBe(426)
  })

  it('signs in with the key file --init wrote, lists the Groups, and refuses a page of another origin', async () => {
    const session = await signIn(served.port, origin, key)
    expect(session.principal).toEqual(key.principal)
    const groups = await call(served.port, CONSOLE_PATHS.groups, { token: session.token })
    expect([groups.status, groups.json]).toEqual([200, { groups: [] }])
    // Every loopback name of the listener is the console's own origin.
    await signIn(served.port, `http://localhost:${served.port}`, key)
    const foreign = await call(served.port, CONSOLE_PATHS.challenge, { method: 'POST', origin: 'https://evil.example' })
    expect([foreign.status, foreign.json.error.code]).toEqual([403, 'AUTH_FORBIDDEN'])
  })

  it("opens the person's WebSocket with the token: the first frame is a PING; sign-out closes it", async () => {
    const session = await signIn(served.port, origin, key)
    const socket = new WebSocket(`ws://127.0.0.1:${served.port}${CONSOLE_PATHS.socket}`, sessionProtocols(session.token), { origin, perMessageDeflate: false })
    const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)))
    const first = await new Promise<Record<string, unknown>>((resolve, reject) => {
      socket.once('message', (data) => resolve(JSON.parse(String(data)) as Record<string, unknown>))
      socket.once('error', reject)
    })
    expect(first['frameType']).toBe('PING')
    expect((await call(served.port, CONSOLE_PATHS.signOut, { method: 'POST', origin, token: session.token })).status).toBe(204)
    expect(await closed).not.toBe(1006)
    expect((await call(served.port, CONSOLE_PATHS.groups, { token: session.token })).status).toBe(401)
  })

  it('refuses a WebSocket without a token (401) or from another origin (403)', async () => {
    const session = await signIn(served.port, origin, key)
    const status = (protocols: string[], from: string): Promise<number> =>
      new Promise((resolve, reject) => {
        const socket = new WebSocket(`ws://127.0.0.1:${served.port}${CONSOLE_PATHS.socket}`, protocols, { origin: from })
        socket.once('unexpected-response', (_request, response) => {
          resolve(response.statusCode ?? 0)
          socket.terminate()
        })
        socket.once('open', () => reject(new Error('opened')))
        socket.once('error', () => undefined)
      })
    expect(await status(['weft-console.v1'], origin)).toBe(401)
    expect(await status(sessionProtocols('forged'), origin)).toBe(401)
    expect(await status(sessionProtocols(session.token), 'https://evil.example')).toBe(403)
  })

  it('stops cleanly with the console on', async () => {
    served.child.kill('SIGTERM')
    expect(await served.exited).toBe(0)
  })
})

describe('console options of weft serve', () => {
  it('--console-origin replaces the default origins and the printed URL (behind a proxy)', async () => {
    const served = await serve(dir, ['--console-app', appDir, '--console-origin', 'https://weft.example.com'])
    expect(served.stdout).toContain('console: https://weft.example.com/console/')
    expect((await call(served.port, CONSOLE_PATHS.challenge, { method: 'POST', origin: `http://127.0.0.1:${served.port}` })).status).toBe(403)
    const challenge = await call(served.port, CONSOLE_PATHS.challenge, { method: 'POST', origin: 'https://weft.example.com' })
    expect([challenge.status, challenge.json.origin]).toEqual([200, 'https://weft.example.com'])
    served.child.kill('SIGTERM')
    expect(await served.exited).toBe(0)
  })

  it('answers 503 with the build command when the app was not built', async () => {
    const served = await serve(dir, ['--console-app', join(appDir, 'absent')])
    const reply = await call(served.port, '/console/')
    expect([reply.status, reply.text]).toEqual([503, 'The console app has not been built: run npm run build -w @weft/console\n'])
    expect(reply.headers.get('content-security-policy')).toBe(CSP)
    served.child.kill('SIGTERM')
    expect(await served.exited).toBe(0)
  })

  it('--no-console leaves /console to the WebSocket binding (426) and prints no console line', async () => {
    const served = await serve(dir, ['--no-console'], false)
    expect(served.listening['consoleUrl']).toBeUndefined()
    expect((await call(served.port, '/console/')).status).toBe(426)
    served.child.kill('SIGTERM')
    expect(await served.exited).toBe(0)
    expect(served.stdout.filter((l) => l.startsWith('console: '))).toEqual([])
  })

  it('refuses a --console-origin that is not an origin, in one line', async () => {
    let err = ''
    const io: CliIo = { stdout: () => undefined, stderr: (t) => void (err += t), interactive: false }
    expect(await main(['serve', '--data', dir, '--insecure-loopback', '--console-origin', 'https://weft.example.com/console/'], io)).toBe(2)
    expect(err).toBe('weft serve: --console-origin https://weft.example.com/console/: an origin is scheme, host and port only (https://weft.example.com); the console is always at /console/\n')
    err = ''
    expect(await main(['serve', '--data', dir, '--insecure-loopback', '--no-console', '--console-origin', 'https://weft.example.com'], io)).toBe(2)
    expect(err).toContain('--no-console excludes --console-origin')
  })
})
