// The README's examples of @weft/cli, run by the release check (tools/release-check): a Command
// through the control endpoint of an in-process `weft serve`, then the demo as a library.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { newOrganization, ORGANIZATION_FILE, startServer, writeOrganization } from '@weft/cli/serve'
import type { CommandPayload, EventPayload } from '@weft/spec'
import { connectWebSocket } from '@weft/client/wire'
import { encodeBase64url, keyPairFromSeed, ProtocolError, type SigningKey } from '@weft/codec'

// Keep what the examples print, to check it below.
const printed: string[] = []
const print = console.log.bind(console)
console.log = (...values: unknown[]) => {
  printed.push(values.map(String).join(' '))
  print(...values)
}

// --- Setup: `weft serve --data <dir> --port 0 --insecure-loopback --control-port 0`, in process.
// Its Organization lists a human, Ada, and the Agent that will coordinate her Mission.

const ada = { type: 'human', id: 'urn:example:human:ada' } as const
const signingKey: SigningKey = { keyId: 'urn:example:key:ada', pair: keyPairFromSeed(new Uint8Array(32).fill(1)) }
const coordinator = { type: 'agent', id: 'urn:example:agent:coordinator' } as const
const coordinatorKey: SigningKey = { keyId: 'urn:example:key:coordinator', pair: keyPairFromSeed(new Uint8Array(32).fill(2)) }
const capability = { id: 'example.plan', version: '1.0.0', inputSchema: 'urn:example:schema:in', inputSchemaHash: `sha256:${'a'.repeat(64)}`, outputSchema: 'urn:example:schema:out', outputSchemaHash: `sha256:${'b'.repeat(64)}`, constraints: {}, verifiedEvidence: ['urn:example:evidence:plan'] }

const dataDir = mkdtempSync(join(tmpdir(), 'weft-serve-'))
await writeOrganization(join(dataDir, ORGANIZATION_FILE), {
  ...newOrganization(),
  principals: [
    { ...ada, keyId: signingKey.keyId, publicKey: encodeBase64url(signingKey.pair.publicKey) },
    {
      ...coordinator,
      keyId: coordinatorKey.keyId,
      publicKey: encodeBase64url(coordinatorKey.pair.publicKey),
      card: { displayName: 'coordinator', owner: ada, endpoints: [{ transport: 'wss', uri: 'wss://agents.example.invalid/coordinator' }], capabilities: [capability], maxConcurrency: 1 },
    },
  ],
})
const serverLog: { readonly msg: string; readonly [field: string]: unknown }[] = []
const server = await startServer({ dataDir, port: 0, insecureLoopback: true, controlPort: 0, log: (entry) => void serverLog.push(entry) })
const controlUrl = server.controlUrl!

const groupId = 'urn:example:group:release'
const payload: CommandPayload<'mission.create'> = {
  missionId: 'urn:example:mission:release',
  title: 'Release',
  objective: 'Ship the release.',
  definitionOfDone: [{ criterionId: 'shipped', description: 'It ships.', evidenceRequired: ['human_review'] }],
  deadline: new Date(Date.now() + 30 * 86_400_000).toISOString(),
  budget: { currency: 'USD', financialLimit: 100 },
  approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
  coordinatorAgentId: coordinator.id,
  coordinatorLeaseSeconds: 86_400,
}

/** The §19 code `promise` is refused with. */
async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    if (error instanceof ProtocolError) return error.code
    throw error
  }
  throw new Error('expected a refusal, the Command was accepted')
}

// Before the Coordinator's first connection it has no session, and a Mission may not name it.
const tooEarly = createClient({ actor: ada, signingKey, transport: controlTransport(controlUrl) })
assert.equal(await refusal(tooEarly.missionCreate(payload, { groupId })), 'INVALID_COMMAND')
// Its HELLO handshake on the WebSocket binding opens Session Epoch 1.
const connection = await connectWebSocket({ url: server.url, actor: coordinator, signingKey: coordinatorKey })
assert.equal(connection.sessionEpoch(), 1)
await connection.close()

// --- The README's first block

import { createClient } from '@weft/client'
import { controlTransport } from '@weft/cli/serve'

// controlUrl: 'http://127.0.0.1:7444' with --control-port 7444; startServer(...).controlUrl in a program
const owner = createClient({ actor: ada, signingKey, transport: controlTransport(controlUrl) })
await owner.missionCreate(payload, { groupId }) // the Coordinator it names must have connected once

// The control endpoint is on the loopback, and the Mission exists with Ada as its MissionOwner and
// the connected Agent as its Coordinator; Ada's client learned her Membership from the receipt.
assert.match(controlUrl, /^http:\/\/127\.0\.0\.1:[1-9]\d*$/)
const mission = server.authority.group(groupId)?.mission
assert.deepEqual([mission?.missionId, mission?.state, mission?.missionOwner, mission?.coordinator.agentId], [payload.missionId, 'active', ada, coordinator.id])
assert.equal(owner.epochs.membership(groupId), 1)
// The control endpoint is for humans and services: an Agent's Command belongs on its session.
const asAgent = createClient({ actor: coordinator, signingKey: coordinatorKey, transport: controlTransport(controlUrl), groupId })
asAgent.observe([...server.authority.organizationEvents(), ...server.authority.events(groupId)]) // its epochs
assert.equal(await refusal(asAgent.missionCancel({ reason: 'Not through the control endpoint.' })), 'AUTH_FORBIDDEN')
// The log names both URLs, the refusal and the acceptance.
assert.deepEqual(serverLog.filter((e) => e.msg === 'listening').map((e) => [e['url'], e['controlUrl']]), [[server.url, controlUrl]])
assert.deepEqual(serverLog.filter((e) => e.msg === 'command refused').map((e) => e['code']), ['INVALID_COMMAND'])
assert.deepEqual(serverLog.filter((e) => e.msg === 'command accepted' && e['kind'] === 'mission.create').map((e) => e['groupId']), [groupId])
await server.close()
rmSync(dataDir, { recursive: true, force: true })

// --- The README's second block

import { runDemo, createCoordinator, createMissionOwner, approveAll } from '@weft/cli'

const { result, world } = await runDemo({ seed: 1, onLine: (line) => console.log(line.text) })
result.approved // both root Missions approved
result.timeline // one record per Execution Lease: Agent, slot, Mission, start, end, how it ended
world.authority.replayState() // equals world.authority.state: state = fold(log)

console.log = print

// Both root Missions (and the child Mission) ended approved, and the run printed its progress lines.
const roots = result.missions.filter((m) => world.authority.group(m.groupId)?.mission.parent === undefined)
assert.equal(result.approved, true)
assert.deepEqual(roots.map((m) => m.state), ['approved', 'approved'])
assert.ok(printed.length > 10, 'one progress line per notable Event')
// The timeline has exactly one record per Execution Lease the Authority issued, each complete.
const leases = [...world.authority.state.groups.keys()].flatMap((g) => world.authority.events(g)).filter((e) => e.kind === 'work.started').map((e) => (e.payload as EventPayload<'work.started'>).executionLease.leaseId)
assert.deepEqual(result.timeline.map((r) => r.executionLeaseId).sort(), [...leases].sort())
assert.equal(new Set(leases).size, leases.length)
for (const r of result.timeline) {
  assert.ok([...world.principals.agents.values()].some((a) => a.actor.id === r.agentId), `a known Agent: ${r.agentId}`)
  assert.ok(Number.isInteger(r.slot) && r.slot >= 0 && world.authority.group(r.groupId) !== undefined)
  assert.ok(r.endMs !== undefined && r.endMs >= r.startMs && r.ended !== 'running')
}
assert.deepEqual(world.authority.replayState(), world.authority.state)
// The Coordinator and MissionOwner of the demo are usable on their own; approveAll() is the --yes decider.
assert.deepEqual([typeof createCoordinator, typeof createMissionOwner, typeof approveAll()], ['function', 'function', 'function'])
