// The README's catalog and schema example of @weft/spec, run by the release check (tools/release-check).
import assert from 'node:assert/strict'

// Record what the README block prints, so the checks below can hold it to its comments.
const printed: unknown[][] = []
const print = console.log
console.log = (...args: unknown[]) => {
  printed.push(args)
  print(...args)
}

import { COMMAND_CATALOG, commandInfo, documents, toJsonSchema, type CommandPayload } from '@weft/spec'

console.log(COMMAND_CATALOG.length) // 38: the 32 core kinds of §15.1, then 6 ext.missionweaveprotocol.* kinds
const offer = commandInfo('work.offer')
console.log(offer.issuerTypes, offer.emits) // who may issue it, which Events it may append

const schema = toJsonSchema(documents.find((d) => d.name === 'workItem')!) // Draft 2020-12 JSON
const payload: CommandPayload<'work.offer'> = {
  workItemId: 'urn:uuid:6f1c2a4e-8b3d-4c5a-9e7f-0a1b2c3d4e5f',
  candidateAgentIds: ['urn:agent:a'],
  selectionBasis: {
    requiredCapabilities: [{ id: 'code.review', version: '1.0.0' }],
    verifiedMatches: [{ id: 'code.review', version: '1.0.0' }],
    authorizationEligible: true,
    availabilityEstimate: '2026-07-15T09:00:00Z',
    expectedCost: 12.5,
    reliabilityEvidence: [],
    policyRulesApplied: ['lowest-expected-cost'],
  },
  offerExpiresInSeconds: 60,
}

console.log = print

// `// 38: the 32 core kinds of §15.1, then 6 ext.missionweaveprotocol.* kinds`
assert.deepEqual(printed[0], [38])
assert.equal(COMMAND_CATALOG.filter((c) => !c.kind.startsWith('ext.')).length, 32)
assert.ok(COMMAND_CATALOG.slice(32).every((c) => c.kind.startsWith('ext.missionweaveprotocol.')))

// Who may issue `work.offer`, and the Events it may append (§10.1, §10.3).
assert.deepEqual(printed[1], [['agent', 'human'], ['work.contract.revised', 'work.offer.created']])
assert.equal(offer.kind, 'work.offer')

// A Draft 2020-12 JSON Schema of the WorkItem document, plain JSON.
assert.equal(schema['$schema'], 'https://json-schema.org/draft/2020-12/schema')
assert.match(String(schema['$id']), /work-item\.schema\.json$/)
assert.deepEqual(JSON.parse(JSON.stringify(schema)), schema)

// The payload's selection basis is the WorkItem's (the payload schema refers to it by JSON
// Pointer): it has exactly the members that shape requires. The static type already held the
// whole payload to the schema at compile time; @weft/spec validates nothing at run time (that is
// @weft/validators, which depends on this package, not the other way round).
const selectionBasis = (schema['properties'] as Record<string, { required: string[]; additionalProperties: boolean }>)['selectionBasis']!
assert.equal(selectionBasis.additionalProperties, false)
assert.deepEqual(Object.keys(payload.selectionBasis).sort(), [...selectionBasis.required].sort())
assert.equal(printed.length, 2)
