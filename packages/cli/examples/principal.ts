// The README's `weft principal` examples of @weft/cli, run by the release check (tools/release-check):
// `weft serve --init`, then `weft principal add` for a human and an Agent, then a server started
// afterwards, to which the Agent connects with its key file and on which the human signs a Command.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { main, type CliIo } from '@weft/cli'
import { controlTransport, startServer } from '@weft/cli/serve'
import { createClient } from '@weft/client'
import type { CommandPayload } from '@weft/spec'

// --- Setup: the commands of the README's shell block, in a scratch directory (key files go to the current one).

const scratch = mkdtempSync(join(tmpdir(), 'weft-principal-'))
process.chdir(scratch)
let printed = ''
const io: CliIo = { stdout: (text) => void (printed += text), stderr: (text) => void (printed += text), interactive: false }
assert.equal(await main(['serve', '--init', '--data', 'org'], io), 0)
assert.equal(await main(['principal', 'add', 'agent', '--data', 'org', '--name', 'builder', '--capability', 'example.build@1.0.0', '--max-concurrency', '2', '--endpoint', 'wss://agents.example/builder'], io), 0)
assert.equal(await main(['principal', 'add', 'human', '--data', 'org', '--name', 'ada'], io), 0)
assert.match(printed, /reads organization\.json only when it starts/)
// A name already in the file is refused with exit code 2, and so is overwriting a key file.
assert.equal(await main(['principal', 'add', 'human', '--data', 'org', '--name', 'ada', '--key-out', 'other.key.json'], io), 2)
assert.equal(await main(['principal', 'add', 'human', '--data', 'org', '--name', 'grace', '--key-out', 'ada.key.json'], io), 2)

// Started after the additions, the server registers the Agent's card and knows both keys.
const server = await startServer({ dataDir: 'org', port: 0, insecureLoopback: true, controlPort: 0 })
const url = server.url
const controlUrl = server.controlUrl!
const groupId = 'urn:example:group:build'
const payload: CommandPayload<'mission.create'> = {
  missionId: 'urn:example:mission:build',
  title: 'Build',
  objective: 'Build the release.',
  definitionOfDone: [{ criterionId: 'built', description: 'It builds.', evidenceRequired: ['human_review'] }],
  deadline: new Date(Date.now() + 30 * 86_400_000).toISOString(),
  budget: { currency: 'USD', financialLimit: 100 },
  approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
  coordinatorAgentId: 'set below',
  coordinatorLeaseSeconds: 86_400,
}

// --- The README's first block: the Agent, with @weft/codec and @weft/client alone

import { readFile } from 'node:fs/promises'
import { decodeBase64url, keyPairFromSeed } from '@weft/codec'
import { connectWebSocket } from '@weft/client/wire'

const key = JSON.parse(await readFile('builder.key.json', 'utf8'))
const builderKey = { keyId: key.keyId, pair: keyPairFromSeed(decodeBase64url(key.seed)!) }
const builder = await connectWebSocket({ url, actor: key.principal, signingKey: builderKey }) // url: the server's (`listening` log line)

// --- The README's second block: the human, on the control endpoint

import { readKeyFile } from '@weft/cli/serve'

const me = await readKeyFile('ada.key.json')
const human = createClient({ actor: me.actor, signingKey: me.signingKey, transport: controlTransport(controlUrl) })
await human.missionCreate({ ...payload, coordinatorAgentId: key.principal.id }, { groupId })

// --- What the blocks claim

// The handshake opened the Agent's first Session Epoch (§6.3), and the human's Mission names it as Coordinator.
assert.equal(builder.sessionEpoch(), 1)
assert.equal(server.authority.group(groupId)?.mission.coordinator.agentId, key.principal.id)
// The private keys are in their own files, mode 600, and organization.json holds only the public keys.
const organization = readFileSync(join('org', 'organization.json'), 'utf8')
for (const file of ['ada.key.json', 'builder.key.json']) {
  assert.equal(statSync(file).mode & 0o777, 0o600)
  const { seed, publicKey } = JSON.parse(readFileSync(file, 'utf8')) as { seed: string; publicKey: string }
  assert.ok(!organization.includes(seed) && organization.includes(publicKey))
}
assert.equal(me.actor.type, 'human')

await builder.close()
await server.close()
process.chdir(tmpdir())
rmSync(scratch, { recursive: true, force: true })
