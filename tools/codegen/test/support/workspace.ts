/**
 * Test support: throw-away copies of parts of the repository, and the `weft-codegen` bin run as a
 * user runs it (a separate Node process, exit code and output captured).
 *
 * A copy holds sources only (no `dist/`, never built) and gets its own `node_modules`: third-party
 * packages are symlinked from the repository, while every `@weft/*` workspace that was copied
 * resolves to its copy. Without that, a copied package would import the repository's `@weft/spec`
 * and a test editing the copied spec would test nothing.
 * @module
 */
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join, resolve } from 'node:path'

/** The repository root. */
export const REPO = resolve(import.meta.dirname, '..', '..', '..', '..')

/** The `bin` of `@weft/codegen` as package.json declares it (the file `npx weft-codegen` runs). */
export function codegenBin(root: string = REPO): string {
  const manifest = JSON.parse(readFileSync(join(root, 'tools/codegen/package.json'), 'utf8')) as { bin: Record<string, string> }
  return join(root, 'tools/codegen', manifest.bin['weft-codegen']!)
}

/** A new empty folder under the OS temp dir; remove it with {@link removeTemp}. */
export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `weft-${prefix}-`))
}

/** Removes a folder made by {@link tempDir}. */
export function removeTemp(dir: string): void {
  rmSync(dir, { recursive: true, force: true })
}

/** Folder names never copied: build output, caches, dependencies. */
const NEVER_COPIED = new Set(['dist', 'node_modules', '.turbo', '.vite', '.vite-temp'])

/** What {@link copyPaths} leaves out besides build output and dependencies. */
export interface CopyOptions {
  /** Leave out `test/` folders and `*.test.ts` files (the type-checks of a copy then cover sources only). */
  readonly withoutTests?: boolean
}

/** Copies files or folders (paths relative to the repository root) into `root`, keeping their paths. */
export function copyPaths(root: string, paths: readonly string[], options: CopyOptions = {}): void {
  for (const path of paths) {
    cpSync(join(REPO, path), join(root, path), {
      recursive: true,
      filter: (source) => {
        const name = basename(source)
        if (NEVER_COPIED.has(name)) return false
        if (options.withoutTests === true && (name === 'test' || name.endsWith('.test.ts'))) return false
        return true
      },
    })
  }
}

/**
 * Gives `root` a `node_modules` of its own: each third-party entry of the repository's links to
 * the repository's, `@weft/<name>` links to the copy of each workspace listed in `workspaces`
 * (folders relative to the root, each copied before with its package.json), and `.bin` holds the
 * bins of those copies.
 */
export function linkNodeModules(root: string, workspaces: readonly string[]): void {
  const modules = join(root, 'node_modules')
  mkdirSync(join(modules, '@weft'), { recursive: true })
  for (const entry of readdirSync(join(REPO, 'node_modules'))) {
    // `.bin` links point into the repository's workspaces; `@weft` is rebuilt from the copies.
    if (entry === '@weft' || entry === '.bin' || entry.startsWith('.')) continue
    symlinkSync(join(REPO, 'node_modules', entry), join(modules, entry))
  }
  mkdirSync(join(modules, '.bin'))
  for (const workspace of workspaces) {
    const manifest = JSON.parse(readFileSync(join(root, workspace, 'package.json'), 'utf8')) as { name: string; bin?: Record<string, string> }
    if (!manifest.name.startsWith('@weft/')) throw new Error(`${workspace} is not a @weft workspace`)
    symlinkSync(join(root, workspace), join(modules, manifest.name))
    // as npm does, so that the root's scripts (`npm run generate`) find the copied bins
    for (const [command, file] of Object.entries(manifest.bin ?? {})) symlinkSync(join(root, workspace, file), join(modules, '.bin', command))
  }
}

/** The outcome of a process run by {@link runNode}. */
export interface RunResult {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs `node <args>` in `cwd` and waits for it. `NODE_OPTIONS` is cleared unless `env` sets it: the
 * test runner passes its own conditions there, and the bin must work without them.
 */
export function runNode(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}): RunResult {
  const result = spawnSync(process.execPath, args, {
    cwd,
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    encoding: 'utf8',
    timeout: 120_000,
    maxBuffer: 64 * 1024 * 1024,
  })
  if (result.error) throw result.error
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

/** Reads every file under `dir` (relative paths as keys), to compare a tree before and after. */
export function snapshotTree(dir: string): Map<string, string> {
  const files = new Map<string, string>()
  const walk = (current: string): void => {
    if (!existsSync(current)) return
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const path = join(current, entry.name)
      if (entry.isDirectory()) walk(path)
      else files.set(path.slice(dir.length + 1), readFileSync(path, 'utf8'))
    }
  }
  walk(dir)
  return files
}

/** Makes sure the folder of `path` exists (for files written into a copy). */
export function ensureDir(path: string): void {
  mkdirSync(dirname(path), { recursive: true })
}
