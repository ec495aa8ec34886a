// The README's example of a restarted runtime (the list item on Epochs), run by the release check
// (tools/release-check).
import assert from 'node:assert/strict'
import { keyPairFromSeed, signingHash, UsageError } from '@weft/codec'
import { createClient, type Receipt, type Transport } from '@weft/client'
import type { Event } from '@weft/spec'

// Setup: a transport that accepts everything and echoes the signed Command as the receipt.
const sent: Record<string, unknown>[] = []
const transport: Transport = {
  submit: async (command) => {
    sent.push(command)
    return { ...(command as unknown as Receipt), commandHash: signingHash(command), events: [], acceptedAt: String(command.issuedAt), duplicate: false }
  },
}
const actor = { type: 'agent', id: 'urn:example:agent:w1' } as const
const signingKey = { keyId: 'urn:example:key:w1', pair: keyPairFromSeed(new Uint8Array(32).fill(1)) }
const groupId = 'urn:example:group:1'
const otherGroupId = 'urn:example:group:2'
const workItemId = 'urn:example:work:1'
// Before it stopped, the runtime saw its first session, its first Membership and the Coordinator lease at epoch 1.
const savedEvents = [
  { kind: 'ext.missionweaveprotocol.identity.session_opened', payload: { agentId: actor.id, sessionEpoch: 1 } },
  { kind: 'membership.changed', groupId, sequence: 4, payload: { membership: { member: actor, state: 'active', membershipEpoch: 1 } } },
  { kind: 'mission.coordinator.assigned', groupId: otherGroupId, sequence: 2, payload: { coordinator: { agentId: actor.id, coordinatorEpoch: 1 } } },
] as unknown as Event[]

  const restarted = createClient({ actor, signingKey, transport, groupId, epochs: { session: 2, groupId, membership: 3 } })
  restarted.epochs.set({ groupId: otherGroupId, membership: 1, coordinator: 2 }) // several at once, all or nothing
  restarted.observe(savedEvents) // Events naming lower epochs (older history) leave them as set
  await restarted.workUnblock({ workItemId }, { membershipEpoch: 4 }) // this Command only; the client keeps 3

// The epochs as set, not as the older Events said.
assert.deepEqual(
  [restarted.epochs.sessionEpoch, restarted.epochs.membership(groupId), restarted.epochs.membership(otherGroupId), restarted.epochs.coordinator(otherGroupId)],
  [2, 3, 1, 2],
)
// The Command carried the given Membership Epoch, with the client's Session Epoch.
assert.deepEqual([sent[0]?.['sessionEpoch'], sent[0]?.['membershipEpoch'], sent[0]?.['groupId']], [2, 4, groupId])
// The next Command carries the client's own epochs again.
await restarted.workUnblock({ workItemId })
assert.deepEqual([sent[1]?.['sessionEpoch'], sent[1]?.['membershipEpoch']], [2, 3])

// All or nothing: a setting with a bad value changes nothing.
assert.throws(() => restarted.epochs.set({ session: 5, groupId, membership: 0 }), UsageError)
assert.equal(restarted.epochs.sessionEpoch, 2)

// An Event naming a higher epoch is news: it moves the value forward.
restarted.observe([{ kind: 'membership.changed', groupId, sequence: 9, payload: { membership: { member: actor, state: 'active', membershipEpoch: 5 } } }] as unknown as Event[])
assert.equal(restarted.epochs.membership(groupId), 5)
