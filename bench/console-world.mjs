// The web console benchmark's world (see console.mjs): a test Organization on the wall clock with
// two Missions (a new one and one of EVENTS Events), the WebSocket binding on 127.0.0.1 and the
// console app built from source on the same listener.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestOrganization } from '@weft/authority/testing'
import { createWireServer } from '@weft/authority/wire'
import { encodeBase64url } from '@weft/codec'
import { CONSOLE_PATHS, CONSOLE_PROTOCOL } from '@weft/console'
import { createConsoleServer } from '@weft/console/server'

/** Events of the big Group (WEFT_BENCH_CONSOLE_EVENTS, default 10,000). */
export const EVENTS = Number(process.env.WEFT_BENCH_CONSOLE_EVENTS ?? 10_000)
export const ORG = 'urn:weft:bench-console:org'
export const SMALL_GROUP = 'urn:weft:bench-console:group:new'
export const BIG_GROUP = 'urn:weft:bench-console:group:10k'
/** Wall-clock milliseconds with sub-millisecond resolution, comparable with the page's `timeOrigin + now()`. */
export const wallMs = () => performance.timeOrigin + performance.now()

function missionPayload(n, coordinatorAgentId) {
  return {
    missionId: `urn:weft:bench-console:mission:${n}`,
    title: n === 1 ? 'A new Mission' : `A Mission of ${EVENTS} Events`,
    objective: 'Measure the console.',
    definitionOfDone: [{ criterionId: 'measured', description: 'Numbers exist.', evidenceRequired: ['human_review'] }],
    deadline: new Date(Date.now() + 30 * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    budget: { currency: 'USD', financialLimit: 1000 },
    approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
    coordinatorAgentId,
    coordinatorLeaseSeconds: 86_400,
  }
}

let messages = 0
/** `n` signed `message.post`s of `client` to `conversationId`, built now; the text carries a serial. */
export function posts(client, conversationId, n, prefix) {
  return Array.from({ length: n }, () => {
    const serial = ++messages
    return client.build('message.post', { messageId: `urn:weft:bench-console:message:${serial}`, conversationId, content: [{ type: 'text', text: `${prefix} ${serial}: status on track.` }] })
  })
}

/**
 * A test Organization (Ada, a human, and a Coordinator) on the wall clock, two Missions Ada owns
 * (a new one, and one filled with Messages up to EVENTS Events), the binding on 127.0.0.1 with
 * the console app (built from source) on the same listener, and a static text page as the
 * first-paint baseline. `minify: false` builds the app with readable names, for a profile.
 */
export async function setUp(log, { minify = true } = {}) {
  const org = createTestOrganization({ organizationId: ORG, humans: ['ada'], agents: ['coordinator'] })
  const { authority, clientOf } = await org.start()
  const ada = org.humans.ada
  const coordinator = org.agents.coordinator
  const owner = clientOf(ada)
  const conversations = {}
  for (const [n, groupId] of [
    [1, SMALL_GROUP],
    [2, BIG_GROUP],
  ]) {
    await owner.missionCreate(missionPayload(n, coordinator.actor.id), { groupId })
    conversations[groupId] = authority.group(groupId).group.mainConversationId
  }
  const smallHead = authority.group(SMALL_GROUP).head
  const fill = EVENTS - authority.group(BIG_GROUP).head
  log(`console: building a Group of ${EVENTS} Events (${fill} Messages) ...`)
  const began = performance.now()
  const bigOwner = owner.withGroup(BIG_GROUP)
  for (let done = 0; done < fill; ) {
    const batch = posts(bigOwner, conversations[BIG_GROUP], Math.min(1000, fill - done), 'history')
    for (const built of batch) await authority.submit(built.bytes)
    done += batch.length
  }
  const fillMs = performance.now() - began
  if (authority.group(BIG_GROUP).head !== EVENTS) throw new Error(`the big Group has ${authority.group(BIG_GROUP).head} Events, not ${EVENTS}`)

  // The key file `weft principal add human ada` would write.
  const seed = ada.seed
  const keyFile = JSON.stringify({
    format: 'weft.key/1',
    organizationId: ORG,
    principal: ada.actor,
    keyId: ada.signingKey.keyId,
    publicKey: encodeBase64url(ada.signingKey.pair.publicKey),
    seed: encodeBase64url(seed),
    validFrom: '2026-01-01T00:00:00Z',
  })

  const appDir = await mkdtemp(join(tmpdir(), 'weft-bench-console-'))
  const { buildApp } = await import('../packages/console/scripts/build-app.mjs')
  const built = await buildApp({ outDir: appDir, minify })
  const appBytes = built?.files?.['app.js']?.bytes

  // Registered before the binding's delivery listens, so the time is taken at commit, before any
  // frame is written; it records the Group `commits.groupId` names, while it names one.
  const commits = { groupId: undefined, at: new Map() }
  authority.onCommit((events) => {
    if (commits.groupId === undefined) return
    const at = wallMs()
    for (const e of events) if (e.groupId === commits.groupId) commits.at.set(e.sequence, at)
  })

  let consoleServer
  const wire = await createWireServer({
    authority,
    registry: org.registry,
    sessionIssuer: org.controlPlane,
    insecureLoopback: true,
    host: '127.0.0.1',
    port: 0,
    idleTimeoutMs: 0,
    http: (request, response) => {
      if (request.url === '/bench/text.html') {
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
        response.end(
          '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Text</title><link rel="icon" href="data:,"></head><body><main><h1>Weft console</h1><p>A static page of text: the first-paint baseline.</p></main></body></html>',
        )
        return
      }
      if (consoleServer?.handle(request, response) !== true) response.writeHead(426).end()
    },
    humanSessions: { path: CONSOLE_PATHS.socket, protocol: CONSOLE_PROTOCOL, admit: (request) => consoleServer.gate.admit(request) },
  })
  const origin = `http://127.0.0.1:${wire.port}`
  consoleServer = createConsoleServer({ registry: org.registry, authority, allowedOrigins: [origin], appDir })
  consoleServer.attach(wire)

  const world = { org, authority, owner, coordinator, conversations, commits, smallHead, fillMs, appBytes, keyFile, origin, wire, consoleServer }
  world.close = async () => {
    consoleServer.close()
    await wire.close()
    await rm(appDir, { recursive: true, force: true })
  }
  return world
}
