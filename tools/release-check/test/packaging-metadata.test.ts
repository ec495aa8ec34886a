/**
 * Release check, step 1: the package.json metadata and README of every publishable package
 * (`exports` with `types` before `default`, `files`, README with its "Module format" section,
 * LICENSE, license, engines, repository links, exact internal versions). It reads files only, so
 * it runs apart from the build, pack and install steps of `packaging.test.ts`.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { type ExportValue, log, manifest, NODE_ENGINES, PACKAGES, REPOSITORY, repo } from './packaging-support.js'

describe('release packaging', () => {
  it('has publishable package.json metadata', () => {
    log('step 1/9: package.json metadata')
    const spec = manifest(PACKAGES[0]!)
    const versions = new Map(PACKAGES.map((p) => [p.name, manifest(p).version]))
    for (const pkg of PACKAGES) {
      const m = manifest(pkg)
      const where = `${pkg.dir}/package.json`
      expect.soft(m.name, where).toBe(pkg.name)
      expect.soft(m.private, `${where}: a publishable package is not private`).not.toBe(true)
      expect.soft(m.version, `${where}: version`).toMatch(/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/)
      const dot = m.exports?.['.']
      expect.soft(dot !== null && typeof dot === 'object' && !Array.isArray(dot), `${where}: exports["."] is a conditions object`).toBe(true)
      const conditions = dot as Record<string, ExportValue>
      expect.soft(typeof conditions.types, `${where}: exports["."].types`).toBe('string')
      expect.soft(typeof conditions.default, `${where}: exports["."].default`).toBe('string')
      // `types` must come before `default`: conditions match in key order.
      const keys = Object.keys(conditions)
      expect.soft(keys.indexOf('types'), `${where}: exports["."].types comes before default`).toBeLessThan(keys.indexOf('default'))
      expect.soft(Array.isArray(m.files) && (m.files as unknown[]).length > 0, `${where}: non-empty files list`).toBe(true)
      expect.soft(existsSync(join(repo, pkg.dir, 'README.md')), `${pkg.dir}/README.md exists`).toBe(true)
      expect.soft(existsSync(join(repo, pkg.dir, 'LICENSE')), `${pkg.dir}/LICENSE exists`).toBe(true)
      expect.soft(typeof m.license === 'string' && m.license.length > 0, `${where}: license`).toBe(true)
      expect.soft(m.engines?.node, `${where}: engines.node`).toBe(NODE_ENGINES)
      expect.soft(m.repository, `${where}: repository names the git URL and the package's folder`).toEqual({ type: 'git', url: `git+${REPOSITORY}.git`, directory: pkg.dir })
      expect.soft(m.homepage, `${where}: homepage is the package's README`).toBe(`${REPOSITORY}/tree/main/${pkg.dir}#readme`)
      expect.soft(m.bugs, `${where}: bugs`).toEqual({ url: `${REPOSITORY}/issues` })
      // ESM only: the README says so and what a CommonJS consumer can do (see packages/codec/README.md).
      const readme = existsSync(join(repo, pkg.dir, 'README.md')) ? readFileSync(join(repo, pkg.dir, 'README.md'), 'utf8') : ''
      const moduleFormat = /^## Module format\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(readme)?.[1] ?? ''
      expect.soft(moduleFormat, `${pkg.dir}/README.md: a "## Module format" section`).not.toBe('')
      for (const claim of ['ESM only', 'require()', '20.19', 'TS1479', 'nodenext', 'import()']) {
        expect.soft(moduleFormat.includes(claim), `${pkg.dir}/README.md: the Module format section mentions ${claim}`).toBe(true)
      }
      expect.soft(m.type, `${where}: type module (ESM only)`).toBe('module')
      for (const [dep, range] of Object.entries(m.dependencies ?? {})) {
        const own = versions.get(dep)
        if (own !== undefined) expect.soft(range, `${where}: ${dep} pinned to its exact version`).toBe(own)
      }
      if (pkg.generated) expect.soft(m.dependencies?.['@weft/spec'], `${where}: generated from @weft/spec, so pins exactly ${spec.version}`).toBe(spec.version)
      for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies'] as const) {
        for (const [dep, range] of Object.entries(m[field] ?? {})) {
          expect.soft(range, `${where}: ${field}.${dep} must be a registry version, not a local/workspace reference`).not.toMatch(/^(file:|link:|workspace:|\.|\/)/)
        }
      }
    }
  })
})
