/**
 * Integrity of a digest-protected bundle manifest (cryptography and admission bundles): the
 * top-level `artifactDigest` (remove exactly that member, RFC 8785 JCS, SHA-256, `sha256:` + hex)
 * and every `artifacts` entry's exact byte length and SHA-256 over the file bytes.
 * @module
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { canonicalize, parseStrictJson, sha256Tagged, type JsonValue } from '@weft/codec'

/** One `artifacts` entry of a bundle manifest. */
export interface ArtifactEntry {
  readonly path: string
  readonly byteLength: number
  readonly sha256: string
}

/** The outcome of checking one artifact. */
export interface ArtifactCheck extends ArtifactEntry {
  readonly ok: boolean
  /** Why not, when `ok` is false. */
  readonly problem?: string
  /** Measured byte length (absent when the file is missing). */
  readonly actualByteLength?: number
  /** Measured `sha256:` hash (absent when the file is missing). */
  readonly actualSha256?: string
}

/** The manifest digest: declared, recomputed, and whether they agree. */
export interface DigestCheck {
  readonly declared: string
  readonly computed: string
  readonly ok: boolean
}

/**
 * Repository-relative paths as the bundle manifests constrain them: lower-case segments that
 * start with a letter or digit. This also keeps every path inside the bundle (no `..`, no
 * absolute path).
 */
const REPOSITORY_PATH = /^(?:[a-z0-9][a-z0-9._-]*\/)*[a-z0-9][a-z0-9._-]*$/

/** Is `path` a safe repository-relative bundle path? */
export function isRepositoryPath(path: unknown): path is string {
  return typeof path === 'string' && path.length <= 512 && REPOSITORY_PATH.test(path)
}

/**
 * Reads a bundle file by repository path.
 * @throws Error for a path outside the bundle's path grammar or a missing file.
 */
export function readBundleFile(bundleDir: string, path: string): Buffer {
  if (!isRepositoryPath(path)) throw new Error(`unsafe bundle path ${JSON.stringify(path)}`)
  return readFileSync(join(bundleDir, path))
}

/**
 * Reads and strictly parses a JSON bundle file (duplicate members and the like are bundle
 * defects, not something to paper over with `JSON.parse`).
 * @throws Error when the file is missing or not strict JSON.
 */
export function readStrictJson(bundleDir: string, path: string): JsonValue {
  const parsed = parseStrictJson(readBundleFile(bundleDir, path), { maxBytes: 64 * 1024 * 1024 })
  if (!parsed.ok) throw new Error(`${path}: ${parsed.message} (${parsed.reason} at byte ${parsed.offset})`)
  return parsed.value
}

/** Recomputes `artifactDigest` of a parsed manifest (§ digest rule of both bundle READMEs). */
export function checkManifestDigest(manifest: { readonly [name: string]: JsonValue }): DigestCheck {
  const { artifactDigest: declared, ...rest } = manifest
  const jcs = canonicalize(rest)
  const computed = jcs.ok ? sha256Tagged(jcs.bytes) : `(cannot canonicalize: ${jcs.reason} at ${jcs.path})`
  const text = typeof declared === 'string' ? declared : String(declared)
  return { declared: text, computed, ok: jcs.ok && computed === text }
}

/** Reads the `artifacts` list of a manifest. @throws Error when it is not a list of entries. */
export function artifactEntries(manifest: { readonly [name: string]: JsonValue }, label: string): ArtifactEntry[] {
  const list = manifest['artifacts']
  if (!Array.isArray(list)) throw new Error(`${label}: artifacts must be an array`)
  return list.map((entry, i) => {
    const e = entry as { [name: string]: JsonValue } | null
    if (typeof e !== 'object' || e === null || Array.isArray(e) || typeof e['path'] !== 'string' || typeof e['byteLength'] !== 'number' || typeof e['sha256'] !== 'string') {
      throw new Error(`${label}: artifacts[${i}] must be { path, byteLength, sha256 }`)
    }
    return { path: e['path'], byteLength: e['byteLength'], sha256: e['sha256'] }
  })
}

/** Checks every artifact's exact byte length and SHA-256 against the files of the bundle. */
export function checkArtifacts(bundleDir: string, entries: readonly ArtifactEntry[]): ArtifactCheck[] {
  return entries.map((entry) => {
    if (!isRepositoryPath(entry.path)) return { ...entry, ok: false, problem: 'unsafe path' }
    const file = join(bundleDir, entry.path)
    if (!existsSync(file)) return { ...entry, ok: false, problem: 'missing' }
    const bytes = readFileSync(file)
    const actualSha256 = sha256Tagged(bytes)
    const problems = [
      bytes.byteLength !== entry.byteLength ? `byteLength ${bytes.byteLength} != ${entry.byteLength}` : undefined,
      actualSha256 !== entry.sha256 ? `sha256 ${actualSha256} != ${entry.sha256}` : undefined,
    ].filter((p) => p !== undefined)
    const base = { ...entry, actualByteLength: bytes.byteLength, actualSha256 }
    return problems.length === 0 ? { ...base, ok: true } : { ...base, ok: false, problem: problems.join('; ') }
  })
}

/** The counts of a manifest's cases and evaluations at the pinned protocol commit. */
export interface PinnedCounts {
  readonly cases: number
  readonly evaluations: number
  readonly complete: number
  readonly rejected: number
}

/**
 * How many of `results` expect to complete and how many a rejection, adding a problem to `problems`
 * when the manifest's counts are not the pinned bundle's: a changed bundle is reported, never run
 * as if it were the pinned one.
 */
export function countAgainstPin(results: readonly { readonly expectedStage: string }[], cases: number, pinned: PinnedCounts, problems: string[]): { complete: number; rejected: number } {
  const complete = results.filter((r) => r.expectedStage === 'complete').length
  const rejected = results.length - complete
  if (cases !== pinned.cases || results.length !== pinned.evaluations || complete !== pinned.complete || rejected !== pinned.rejected) {
    problems.push(
      `manifest has ${cases} cases and ${results.length} evaluations (${complete} complete, ${rejected} rejected); ` +
        `the pinned bundle has ${pinned.cases} and ${pinned.evaluations} (${pinned.complete}, ${pinned.rejected})`,
    )
  }
  return { complete, rejected }
}
