// CONTRIBUTING.md's layout table names every workspace package, with its folder and name, and the
// README's package table every published one, so a newcomer finds each package in both (a package
// added without its rows fails here). The Authority's README names every folder of its `src/`, the
// stages a newcomer looks for (issue 26: the layout shows the architecture).
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { repo, workspacePackages } from './workspace.js'

describe('CONTRIBUTING.md', () => {
  it('lists every workspace package in its layout table', () => {
    const text = readFileSync(join(repo, 'CONTRIBUTING.md'), 'utf8')
    const rows = new Map([...text.matchAll(/^\| `([^`]+)\/` \| ([^|]+) \|/gm)].map((m) => [m[1]!, m[2]!.trim()]))
    const packages = workspacePackages()
    expect(packages.length).toBeGreaterThan(10)
    for (const pkg of packages) {
      expect(rows.has(pkg.dir), `CONTRIBUTING.md: a row for ${pkg.dir}/`).toBe(true)
      expect(rows.get(pkg.dir), `CONTRIBUTING.md: ${pkg.dir}/ is ${pkg.name}`).toBe(pkg.private ? '(private)' : `\`${pkg.name}\``)
    }
  })

  it('is matched by the README, whose package table links every published package', () => {
    const text = readFileSync(join(repo, 'README.md'), 'utf8')
    const linked = new Map([...text.matchAll(/^\| \[`(@weft\/[^`]+)`\]\(([^)]+)\/README\.md\) \|/gm)].map((m) => [m[1]!, m[2]!]))
    for (const pkg of workspacePackages().filter((p) => !p.private)) {
      expect(linked.get(pkg.name), `README.md: a row for ${pkg.name} linking ${pkg.dir}/README.md`).toBe(pkg.dir)
    }
  })
})

describe("the Authority's README", () => {
  it('names every folder of src/ in its layout table, and no folder that is not there', () => {
    const root = join(repo, 'packages', 'authority')
    const text = readFileSync(join(root, 'README.md'), 'utf8')
    const section = text.slice(text.indexOf('## Where the code is'), text.indexOf('## What a Command goes through'))
    const named = [...section.matchAll(/^\| `src\/([^`/]+)\/` \|/gm)].map((m) => m[1]!).sort()
    const folders = readdirSync(join(root, 'src'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort()
    expect(folders).toEqual(expect.arrayContaining(['commit', 'delivery', 'ingress', 'log']))
    expect(named).toEqual(folders)
    // Every file the top-level paragraph names is a file at the top of src/.
    const top = section.slice(section.indexOf('At the top'))
    for (const [, file] of top.matchAll(/`([a-z-]+\.ts)`/g)) expect(readdirSync(join(root, 'src')), file).toContain(file)
  })
})
