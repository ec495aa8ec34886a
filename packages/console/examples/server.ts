// The README's example of @weft/console, run by the release check (tools/release-check): a wire
// server with the console mounted, and a person signing in the way the page does.
import assert from 'node:assert/strict'

// --- The README block, verbatim ---
import { createTestOrganization } from '@weft/authority/testing'
import { createWireServer } from '@weft/authority/wire'
import { encodeBase64url } from '@weft/codec'
import { CONSOLE_PATHS, signInTranscriptBytes, type SignInChallenge } from '@weft/console'
import { createConsoleServer } from '@weft/console/server'

const org = createTestOrganization({ humans: ['ada'], agents: ['coordinator'] })
const { authority } = await org.start()
const origin = 'http://127.0.0.1:7443'

const consoleServer = createConsoleServer({ registry: org.registry, authority, allowedOrigins: [origin] })
const wire = await createWireServer({
  authority,
  registry: org.registry,
  sessionIssuer: org.controlPlane,
  insecureLoopback: true,
  port: 7443,
  // Plain HTTP: the console's paths, and the binding's 426 for the rest.
  http: (request, response) => {
    if (!consoleServer.handle(request, response)) response.writeHead(426).end()
  },
  humanSessions: consoleServer.gate,
})
consoleServer.attach(wire)

// What the page does: fetch a challenge, sign it with the person's key, exchange it for a token.
const ada = org.humans.ada
const post = (path: string, body?: unknown) =>
  fetch(`${origin}${path}`, { method: 'POST', headers: { origin, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }).then((r) => r.json())
const challenge = (await post(CONSOLE_PATHS.challenge)) as SignInChallenge
const person = { principalId: ada.actor.id, keyId: ada.signingKey.keyId }
const signature = encodeBase64url(ada.signingKey.pair.sign(signInTranscriptBytes(challenge, person)))
const { token } = await post(CONSOLE_PATHS.signIn, { ...person, challenge: challenge.challenge, signature })
const groups = await fetch(`${origin}${CONSOLE_PATHS.groups}`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.json())
console.log(groups) // { groups: [] }: Ada owns no Mission yet

consoleServer.close()
await wire.close()
// --- end of the README block ---

assert.equal(typeof token, 'string', 'the sign-in answered a session token')
assert.deepEqual(groups, { groups: [] }, 'Ada sees no Group: she owns no Mission and holds no Membership')
assert.equal(consoleServer.sessionCount, 0, 'close() ended every session')
console.log('console: signed in with a Registry key; no Group visible yet')
