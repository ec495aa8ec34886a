/**
 * The Coordinator's Evidence-based review of one submission (§13.2), in the order the protocol
 * recommends: Artifact integrity and output schemas, deterministic tests and business rules,
 * then the evaluation of the combined Evidence. What the Coordinator cannot judge itself
 * (`reviewer_assessment`, `human_review`) must come with the submission, from a reviewer Agent:
 * the Coordinator reviews the work of others and is never the sole reviewer (§7.2).
 *
 * The outcome is data: the problems found, and for a passing review the Evidence the
 * Coordinator will sign, one record per Evidence type with the criteria it covers.
 * @module
 */
import { sha256Tagged } from '@weft/codec'
import type { AcceptanceCriterion, Artifact, EvidenceType, WorkContract } from '@weft/spec'
import type { SubmissionFacts } from './tracker.js'

/** Where the Coordinator reads Artifact bytes (structurally the `BlobStore` of `@weft/authority`). */
export interface BlobSource {
  get(hash: string): Promise<Uint8Array>
}

/** An Artifact under review: its manifest and, when a blob source was given, its verified bytes. */
export interface ReviewedArtifact {
  readonly manifest: Artifact
  readonly bytes?: Uint8Array
}

/**
 * A deterministic check a plan attaches to a stage: a test runner or a business rule over the
 * submitted Artifacts (§13.2 step 2). It backs the named criteria with Evidence of its `type`.
 */
export interface StageCheck {
  readonly type: Extract<EvidenceType, 'deterministic_test' | 'business_rule'>
  readonly criterionIds: readonly string[]
  /** What was run, as the Evidence `method` states it. */
  readonly method: string
  /** The problems found; none means the check passed. */
  run(artifacts: readonly ReviewedArtifact[]): readonly string[]
}

/** One Evidence record the Coordinator signs when the review passes. */
export interface ReviewEvidencePlan {
  readonly type: EvidenceType
  readonly criterionIds: readonly string[]
  readonly method: string
  readonly artifactHashes: readonly string[]
}

/** What a review found. */
export interface ReviewOutcome {
  readonly passed: boolean
  /** Each problem, prefixed with the §13.2 step that found it. */
  readonly problems: readonly string[]
  /** Criteria the problems concern (all of them when a problem concerns the whole submission). */
  readonly failedCriteria: readonly string[]
  readonly artifacts: readonly ReviewedArtifact[]
  /** The review Evidence to sign; empty when the review failed. */
  readonly evidence: readonly ReviewEvidencePlan[]
}

/** What {@link reviewSubmission} reads. */
export interface ReviewInput {
  readonly contract: WorkContract
  readonly submission: SubmissionFacts
  /** Manifests published for the WorkItem, by content hash. */
  readonly manifests: ReadonlyMap<string, Artifact>
  readonly blobs?: BlobSource
  readonly check?: StageCheck
}

const JSON_MEDIA = /^application\/(?:[a-z0-9.+-]+\+)?json$/

/**
 * The required deliverable of `contract` that `manifest` delivers: the one with its media type
 * and output schema, as the review's schema step matches them (§13.2 step 1). A manifest carries
 * no deliverable ID of its own, so this is how the prompt and the report name an Artifact.
 * @returns `undefined` when no deliverable matches (e.g. a checkpoint's state Artifact).
 */
export function deliverableOf(
  contract: Pick<WorkContract, 'requiredDeliverables'> | undefined,
  manifest: Pick<Artifact, 'mediaType' | 'schemaUri'>,
): WorkContract['requiredDeliverables'][number] | undefined {
  return contract?.requiredDeliverables.find((d) => d.mediaType === manifest.mediaType && d.schema === manifest.schemaUri)
}

/** Evidence types the Coordinator produces from its own checks, in order of preference. */
const OWN_METHODS: readonly EvidenceType[] = ['artifact_integrity', 'schema_validation', 'deterministic_test', 'business_rule']

/**
 * Reviews one submission against its Work Contract (§13.2).
 * @example
 * ```ts
 * const outcome = await reviewSubmission({ contract, submission, manifests, blobs })
 * if (outcome.passed) for (const e of outcome.evidence) sign(e) // then work.accept_result
 * ```
 */
export async function reviewSubmission(input: ReviewInput): Promise<ReviewOutcome> {
  const { contract, submission, manifests, blobs, check } = input
  const problems: string[] = []
  const failed = new Set<string>()
  const all = contract.acceptanceCriteria.map((c) => c.criterionId)
  const wholly = (problem: string): void => {
    problems.push(problem)
    for (const id of all) failed.add(id)
  }

  // Step 1: Artifact integrity. A mutable URI is never identity; the bytes must hash to the manifest (§13.1).
  const artifacts: ReviewedArtifact[] = []
  for (const hash of submission.artifactHashes) {
    const manifest = manifests.get(hash)
    if (manifest === undefined) {
      wholly(`integrity: Artifact ${hash} was not published for this WorkItem`)
      continue
    }
    if (blobs === undefined) {
      artifacts.push({ manifest })
      continue
    }
    try {
      const bytes = await blobs.get(hash)
      if (sha256Tagged(bytes) !== hash || bytes.byteLength !== manifest.sizeBytes) wholly(`integrity: the stored bytes of ${hash} do not match its manifest`)
      else artifacts.push({ manifest, bytes })
    } catch (error) {
      wholly(`integrity: the bytes of ${hash} cannot be retrieved (${error instanceof Error ? error.message : String(error)})`)
    }
  }

  // Step 1 (schemas): every required deliverable is present with its media type and output schema.
  for (const d of contract.requiredDeliverables) {
    const found = artifacts.find((a) => deliverableOf({ requiredDeliverables: [d] }, a.manifest) !== undefined)
    if (found === undefined) wholly(`schema: no Artifact delivers ${d.deliverableId} (${d.mediaType}, ${d.schema})`)
    else if (found.bytes !== undefined && JSON_MEDIA.test(d.mediaType) && !parses(found.bytes)) wholly(`schema: ${d.deliverableId} is not well-formed JSON`)
  }

  // Step 2: the submitted Evidence maps onto the criteria and cites only submitted Artifacts.
  const submitted = new Set(submission.artifactHashes)
  for (const e of submission.evidence) {
    if (e.artifactHashes.some((h) => !submitted.has(h))) wholly(`deterministic: Evidence ${e.evidenceId} cites an Artifact outside the submission`)
    if (e.result === 'failed') {
      problems.push(`deterministic: submitted Evidence ${e.evidenceId} reports a failure`)
      for (const id of e.criterionIds) failed.add(id)
    }
  }
  // Step 2: the plan's own deterministic test or business rule over the bytes.
  const checkProblems = check === undefined ? [] : check.run(artifacts)
  for (const p of checkProblems) {
    problems.push(`${check!.type === 'business_rule' ? 'business rule' : 'test'}: ${p}`)
    for (const id of check!.criterionIds) failed.add(id)
  }

  if (problems.length > 0) return { passed: false, problems, failedCriteria: [...failed], artifacts, evidence: [] }

  // Steps 3–4: evaluate the combined Evidence per criterion, once every check held.
  const own = new Set<EvidenceType>(['artifact_integrity', 'schema_validation'])
  const byCheck = new Map<string, EvidenceType>(check === undefined ? [] : check.criterionIds.map((id) => [id, check.type]))
  const plans = new Map<EvidenceType, Set<string>>()
  for (const criterion of contract.acceptanceCriteria) {
    const chosen = chooseTypes(criterion, submission, own, byCheck.get(criterion.criterionId))
    if (typeof chosen === 'string') {
      problems.push(`evaluation: ${chosen}`)
      failed.add(criterion.criterionId)
      continue
    }
    for (const type of chosen) {
      let set = plans.get(type)
      if (set === undefined) plans.set(type, (set = new Set()))
      set.add(criterion.criterionId)
    }
  }

  if (problems.length > 0) return { passed: false, problems, failedCriteria: [...failed], artifacts, evidence: [] }
  const hashes = artifacts.map((a) => a.manifest.contentHash)
  const evidence = [...plans].map(([type, ids]) => ({ type, criterionIds: [...ids], method: methodOf(type, check, blobs !== undefined), artifactHashes: hashes }))
  return { passed: true, problems, failedCriteria: [], artifacts, evidence }
}

/**
 * The Evidence types the Coordinator adds for `criterion`: every required type the submission
 * lacks (each must be one the Coordinator can produce), or one of its own when nothing is lacking.
 * A string explains why the criterion cannot be met.
 */
function chooseTypes(criterion: AcceptanceCriterion, submission: SubmissionFacts, own: ReadonlySet<EvidenceType>, checked: EvidenceType | undefined): EvidenceType[] | string {
  const can = (t: EvidenceType): boolean => own.has(t) || t === checked
  const supplied = new Set(submission.evidence.filter((e) => e.result === 'passed' && e.criterionIds.includes(criterion.criterionId)).map((e) => e.type))
  if (supplied.size === 0) return `no passing submitted Evidence covers ${criterion.criterionId}`
  const lacking = criterion.evidenceRequired.filter((t) => !supplied.has(t))
  const impossible = lacking.filter((t) => !can(t))
  if (impossible.length > 0) return `${criterion.criterionId} lacks ${impossible.join(', ')} Evidence, which the Coordinator cannot supply itself`
  if (lacking.length > 0) return lacking
  const accepted: readonly EvidenceType[] = criterion.evidenceRequired
  const mine = [checked, ...OWN_METHODS].find((t): t is EvidenceType => t !== undefined && can(t) && accepted.includes(t))
  return mine === undefined ? `the Coordinator has no check of a type ${criterion.criterionId} accepts (${criterion.evidenceRequired.join(', ')})` : [mine]
}

function methodOf(type: EvidenceType, check: StageCheck | undefined, bytes: boolean): string {
  switch (type) {
    case 'artifact_integrity':
      return bytes
        ? 'Fetched every submitted Artifact from content-addressed storage and compared its SHA-256 and size with the signed manifest.'
        : 'Matched every submitted content hash with a manifest published under the WorkItem.'
    case 'schema_validation':
      return 'Checked that every required deliverable is present with its media type and output schema, and that JSON deliverables parse.'
    default:
      return check?.method ?? 'Re-ran the deterministic checks of the plan.'
  }
}

function parses(bytes: Uint8Array): boolean {
  try {
    JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
    return true
  } catch {
    return false
  }
}
