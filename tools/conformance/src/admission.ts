/**
 * The admission suite: `admission/manifest.json` of the bundle (§6.4 First-Admission Records,
 * first admission, historical replay, Event self-anchoring) against `@weft/codec`'s `admitFirst`
 * and `replayHistorical`.
 *
 * The manifest's `trustedContext`, `lookup` and `append` members are test-harness metadata: each
 * evaluation gets a scripted Admission Log that returns exactly the declared typed outcomes and
 * records which operations were called, so the run also checks the orchestration (replay never
 * appends nor issues trusted context; trusted context only after an authoritative absence;
 * append exactly when the manifest scripts one) and that the prepared candidate record equals
 * the record the log returns on a commit.
 *
 * Before the evaluations the run checks the manifest's `artifactDigest`, every artifact, the
 * pinned cryptography digest (against the pin and against the cryptography manifest as found),
 * and the structure of every Registry fixture. Records are not pre-validated against their
 * schema: they are the subject under test (some are deliberately invalid).
 * @module
 */
import { basename } from 'node:path'
import {
  GENERIC_WIRE_MESSAGES,
  Registry,
  admitFirst,
  canonicalize,
  isDocumentKind,
  replayHistorical,
  type AdmissionLog,
  type AdmissionResult,
  type AppendOutcome,
  type DocumentKind,
  type FirstAdmissionRecord,
  type JsonValue,
  type LookupOutcome,
  type Principal,
  type SchemaCheck,
  type TrustedAcceptance,
} from '@weft/codec'
import { schemaCheckForKind } from '@weft/validators/signed'
import { artifactEntries, checkArtifacts, checkManifestDigest, countAgainstPin, readBundleFile, readStrictJson, type ArtifactCheck, type DigestCheck } from './artifacts.js'
import { PINNED_CRYPTOGRAPHY, stageTable, type StageCount } from './cryptography.js'
import { registryFixtureIssues } from './fixtures.js'
import { renderTable, type TableColumn } from './report.js'

/** What Weft is pinned to: the admission manifest's digest and counts at the pinned protocol commit. */
export const PINNED_ADMISSION: {
  readonly artifactDigest: string
  readonly cryptographyDigest: string
  readonly artifacts: number
  readonly cases: number
  readonly evaluations: number
  readonly complete: number
  readonly rejected: number
} = Object.freeze({
  artifactDigest: 'sha256:39971bfafb68ef6c18f9026220cccc4f023fd4d5c8074f8ff0276cb1129cd0a0',
  cryptographyDigest: PINNED_CRYPTOGRAPHY.artifactDigest,
  artifacts: 19,
  cases: 5,
  evaluations: 30,
  complete: 12,
  rejected: 18,
})

/** The outcome of one admission evaluation. */
export interface AdmissionEvaluationResult {
  readonly index: number
  readonly id: string
  readonly caseId: string
  readonly profile: string
  readonly mode: 'first-admission' | 'historical-replay'
  /** `complete` or `admission`. */
  readonly expectedStage: string
  /** `complete`, `admission`, a cryptographic stage, or `error` when it could not run. */
  readonly actualStage: string
  readonly expectedWireCode: string | null
  readonly actualWireCode: string | null
  readonly expectedReason: string | null
  readonly actualReason: string | null
  /** Admission Log operations in call order (`lookup`, `trusted-context`, `append`). */
  readonly calls: readonly string[]
  readonly pass: boolean
  readonly mismatches: readonly string[]
}

/** Counts over an admission run. */
export interface AdmissionSummary {
  readonly total: number
  readonly passed: number
  readonly failed: number
  readonly complete: number
  readonly rejected: number
  /** Per expected stage (`complete`, `admission`). */
  readonly byStage: Readonly<Record<string, StageCount>>
  /** Per expected rejection reason. */
  readonly byReason: Readonly<Record<string, StageCount>>
}

/** The result of {@link runAdmission}. */
export interface AdmissionRun {
  readonly suite: 'admission'
  readonly bundleDir: string
  readonly digest: DigestCheck
  /** The cryptography digest the admission manifest pins, and the cryptography manifest's actual one. */
  readonly cryptographyPin: { readonly pinned: string; readonly actual: string; readonly ok: boolean }
  readonly artifacts: readonly ArtifactCheck[]
  readonly results: readonly AdmissionEvaluationResult[]
  readonly summary: AdmissionSummary
  readonly problems: readonly string[]
  readonly ok: boolean
}

/** Options of {@link runAdmission}. */
export interface AdmissionOptions {
  /** The schema check; defaults to `schemaCheckForKind` of `@weft/validators`. */
  readonly validate?: SchemaCheck
  /** Pins to enforce; defaults to {@link PINNED_ADMISSION}. */
  readonly pinned?: typeof PINNED_ADMISSION
}

type Obj = { readonly [name: string]: JsonValue }

function obj(value: JsonValue | undefined, what: string): Obj {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`admission manifest: ${what} must be an object`)
  return value
}

function str(value: JsonValue | undefined, what: string): string {
  if (typeof value !== 'string') throw new Error(`admission manifest: ${what} must be a string`)
  return value
}

function principal(value: JsonValue | undefined, what: string): Principal {
  const p = obj(value, what)
  const type = str(p['type'], `${what}.type`)
  if (type !== 'agent' && type !== 'human' && type !== 'service') throw new Error(`admission manifest: ${what}.type ${type}`)
  return { type, id: str(p['id'], `${what}.id`) }
}

interface Scripted {
  readonly status: string
  readonly record?: string
  readonly authenticatedService?: Principal
}

interface Evaluation {
  readonly caseId: string
  readonly id: string
  readonly profileId: DocumentKind
  readonly mode: 'first-admission' | 'historical-replay'
  readonly document: string
  readonly registry: string
  readonly trustedContext: TrustedAcceptance | null
  readonly lookup: Scripted
  readonly append: Scripted | null
  readonly expect: { readonly stage: string; readonly wireCode: string | null; readonly record?: string; readonly reason?: string }
}

function scripted(value: JsonValue | undefined, what: string): Scripted {
  const s = obj(value, what)
  return {
    status: str(s['status'], `${what}.status`),
    ...(s['record'] === undefined ? {} : { record: str(s['record'], `${what}.record`) }),
    ...(s['authenticatedService'] === undefined ? {} : { authenticatedService: principal(s['authenticatedService'], `${what}.authenticatedService`) }),
  }
}

function readEvaluations(manifest: Obj): { cases: number; evaluations: Evaluation[] } {
  const cases = manifest['cases']
  if (!Array.isArray(cases)) throw new Error('admission manifest: cases must be an array')
  const evaluations: Evaluation[] = []
  for (const [i, c] of cases.entries()) {
    const kase = obj(c, `cases[${i}]`)
    const caseId = str(kase['id'], `cases[${i}].id`)
    const list = kase['evaluations']
    if (!Array.isArray(list)) throw new Error(`admission manifest: ${caseId}.evaluations must be an array`)
    for (const item of list) {
      const e = obj(item, `${caseId} evaluation`)
      const id = str(e['id'], `${caseId}.id`)
      const profileId = str(e['profileId'], `${id}.profileId`)
      if (!isDocumentKind(profileId)) throw new Error(`admission manifest: ${id}.profileId ${profileId}`)
      const mode = str(e['mode'], `${id}.mode`)
      if (mode !== 'first-admission' && mode !== 'historical-replay') throw new Error(`admission manifest: ${id}.mode ${mode}`)
      let trustedContext: TrustedAcceptance | null = null
      if (e['trustedContext'] !== null) {
        const t = obj(e['trustedContext'], `${id}.trustedContext`)
        trustedContext = {
          admissionRecordId: str(t['admissionRecordId'], `${id}.trustedContext.admissionRecordId`),
          trustedAcceptedAt: str(t['trustedAcceptedAt'], `${id}.trustedContext.trustedAcceptedAt`),
          acceptedBy: principal(t['acceptedBy'], `${id}.trustedContext.acceptedBy`),
        }
      }
      const x = obj(e['expect'], `${id}.expect`)
      evaluations.push({
        caseId,
        id,
        profileId,
        mode,
        document: str(e['document'], `${id}.document`),
        registry: str(e['registry'], `${id}.registry`),
        trustedContext,
        lookup: scripted(e['lookup'], `${id}.lookup`),
        append: e['append'] === null ? null : scripted(e['append'], `${id}.append`),
        expect: {
          stage: str(x['stage'], `${id}.expect.stage`),
          wireCode: x['wireCode'] === null ? null : str(x['wireCode'], `${id}.expect.wireCode`),
          ...(x['record'] === undefined ? {} : { record: str(x['record'], `${id}.expect.record`) }),
          ...(x['reason'] === undefined ? {} : { reason: str(x['reason'], `${id}.expect.reason`) }),
        },
      })
    }
  }
  return { cases: cases.length, evaluations }
}

/** The bundle's `authoritative-absence` is the codec's `absent`; other statuses share names. */
function lookupOutcome(s: Scripted, read: (path: string) => Uint8Array): LookupOutcome {
  if (s.status === 'authoritative-absence') return { status: 'absent' }
  if (s.status === 'found') {
    if (s.record === undefined || s.authenticatedService === undefined) throw new Error('found lookup without record or authenticatedService')
    return { status: 'found', record: read(s.record), authenticatedService: s.authenticatedService }
  }
  return { status: s.status } as LookupOutcome
}

function appendOutcome(s: Scripted, read: (path: string) => Uint8Array): AppendOutcome {
  if (s.status === 'committed' || s.status === 'existing') {
    if (s.record === undefined || s.authenticatedService === undefined) throw new Error(`${s.status} append without record or authenticatedService`)
    return { status: s.status, record: read(s.record), authenticatedService: s.authenticatedService }
  }
  return { status: s.status } as AppendOutcome
}

/** An Admission Log that replays the manifest's scripted outcomes and records every call. */
class ScriptedLog implements AdmissionLog {
  readonly calls: string[] = []
  readonly misuse: string[] = []
  candidate: FirstAdmissionRecord | undefined

  constructor(
    private readonly evaluation: Evaluation,
    private readonly read: (path: string) => Uint8Array,
  ) {}

  lookup(_organizationId: string, _signingHash: string): LookupOutcome {
    this.calls.push('lookup')
    return lookupOutcome(this.evaluation.lookup, this.read)
  }

  appendOrReturnExisting(candidate: FirstAdmissionRecord): AppendOutcome {
    this.calls.push('append')
    this.candidate = candidate
    if (this.evaluation.append === null) {
      this.misuse.push('append was called, but the evaluation scripts none')
      return { status: 'indeterminate' }
    }
    return appendOutcome(this.evaluation.append, this.read)
  }

  trustedContext(): TrustedAcceptance {
    this.calls.push('trusted-context')
    if (this.evaluation.trustedContext === null) {
      this.misuse.push('trusted context was requested, but the evaluation provides none')
      throw new Error('no trusted context in this evaluation')
    }
    return this.evaluation.trustedContext
  }
}

function outcomeOf(result: AdmissionResult): { stage: string; wireCode: string | null; reason: string | null } {
  if (result.ok) return { stage: 'complete', wireCode: null, reason: null }
  return { stage: result.stage, wireCode: result.error.code, reason: result.reason }
}

function jcsEqual(a: unknown, b: JsonValue): boolean {
  const x = canonicalize(a)
  const y = canonicalize(b)
  return x.ok && y.ok && Buffer.compare(Buffer.from(x.bytes), Buffer.from(y.bytes)) === 0
}

/**
 * Runs the admission suite: manifest integrity and pins, Registry fixture structure, then all 30
 * evaluations through a scripted Admission Log.
 * @param bundleDir - Root of the normative bundle.
 * @throws Error when a manifest cannot be read or has an unexpected shape.
 * @example
 * ```ts
 * const run = await runAdmission(locateBundle().dir)
 * console.log(formatAdmissionReport(run))
 * ```
 */
export async function runAdmission(bundleDir: string, options: AdmissionOptions = {}): Promise<AdmissionRun> {
  const validate = options.validate ?? schemaCheckForKind
  const pinned = options.pinned ?? PINNED_ADMISSION
  const manifest = obj(readStrictJson(bundleDir, 'admission/manifest.json'), 'the manifest')
  const problems: string[] = []

  const digest = checkManifestDigest(manifest)
  if (!digest.ok) problems.push(`artifactDigest: declared ${digest.declared}, computed ${digest.computed}`)
  if (digest.declared !== pinned.artifactDigest) problems.push(`artifactDigest ${digest.declared} is not the pinned ${pinned.artifactDigest}`)
  const entries = artifactEntries(manifest, 'admission manifest')
  const artifacts = checkArtifacts(bundleDir, entries)
  for (const a of artifacts) if (!a.ok) problems.push(`artifact ${a.path}: ${a.problem ?? 'mismatch'}`)
  if (entries.length !== pinned.artifacts) problems.push(`manifest lists ${entries.length} artifacts; the pinned bundle lists ${pinned.artifacts}`)
  if (manifest['semanticStage'] !== 'admission' || manifest['wireCode'] !== 'AUTH_INVALID_SIGNATURE') problems.push('semanticStage/wireCode are not admission/AUTH_INVALID_SIGNATURE')

  // The admission layer sits on an unchanged cryptography bundle: its pinned digest must be the
  // cryptography manifest's actual digest, and Weft's pin.
  const crypto = obj(manifest['cryptography'], 'cryptography')
  const cryptoManifestPath = str(crypto['manifest'], 'cryptography.manifest')
  const cryptoPinned = str(crypto['artifactDigest'], 'cryptography.artifactDigest')
  const cryptoManifest = obj(readStrictJson(bundleDir, cryptoManifestPath), 'the cryptography manifest')
  const cryptoDigest = checkManifestDigest(cryptoManifest)
  const cryptographyPin = { pinned: cryptoPinned, actual: cryptoDigest.computed, ok: cryptoDigest.ok && cryptoPinned === cryptoDigest.computed && cryptoPinned === pinned.cryptographyDigest }
  if (!cryptographyPin.ok) problems.push(`pinned cryptography digest ${cryptoPinned}; cryptography manifest computes ${cryptoDigest.computed}; Weft pins ${pinned.cryptographyDigest}`)

  // Every file an evaluation reads must be bound, by this manifest or by the pinned cryptography manifest.
  const bound = new Set([...entries.map((e) => e.path), ...artifactEntries(cryptoManifest, 'cryptography manifest').map((e) => e.path)])
  const unbound = new Set<string>()
  const read = (path: string): Uint8Array => {
    if (!bound.has(path)) unbound.add(path)
    return readBundleFile(bundleDir, path)
  }

  const fixtureSchemas = obj(manifest['fixtureSchemas'], 'fixtureSchemas')
  const registrySchema = str(fixtureSchemas['registry'], 'fixtureSchemas.registry')
  const registries = new Map<string, { issues: readonly string[]; registry: Registry }>()
  const registryFor = (path: string) => {
    let fixture = registries.get(path)
    if (fixture === undefined) {
      read(path)
      const value = readStrictJson(bundleDir, path)
      fixture = { issues: registryFixtureIssues(value), registry: Registry.fromEvidence(value) }
      registries.set(path, fixture)
    }
    return fixture
  }

  const { cases, evaluations } = readEvaluations(manifest)
  const results: AdmissionEvaluationResult[] = []
  for (const [i, evaluation] of evaluations.entries()) {
    const base = {
      index: i + 1,
      id: evaluation.id,
      caseId: evaluation.caseId,
      profile: evaluation.profileId,
      mode: evaluation.mode,
      expectedStage: evaluation.expect.stage,
      expectedWireCode: evaluation.expect.wireCode,
      expectedReason: evaluation.expect.reason ?? null,
    }
    const log = new ScriptedLog(evaluation, read)
    try {
      const fixture = registryFor(evaluation.registry)
      if (fixture.issues.length > 0) {
        results.push({
          ...base,
          actualStage: 'error',
          actualWireCode: null,
          actualReason: null,
          calls: [],
          pass: false,
          mismatches: fixture.issues.map((x) => `${evaluation.registry} violates ${registrySchema}: ${x}`),
        })
        continue
      }
      const input = read(evaluation.document)
      const result =
        evaluation.mode === 'first-admission'
          ? await admitFirst(evaluation.profileId, input, fixture.registry, { validate, log, trustedContext: () => log.trustedContext() })
          : await replayHistorical(evaluation.profileId, input, fixture.registry, { validate, log })
      const actual = outcomeOf(result)
      const mismatches: string[] = [...log.misuse]
      if (actual.stage !== evaluation.expect.stage) mismatches.push(`stage ${actual.stage} != ${evaluation.expect.stage}`)
      if (actual.wireCode !== evaluation.expect.wireCode) mismatches.push(`wire code ${String(actual.wireCode)} != ${String(evaluation.expect.wireCode)}`)
      if (evaluation.expect.reason !== undefined && actual.reason !== evaluation.expect.reason) mismatches.push(`reason ${String(actual.reason)} != ${evaluation.expect.reason}`)
      if (!result.ok && result.error.message !== GENERIC_WIRE_MESSAGES[result.error.code as keyof typeof GENERIC_WIRE_MESSAGES]) {
        mismatches.push(`wire message is not the generic one of ${result.error.code}`)
      }
      if (result.ok && evaluation.expect.record !== undefined) {
        const expected = read(evaluation.expect.record)
        const returned = typeof result.recordBytes === 'string' ? Buffer.from(result.recordBytes, 'utf8') : result.recordBytes
        if (Buffer.compare(Buffer.from(returned), Buffer.from(expected)) !== 0) mismatches.push(`accepted record differs from ${evaluation.expect.record}`)
      }
      // Orchestration: what was called, and the candidate that was prepared.
      const expectTrusted = evaluation.mode === 'first-admission' && evaluation.lookup.status === 'authoritative-absence'
      if (log.calls[0] !== 'lookup') mismatches.push('the Admission Log was not consulted first')
      if (log.calls.includes('trusted-context') !== expectTrusted)
        mismatches.push(expectTrusted ? 'trusted context was not obtained after authoritative absence' : 'trusted context was obtained without authoritative absence')
      if (log.calls.includes('append') !== (evaluation.append !== null)) mismatches.push(evaluation.append === null ? 'append was called' : 'append was not called')
      if (log.candidate !== undefined && evaluation.append?.status === 'committed' && evaluation.append.record !== undefined) {
        const parsed = readStrictJson(bundleDir, evaluation.append.record)
        if (!jcsEqual(log.candidate, parsed)) mismatches.push(`prepared candidate differs from the committed record ${basename(evaluation.append.record)}`)
      }
      results.push({ ...base, actualStage: actual.stage, actualWireCode: actual.wireCode, actualReason: actual.reason, calls: log.calls, pass: mismatches.length === 0, mismatches })
    } catch (cause) {
      results.push({ ...base, actualStage: 'error', actualWireCode: null, actualReason: null, calls: log.calls, pass: false, mismatches: [(cause as Error).message] })
    }
  }

  for (const path of unbound) problems.push(`${path} is used by an evaluation but bound by neither manifest's artifacts`)
  const { complete, rejected } = countAgainstPin(results, cases, pinned, problems)
  const count = (pick: (r: AdmissionEvaluationResult) => string | null) => {
    const out: Record<string, StageCount> = {}
    for (const r of results) {
      const key = pick(r)
      if (key === null) continue
      const c = out[key] ?? { total: 0, passed: 0 }
      out[key] = { total: c.total + 1, passed: c.passed + (r.pass ? 1 : 0) }
    }
    return out
  }
  const passed = results.filter((r) => r.pass).length
  return {
    suite: 'admission',
    bundleDir,
    digest,
    cryptographyPin,
    artifacts,
    results,
    summary: {
      total: results.length,
      passed,
      failed: results.length - passed,
      complete,
      rejected,
      byStage: count((r) => r.expectedStage),
      byReason: count((r) => r.expectedReason),
    },
    problems,
    ok: passed === results.length && problems.length === 0,
  }
}

/** Columns of the admission table. */
export const ADMISSION_COLUMNS: readonly TableColumn[] = [
  { header: '#', align: 'right' },
  { header: 'result' },
  { header: 'mode' },
  { header: 'profile' },
  { header: 'expected' },
  { header: 'actual' },
  { header: 'reason' },
  { header: 'evaluation' },
]

/** The one-line summary, e.g. `admission: 30/30 passed (12 complete, 18 rejected); artifactDigest ok; ...`. */
export function admissionSummaryLine(run: AdmissionRun): string {
  const { total, passed, failed, complete, rejected } = run.summary
  const extras = [failed > 0 ? `${failed} failed` : undefined, run.problems.length > 0 ? `${run.problems.length} ${run.problems.length === 1 ? 'problem' : 'problems'}` : undefined].filter(
    (x) => x !== undefined,
  )
  return (
    `admission: ${passed}/${total} passed (${complete} complete, ${rejected} rejected); ` +
    `artifactDigest ${run.digest.ok ? 'ok' : 'MISMATCH'}; cryptography pin ${run.cryptographyPin.ok ? 'ok' : 'MISMATCH'}; ` +
    `${run.artifacts.filter((a) => a.ok).length}/${run.artifacts.length} artifacts ok` +
    (extras.length > 0 ? `; ${extras.join(', ')}` : '')
  )
}

/**
 * The plain-text report: the evaluation table, counts per expected stage and per expected
 * reason, the mismatches of failing evaluations (verbose: also the Admission Log calls of each),
 * problems, then the summary line.
 */
export function formatAdmissionReport(run: AdmissionRun, options: { readonly verbose?: boolean } = {}): string {
  const rows = run.results.map((r) => [String(r.index), r.pass ? 'PASS' : 'FAIL', r.mode, r.profile, r.expectedStage, r.actualStage, r.actualReason ?? '-', r.id])
  const parts = [renderTable(ADMISSION_COLUMNS, rows), stageTable(run.summary.byStage), stageTable(run.summary.byReason, 'reason')]
  const details = run.results
    .filter((r) => !r.pass || options.verbose === true)
    .map((r) => `  #${r.index} ${r.pass ? 'PASS' : 'FAIL'} ${r.id}: calls ${r.calls.join(' > ') || '(none)'}${r.mismatches.length > 0 ? `; ${r.mismatches.join('; ')}` : ''}`)
  if (details.length > 0) parts.push(details.join('\n'))
  if (run.problems.length > 0) parts.push(run.problems.map((p) => `  problem: ${p}`).join('\n'))
  parts.push(admissionSummaryLine(run))
  return parts.join('\n\n')
}

/** The JSON form of an admission run (plain data). */
export interface AdmissionJson {
  readonly suite: 'admission'
  readonly ok: boolean
  readonly summary: AdmissionSummary
  readonly artifactDigest: DigestCheck
  readonly cryptographyPin: AdmissionRun['cryptographyPin']
  readonly artifacts: { readonly total: number; readonly ok: number; readonly failures: readonly ArtifactCheck[] }
  readonly problems: readonly string[]
  readonly results: readonly AdmissionEvaluationResult[]
}

/** Converts a run to its {@link AdmissionJson}. */
export function admissionJson(run: AdmissionRun): AdmissionJson {
  return {
    suite: 'admission',
    ok: run.ok,
    summary: run.summary,
    artifactDigest: run.digest,
    cryptographyPin: run.cryptographyPin,
    artifacts: { total: run.artifacts.length, ok: run.artifacts.filter((a) => a.ok).length, failures: run.artifacts.filter((a) => !a.ok) },
    problems: run.problems,
    results: run.results,
  }
}
