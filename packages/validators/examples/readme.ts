// The README's example of @weft/validators, run by the release check (tools/release-check).
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { keyPairFromSeed, sign } from '@weft/codec'
import type { Command, WorkItem } from '@weft/spec'

// `text`: a WorkItem as received, JSON text.
const workItem: WorkItem = {
  workItemId: 'urn:uuid:2b0c7d1e-4f3a-4e8b-9c6d-1a2b3c4d5e6f',
  missionId: 'urn:uuid:9d8c7b6a-5f4e-4d3c-8b2a-0f1e2d3c4b5a',
  groupId: 'urn:weft:group:docs',
  conversationId: 'urn:weft:conversation:docs',
  revision: 1,
  state: 'open',
  exclusive: false,
  contract: {
    contractVersion: 1,
    goal: 'Review the API documentation of the validators package.',
    requiredDeliverables: [
      { deliverableId: 'review', description: 'Review notes', mediaType: 'text/markdown', schema: 'https://example.org/schemas/review' },
    ],
    acceptanceCriteria: [{ criterionId: 'complete', description: 'Every public name is covered.', evidenceRequired: ['reviewer_assessment'] }],
    inputArtifacts: [],
    dependencyWorkItemIds: [],
    allowedResources: [],
    requiredCapabilities: [{ id: 'docs.review', version: '1.0.0' }],
    deadline: '2026-07-31T17:00:00Z',
    requestedUrgency: 'normal',
    businessImpact: 'Users read the README first.',
    retryPolicy: { maxAttempts: 2, backoff: 'fixed', maxDelay: 'PT5M', retryableFailures: [] },
    budget: { toolCallLimit: 50 },
    sideEffectRisk: 'none',
    executionApproval: 'not_required',
  },
  createdBy: { type: 'human', id: 'urn:weft:human:ada' },
  createdAt: '2026-07-15T09:00:00Z',
}
const text = JSON.stringify(workItem)

// `frameText`: a correctly signed Command whose `work.offer` payload lacks its selection basis,
// so the envelope passes and the payload does not.
const unsigned = {
  protocolVersion: '0.1',
  actionId: 'urn:uuid:5e4d3c2b-1a09-4f8e-8d7c-6b5a49382716',
  actor: { type: 'human', id: 'urn:weft:human:ada' },
  membershipEpoch: 1,
  groupId: workItem.groupId,
  workItemId: workItem.workItemId,
  kind: 'work.offer',
  correlationId: 'urn:uuid:0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d',
  issuedAt: '2026-07-15T09:30:00Z',
  payload: { workItemId: workItem.workItemId, candidateAgentIds: ['urn:weft:agent:reviewer'], offerExpiresInSeconds: 600 },
} satisfies Omit<Command, 'signature'>
const pair = keyPairFromSeed(createHash('sha256').update('ada').digest())
const frameText = JSON.stringify(sign('command', unsigned, { keyId: 'urn:weft:key:ada', pair }))

// Record what the README block prints, so the checks below can hold it to its comments.
const printed: unknown[][] = []
const print = console.log
console.log = (...args: unknown[]) => {
  printed.push(args)
  print(...args)
}

import { validators, ProtocolError } from '@weft/validators'
import { commandPayloads } from '@weft/validators/payloads'

const value: unknown = JSON.parse(text)
if (validators.workItem.check(value)) console.log(value.state) // typed as WorkItem

console.log(validators.command.errors(value, { maxErrors: 5 })) // [{ path, keyword, message, schemaPath }]

try {
  const command = validators.command.parseText(frameText, { maxBytes: 256 * 1024 })
  commandPayloads['work.offer'].parse(command.payload)
} catch (e) {
  if (e instanceof ProtocolError) console.log(e.code) // SCHEMA_VALIDATION_FAILED or PROTOCOL_VIOLATION
}

console.log = print

// The WorkItem passed `check`, so its state was printed.
assert.deepEqual(printed[0], ['open'])

// A WorkItem is no Command: issues, at most `maxErrors` of them, each with the four members.
const issues = printed[1]![0] as Record<string, unknown>[]
assert.ok(Array.isArray(issues) && issues.length > 0 && issues.length <= 5)
for (const issue of issues) {
  assert.deepEqual(Object.keys(issue).sort(), ['keyword', 'message', 'path', 'schemaPath'])
  for (const member of Object.values(issue)) assert.equal(typeof member, 'string')
}
assert.equal(validators.command.errors(value, { maxErrors: 1 }).length, 1)
assert.deepEqual(validators.workItem.errors(value), [])

// The envelope is valid; the payload is not, and says where.
assert.deepEqual(printed[2], ['SCHEMA_VALIDATION_FAILED'])
assert.equal(printed.length, 3)
const command = validators.command.parseText(frameText)
assert.equal(command.kind, 'work.offer')
assert.throws(
  () => commandPayloads['work.offer'].parse(command.payload),
  (e: unknown) => e instanceof ProtocolError && e.code === 'SCHEMA_VALIDATION_FAILED' && JSON.stringify(e.details).includes('selectionBasis'),
)

// The other code of the comment: text over `maxBytes`, or not strict JSON, is a PROTOCOL_VIOLATION.
const violation = (e: unknown) => e instanceof ProtocolError && e.code === 'PROTOCOL_VIOLATION'
assert.throws(() => validators.command.parseText(frameText, { maxBytes: 64 }), violation)
assert.throws(() => validators.command.parseText(`{"kind":"work.offer",${frameText.slice(1)}`), violation) // duplicate `kind`
assert.throws(() => validators.command.parseText(`${frameText} {}`), violation) // trailing data
