/**
 * A person's session in the console, end to end in Chromium against a real server (the world of
 * `browser-world.ts`). What it proves:
 *
 * - Sign-in (§6.4 keys, §5 human interface): a person's key file signs in and the page names
 *   them; a wrong key, an unknown person and an Agent's key are refused, the first two with the
 *   same generic §19 `AUTH_INVALID_SIGNATURE`, the last by the page before any request.
 * - A Mission created from the console reaches Agents (§7.1, §17): the Coordinator, connected
 *   over the WebSocket binding with its own HELLO (§6.3), receives the Group's `mission.created`,
 *   signed by the Authority (§6.4) for a Command whose actor is the person.
 * - CSRF: pages of another origin can neither get a challenge, sign in nor open the console's
 *   WebSocket (403), the API wants a bearer token (401 `AUTH_REQUIRED`, §19), a challenge that
 *   was never issued signs nothing in (401), and no response sets a cookie. The cookie check reads
 *   every response of this file: the tests before it have fetched each console path the app uses
 *   (the app and its assets, challenge, sign-in, Groups, Agents and the Authority's time).
 */
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { connectWebSocket } from '@weft/client/wire'
import { encodeBase64url, type ProtocolError } from '@weft/codec'
import type { Event } from '@weft/spec'
import { signedVerifier } from '@weft/validators/signed'
import { describe, expect, it } from 'vitest'
import { CONSOLE_PATHS, CONSOLE_PROTOCOL, sessionProtocols, signInTranscriptBytes, type SignInChallenge } from '../src/shared/sign-in.js'
import {
  ada,
  authority,
  base,
  clock,
  consolePage,
  consoleServer,
  contexts,
  coordinator,
  freshContext,
  keyPaths,
  nodeSignIn,
  org,
  responseHeaders,
  served,
  servers,
  signIn,
  sockets,
  until,
  useBrowserWorld,
  wire,
  wireLog,
  worker,
} from './browser-world.js'

/** The page global the evaluated functions touch (the test's TypeScript has no DOM library). */
declare const WebSocket: new (
  url: string,
  protocols?: string[],
) => { onopen: (() => void) | null; onclose: ((event: { code: number }) => void) | null; onerror: (() => void) | null; close(): void; readonly protocol: string }

useBrowserWorld()

describe('the console in a browser', () => {
  it('signs a person in with their key file; refuses a wrong key and an unknown person alike, and an Agent key in the page (§6.4, §19)', async () => {
    const context = await freshContext()
    const { page, errors } = await consolePage(context)
    const requests: string[] = []
    page.on('request', (r) => requests.push(new URL(r.url()).pathname))
    const signIns: { status: number; body: { error: Record<string, unknown> } }[] = []
    page.on('response', (r) => {
      if (new URL(r.url()).pathname === CONSOLE_PATHS.signIn) void r.json().then((body: { error: Record<string, unknown> }) => signIns.push({ status: r.status(), body }))
    })
    const sessionsBefore = consoleServer.sessionCount

    // The refusal the page shows for a key the server does not accept, and that nothing signed in.
    const refused = async (keyPath: string): Promise<string> => {
      const before = signIns.length
      await page.getByTestId('key-file').setInputFiles(keyPath)
      const note = page.getByTestId('signin-refusal')
      await note.waitFor()
      await until('the sign-in answer', () => signIns.length === before + 1)
      expect(await note.getAttribute('role')).toBe('alert')
      expect(await page.getByTestId('person').count()).toBe(0)
      expect(await page.getByTestId('signin-form').isVisible()).toBe(true)
      expect(consoleServer.sessionCount).toBe(sessionsBefore)
      // The key text left the form whatever happened.
      expect(await page.getByTestId('key-text').inputValue()).toBe('')
      return (await note.textContent()) ?? ''
    }
    const wrong = await refused(keyPaths.wrong)
    expect(wrong).toBe('AUTH_INVALID_SIGNATURE The signature was not accepted: the key may be wrong, revoked or not yet valid, or the request was too old.')
    const unknown = await refused(keyPaths.unknown)
    expect(unknown).toBe(wrong)
    // The server's answers are the same generic 401, apart from their time.
    const bodies = signIns.map(({ status, body }) => {
      const { occurredAt, ...rest } = body.error
      expect(typeof occurredAt).toBe('string')
      return { status, error: rest }
    })
    expect(bodies).toEqual([
      { status: 401, error: { code: 'AUTH_INVALID_SIGNATURE', message: 'The sign-in does not verify.', retryable: false } },
      { status: 401, error: { code: 'AUTH_INVALID_SIGNATURE', message: 'The sign-in does not verify.', retryable: false } },
    ])

    // An Agent's key: the page refuses it itself and asks the server nothing.
    const asked = requests.filter((p) => p.startsWith('/console/api/')).length
    await page.getByTestId('key-file').setInputFiles(keyPaths.agent)
    const problem = page.getByTestId('key-problem')
    await problem.waitFor()
    expect(await problem.getAttribute('role')).toBe('alert')
    expect(await problem.textContent()).toBe('This key belongs to an Agent or a service, not a person. Only a human Principal’s key can sign in to the console.')
    expect(await page.getByTestId('signin-refusal').count()).toBe(0)
    expect(requests.filter((p) => p.startsWith('/console/api/')).length).toBe(asked)
    expect(await page.getByTestId('person').count()).toBe(0)
    expect(consoleServer.sessionCount).toBe(sessionsBefore)

    // Ada's own key file signs her in: the top bar names her, and her refusals are gone.
    await signIn(page, keyPaths.ada, ada)
    expect(consoleServer.sessionCount).toBe(sessionsBefore + 1)
    expect(await page.getByTestId('key-problem').count()).toBe(0)
    await until('the WebSocket', () => wire.connections.some((c) => c.principal?.id === ada.actor.id))
    await page
      .getByTestId('connection-state')
      .filter({ hasText: /^Connected$/ })
      .waitFor()
    expect(errors).toEqual([])
  })

  it('creates a Mission from the form; its Coordinator, connected over the WebSocket binding, receives the signed mission.created (§7.1, §17, §6.4)', async () => {
    const context = await freshContext()
    const { page, errors } = await consolePage(context)
    await signIn(page, keyPaths.ada, ada)
    // The Coordinator connects with its own HELLO before the Mission exists (§6.3).
    const conn = await connectWebSocket({ url: wire.url, actor: coordinator.actor, signingKey: coordinator.signingKey })
    sockets.push(conn)
    expect(conn.status).toBe('open')
    expect(conn.sessionEpoch()).toBeGreaterThan(0)

    const title = `Release notes ${randomBytes(4).toString('hex')}`
    await page.getByTestId('new-mission').click()
    await page.getByTestId('m-title').fill(title)
    await page.getByTestId('m-objective').fill('Write the release notes.')
    await page.getByTestId('m-done').fill('written: The notes are written.')
    // The Coordinator field offers the Organization's registered Agents (their cards, §6.1).
    await expect
      .poll(() => page.locator('[data-testid="m-coordinator-agents"] option').evaluateAll((options) => options.map((o) => o.getAttribute('value'))))
      .toEqual([coordinator.actor.id, org.agents.worker.actor.id].sort())
    await page.getByTestId('m-coordinator').fill(coordinator.actor.id)
    await page.getByTestId('mission-submit').click()
    await page.getByTestId('mission-title').filter({ hasText: title }).waitFor()
    const current = page.locator('[data-testid="group-item"][aria-current="page"]')
    await current.waitFor()
    const groupId = (await current.getAttribute('data-group-id'))!
    expect(await current.textContent()).toContain(title)
    expect(groupId).toMatch(/^urn:uuid:/)
    expect(await page.getByTestId('mission-refusal').count()).toBe(0)

    const received: Event[] = []
    const refusals: string[] = []
    conn.feed.subscribe([{ groupId, afterSequence: 0 }], { onEvent: (event) => void received.push(event), onError: (error) => void refusals.push(error.code) })
    await until("mission.created on the Coordinator's feed", () => received.some((e) => e.kind === 'mission.created'))
    const created = received.find((e) => e.kind === 'mission.created')!
    expect(refusals).toEqual([])
    expect(created).toMatchObject({ groupId, sequence: 1, actor: ada.actor, acceptedBy: org.authorityService.actor, cause: { type: 'command' } })
    // What the form said, as the person typed it: the Mission, its owner and Coordinator, the planning Conversation, both seats (§7.1).
    expect(created.payload).toMatchObject({
      mission: {
        groupId,
        objective: 'Write the release notes.',
        definitionOfDone: [{ criterionId: 'written', description: 'The notes are written.', evidenceRequired: ['human_review'] }],
        missionOwner: ada.actor,
        coordinator: { agentId: coordinator.actor.id, coordinatorEpoch: 1 },
        state: 'active',
        approvalPolicy: { finalHumanApproval: true },
      },
      conversation: { title, createdBy: ada.actor },
      memberships: [
        { member: ada.actor, role: 'mission_owner' },
        { member: coordinator.actor, role: 'coordinator' },
      ],
    })
    // The Event is the Authority's, byte for byte, and its signature verifies under the Authority's Registry key (§6.4).
    expect(created).toEqual(authority.events(groupId)[0])
    const verified = signedVerifier.verify('event', JSON.stringify(created), org.registry)
    expect(verified.ok, JSON.stringify(verified)).toBe(true)
    if (verified.ok) expect(verified.verified.key.principal).toEqual(org.authorityService.actor)
    // The Command behind it is Ada's (the page signed it with her key: no other key of hers exists outside this process).
    expect(authority.group(groupId)?.mission?.missionOwner).toEqual(ada.actor)
    expect(created.commandHash).toMatch(/^sha256:[0-9a-f]{64}$/)

    // An Agent without a Membership learns nothing of the Group (§8, §17.2).
    const outsider = await connectWebSocket({ url: wire.url, actor: worker.actor, signingKey: worker.signingKey })
    sockets.push(outsider)
    const leaked: Event[] = []
    const outsiderErrors: string[] = []
    outsider.feed.subscribe([{ groupId, afterSequence: 0 }], { onEvent: (event) => void leaked.push(event), onError: (error: ProtocolError) => void outsiderErrors.push(error.code) })
    await until("the outsider's refusal", () => outsiderErrors.length > 0)
    expect(outsiderErrors).toEqual(['GROUP_NOT_FOUND'])
    expect(leaked).toEqual([])
    expect(errors).toEqual([])
  })

  it('refuses requests of other origins, wants a token, signs no unissued challenge in, and sets no cookie (CSRF, §19)', async () => {
    /** Ada's own, valid signature over a challenge the server never issued (made up here, for the console's origin). */
    const unissuedSignIn = (): string => {
      const made: SignInChallenge = {
        challenge: encodeBase64url(randomBytes(32)),
        origin: base,
        issuedAt: new Date(clock.now()).toISOString(),
        expiresAt: new Date(clock.now() + 60_000).toISOString(),
      }
      const person = { principalId: ada.actor.id, keyId: ada.signingKey.keyId }
      return JSON.stringify({ ...person, challenge: made.challenge, signature: encodeBase64url(ada.signingKey.pair.sign(signInTranscriptBytes(made, person))) })
    }
    // A page of another origin (same host, another port: same-site, so only the Origin check stops it).
    const evilServer = createServer((_request, response) =>
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><html lang="en"><title>Elsewhere</title><p>Elsewhere</p></html>\n'),
    )
    servers.push(evilServer)
    await new Promise<void>((resolve) => evilServer.listen(0, '127.0.0.1', resolve))
    const evilOrigin = `http://127.0.0.1:${(evilServer.address() as AddressInfo).port}`
    const { token } = await nodeSignIn(ada)
    const context = await freshContext()
    const evil = await context.newPage()
    await evil.goto(`${evilOrigin}/`)
    const servedBefore = served.length
    const adaSockets = (): number => wire.connections.filter((c) => c.principal?.id === ada.actor.id && c.status === 'open').length
    const socketsBefore = adaSockets()
    const wireLogBefore = wireLog.length
    const socketUrl = `${base.replace('http:', 'ws:')}${CONSOLE_PATHS.socket}`
    const attempts = await evil.evaluate(
      async ({ base, socketUrl, protocols }) => {
        const attempt = async (request: () => Promise<{ status: number; type: string }>): Promise<string> => {
          try {
            const r = await request()
            return `${r.type} ${r.status}`
          } catch (error) {
            return `blocked ${String(error)}`
          }
        }
        const body = JSON.stringify({ principalId: 'p', keyId: 'k', challenge: 'c', signature: 's' })
        const socket = await new Promise<string>((resolve) => {
          const ws = new WebSocket(socketUrl, protocols)
          ws.onopen = () => {
            resolve('open')
            ws.close()
          }
          ws.onclose = (e) => resolve(`closed ${e.code}`)
        })
        return {
          challenge: await attempt(() => fetch(`${base}/console/api/challenge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })),
          // A "simple" request (what a form could send): it reaches the server, whose answer the page cannot read.
          challengeSimple: await attempt(() => fetch(`${base}/console/api/challenge`, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: '{}' })),
          signIn: await attempt(() => fetch(`${base}/console/api/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })),
          signInSimple: await attempt(() => fetch(`${base}/console/api/sign-in`, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body })),
          socket,
        }
      },
      { base, socketUrl, protocols: sessionProtocols(token) },
    )
    expect(attempts).toEqual({
      challenge: expect.stringMatching(/^blocked TypeError/),
      challengeSimple: expect.stringMatching(/^(blocked TypeError|opaque 0$)/),
      signIn: expect.stringMatching(/^blocked TypeError/),
      signInSimple: expect.stringMatching(/^(blocked TypeError|opaque 0$)/),
      socket: 'closed 1006',
    })
    // What the server answered that origin: 403 to each POST, before reading its body.
    const fromEvil = served.slice(servedBefore).filter((s) => s.origin === evilOrigin)
    expect(fromEvil.filter((s) => s.method === 'POST').map((s) => `${s.path} ${s.status}`)).toEqual([`${CONSOLE_PATHS.challenge} 403`, `${CONSOLE_PATHS.signIn} 403`])
    // The JSON requests never left the browser: their CORS preflights were refused.
    expect(fromEvil.filter((s) => s.method !== 'POST').map((s) => `${s.method} ${s.path} ${s.status}`)).toEqual([`OPTIONS ${CONSOLE_PATHS.challenge} 403`, `OPTIONS ${CONSOLE_PATHS.signIn} 403`])
    expect(adaSockets()).toBe(socketsBefore)
    // The wire server refused the upgrade for its Origin (403 AUTH_FORBIDDEN, before any WebSocket existed).
    expect(
      wireLog
        .slice(wireLogBefore)
        .filter((e) => e.message.startsWith('human session'))
        .map((e) => [e.code, e.message]),
    ).toEqual([['AUTH_FORBIDDEN', expect.stringContaining('(Origin)')]])

    // The console's own page: the same socket opens with that token (so the Origin is what refused it above)...
    const { page } = await consolePage(context)
    const own = await page.evaluate(
      async ({ socketUrl, protocols }) =>
        new Promise<string>((resolve) => {
          const ws = new WebSocket(socketUrl, protocols)
          ws.onopen = () => {
            resolve(`open ${ws.protocol}`)
            ws.close()
          }
          ws.onclose = (e) => resolve(`closed ${e.code}`)
        }),
      { socketUrl, protocols: sessionProtocols(token) },
    )
    expect(own).toBe(`open ${CONSOLE_PROTOCOL}`)
    // ...but the API answers nothing without the token, and an unissued challenge signs nobody in.
    const sameOrigin = await page.evaluate(
      async ({ body }) => {
        const read = async (r: { status: number; headers: { get(name: string): string | null }; json(): Promise<unknown> }) => ({
          status: r.status,
          cookie: r.headers.get('set-cookie'),
          error: ((await r.json()) as { error?: { code?: string } }).error?.code,
        })
        return {
          groups: await read(await fetch('/console/api/groups')),
          groupsBadToken: await read(await fetch('/console/api/groups', { headers: { authorization: 'Bearer AAAA' } })),
          unissued: await read(await fetch('/console/api/sign-in', { method: 'POST', headers: { 'content-type': 'application/json' }, body })),
        }
      },
      { body: unissuedSignIn() },
    )
    expect(sameOrigin).toEqual({
      groups: { status: 401, cookie: null, error: 'AUTH_REQUIRED' },
      groupsBadToken: { status: 401, cookie: null, error: 'AUTH_REQUIRED' },
      unissued: { status: 401, cookie: null, error: 'AUTH_INVALID_SIGNATURE' },
    })

    // No console response of this file, in any context, set a cookie; no browser holds one.
    const seen = await Promise.all(responseHeaders)
    const consoleResponses = seen.filter((r) => r.url.startsWith(`${base}/console`))
    const paths = new Set(consoleResponses.map((r) => new URL(r.url).pathname))
    for (const path of [CONSOLE_PATHS.app, '/console/app.js', '/console/app.css', CONSOLE_PATHS.groups, CONSOLE_PATHS.signIn]) expect([...paths]).toContain(path)
    expect(consoleResponses.filter((r) => Object.keys(r.headers).some((h) => h.toLowerCase() === 'set-cookie'))).toEqual([])
    for (const c of contexts) expect(await c.cookies()).toEqual([])
  })
})
