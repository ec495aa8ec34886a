/**
 * `weft demo --console`: the demo's Authority on the WebSocket binding with the web console (§5)
 * on the same loopback listener, so a person follows both Missions in a browser and decides on
 * their submissions there (§7.3, §22 "a human Approval interface").
 *
 * The demo runs on a virtual clock (`clock.ts`) that `--pace` slows to a speed a person can
 * follow. Everything that dates or expires protocol state reads that clock, as the Authority
 * does: the console's challenges and sessions, its `/console/api/time` (which the page dates its
 * Commands with, §6.4 freshness) and the wire server's frames. The console's lifetimes are
 * therefore scaled by the pace, so that a challenge still lasts about a minute of wall time.
 * Connection liveness (idle, handshake) stays on wall-clock timers inside the wire server.
 *
 * The demo human's key is deterministic (`organization.ts`): the console's sign-in is real, but
 * the key is no secret, which is why the listener is loopback only and the key file is written
 * to a fresh private directory (mode 0700, the file 0600) for this run only.
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createWireServer, type WireServer } from '@weft/authority/wire'
import { encodeBase64url } from '@weft/codec'
import { CONSOLE_PATHS, CONSOLE_PROTOCOL } from '@weft/console'
import { CONSOLE_LIMITS, createConsoleServer, type ConsoleLogEntry, type ConsoleServer } from '@weft/console/server'
import { KEY_FILE_FORMAT, type KeyFile } from '../principal.js'
import { createPrivateFile } from '../serve/files.js'
import { demoSeed, ORGANIZATION_ID, VALID_FROM } from './organization.js'
import type { DemoWorld } from './run.js'

/** Options of {@link openDemoConsole}. */
export interface DemoConsoleOptions {
  /** Loopback TCP port; 0 (the default) picks a free one. */
  readonly port?: number
  /** Virtual milliseconds per wall millisecond the demo runs at (its `pace`): the console's lifetimes are scaled by it. */
  readonly pace: number
  /** The built console app. Default: `dist/app/` of `@weft/console`. */
  readonly appDir?: string
  /** Where the key file's private directory is made. Default: the system's temporary directory. */
  readonly tmpDir?: string
  /** Receives the console's log (why a sign-in was refused, sessions begun and ended). */
  readonly log?: (entry: ConsoleLogEntry) => void
}

/** The demo's console, listening. */
export interface DemoConsole {
  /** The page to open: `http://127.0.0.1:PORT/console/`. */
  readonly url: string
  /** The demo human's key file (`weft.key/1`), to load on the sign-in page. */
  readonly keyPath: string
  readonly wire: WireServer
  readonly console: ConsoleServer
  /** Ends every session, stops listening and deletes the key file. */
  close(): Promise<void>
}

/** The plain-HTTP answer outside the console: this listener speaks the WebSocket binding otherwise (§17.1). */
function refuseHttp(response: ServerResponse): void {
  response.writeHead(426, { 'content-type': 'text/plain', upgrade: 'websocket' }).end('This endpoint speaks the MissionWeaveProtocol WebSocket binding only.\n')
}

/**
 * Starts the binding with the console for the demo's `world` on 127.0.0.1 (plain `ws`/`http`,
 * which the binding allows on loopback only), and writes the MissionOwner's key file.
 * @throws UsageError from the wire server when the port cannot be used.
 */
export async function openDemoConsole(world: DemoWorld, options: DemoConsoleOptions): Promise<DemoConsole> {
  const dir = await mkdtemp(join(options.tmpDir ?? tmpdir(), 'weft-demo-console-'))
  const owner = world.principals.owner
  const keyPath = join(dir, `${owner.name}.key.json`)
  const keyFile: KeyFile = {
    format: KEY_FILE_FORMAT,
    organizationId: ORGANIZATION_ID,
    principal: { type: 'human', id: owner.actor.id },
    keyId: owner.key.keyId,
    publicKey: encodeBase64url(owner.key.pair.publicKey),
    seed: encodeBase64url(demoSeed('human', owner.name)),
    validFrom: VALID_FROM,
  }
  createPrivateFile(keyPath, `${JSON.stringify(keyFile, null, 2)}\n`)

  const clock = { now: () => world.clock.now() }
  let consoleServer: ConsoleServer | undefined
  let wire: WireServer
  try {
    wire = await createWireServer({
      authority: world.authority,
      registry: world.registry,
      sessionIssuer: { actor: world.principals.controlPlane.actor, signingKey: world.principals.controlPlane.key },
      insecureLoopback: true,
      host: '127.0.0.1',
      port: options.port ?? 0,
      clock,
      http: (request: IncomingMessage, response: ServerResponse) => {
        if (consoleServer?.handle(request, response) !== true) refuseHttp(response)
      },
      humanSessions: {
        path: CONSOLE_PATHS.socket,
        protocol: CONSOLE_PROTOCOL,
        admit: (request) => consoleServer!.gate.admit(request),
      },
    })
  } catch (error) {
    await rm(dir, { recursive: true, force: true })
    throw error
  }
  const origins = ['127.0.0.1', 'localhost'].map((host) => `http://${host}:${wire.port}`)
  consoleServer = createConsoleServer({
    registry: world.registry,
    authority: world.authority,
    allowedOrigins: origins,
    clock,
    ...(options.appDir === undefined ? {} : { appDir: options.appDir }),
    // Virtual lifetimes that last as long in wall time as the defaults do.
    limits: { challengeTtlMs: CONSOLE_LIMITS.challengeTtlMs * options.pace, sessionTtlMs: CONSOLE_LIMITS.sessionTtlMs * options.pace },
    ...(options.log === undefined ? {} : { log: options.log }),
  })
  consoleServer.attach(wire)
  const served = consoleServer
  let closing: Promise<void> | undefined
  return {
    url: `${origins[0]!}${CONSOLE_PATHS.app}`,
    keyPath,
    wire,
    console: served,
    close() {
      closing ??= (async () => {
        served.close()
        await wire.close()
        await rm(dir, { recursive: true, force: true })
      })()
      return closing
    },
  }
}
