// The README's first example of @weft/client (a client over a transport of your own), run by the
// release check (tools/release-check).
import assert from 'node:assert/strict'
import { ProtocolError, UsageError } from '@weft/codec'
import type { Event } from '@weft/spec'
import { retryBackoffMs } from '@weft/client'

// Keep what the README's lines print, to check it below.
const printed: unknown[][] = []
const print = console.log
console.log = (...values: unknown[]) => void printed.push(values)

import { keyPairFromSeed, signingHash } from '@weft/codec'
import { createClient, type Receipt, type Transport } from '@weft/client'

// Any transport works; `authority.connect()` of @weft/authority is the in-process one. This one accepts everything.
const transport: Transport = {
  submit: async (command) => ({ ...(command as unknown as Receipt), commandHash: signingHash(command), events: [], acceptedAt: String(command.issuedAt), duplicate: false }),
}
const signingKey = { keyId: 'urn:example:key:w1', pair: keyPairFromSeed(new Uint8Array(32).fill(1)) }
const worker = createClient({ actor: { type: 'agent', id: 'urn:example:agent:w1' }, signingKey, transport, groupId: 'urn:example:group:1' })
worker.epochs.setSession(1) // or: worker.observe(events) with the Organization's session_opened fact
worker.epochs.setMembership('urn:example:group:1', 1) // or: learned from a membership.changed naming this Agent
const receipt = await worker.workAcceptOffer({ workItemId: 'urn:example:work:1', ownershipLeaseSeconds: 600 }, { expectedRevision: 3 })
console.log(receipt.actionId, receipt.commandHash) // a refusal rejects with the Authority's ProtocolError (§19 code)

console.log = print

// The transport echoes the signed Command, so the receipt shows the envelope the client filled (§15.1).
const sent = receipt as unknown as Record<string, unknown>
assert.match(receipt.actionId, /^urn:uuid:[0-9a-f-]{36}$/)
assert.match(receipt.commandHash, /^sha256:[0-9a-f]{64}$/)
assert.deepEqual(printed, [[receipt.actionId, receipt.commandHash]])
assert.deepEqual(
  [sent['kind'], sent['actor'], sent['groupId'], sent['sessionEpoch'], sent['membershipEpoch'], sent['expectedRevision'], sent['payload']],
  ['work.accept_offer', { type: 'agent', id: 'urn:example:agent:w1' }, 'urn:example:group:1', 1, 1, 3, { workItemId: 'urn:example:work:1', ownershipLeaseSeconds: 600 }],
)
assert.equal(receipt.kind, 'work.accept_offer')
// Signed (§6.4) under the Agent's key.
assert.equal((sent['signature'] as { keyId: string }).keyId, 'urn:example:key:w1')

// The other way to the epochs: Events naming this Agent (the shape the client reads of them).
const learned = createClient({ actor: { type: 'agent', id: 'urn:example:agent:w1' }, signingKey, transport, groupId: 'urn:example:group:1' })
learned.observe([
  { kind: 'ext.missionweaveprotocol.identity.session_opened', payload: { agentId: 'urn:example:agent:w1', sessionEpoch: 4 } },
  { kind: 'membership.changed', groupId: 'urn:example:group:1', sequence: 7, payload: { membership: { member: { type: 'agent', id: 'urn:example:agent:w1' }, state: 'active', membershipEpoch: 2 } } },
] as unknown as Event[])
assert.deepEqual([learned.epochs.sessionEpoch, learned.epochs.membership('urn:example:group:1')], [4, 2])

// A missing epoch is a UsageError raised before anything is sent.
let submitted = 0
const counting: Transport = { submit: (command, bytes) => (submitted++, transport.submit(command, bytes)) }
const fresh = createClient({ actor: { type: 'agent', id: 'urn:example:agent:w1' }, signingKey, transport: counting, groupId: 'urn:example:group:1' })
await assert.rejects(fresh.workAcceptOffer({ workItemId: 'urn:example:work:1', ownershipLeaseSeconds: 600 }), (error) => error instanceof UsageError && /Session Epoch/.test(error.message))
assert.equal(submitted, 0)

// A refusal reaches the caller as the transport's ProtocolError, unchanged.
const refusal = new ProtocolError('REVISION_CONFLICT', 'the WorkItem is at revision 4')
const refusing = createClient({ actor: { type: 'agent', id: 'urn:example:agent:w1' }, signingKey, transport: { submit: () => Promise.reject(refusal) }, groupId: 'urn:example:group:1' })
refusing.epochs.setSession(1)
refusing.epochs.setMembership('urn:example:group:1', 1)
await assert.rejects(refusing.workAcceptOffer({ workItemId: 'urn:example:work:1', ownershipLeaseSeconds: 600 }, { expectedRevision: 3 }), (error) => error === refusal)

// Retries resend the same bytes: same Action ID, same signature.
const built = worker.build('work.accept_offer', { workItemId: 'urn:example:work:1', ownershipLeaseSeconds: 600 })
const [again, once] = [await worker.resend(built), await worker.resend(built)]
assert.deepEqual([again.actionId, again.commandHash], [once.actionId, once.commandHash])
assert.deepEqual([again.actionId, again.commandHash], [built.command.actionId, signingHash(built.command)])

// The README's retry backoff: 1 s doubling per attempt used, capped by the policy's maxDelay.
assert.equal(retryBackoffMs({ backoff: 'exponential', maxDelay: 'PT5S' }, 3), 4000)
