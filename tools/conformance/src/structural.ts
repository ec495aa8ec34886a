/**
 * The structural suite: every vector of the bundle's conformance manifest, checked by the
 * generated validator of its schema, against the validity the manifest expects.
 *
 * Passing it shows structural schema conformance only; the behavioural rules of the protocol
 * (state machines, ordering, epochs, signatures, admission) are other suites.
 * @module
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { validatorForFile as weftValidatorForFile } from '@weft/validators'

/** One entry of `conformance/manifest.json`: a schema, an instance and whether it must validate. */
export interface ManifestVector {
  /** Human-readable name; unique within the manifest and used as the key of expected failures. */
  readonly name: string
  /** Schema path relative to the bundle root, e.g. `schemas/work-item.schema.json`. */
  readonly schema: string
  /** Instance path relative to the bundle root. */
  readonly instance: string
  /** Whether the instance must be accepted by the schema. */
  readonly valid: boolean
}

/**
 * A vector Weft is known to get wrong, with the reason. Kept in
 * `tools/conformance/expected-failures.json` so that every known gap stays visible; a listed
 * vector that starts passing fails the run until its entry is removed.
 */
export interface ExpectedFailure {
  /** The manifest `name` of the vector. */
  readonly name: string
  /** Why it fails (and where that is tracked). */
  readonly reason: string
}

/** The part of a generated validator the structural suite uses (see `@weft/validators`). */
export interface StructuralValidator {
  check(value: unknown): boolean
  errors(value: unknown, options?: { maxErrors?: number }): readonly { readonly path: string; readonly keyword: string; readonly message: string }[]
}

/** Verdict on one instance. `error` means it could not be checked (no validator, unreadable file). */
export type Verdict = 'valid' | 'invalid' | 'error'

/** The outcome of one manifest vector. */
export interface StructuralResult {
  /** 1-based position in the manifest. */
  readonly index: number
  readonly name: string
  readonly schema: string
  readonly instance: string
  readonly expected: 'valid' | 'invalid'
  readonly actual: Verdict
  /** `actual === expected`. */
  readonly pass: boolean
  /** Set when the vector is listed in the expected failures; the listed reason. */
  readonly expectedFailure?: string
  /**
   * The first validation issue (`<pointer> <keyword>: <message>`) when the vector is invalid or
   * the verdict differs from the expectation, or why the vector could not be checked.
   */
  readonly firstError?: string
}

/** Counts over a structural run. */
export interface StructuralSummary {
  /** Vectors in the manifest. */
  readonly total: number
  /** Vectors whose verdict matched the manifest. */
  readonly passed: number
  /** Vectors whose verdict did not match and that are not listed as expected failures. */
  readonly failed: number
  /** Vectors whose verdict did not match and that are listed as expected failures. */
  readonly expectedFailures: number
  /** Vectors the manifest expects to be valid. */
  readonly valid: number
  /** Vectors the manifest expects to be invalid. */
  readonly invalid: number
}

/** The result of {@link runStructural}. */
export interface StructuralRun {
  readonly suite: 'structural'
  readonly bundleDir: string
  readonly results: readonly StructuralResult[]
  readonly summary: StructuralSummary
  /**
   * Run-level problems besides failing vectors: a bundle schema file with no validator, a manifest
   * whose counts differ from the pinned bundle, a listed expected failure that now passes or
   * names no vector.
   */
  readonly problems: readonly string[]
  /** No unexpected failure and no problem. */
  readonly ok: boolean
}

/** Vector counts of the pinned MissionWeaveProtocol 0.1 manifest. */
export const PINNED_MANIFEST_COUNTS: { readonly total: number; readonly valid: number; readonly invalid: number } = {
  total: 58,
  valid: 27,
  invalid: 31,
}

/** Options of {@link runStructural}. */
export interface StructuralOptions {
  /**
   * Known failures. Defaults to the list in `tools/conformance/expected-failures.json`
   * ({@link loadExpectedFailures}).
   */
  readonly expectedFailures?: readonly ExpectedFailure[]
  /**
   * Maps a schema file name (`work-item.schema.json`) to its validator. Defaults to
   * `validatorForFile` of `@weft/validators`; replaceable to test the runner itself.
   */
  readonly validatorForFile?: (fileName: string) => StructuralValidator | undefined
  /** Counts the manifest must have; defaults to {@link PINNED_MANIFEST_COUNTS}. */
  readonly expectedCounts?: { readonly total: number; readonly valid: number; readonly invalid: number }
}

/** Where the package's `expected-failures.json` is: one level above both `src/` and `dist/`. */
export const EXPECTED_FAILURES_FILE: string = fileURLToPath(new URL('../expected-failures.json', import.meta.url))

/**
 * Reads a list of expected failures (`[{ "name": ..., "reason": ... }]`).
 * @param file - Defaults to {@link EXPECTED_FAILURES_FILE}; a missing default file means none.
 * @throws Error when the file is not such a list.
 */
export function loadExpectedFailures(file: string = EXPECTED_FAILURES_FILE): ExpectedFailure[] {
  if (file === EXPECTED_FAILURES_FILE && !existsSync(file)) return []
  const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'))
  if (!Array.isArray(parsed)) throw new Error(`${file}: expected a JSON array of { name, reason }`)
  return parsed.map((entry: unknown, i) => {
    if (typeof entry !== 'object' || entry === null || typeof (entry as { name?: unknown }).name !== 'string' || typeof (entry as { reason?: unknown }).reason !== 'string') {
      throw new Error(`${file}: entry ${i} must be { "name": string, "reason": string }`)
    }
    const { name, reason } = entry as ExpectedFailure
    return { name, reason }
  })
}

/**
 * Reads `conformance/manifest.json` of a bundle.
 * @throws Error when the manifest is not a list of `{ name, schema, instance, valid }`.
 */
export function readManifest(bundleDir: string): ManifestVector[] {
  const file = join(bundleDir, 'conformance', 'manifest.json')
  const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'))
  if (!Array.isArray(parsed)) throw new Error(`${file}: expected a JSON array`)
  return parsed.map((entry: unknown, i) => {
    const e = entry as Partial<Record<keyof ManifestVector, unknown>> | null
    if (typeof e !== 'object' || e === null || typeof e.name !== 'string' || typeof e.schema !== 'string' || typeof e.instance !== 'string' || typeof e.valid !== 'boolean') {
      throw new Error(`${file}: entry ${i} must be { name, schema, instance, valid }`)
    }
    return { name: e.name, schema: e.schema, instance: e.instance, valid: e.valid }
  })
}

/**
 * The schema files of a bundle (`schemas/*.schema.json`, §21), sorted: the files a manifest vector
 * may name, definitions-only ones such as `common.schema.json` included.
 * @throws Error when the bundle has no `schemas/` folder.
 */
export function bundleSchemaFiles(bundleDir: string): string[] {
  return readdirSync(join(bundleDir, 'schemas'))
    .filter((file) => file.endsWith('.schema.json'))
    .sort()
}

/**
 * One problem per bundle schema file that `lookup` maps to no validator, naming the file: every
 * schema of the bundle needs a runner path, whether or not the manifest names it today.
 * @param lookup - Defaults to `validatorForFile` of `@weft/validators`.
 */
export function unmappedSchemas(bundleDir: string, lookup: (fileName: string) => StructuralValidator | undefined = weftValidatorForFile): string[] {
  return bundleSchemaFiles(bundleDir)
    .filter((file) => lookup(file) === undefined)
    .map((file) => `no Weft validator for bundle schema schemas/${file}: every schema file of the bundle needs one`)
}

function describeIssue(issue: { readonly path: string; readonly keyword: string; readonly message: string }): string {
  return `${issue.path === '' ? '/' : issue.path} ${issue.keyword}: ${issue.message}`
}

function checkVector(bundleDir: string, vector: ManifestVector, lookup: (fileName: string) => StructuralValidator | undefined): { actual: Verdict; firstError?: string } {
  const file = basename(vector.schema)
  const validator = lookup(file)
  if (validator === undefined) return { actual: 'error', firstError: `no Weft validator for ${file}` }
  let instance: unknown
  try {
    instance = JSON.parse(readFileSync(join(bundleDir, vector.instance), 'utf8'))
  } catch (cause) {
    return { actual: 'error', firstError: `cannot read ${vector.instance}: ${(cause as Error).message}` }
  }
  try {
    const accepted = validator.check(instance)
    const actual: Verdict = accepted ? 'valid' : 'invalid'
    if (accepted) {
      return vector.valid ? { actual } : { actual, firstError: 'accepted, but the manifest expects a rejection' }
    }
    const [first] = validator.errors(instance, { maxErrors: 1 })
    return { actual, firstError: first === undefined ? 'rejected, but errors() reported no issue' : describeIssue(first) }
  } catch (cause) {
    return { actual: 'error', firstError: `validator threw: ${(cause as Error).message}` }
  }
}

/**
 * Runs the structural suite: every manifest vector through the Weft validator of its schema.
 *
 * The run is `ok` when every vector gets the expected verdict, except those listed as expected
 * failures, and there is no problem: every bundle schema file must map to a validator
 * ({@link unmappedSchemas}), the manifest must count 58 vectors (27 valid, 31 invalid), and every
 * expected-failure entry must name a vector that still fails.
 * @param bundleDir - Root of the normative bundle (see `locateBundle` in `./bundle.js`).
 * @example
 * ```ts
 * const run = runStructural(locateBundle().dir)
 * console.log(formatStructuralReport(run))
 * process.exitCode = run.ok ? 0 : 1
 * ```
 */
export function runStructural(bundleDir: string, options: StructuralOptions = {}): StructuralRun {
  const manifest = readManifest(bundleDir)
  const expectedFailures = options.expectedFailures ?? loadExpectedFailures()
  const lookup = options.validatorForFile ?? weftValidatorForFile
  const counts = options.expectedCounts ?? PINNED_MANIFEST_COUNTS
  const problems: string[] = unmappedSchemas(bundleDir, lookup)

  const reasons = new Map<string, string>()
  for (const entry of expectedFailures) reasons.set(entry.name, entry.reason)
  const names = new Set(manifest.map((v) => v.name))
  for (const entry of expectedFailures) {
    if (!names.has(entry.name)) {
      problems.push(`expected failure "${entry.name}" names no vector of the manifest: remove it from expected-failures`)
    }
  }

  const results: StructuralResult[] = manifest.map((vector, i) => {
    const { actual, firstError } = checkVector(bundleDir, vector, lookup)
    const expected = vector.valid ? 'valid' : 'invalid'
    const pass = actual === expected
    const reason = reasons.get(vector.name)
    if (pass && reason !== undefined) {
      problems.push(`"${vector.name}" is listed as an expected failure but now passes: remove it from expected-failures`)
    }
    return {
      index: i + 1,
      name: vector.name,
      schema: vector.schema,
      instance: vector.instance,
      expected,
      actual,
      pass,
      ...(reason === undefined ? {} : { expectedFailure: reason }),
      ...(firstError === undefined ? {} : { firstError }),
    }
  })

  const valid = manifest.filter((v) => v.valid).length
  const invalid = manifest.length - valid
  if (manifest.length !== counts.total || valid !== counts.valid || invalid !== counts.invalid) {
    problems.push(`manifest has ${manifest.length} vectors (${valid} valid, ${invalid} invalid); the pinned bundle has ` + `${counts.total} (${counts.valid} valid, ${counts.invalid} invalid)`)
  }

  const passed = results.filter((r) => r.pass).length
  const xfailed = results.filter((r) => !r.pass && r.expectedFailure !== undefined).length
  const failed = results.length - passed - xfailed
  return {
    suite: 'structural',
    bundleDir,
    results,
    summary: { total: results.length, passed, failed, expectedFailures: xfailed, valid, invalid },
    problems,
    ok: failed === 0 && problems.length === 0,
  }
}
