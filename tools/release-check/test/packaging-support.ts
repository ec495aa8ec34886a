/**
 * What the release check's tests share (`packaging.test.ts`, `packaging-metadata.test.ts`): the
 * publishable packages in dependency order, their manifests, a child-process runner that keeps
 * the workspace out of the consumer's way, and readers of export maps, built files and imports.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { delimiter, dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository root. */
export const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
/** Where the sources live; every package's `repository`, `homepage` and `bugs` point into it. */
export const REPOSITORY = 'https://github.com/weft-dev/weft'
/** The engines range of every package: `require(esm)` without a flag starts at Node 20.19. */
export const NODE_ENGINES = '>=20.19'
/** The workspace's TypeScript compiler, run with `node` so the consumer needs no TypeScript of its own. */
export const tscBin = join(repo, 'node_modules', 'typescript', 'bin', 'tsc')

/** A publishable package, as the release check knows it. */
export interface PackageInfo {
  /** Folder, relative to the repository root. */
  readonly dir: string
  readonly name: string
  /** Whether its code is generated from @weft/spec, so it must pin the exact spec version. */
  readonly generated: boolean
  /**
   * A folder under dist/ that a bundler (not tsc) builds from src/, so its files have no .ts
   * source of the same name, and the files in it the tarball must hold.
   */
  readonly bundled?: { readonly dir: string; readonly required: readonly string[] }
}

/** In dependency order: each package only depends on packages before it. */
export const PACKAGES: readonly PackageInfo[] = [
  { dir: 'spec', name: '@weft/spec', generated: false },
  { dir: 'packages/codec', name: '@weft/codec', generated: true },
  { dir: 'packages/validators', name: '@weft/validators', generated: true },
  { dir: 'packages/client', name: '@weft/client', generated: true },
  { dir: 'packages/authority', name: '@weft/authority', generated: true },
  { dir: 'packages/worker', name: '@weft/worker', generated: true },
  { dir: 'packages/store-sqlite', name: '@weft/store-sqlite', generated: false },
  { dir: 'packages/store-postgres', name: '@weft/store-postgres', generated: false },
  { dir: 'packages/console', name: '@weft/console', generated: false, bundled: { dir: 'dist/app/', required: ['index.html', 'app.js', 'app.css', 'manifest.json'] } },
  { dir: 'packages/cli', name: '@weft/cli', generated: false },
  { dir: 'tools/codegen', name: '@weft/codegen', generated: true },
  { dir: 'tools/conformance', name: '@weft/conformance', generated: false },
]

/** A value of a package.json `exports` map: a target, a conditions object, a fallback array, or null. */
export type ExportValue = string | null | { readonly [condition: string]: ExportValue } | readonly ExportValue[]

/** The package.json fields the release check reads. */
export interface Manifest {
  name: string
  version: string
  private?: boolean
  type?: string
  license?: unknown
  repository?: { type?: string; url?: string; directory?: string } | string
  homepage?: unknown
  bugs?: { url?: string } | string
  engines?: Record<string, string>
  files?: unknown
  exports?: Record<string, ExportValue>
  bin?: string | Record<string, string>
  dependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
  devDependencies?: Record<string, string>
}

/** When this process loaded the module: {@link log} and the closing line of the release check count from it. */
export const started = Date.now()
/** Prints a progress line with the seconds since this process loaded the module: a step can take minutes. */
export function log(message: string): void {
  console.log(`[release-check +${((Date.now() - started) / 1000).toFixed(1)}s] ${message}`)
}

/** The package.json of a package, read from disk on each call. */
export function manifest(pkg: PackageInfo): Manifest {
  return JSON.parse(readFileSync(join(repo, pkg.dir, 'package.json'), 'utf8')) as Manifest
}

/**
 * Environment for child processes: without the npm-script variables of the outer `npm test`
 * (workspace, prefix, package fields), without NODE_OPTIONS/NODE_PATH (a `--conditions=@weft/source`
 * there would make the consumer load TypeScript sources), and without the workspace's
 * `node_modules/.bin` on PATH (so the consumer's bins are the ones found).
 */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    const k = key.toLowerCase()
    if (k.startsWith('npm_package_') || k.startsWith('npm_lifecycle_')) continue
    if (/^npm_config_(workspaces?|include_workspace_root|prefix|local_prefix|global|save|save_.*|package_lock|omit|include|dry_run|json|offline|prefer_offline)$/.test(k)) continue
    if (k === 'node_options' || k === 'node_path' || k === 'init_cwd' || k.startsWith('vitest')) continue
    env[key] = value
  }
  const path = (process.env.PATH ?? '').split(delimiter).filter((p) => p !== '' && !resolve(p).startsWith(repo + sep))
  env.PATH = path.join(delimiter)
  env.NO_UPDATE_NOTIFIER = '1'
  env.npm_config_update_notifier = 'false'
  return env
}

/** What a child process printed, and its exit status (null when it was killed). */
export interface RunResult {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs a command in `cwd` with {@link childEnv} (plus `options.env`). It throws with the tail of
 * both outputs when the command fails, unless `options.check` is false; the timeout defaults to 5 minutes.
 */
export function run(command: string, args: readonly string[], cwd: string, options: { check?: boolean; timeout?: number; env?: NodeJS.ProcessEnv } = {}): RunResult {
  const result = spawnSync(command, args, { cwd, env: { ...childEnv(), ...options.env }, encoding: 'utf8', timeout: options.timeout ?? 300_000, maxBuffer: 64 * 1024 * 1024 })
  const out: RunResult = { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' }
  if ((options.check ?? true) && (result.error !== undefined || result.status !== 0)) {
    throw new Error(
      `\`${command} ${args.join(' ')}\` in ${cwd} failed (status ${String(result.status)}${result.error ? `, ${result.error.message}` : ''})\n` +
        `--- stdout\n${out.stdout.slice(-6000)}\n--- stderr\n${out.stderr.slice(-6000)}`,
    )
  }
  return out
}

/** Every file target of an export map, split into `@weft/source` targets and the others. */
function exportTargets(value: ExportValue, condition: string | undefined, out: { source: string[]; other: string[] }): void {
  if (value === null) return
  if (typeof value === 'string') {
    ;(condition === '@weft/source' ? out.source : out.other).push(value)
  } else if (Array.isArray(value)) {
    for (const v of value as readonly ExportValue[]) exportTargets(v, condition, out)
  } else {
    for (const [c, v] of Object.entries(value as { readonly [condition: string]: ExportValue })) exportTargets(v, c, out)
  }
}

/** Every file target of a manifest's `exports`, split into `@weft/source` targets and the others. */
export function targetsOf(m: Manifest): { source: string[]; other: string[] } {
  const out = { source: [] as string[], other: [] as string[] }
  for (const value of Object.values(m.exports ?? {})) exportTargets(value, undefined, out)
  return out
}

/** The files of a manifest's `bin`, whether it is one path or a map. */
export function binTargets(m: Manifest): string[] {
  if (m.bin === undefined) return []
  return typeof m.bin === 'string' ? [m.bin] : Object.values(m.bin)
}

/** `./dist/index.js` → `dist/index.js`. */
function clean(target: string): string {
  return target.replace(/^\.\//, '')
}

/** Whether a target (possibly a `*` pattern) matches a file in `files` (paths relative to the package). */
export function targetPresent(target: string, files: ReadonlySet<string>): boolean {
  const t = clean(target)
  if (!t.includes('*')) return files.has(t)
  const [prefix = '', suffix = ''] = t.split('*')
  for (const f of files) if (f.startsWith(prefix) && f.endsWith(suffix) && f.length > prefix.length + suffix.length) return true
  return false
}

/** Every file under `dir`, as `/`-separated paths relative to `base`; empty when `dir` does not exist. */
export function walk(dir: string, base = dir): string[] {
  if (!existsSync(dir)) return []
  const out: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...walk(full, base))
    else out.push(relative(base, full).split(sep).join('/'))
  }
  return out
}

/**
 * Files of `dist/` that no current source compiles to (`dist/a/b.js`, `.d.ts`, `.js.map`,
 * `.d.ts.map` ← `src/a/b.ts`): left over from an older build.
 */
export function staleOutputs(packageDir: string, bundledDir?: string): string[] {
  const sources = new Set(
    walk(join(packageDir, 'src'))
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !TEST_FILE.test(f))
      .map((f) => f.slice(0, -3)),
  )
  return walk(join(packageDir, 'dist'))
    .filter((f) => !sources.has(f.replace(/\.(?:d\.ts|js)(?:\.map)?$/, '')))
    .map((f) => `dist/${f}`)
    .filter((f) => bundledDir === undefined || !f.startsWith(bundledDir))
}

/** Deletes {@link staleOutputs} and the folders they leave empty; returns what was deleted. */
export function pruneStale(packageDir: string, bundledDir?: string): string[] {
  const stale = staleOutputs(packageDir, bundledDir)
  for (const f of stale) rmSync(join(packageDir, f), { force: true })
  const dirs = new Set(stale.map((f) => dirname(f)).filter((d) => d !== 'dist'))
  for (const d of [...dirs].sort((a, b) => b.length - a.length)) {
    const full = join(packageDir, d)
    if (existsSync(full) && readdirSync(full).length === 0) rmSync(full, { recursive: true, force: true })
  }
  return stale
}

/** A test file or its compiled output (`x.test.ts`, `x.spec.js`, `x.test.d.ts`, `x.test.js.map`). */
export const TEST_FILE = /\.(test|spec)\.(?:d\.)?[cm]?[jt]sx?(?:\.map)?$/
const builtins = new Set(builtinModules)

/**
 * Bare module specifiers a JavaScript or declaration file imports (static, dynamic, re-export).
 * Comments are dropped first: a TSDoc `@example` may show an import of a sibling package.
 */
export function bareImports(source: string): Set<string> {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')
  const found = new Set<string>()
  const patterns = [/\bfrom\s*(['"])([^'"]+)\1/g, /\bimport\s*(['"])([^'"]+)\1/g, /\bimport\s*\(\s*(['"])([^'"]+)\1\s*\)/g, /\brequire\s*\(\s*(['"])([^'"]+)\1\s*\)/g]
  for (const re of patterns) {
    for (const match of code.matchAll(re)) {
      const spec = match[2]!
      if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('node:') || spec.startsWith('#')) continue
      // Only a bare specifier shaped like a package name counts (a `from` property in code is not an import).
      if (!/^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*(\/\S*)?$/.test(spec)) continue
      const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!
      if (builtins.has(name)) continue
      found.add(name)
    }
  }
  return found
}
