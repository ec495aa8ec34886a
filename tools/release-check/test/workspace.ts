// The workspace's packages, read from the root package.json's `workspaces` (folders, or `dir/*`
// globs), so that checks over every package cannot miss one added later.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/** The repository root. */
export const repo = join(import.meta.dirname, '..', '..', '..')

/** A workspace package: its folder relative to the root, its name, and whether it is private. */
export interface WorkspacePackage {
  readonly dir: string
  readonly name: string
  readonly private: boolean
}

/** Every workspace package, in folder order. */
export function workspacePackages(): WorkspacePackage[] {
  const patterns = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { workspaces: string[] }).workspaces
  const dirs = patterns.flatMap((pattern) =>
    pattern.endsWith('/*')
      ? readdirSync(join(repo, pattern.slice(0, -2)))
          .map((name) => `${pattern.slice(0, -2)}/${name}`)
          .filter((dir) => existsSync(join(repo, dir, 'package.json')))
      : [pattern],
  )
  return dirs.sort().map((dir) => {
    const manifest = JSON.parse(readFileSync(join(repo, dir, 'package.json'), 'utf8')) as { name: string; private?: boolean }
    return { dir, name: manifest.name, private: manifest.private === true }
  })
}
