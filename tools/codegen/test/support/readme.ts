/**
 * Test support: the walkthroughs of spec/README.md as data. Their edits are ```diff blocks (unified
 * diffs from the repository root), so a test applies exactly what a reader would, and fails when a
 * block no longer fits the sources it edits.
 * @module
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { applyPatch, parsePatch, type StructuredPatch } from 'diff'
import { ensureDir } from './workspace.js'

/** The text of the `## title` section of a markdown document, up to the next `## ` heading. */
export function readmeSection(markdown: string, title: string): string {
  const start = markdown.indexOf(`\n## ${title}\n`)
  if (start < 0) throw new Error(`no section "## ${title}"`)
  const end = markdown.indexOf('\n## ', start + 1)
  return markdown.slice(start, end < 0 ? undefined : end)
}

/** The bodies of the fenced blocks of one language, without the indentation of a list item. */
export function fencedBlocks(text: string, language: string): string[] {
  return [...text.matchAll(new RegExp(`^( *)\`\`\`${language}\\n([\\s\\S]*?)^\\1\`\`\``, 'gm'))].map(([, indent = '', body = '']) =>
    body
      .split('\n')
      .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
      .join('\n'),
  )
}

/** One file edit of a walkthrough. */
export interface ReadmePatch {
  /** The file it edits or creates, relative to the repository root. */
  readonly path: string
  /** Whether it creates the file (`--- /dev/null`). */
  readonly creates: boolean
  readonly patch: StructuredPatch
}

/** Every file edit of the ```diff blocks of a section, in order. */
export function readmePatches(section: string): ReadmePatch[] {
  return fencedBlocks(section, 'diff').flatMap((block) =>
    parsePatch(block).map((patch) => ({
      path: (patch.newFileName ?? '').replace(/^b\//, ''),
      creates: patch.oldFileName === '/dev/null',
      patch,
    })),
  )
}

/** The paths of the bullet list that follows `lead` in a section (`- \`path\`: ...`). */
export function listedPaths(section: string, lead: string): string[] {
  const start = section.indexOf(lead)
  if (start < 0) throw new Error(`no "${lead}" in the section`)
  const lines = section.slice(start + lead.length).split('\n')
  const paths: string[] = []
  for (const line of lines.slice(1)) {
    const item = /^\s*- `([^`]+)`/.exec(line)
    if (item) paths.push(item[1]!)
    else if (paths.length > 0 && line.trim() === '') break
  }
  return paths
}

/** A type error as the README quotes it: where, which code, which property, which table type. */
export interface TableError {
  readonly file: string
  readonly code: string
  readonly property: string
  readonly type: string
}

const TABLE_ERROR = /^(\S+?)\((?:\d+,\d+|…)\): error (TS\d+): Property '(.+?)' is missing in type .* but required in type '(\w+)'\.$/

/** Reads `tsc` output lines (or the README's quotes of them) as {@link TableError}s, sorted; other lines are returned as `other`. */
export function tableErrors(output: string): { errors: TableError[]; other: string[] } {
  const errors: TableError[] = []
  const other: string[] = []
  for (const line of output.split('\n').filter((l) => l.trim() !== '')) {
    const match = TABLE_ERROR.exec(line.trim())
    if (match) errors.push({ file: match[1]!, code: match[2]!, property: match[3]!, type: match[4]! })
    else other.push(line)
  }
  errors.sort((a, b) => `${a.file} ${a.type}`.localeCompare(`${b.file} ${b.type}`))
  return { errors, other }
}

/**
 * Applies README patches under `root`. Each hunk must match at exactly one place of the file as it
 * stands (jsdiff would otherwise pick the nearest of several), and apply without fuzz.
 * @throws Error naming the file and hunk that no longer fits.
 */
export function applyReadmePatches(root: string, patches: readonly ReadmePatch[]): void {
  for (const { path, creates, patch } of patches) {
    const file = join(root, path)
    if (creates === existsSync(file)) throw new Error(`${path}: ${creates ? 'already exists' : 'does not exist'}`)
    const source = creates ? '' : readFileSync(file, 'utf8')
    const lines = source.split('\n')
    for (const hunk of patch.hunks) {
      const before = hunk.lines.filter((l) => !l.startsWith('+')).map((l) => l.slice(1))
      if (before.length === 0) continue
      const at = lines.flatMap((_, i) => (before.every((l, j) => lines[i + j] === l) ? [i + 1] : []))
      if (at.length !== 1) throw new Error(`${path}: the hunk of line ${hunk.oldStart} matches ${at.length} places (lines ${at.join(', ')})`)
    }
    const result = applyPatch(source, patch)
    if (result === false) throw new Error(`${path}: the README diff does not apply`)
    ensureDir(file)
    writeFileSync(file, result)
  }
}
