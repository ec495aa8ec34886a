import { sha256Tagged, utf8Encode } from '@weft/codec'
import type { Artifact, Evidence, EvidenceType, WorkContract } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { deliverableOf, reviewSubmission, type BlobSource, type StageCheck } from './review.js'

const contract = {
  requiredDeliverables: [{ deliverableId: 'patch', description: 'd', mediaType: 'text/x-diff', schema: 'urn:s:patch' }],
  acceptanceCriteria: [
    { criterionId: 'tests', description: 't', evidenceRequired: ['deterministic_test'] },
    { criterionId: 'intact', description: 'i', evidenceRequired: ['artifact_integrity', 'schema_validation'] },
  ],
} as unknown as WorkContract

const bytes = utf8Encode('diff --git a b\n')
const hash = sha256Tagged(bytes)
const manifest = { contentHash: hash, sizeBytes: bytes.byteLength, mediaType: 'text/x-diff', schemaUri: 'urn:s:patch' } as Artifact
const blobs = (stored: Uint8Array = bytes): BlobSource => ({ get: async () => stored })
const evidence = (type: EvidenceType, criterionIds: string[], result: Evidence['result'] = 'passed'): Evidence =>
  ({ evidenceId: `urn:e:${type}:${criterionIds.join()}`, type, criterionIds, result, artifactHashes: [hash] }) as unknown as Evidence
const submission = (items: Evidence[]) => ({ eventId: 'urn:ev:1', ownershipEpoch: 1, artifactHashes: [hash], evidence: items })
const passing = [evidence('deterministic_test', ['tests']), evidence('artifact_integrity', ['intact'])]
const check: StageCheck = { type: 'deterministic_test', criterionIds: ['tests'], method: 'Re-ran the tests.', run: (artifacts) => (artifacts.length === 1 ? [] : ['no patch']) }

describe('reviewSubmission (§13.2)', () => {
  it('accepts with the Evidence the submission lacks plus its own checks', async () => {
    const outcome = await reviewSubmission({ contract, submission: submission(passing), manifests: new Map([[hash, manifest]]), blobs: blobs(), check })
    expect(outcome.problems).toEqual([])
    expect(outcome.evidence.map((e) => [e.type, e.criterionIds])).toEqual([
      ['deterministic_test', ['tests']],
      ['schema_validation', ['intact']],
    ])
    expect(outcome.artifacts[0]?.bytes).toEqual(bytes)
  })

  it('refuses bytes that do not hash to the manifest, failing every criterion', async () => {
    const outcome = await reviewSubmission({ contract, submission: submission(passing), manifests: new Map([[hash, manifest]]), blobs: blobs(utf8Encode('tampered')), check })
    expect(outcome.passed).toBe(false)
    expect(outcome.problems[0]).toMatch(/^integrity: the stored bytes/)
    expect([...outcome.failedCriteria].sort()).toEqual(['intact', 'tests'])
  })

  it('refuses a missing deliverable, a failed submitted check and a failing plan check', async () => {
    const other = { ...manifest, mediaType: 'text/plain' } as Artifact
    const missing = await reviewSubmission({ contract, submission: submission(passing), manifests: new Map([[hash, other]]) })
    expect(missing.problems).toEqual(['schema: no Artifact delivers patch (text/x-diff, urn:s:patch)'])
    const failed = await reviewSubmission({
      contract,
      submission: submission([evidence('deterministic_test', ['tests'], 'failed'), evidence('artifact_integrity', ['intact'])]),
      manifests: new Map([[hash, manifest]]),
      check,
    })
    expect(failed.failedCriteria).toEqual(['tests'])
    const red = await reviewSubmission({ contract, submission: submission(passing), manifests: new Map([[hash, manifest]]), check: { ...check, run: () => ['2 tests failed'] } })
    expect(red.problems).toEqual(['test: 2 tests failed'])
  })

  it('never supplies reviewer judgement itself: a criterion needing reviewer_assessment needs it in the submission (§7.2)', async () => {
    const reviewed = { ...contract, acceptanceCriteria: [{ criterionId: 'approved', description: 'a', evidenceRequired: ['reviewer_assessment', 'artifact_integrity'] }] } as unknown as WorkContract
    const without = await reviewSubmission({ contract: reviewed, submission: submission([evidence('artifact_integrity', ['approved'])]), manifests: new Map([[hash, manifest]]) })
    expect(without.problems).toEqual(['evaluation: approved lacks reviewer_assessment Evidence, which the Coordinator cannot supply itself'])
    const withIt = await reviewSubmission({ contract: reviewed, submission: submission([evidence('reviewer_assessment', ['approved'])]), manifests: new Map([[hash, manifest]]) })
    expect(withIt.evidence.map((e) => e.type)).toEqual(['artifact_integrity'])
  })

  it('names the deliverable a manifest delivers by media type and output schema, and none for other Artifacts', () => {
    expect(deliverableOf(contract, manifest)?.deliverableId).toBe('patch')
    expect(deliverableOf(contract, { ...manifest, schemaUri: 'urn:s:other' })).toBeUndefined()
    expect(deliverableOf(undefined, manifest)).toBeUndefined()
  })
})
