// Every exported declaration of hand-written source carries TSDoc (re-exports are documented at
// their declaration; overload signatures after the first share its comment).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { repo, workspacePackages } from './workspace.js'

/** The sources of every published package (a package added later is covered without a change here). */
const roots = workspacePackages()
  .filter((p) => !p.private && existsSync(join(repo, p.dir, 'src')))
  .map((p) => `${p.dir}/src`)

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return name === 'gen' ? [] : sources(path)
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : []
  })
}

describe('TSDoc', () => {
  it('documents every exported declaration', () => {
    expect(roots.length).toBeGreaterThanOrEqual(12)
    const undocumented: string[] = []
    for (const file of roots.flatMap((r) => sources(join(repo, r)))) {
      const lines = readFileSync(file, 'utf8').split('\n')
      lines.forEach((line, i) => {
        const m = /^export (?:declare )?(?:abstract )?(?:async )?(const|function|class|interface|type|enum) (\w+)/.exec(line)
        if (!m) return
        let j = i - 1
        while (j >= 0 && lines[j]!.trim() === '') j--
        const previous = lines[j]?.trim() ?? ''
        const overload = m[1] === 'function' && new RegExp(`^export function ${m[2]}\\b`).test(previous)
        // Emitters write declarations inside template literals; their TSDoc is a `${docBlock([...])}` line.
        const emittedWithDoc = /\$\{docBlock\(.*\)\}$/.test(previous) || /^\]\)\}$/.test(previous)
        if (!previous.endsWith('*/') && !overload && !emittedWithDoc) undocumented.push(`${relative(repo, file)}:${i + 1} ${m[2]}`)
      })
    }
    expect(undocumented).toEqual([])
  })

  it('generated declarations name their spec source', () => {
    const gen = readFileSync(join(repo, 'packages/validators/src/gen/documents.ts'), 'utf8')
    const exported = gen.match(/^export function \w+/gm) ?? []
    const documented = gen.match(/\*\/\nexport function \w+/g) ?? []
    expect(exported.length).toBeGreaterThan(50)
    expect(documented.length).toBe(exported.length)
  })
})
