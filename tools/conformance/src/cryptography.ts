/**
 * The cryptography suite: `cryptography/manifest.json` of the bundle (§6.4 Signed Document
 * Verification Profile) against `@weft/codec`'s six-stage `verify`, with schemas from
 * `@weft/validators`.
 *
 * Before any evaluation the run checks the manifest's `artifactDigest` and every artifact's byte
 * length and SHA-256, that the manifest's nine profiles equal Weft's profile table, and the
 * structure of every Registry and signing-key fixture (`fixtures.ts`). Each evaluation then
 * compares the first failing stage and wire code, and for a complete one the resolved key ID and
 * Principal, protected time, signing bytes, signing hash, signature and signed-document hash,
 * and re-signs the document with the fixture seed through `sign`.
 * @module
 */
import { basename } from 'node:path'
import {
  GENERIC_WIRE_MESSAGES,
  Registry,
  SIGNED_PROFILES,
  STAGES,
  canonicalize,
  decodeBase64url,
  encodeBase64url,
  isDocumentKind,
  keyPairFromSeed,
  parseStrictJson,
  sha256Tagged,
  sign,
  verify,
  type DocumentKind,
  type JsonValue,
  type SchemaCheck,
  type VerifyResult,
} from '@weft/codec'
import { schemaCheckForKind } from '@weft/validators/signed'
import { artifactEntries, checkArtifacts, checkManifestDigest, countAgainstPin, readBundleFile, readStrictJson, type ArtifactCheck, type DigestCheck } from './artifacts.js'
import { registryFixtureIssues, signingKeyFixtureIssues } from './fixtures.js'
import { renderTable, type TableColumn } from './report.js'

/** What Weft is pinned to: the cryptography manifest's digest and counts at the pinned protocol commit. */
export const PINNED_CRYPTOGRAPHY: {
  readonly artifactDigest: string
  readonly cases: number
  readonly evaluations: number
  readonly complete: number
  readonly rejected: number
} = Object.freeze({
  artifactDigest: 'sha256:5eade516e4bc5dcf04477727ebcccd11f33348b2d9135fb6fe0365c6e6cc2ea3',
  cases: 22,
  evaluations: 62,
  complete: 12,
  rejected: 50,
})

/** The outcome labels of the cryptography bundle: the six stages of §6.4, then `complete`. */
export type CryptographyOutcome = (typeof STAGES)[number] | 'complete'

/** The outcome of one evaluation. */
export interface CryptographyResult {
  /** 1-based position over all evaluations of the manifest. */
  readonly index: number
  readonly caseId: string
  /** The profile (document kind), or `canonicalization` for the RFC 8785 evaluation. */
  readonly profile: string
  /** A short name: the fault ID for a rejection, else the document or input file name. */
  readonly name: string
  readonly expectedStage: CryptographyOutcome
  /** `error` when the evaluation could not run (bad fixture, unreadable file). */
  readonly actualStage: CryptographyOutcome | 'error'
  readonly expectedWireCode: string | null
  readonly actualWireCode: string | null
  readonly pass: boolean
  /** Every disagreement with the manifest (empty when `pass`). */
  readonly mismatches: readonly string[]
  /** Weft's protected diagnostic for a rejection (`stage/reason: detail`). */
  readonly diagnostic?: string
}

/** Counts of one expected stage. */
export interface StageCount {
  readonly total: number
  readonly passed: number
}

/** Counts over a cryptography run. */
export interface CryptographySummary {
  readonly total: number
  readonly passed: number
  readonly failed: number
  /** Evaluations expected to complete. */
  readonly complete: number
  /** Evaluations expected to be rejected. */
  readonly rejected: number
  /** Per expected stage, in §6.4 order, then `complete`. */
  readonly byStage: Readonly<Record<CryptographyOutcome, StageCount>>
}

/** The result of {@link runCryptography}. */
export interface CryptographyRun {
  readonly suite: 'cryptography'
  readonly bundleDir: string
  readonly digest: DigestCheck
  readonly artifacts: readonly ArtifactCheck[]
  readonly results: readonly CryptographyResult[]
  readonly summary: CryptographySummary
  /** Run-level problems: digest, artifacts, pins, profile table, unbound files. */
  readonly problems: readonly string[]
  readonly ok: boolean
}

/** Options of {@link runCryptography}. */
export interface CryptographyOptions {
  /** The stage-2 schema check; defaults to `schemaCheckForKind` of `@weft/validators`. */
  readonly validate?: SchemaCheck
  /** Pins to enforce; defaults to {@link PINNED_CRYPTOGRAPHY}. */
  readonly pinned?: typeof PINNED_CRYPTOGRAPHY
  /** Verify with `strictStageOrder` (see `VerifyOptions` of `@weft/codec`); results must not differ. */
  readonly strictStageOrder?: boolean
}

type Obj = { readonly [name: string]: JsonValue }

function obj(value: JsonValue | undefined, what: string): Obj {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`cryptography manifest: ${what} must be an object`)
  return value
}

function str(value: JsonValue | undefined, what: string): string {
  if (typeof value !== 'string') throw new Error(`cryptography manifest: ${what} must be a string`)
  return value
}

interface Expectation {
  readonly stage: CryptographyOutcome
  readonly wireCode: string | null
  readonly verified?: {
    readonly keyId: string
    readonly principal: { readonly type: string; readonly id: string }
    readonly protectedTime: string
    readonly signingBytes: string
    readonly signingHash: string
    readonly signature: string
    readonly signedDocumentHash: string
  }
}

type Evaluation =
  | { readonly type: 'canonicalization'; readonly caseId: string; readonly input: string; readonly expectedJcs: string; readonly sha256: string }
  | {
      readonly type: 'signed'
      readonly caseId: string
      readonly profileId: DocumentKind
      readonly document: string
      readonly registry: string
      readonly signingKey: string | undefined
      readonly fault: string | null
      readonly expect: Expectation
    }

const OUTCOMES: readonly CryptographyOutcome[] = [...STAGES, 'complete']

function readExpectation(value: JsonValue | undefined, where: string): Expectation {
  const e = obj(value, `${where}.expect`)
  const stage = str(e['stage'], `${where}.expect.stage`)
  if (!(OUTCOMES as readonly string[]).includes(stage)) throw new Error(`cryptography manifest: ${where}.expect.stage ${stage} is not a stage`)
  const wireCode = e['wireCode'] === null ? null : str(e['wireCode'], `${where}.expect.wireCode`)
  if (stage !== 'complete') return { stage: stage as CryptographyOutcome, wireCode }
  const v = obj(e['verified'], `${where}.expect.verified`)
  const p = obj(v['principal'], `${where}.expect.verified.principal`)
  return {
    stage: 'complete',
    wireCode,
    verified: {
      keyId: str(v['keyId'], 'verified.keyId'),
      principal: { type: str(p['type'], 'principal.type'), id: str(p['id'], 'principal.id') },
      protectedTime: str(v['protectedTime'], 'verified.protectedTime'),
      signingBytes: str(v['signingBytes'], 'verified.signingBytes'),
      signingHash: str(v['signingHash'], 'verified.signingHash'),
      signature: str(v['signature'], 'verified.signature'),
      signedDocumentHash: str(v['signedDocumentHash'], 'verified.signedDocumentHash'),
    },
  }
}

function readEvaluations(manifest: Obj): { cases: number; evaluations: Evaluation[] } {
  const cases = manifest['cases']
  if (!Array.isArray(cases)) throw new Error('cryptography manifest: cases must be an array')
  const evaluations: Evaluation[] = []
  for (const [i, c] of cases.entries()) {
    const kase = obj(c, `cases[${i}]`)
    const caseId = str(kase['id'], `cases[${i}].id`)
    const list = kase['evaluations']
    if (!Array.isArray(list)) throw new Error(`cryptography manifest: ${caseId}.evaluations must be an array`)
    for (const [j, item] of list.entries()) {
      const where = `${caseId}[${j}]`
      const e = obj(item, where)
      if (kase['kind'] === 'canonicalization') {
        evaluations.push({
          type: 'canonicalization',
          caseId,
          input: str(e['input'], `${where}.input`),
          expectedJcs: str(e['expectedJcs'], `${where}.expectedJcs`),
          sha256: str(e['sha256'], `${where}.sha256`),
        })
        continue
      }
      const profileId = str(e['profileId'], `${where}.profileId`)
      if (!isDocumentKind(profileId)) throw new Error(`cryptography manifest: ${where}.profileId ${profileId} is not a signed document kind`)
      const fault = e['fault'] === null || e['fault'] === undefined ? null : str(obj(e['fault'], `${where}.fault`)['id'], `${where}.fault.id`)
      evaluations.push({
        type: 'signed',
        caseId,
        profileId,
        document: str(e['document'], `${where}.document`),
        registry: str(e['registry'], `${where}.registry`),
        signingKey: e['signingKey'] === undefined ? undefined : str(e['signingKey'], `${where}.signingKey`),
        fault,
        expect: readExpectation(e['expect'], where),
      })
    }
  }
  return { cases: cases.length, evaluations }
}

/** The manifest's `profiles` must be exactly Weft's §6.4 table. */
function profileProblems(manifest: Obj): string[] {
  const problems: string[] = []
  const listed = manifest['profiles']
  if (!Array.isArray(listed)) return ['manifest has no profiles list']
  const seen = new Set<string>()
  for (const p of listed) {
    const entry = obj(p, 'profiles[]')
    const id = str(entry['profileId'], 'profiles[].profileId')
    seen.add(id)
    if (!isDocumentKind(id)) {
      problems.push(`manifest profile ${id} is not one of Weft's nine kinds`)
      continue
    }
    const ours = SIGNED_PROFILES[id]
    const expected = JSON.stringify({ schema: `schemas/${ours.schemaFile}`, protectedTimePointer: ours.protectedTimePointer, expectedSigner: ours.expectedSigner })
    const theirs = JSON.stringify({ schema: entry['schema'], protectedTimePointer: entry['protectedTimePointer'], expectedSigner: entry['expectedSigner'] })
    if (expected !== theirs) problems.push(`profile ${id}: manifest ${theirs} differs from Weft's ${expected}`)
  }
  for (const kind of Object.keys(SIGNED_PROFILES)) if (!seen.has(kind)) problems.push(`manifest lacks the ${kind} profile`)
  return problems
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.length), Buffer.from(b.buffer, b.byteOffset, b.length)) === 0
}

interface RegistryFixture {
  readonly issues: readonly string[]
  readonly registry: Registry
}

function diagnosticOf(result: VerifyResult): string | undefined {
  if (result.ok) return undefined
  return `${result.stage}/${result.reason}${result.detail === undefined ? '' : `: ${result.detail}`}`
}

/** Compares a complete verification with the manifest's `verified` member, and re-signs. */
function completeMismatches(bundleDir: string, evaluation: Extract<Evaluation, { type: 'signed' }>, result: Extract<VerifyResult, { ok: true }>): string[] {
  const v = evaluation.expect.verified
  if (v === undefined) return ['manifest lacks verified']
  const r = result.verified
  const out: string[] = []
  if (r.key.keyId !== v.keyId) out.push(`keyId ${r.key.keyId} != ${v.keyId}`)
  if (r.key.principal.type !== v.principal.type || r.key.principal.id !== v.principal.id) out.push(`principal ${JSON.stringify(r.key.principal)} != ${JSON.stringify(v.principal)}`)
  if (r.protectedTime.text !== v.protectedTime) out.push(`protectedTime ${r.protectedTime.text} != ${v.protectedTime}`)
  if (!sameBytes(r.signingBytes, readBundleFile(bundleDir, v.signingBytes))) out.push(`signing bytes differ from ${v.signingBytes}`)
  if (r.signingHash !== v.signingHash) out.push(`signingHash ${r.signingHash} != ${v.signingHash}`)
  if (r.signatureValue !== v.signature) out.push('signature differs')
  const whole = canonicalize(r.document)
  const documentHash = whole.ok ? sha256Tagged(whole.bytes) : '(not canonicalizable)'
  if (documentHash !== v.signedDocumentHash) out.push(`signedDocumentHash ${documentHash} != ${v.signedDocumentHash}`)
  // Re-sign with the test seed: Ed25519 is deterministic, so `sign` must reproduce the signature.
  if (evaluation.signingKey !== undefined) {
    const fixture = readStrictJson(bundleDir, evaluation.signingKey) as { keyId: string; seed: string; publicKey: string }
    const seed = decodeBase64url(fixture.seed)
    if (seed === undefined || seed.length !== 32) {
      out.push('signing-key seed is not 32 bytes of canonical base64url')
    } else {
      const pair = keyPairFromSeed(seed)
      if (encodeBase64url(pair.publicKey) !== fixture.publicKey) out.push('signing-key seed does not derive its publicKey')
      if (fixture.keyId !== v.keyId) out.push(`signing-key keyId ${fixture.keyId} != ${v.keyId}`)
      const resigned = sign(evaluation.profileId, r.document, { keyId: fixture.keyId, pair })
      if (resigned.signature.value !== v.signature) out.push('sign() with the fixture seed does not reproduce the signature')
    }
  }
  return out
}

/**
 * Runs the cryptography suite: manifest integrity, fixture structure, then all 62 evaluations.
 * The run is `ok` when every evaluation matches and there is no run-level problem.
 * @param bundleDir - Root of the normative bundle.
 * @throws Error when the manifest cannot be read or has an unexpected shape (the CLI reports
 * "could not run").
 * @example
 * ```ts
 * const run = runCryptography(locateBundle().dir)
 * console.log(formatCryptographyReport(run))
 * ```
 */
export function runCryptography(bundleDir: string, options: CryptographyOptions = {}): CryptographyRun {
  const validate = options.validate ?? schemaCheckForKind
  const pinned = options.pinned ?? PINNED_CRYPTOGRAPHY
  const manifest = obj(readStrictJson(bundleDir, 'cryptography/manifest.json'), 'the manifest')
  const problems: string[] = []

  const digest = checkManifestDigest(manifest)
  if (!digest.ok) problems.push(`artifactDigest: declared ${digest.declared}, computed ${digest.computed}`)
  if (digest.declared !== pinned.artifactDigest) problems.push(`artifactDigest ${digest.declared} is not the pinned ${pinned.artifactDigest}`)
  const entries = artifactEntries(manifest, 'cryptography manifest')
  const artifacts = checkArtifacts(bundleDir, entries)
  for (const a of artifacts) if (!a.ok) problems.push(`artifact ${a.path}: ${a.problem ?? 'mismatch'}`)
  const stages = manifest['semanticStages']
  if (JSON.stringify(stages) !== JSON.stringify(OUTCOMES)) problems.push(`semanticStages ${JSON.stringify(stages)} differ from ${JSON.stringify(OUTCOMES)}`)
  problems.push(...profileProblems(manifest))
  const fixtureSchemas = obj(manifest['fixtureSchemas'], 'fixtureSchemas')
  const registrySchema = str(fixtureSchemas['registry'], 'fixtureSchemas.registry')
  const signingKeySchema = str(fixtureSchemas['signingKey'], 'fixtureSchemas.signingKey')

  const { cases, evaluations } = readEvaluations(manifest)
  const bound = new Set(entries.map((e) => e.path))
  const unbound = new Set<string>()
  const use = (path: string): string => {
    if (!bound.has(path)) unbound.add(path)
    return path
  }

  const registries = new Map<string, RegistryFixture>()
  const registryFor = (path: string): RegistryFixture => {
    let fixture = registries.get(path)
    if (fixture === undefined) {
      const value = readStrictJson(bundleDir, use(path))
      const issues = registryFixtureIssues(value)
      // Evidence is validated once, here; a bad binding makes every resolve() fail closed (stage 4).
      fixture = { issues, registry: Registry.fromEvidence(value) }
      registries.set(path, fixture)
    }
    return fixture
  }
  const keyIssues = new Map<string, readonly string[]>()
  const signingKeyIssues = (path: string): readonly string[] => {
    let issues = keyIssues.get(path)
    if (issues === undefined) {
      issues = signingKeyFixtureIssues(readStrictJson(bundleDir, use(path)))
      keyIssues.set(path, issues)
    }
    return issues
  }

  const results: CryptographyResult[] = evaluations.map((evaluation, i) => {
    const index = i + 1
    if (evaluation.type === 'canonicalization') {
      const name = basename(evaluation.input)
      const base = { index, caseId: evaluation.caseId, profile: 'canonicalization', name, expectedStage: 'complete' as const, expectedWireCode: null }
      try {
        const parsed = parseStrictJson(readBundleFile(bundleDir, use(evaluation.input)))
        if (!parsed.ok) return { ...base, actualStage: 'parse', actualWireCode: 'PROTOCOL_VIOLATION', pass: false, mismatches: [`input is not strict JSON: ${parsed.reason}`] }
        const jcs = canonicalize(parsed.value)
        if (!jcs.ok) return { ...base, actualStage: 'canonicalization', actualWireCode: 'PROTOCOL_VIOLATION', pass: false, mismatches: [`JCS failed: ${jcs.reason} at ${jcs.path}`] }
        const mismatches: string[] = []
        if (!sameBytes(jcs.bytes, readBundleFile(bundleDir, use(evaluation.expectedJcs)))) mismatches.push(`canonical bytes differ from ${evaluation.expectedJcs}`)
        const hash = sha256Tagged(jcs.bytes)
        if (hash !== evaluation.sha256) mismatches.push(`sha256 ${hash} != ${evaluation.sha256}`)
        return { ...base, actualStage: 'complete', actualWireCode: null, pass: mismatches.length === 0, mismatches }
      } catch (cause) {
        return { ...base, actualStage: 'error', actualWireCode: null, pass: false, mismatches: [(cause as Error).message] }
      }
    }

    const { expect } = evaluation
    const base = {
      index,
      caseId: evaluation.caseId,
      profile: evaluation.profileId,
      name: evaluation.fault ?? basename(evaluation.document),
      expectedStage: expect.stage,
      expectedWireCode: expect.wireCode,
    }
    try {
      // The bundle requires fixture structure to be validated before a case is evaluated.
      const fixture = registryFor(evaluation.registry)
      const fixtureProblems = fixture.issues.map((issue) => `${evaluation.registry} violates ${registrySchema}: ${issue}`)
      if (evaluation.signingKey !== undefined) {
        fixtureProblems.push(...signingKeyIssues(evaluation.signingKey).map((issue) => `${evaluation.signingKey} violates ${signingKeySchema}: ${issue}`))
      }
      if (fixtureProblems.length > 0) return { ...base, actualStage: 'error', actualWireCode: null, pass: false, mismatches: fixtureProblems }

      const bytes = readBundleFile(bundleDir, use(evaluation.document))
      const result = verify(evaluation.profileId, bytes, fixture.registry, { validate, strictStageOrder: options.strictStageOrder === true })
      const actualStage: CryptographyOutcome = result.ok ? 'complete' : result.stage
      const actualWireCode = result.ok ? null : result.error.code
      const mismatches: string[] = []
      if (actualStage !== expect.stage) mismatches.push(`stage ${actualStage} != ${expect.stage}`)
      if (actualWireCode !== expect.wireCode) mismatches.push(`wire code ${String(actualWireCode)} != ${String(expect.wireCode)}`)
      if (!result.ok) {
        const generic = GENERIC_WIRE_MESSAGES[result.error.code as keyof typeof GENERIC_WIRE_MESSAGES]
        if (result.error.message !== generic) mismatches.push(`wire message is not the generic one of ${result.error.code}`)
      }
      if (result.ok && expect.stage === 'complete') {
        if (expect.verified !== undefined) use(expect.verified.signingBytes)
        mismatches.push(...completeMismatches(bundleDir, evaluation, result))
      }
      const diagnostic = diagnosticOf(result)
      return { ...base, actualStage, actualWireCode, pass: mismatches.length === 0, mismatches, ...(diagnostic === undefined ? {} : { diagnostic }) }
    } catch (cause) {
      return { ...base, actualStage: 'error', actualWireCode: null, pass: false, mismatches: [(cause as Error).message] }
    }
  })

  for (const path of unbound) problems.push(`${path} is used by an evaluation but not bound by artifacts`)
  const { complete, rejected } = countAgainstPin(results, cases, pinned, problems)
  const byStage = Object.fromEntries(
    OUTCOMES.map((stage) => {
      const of = results.filter((r) => r.expectedStage === stage)
      return [stage, { total: of.length, passed: of.filter((r) => r.pass).length }]
    }),
  ) as Record<CryptographyOutcome, StageCount>
  const passed = results.filter((r) => r.pass).length
  return {
    suite: 'cryptography',
    bundleDir,
    digest,
    artifacts,
    results,
    summary: { total: results.length, passed, failed: results.length - passed, complete, rejected, byStage },
    problems,
    ok: passed === results.length && problems.length === 0,
  }
}

/** Columns of the cryptography table. */
export const CRYPTOGRAPHY_COLUMNS: readonly TableColumn[] = [
  { header: '#', align: 'right' },
  { header: 'result' },
  { header: 'profile' },
  { header: 'expected' },
  { header: 'actual' },
  { header: 'wire code' },
  { header: 'evaluation' },
]

/**
 * The table of evaluations per expected stage (`stage | evaluations | passed`), or per any other
 * key, named by `label` (e.g. `reason`). The label is a column header, so the column is as wide as
 * it needs (renaming the header of the rendered text would shift it against the rows).
 */
export function stageTable(byStage: Readonly<Record<string, StageCount>>, label = 'stage'): string {
  const rows = Object.entries(byStage).map(([stage, c]) => [stage, String(c.total), String(c.passed)])
  return renderTable([{ header: label }, { header: 'evaluations', align: 'right' }, { header: 'passed', align: 'right' }], rows)
}

/** The one-line summary, e.g. `cryptography: 62/62 passed (12 complete, 50 rejected); artifactDigest ok; 98/98 artifacts ok`. */
export function cryptographySummaryLine(run: CryptographyRun): string {
  const { total, passed, failed, complete, rejected } = run.summary
  const artifactsOk = run.artifacts.filter((a) => a.ok).length
  const extras = [failed > 0 ? `${failed} failed` : undefined, run.problems.length > 0 ? `${run.problems.length} ${run.problems.length === 1 ? 'problem' : 'problems'}` : undefined].filter(
    (x) => x !== undefined,
  )
  return (
    `cryptography: ${passed}/${total} passed (${complete} complete, ${rejected} rejected); ` +
    `artifactDigest ${run.digest.ok ? 'ok' : 'MISMATCH'}; ${artifactsOk}/${run.artifacts.length} artifacts ok` +
    (extras.length > 0 ? `; ${extras.join(', ')}` : '')
  )
}

/**
 * The plain-text report: the evaluation table, the per-stage table, the mismatches of failing
 * evaluations (verbose: Weft's diagnostic of every rejection), problems, then the summary line.
 */
export function formatCryptographyReport(run: CryptographyRun, options: { readonly verbose?: boolean } = {}): string {
  const rows = run.results.map((r) => [String(r.index), r.pass ? 'PASS' : 'FAIL', r.profile, r.expectedStage, r.actualStage, r.actualWireCode ?? '-', r.name])
  const parts = [renderTable(CRYPTOGRAPHY_COLUMNS, rows), stageTable(run.summary.byStage)]
  const details = run.results
    .filter((r) => !r.pass || (options.verbose === true && r.diagnostic !== undefined))
    .map((r) => `  #${r.index} ${r.pass ? 'PASS' : 'FAIL'} ${r.caseId} ${r.name}: ${[...r.mismatches, ...(r.diagnostic === undefined ? [] : [`diagnostic ${r.diagnostic}`])].join('; ')}`)
  if (details.length > 0) parts.push(details.join('\n'))
  if (run.problems.length > 0) parts.push(run.problems.map((p) => `  problem: ${p}`).join('\n'))
  parts.push(cryptographySummaryLine(run))
  return parts.join('\n\n')
}

/** The JSON form of a cryptography run (plain data). */
export interface CryptographyJson {
  readonly suite: 'cryptography'
  readonly ok: boolean
  readonly summary: CryptographySummary
  readonly artifactDigest: DigestCheck
  readonly artifacts: { readonly total: number; readonly ok: number; readonly failures: readonly ArtifactCheck[] }
  readonly problems: readonly string[]
  readonly results: readonly CryptographyResult[]
}

/** Converts a run to its {@link CryptographyJson}. */
export function cryptographyJson(run: CryptographyRun): CryptographyJson {
  return {
    suite: 'cryptography',
    ok: run.ok,
    summary: run.summary,
    artifactDigest: run.digest,
    artifacts: { total: run.artifacts.length, ok: run.artifacts.filter((a) => a.ok).length, failures: run.artifacts.filter((a) => !a.ok) },
    problems: run.problems,
    results: run.results,
  }
}
