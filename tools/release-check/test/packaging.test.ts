/**
 * Release check: the publishable packages as a consumer gets them from the registry.
 *
 * 1. package.json metadata: `exports` (`types` + `default`), `files`, README, license, engines,
 *    exact internal versions. It needs no build, so it is `packaging-metadata.test.ts`.
 * 2. `npm run build` of each package in dependency order, then every `exports`/`bin` target exists.
 * 3. The public API of every entry point equals its committed API Extractor report
 *    (`<package>/etc/*.api.md`, written by `npm run api`; see `tools/release-check/api-report.mjs`).
 * 4. `npm pack` of each: no tests, no node_modules, dist present, every export target packed, and
 *    the built code imports only what the package declares.
 * 5. A fresh consumer project outside the workspace installs the tarballs, type-checks a small
 *    TypeScript file against the packed declarations (no `@types/node`), runs it, and runs the
 *    `weft-conformance` bin and `weft demo`.
 * 6. The README examples: every ```ts block of a package's README occurs verbatim in one of the
 *    package's `examples/*.ts` programs (setup, the block, then checks of what the block claims),
 *    and each program compiles strictly against the packed declarations and runs to exit 0.
 *
 * Steps 2 to 6 are this file. They share state and run in order; a failing step makes the later
 * ones fail too. The package list and the helpers they use are in `packaging-support.ts`.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, sep } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { locateBundle } from '@weft/spec/bundle'
import { testServer } from '../../../packages/store-postgres/test/pg-server.js'
import {
  bareImports,
  binTargets,
  log,
  type Manifest,
  manifest,
  PACKAGES,
  pruneStale,
  repo,
  run,
  staleOutputs,
  started,
  TEST_FILE,
  targetPresent,
  targetsOf,
  tscBin,
  walk,
} from './packaging-support.js'

// Shared state of the steps below.
const packDir = mkdtempSync(join(tmpdir(), 'weft-release-pack-'))
const consumerDir = mkdtempSync(join(tmpdir(), 'weft-release-consumer-'))
const tarballs = new Map<string, string>()
const keep = process.env.WEFT_RELEASE_KEEP === '1'
/** Steps that passed; a step whose prerequisite failed says so instead of failing confusingly. */
const passed = new Set<string>()
function requireStep(step: string): void {
  if (!passed.has(step)) throw new Error(`not run: the "${step}" step failed`)
}

afterAll(() => {
  if (keep) {
    log(`kept ${packDir} and ${consumerDir}`)
    return
  }
  rmSync(packDir, { recursive: true, force: true })
  rmSync(consumerDir, { recursive: true, force: true })
})

describe('release packaging', () => {
  it('builds each package in dependency order and every export target exists', () => {
    for (const [i, pkg] of PACKAGES.entries()) {
      // A release build starts clean: `tsc` never deletes outputs whose source is gone, and npm
      // pack would publish them. Only such orphans are removed, so concurrent users of dist/ keep
      // working.
      const pruned = pruneStale(join(repo, pkg.dir), pkg.bundled?.dir)
      if (pruned.length > 0) log(`  ${pkg.dir}: removed ${pruned.length} stale dist files (${pruned.slice(0, 3).join(', ')}${pruned.length > 3 ? ', ...' : ''})`)
      log(`step 2/9: npm run build -w ${pkg.dir} (${i + 1}/${PACKAGES.length})`)
      run('npm', ['run', 'build', '-w', pkg.dir], repo)
    }
    // Packing needs the builds; the checks below report on their own.
    passed.add('build')
    for (const pkg of PACKAGES) {
      const m = manifest(pkg)
      const onDisk = new Set(walk(join(repo, pkg.dir)).filter((f) => !f.startsWith('node_modules/')))
      const { source, other } = targetsOf(m)
      for (const target of other) expect.soft(targetPresent(target, onDisk), `${pkg.name}: exports target ${target} exists after build`).toBe(true)
      for (const target of source) expect.soft(targetPresent(target, onDisk), `${pkg.name}: @weft/source target ${target} exists`).toBe(true)
      for (const target of binTargets(m)) expect.soft(targetPresent(target, onDisk), `${pkg.name}: bin ${target} exists`).toBe(true)
      expect.soft(staleOutputs(join(repo, pkg.dir), pkg.bundled?.dir), `${pkg.name}: dist files without a source (would be published)`).toEqual([])
    }
  })

  it('matches the committed public API report of every entry point', () => {
    log('step 3/9: public API reports (node tools/release-check/api-report.mjs)')
    requireStep('build')
    // Runs on the clean build of step 2. A difference fails with the diff; `npm run api` updates the
    // reports when the change is intended (then a changeset tells users about it).
    const result = run('node', [join(repo, 'tools', 'release-check', 'api-report.mjs')], repo, { check: false, timeout: 240_000 })
    log(`  ${(result.status === 0 ? result.stdout : result.stderr).trim().split('\n').at(-1) ?? ''}`)
    expect(result.status, `public API differs from the committed etc/*.api.md reports\n--- stdout\n${result.stdout.slice(-4000)}\n--- stderr\n${result.stderr.slice(-12000)}`).toBe(0)
    expect(result.stdout).toMatch(/api-report: \d+ entry points match their committed reports/)
  })

  it('packs each package with dist, without tests or node_modules', () => {
    requireStep('build')
    for (const pkg of PACKAGES) {
      log(`step 4/9: npm pack -w ${pkg.dir}`)
      const m = manifest(pkg)
      const { stdout } = run('npm', ['pack', '-w', pkg.dir, '--pack-destination', packDir, '--json'], repo)
      const info = JSON.parse(stdout.slice(stdout.indexOf('['))) as { filename: string; name: string }[]
      expect(info.length, `${pkg.name}: one tarball`).toBe(1)
      const tarball = join(packDir, info[0]!.filename)
      expect.soft(existsSync(tarball), `${pkg.name}: ${tarball} written`).toBe(true)
      tarballs.set(pkg.name, tarball)

      const listing = run('tar', ['-tzf', tarball], packDir)
        .stdout.split('\n')
        .filter((l) => l !== '' && !l.endsWith('/'))
      expect
        .soft(
          listing.every((l) => l.startsWith('package/')),
          `${pkg.name}: entries under package/`,
        )
        .toBe(true)
      const files = new Set(listing.map((l) => l.slice('package/'.length)))
      const list = [...files]
      expect
        .soft(
          list.filter((f) => TEST_FILE.test(f)),
          `${pkg.name}: no test files in the tarball`,
        )
        .toEqual([])
      expect
        .soft(
          list.filter((f) => f.split('/').includes('node_modules')),
          `${pkg.name}: no node_modules in the tarball`,
        )
        .toEqual([])
      expect
        .soft(
          list.filter((f) => /(^|\/)(tsconfig[^/]*\.json|vitest\.config\.[cm]?[jt]s|[^/]*\.tsbuildinfo)$/.test(f)),
          `${pkg.name}: no build/test config in the tarball`,
        )
        .toEqual([])
      for (const required of ['package.json', 'README.md', 'LICENSE', 'dist/index.js', 'dist/index.d.ts']) {
        expect.soft(files.has(required), `${pkg.name}: tarball contains ${required}`).toBe(true)
      }
      for (const required of pkg.bundled?.required ?? []) {
        expect.soft(files.has(pkg.bundled!.dir + required), `${pkg.name}: tarball contains the bundled ${pkg.bundled!.dir}${required}`).toBe(true)
      }
      const { source, other } = targetsOf(m)
      for (const target of other) expect.soft(targetPresent(target, files), `${pkg.name}: exports target ${target} is in the tarball`).toBe(true)
      for (const target of source) expect.soft(targetPresent(target, files), `${pkg.name}: @weft/source target ${target} is in the tarball`).toBe(true)
      for (const target of binTargets(m)) expect.soft(targetPresent(target, files), `${pkg.name}: bin ${target} is in the tarball`).toBe(true)

      // Built code may import only declared dependencies: in the consumer every package is hoisted
      // side by side, so an undeclared import would work there by accident and break elsewhere.
      const declared = new Set([m.name, ...Object.keys(m.dependencies ?? {}), ...Object.keys(m.peerDependencies ?? {}), ...Object.keys(m.optionalDependencies ?? {})])
      const undeclared = new Set<string>()
      for (const f of list) {
        if (!/^(dist|bin)\/.*\.(?:d\.ts|[cm]?js)$/.test(f)) continue
        for (const name of bareImports(readFileSync(join(repo, pkg.dir, f), 'utf8'))) if (!declared.has(name)) undeclared.add(`${f} imports ${name}`)
      }
      expect.soft([...undeclared], `${pkg.name}: imports of packages missing from dependencies`).toEqual([])
      log(`  ${info[0]!.filename}: ${files.size} files, ${(statSync(tarball).size / 1024).toFixed(0)} KiB`)
    }
    passed.add('pack')
  })

  it('installs the tarballs into a fresh consumer project', () => {
    log(`step 5/9: npm install in ${consumerDir}`)
    requireStep('pack')
    // Outside the workspace: no ancestor node_modules can satisfy an import by accident.
    expect(realpathSync(consumerDir).startsWith(realpathSync(repo) + sep)).toBe(false)
    expect(tarballs.size, 'every package was packed').toBe(PACKAGES.length)
    // The README examples (step 9) are Node programs, so they compile with Node's types; consumer.ts does not use them.
    const nodeTypes = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as Manifest).devDependencies?.['@types/node'] ?? '^20.19.0'
    // The authority's wire example opens a socket with `ws` (its dependency) as a user would, so ws's types come too.
    const wsTypes = (JSON.parse(readFileSync(join(repo, 'packages', 'authority', 'package.json'), 'utf8')) as Manifest).devDependencies?.['@types/ws'] ?? '^8.18.0'
    const dependencies = { ...Object.fromEntries(PACKAGES.map((p) => [p.name, `file:${tarballs.get(p.name)!}`])), '@types/node': nodeTypes, '@types/ws': wsTypes }
    writeFileSync(join(consumerDir, 'package.json'), `${JSON.stringify({ name: 'weft-release-consumer', version: '0.0.0', private: true, type: 'module', dependencies }, null, 2)}\n`)
    run('npm', ['install', '--no-audit', '--no-fund', '--offline=false', '--prefer-offline'], consumerDir)
    for (const pkg of PACKAGES) {
      const installed = join(consumerDir, 'node_modules', ...pkg.name.split('/'))
      expect(existsSync(join(installed, 'dist', 'index.js')), `${pkg.name} installed with dist`).toBe(true)
      // Exactly one copy of each internal package: a nested copy would mean a version mismatch.
      const nested = walk(join(consumerDir, 'node_modules')).filter((f) => f.endsWith(`node_modules/${pkg.name}/package.json`))
      expect(nested, `${pkg.name}: no nested copies`).toEqual([])
    }
    passed.add('install')
  })

  it('type-checks and runs a TypeScript consumer against the packed declarations', () => {
    log('step 6/9: type-check and run consumer.ts')
    requireStep('install')
    writeFileSync(
      join(consumerDir, 'tsconfig.json'),
      `${JSON.stringify(
        {
          compilerOptions: {
            target: 'es2022',
            module: 'nodenext',
            moduleResolution: 'nodenext',
            strict: true,
            types: [],
            outDir: 'out',
            rootDir: '.',
          },
          files: ['consumer.ts'],
        },
        null,
        2,
      )}\n`,
    )
    writeFileSync(join(consumerDir, 'consumer.ts'), CONSUMER)
    run('node', [tscBin, '-p', 'tsconfig.json', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--strict', '--noEmit'], consumerDir)
    run('node', [tscBin, '-p', 'tsconfig.json'], consumerDir)
    const { stdout } = run('node', [join('out', 'consumer.js')], consumerDir)
    log(`  consumer printed ${stdout.trim()}`)
    const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>
    expect(result).toEqual({
      validCommand: true,
      parsedKind: 'mission.create',
      invalidCommand: false,
      invalidKeywords: expect.arrayContaining(['required']) as unknown,
      parseTextError: { isProtocolError: true, sameClassAsCodec: true, code: 'PROTOCOL_VIOLATION' },
      parseError: { isProtocolError: true, code: 'SCHEMA_VALIDATION_FAILED' },
      absoluteUri: [true, false],
      commandKinds: expect.any(Number) as unknown,
      knowsMissionCreate: true,
      payloadValid: true,
      payloadInvalid: false,
    })
    expect(result.commandKinds as number).toBeGreaterThan(0)

    // The `./schemas/*` subpath export resolves to the emitted JSON Schemas.
    const schema = run(
      'node',
      [
        '--input-type=module',
        '-e',
        "import { readFileSync } from 'node:fs'; const url = import.meta.resolve('@weft/validators/schemas/command.schema.json'); console.log(JSON.parse(readFileSync(new URL(url), 'utf8')).$id)",
      ],
      consumerDir,
    ).stdout.trim()
    expect(schema).toMatch(/command\.schema\.json$/)
  })

  it('runs the weft-conformance bin from the consumer', () => {
    log('step 7/9: npx weft-conformance --help')
    requireStep('install')
    expect(existsSync(join(consumerDir, 'node_modules', '.bin', 'weft-conformance')), 'bin linked into the consumer').toBe(true)
    const { stdout } = run('npx', ['--no-install', 'weft-conformance', '--help'], consumerDir)
    expect(stdout).toContain('Usage: weft-conformance')
  })

  it('runs `weft demo` from the packed @weft/cli: both Missions approved', () => {
    log('step 8/9: npx weft demo --yes --quiet')
    requireStep('install')
    const { stdout } = run('npx', ['--no-install', 'weft', 'demo', '--yes', '--quiet'], consumerDir)
    expect(stdout).toContain('Both Missions were approved.')
  })

  it('compiles and runs every README example against the packed packages', () => {
    log('step 9/9: README examples')
    requireStep('install')
    const weft = new Set(PACKAGES.map((p) => p.name))
    const programs: { readonly source: string; readonly compiled: string }[] = []
    for (const pkg of PACKAGES) {
      const dir = join(repo, pkg.dir, 'examples')
      const files = existsSync(dir)
        ? readdirSync(dir)
            .filter((f) => f.endsWith('.ts'))
            .sort()
        : []
      expect.soft(files.length, `${pkg.name}: a runnable example in ${pkg.dir}/examples/`).toBeGreaterThan(0)
      const texts = files.map((f) => readFileSync(join(dir, f), 'utf8'))
      readmeBlocks(readFileSync(join(repo, pkg.dir, 'README.md'), 'utf8')).forEach((block, i) => {
        expect
          .soft(
            texts.some((t) => t.includes(block)),
            `${pkg.name}: README block ${i + 1} occurs verbatim in ${pkg.dir}/examples/*.ts\n${block}`,
          )
          .toBe(true)
      })
      // What a user of the package can import next to it: the Weft packages and the package's own dependencies.
      const allowed = new Set([...weft, ...Object.keys(manifest(pkg).dependencies ?? {})])
      files.forEach((file, i) => {
        const source = `${pkg.dir}/examples/${file}`
        expect
          .soft(
            [...bareImports(texts[i]!)].filter((name) => !allowed.has(name)),
            `${source}: imports beyond the Weft packages and its package's dependencies`,
          )
          .toEqual([])
        const target = join(pkg.dir.replace(/\//g, '-'), file)
        mkdirSync(dirname(join(consumerDir, 'examples', target)), { recursive: true })
        writeFileSync(join(consumerDir, 'examples', target), texts[i]!)
        programs.push({ source, compiled: join(consumerDir, 'out-examples', target.replace(/\.ts$/, '.js')) })
      })
    }
    const compilerOptions = { target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true, types: ['node'], outDir: 'out-examples', rootDir: 'examples' }
    writeFileSync(join(consumerDir, 'tsconfig.examples.json'), `${JSON.stringify({ compilerOptions, include: ['examples/**/*.ts'] }, null, 2)}\n`)
    run('node', [tscBin, '-p', 'tsconfig.examples.json'], consumerDir)
    // The examples that need them read the protocol bundle and a PostgreSQL server from the environment, as the tests do.
    const bundle = locateBundle()
    const pg = testServer()
    try {
      for (const program of programs) {
        const cwd = mkdtempSync(join(tmpdir(), 'weft-example-'))
        const began = Date.now()
        const result = run('node', [program.compiled], cwd, { check: false, timeout: 120_000, env: { ...(bundle.found ? { MWP_PROTOCOL_DIR: bundle.dir } : {}), WEFT_PG_URL: pg.url } })
        log(`  ${program.source}: exit ${String(result.status)} in ${((Date.now() - began) / 1000).toFixed(1)}s`)
        expect.soft(result.status, `${program.source} exits 0\n--- stdout\n${result.stdout.slice(-3000)}\n--- stderr\n${result.stderr.slice(-3000)}`).toBe(0)
        rmSync(cwd, { recursive: true, force: true })
      }
    } finally {
      pg.stop()
    }
    log(`done in ${((Date.now() - started) / 1000).toFixed(1)}s`)
  })
})

/** The text of each ```ts block of a README, in order; a block indented in a list item keeps its indentation. */
function readmeBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^( *)```ts\n([\s\S]*?)^\1```/gm)].map((match) => match[2]!)
}

/** The consumer: the public surface a user of the packages writes against. */
const CONSUMER = `import { ProtocolError, validators } from '@weft/validators'
import { commandPayloads } from '@weft/validators/payloads'
import { COMMAND_KINDS, type Command, type CommandPayload } from '@weft/spec'
import { ProtocolError as CodecProtocolError, isAbsoluteUri } from '@weft/codec'

const command: Command = {
  protocolVersion: '0.1',
  actionId: 'urn:uuid:00000000-0000-4000-8000-000000000101',
  actor: { type: 'human', id: 'urn:missionweaveprotocol:human:mission-owner' },
  groupId: 'urn:missionweaveprotocol:group:new-mission',
  kind: 'mission.create',
  correlationId: 'urn:uuid:00000000-0000-4000-8000-000000000102',
  issuedAt: '2026-07-15T00:00:00Z',
  payload: {
    missionId: 'urn:missionweaveprotocol:mission:new-mission',
    groupId: 'urn:missionweaveprotocol:group:new-mission',
    coordinatorAgentId: 'urn:missionweaveprotocol:agent:coordinator',
  },
  signature: {
    algorithm: 'Ed25519',
    keyId: 'urn:missionweaveprotocol:key:mission-owner',
    createdAt: '2026-07-15T00:00:00Z',
    value: 'c2lnbmF0dXJl',
  },
}

// Unsigned: the envelope requires a signature.
const { signature: _signature, ...unsigned } = command

const value: unknown = JSON.parse(JSON.stringify(command))
let parsedKind: Command['kind'] | undefined
if (validators.command.check(value)) parsedKind = value.kind

function errorInfo(fn: () => unknown): { isProtocolError: boolean; sameClassAsCodec?: boolean; code?: string } {
  try {
    fn()
    return { isProtocolError: false }
  } catch (error) {
    if (!(error instanceof ProtocolError)) return { isProtocolError: false }
    return { isProtocolError: true, code: error.code }
  }
}

let sameClassAsCodec = false
try {
  validators.command.parseText('{"protocolVersion":')
} catch (error) {
  sameClassAsCodec = error instanceof CodecProtocolError
}

const kinds: readonly string[] = COMMAND_KINDS
const start: CommandPayload<'work.start'> = { workItemId: 'urn:missionweaveprotocol:work-item:one', ownershipEpoch: 1, executionLeaseSeconds: 600 }
console.log(
  JSON.stringify({
    validCommand: validators.command.check(command),
    parsedKind,
    invalidCommand: validators.command.check(unsigned),
    invalidKeywords: validators.command.errors(unsigned).map((issue) => issue.keyword),
    parseTextError: { ...errorInfo(() => validators.command.parseText('{"protocolVersion":')), sameClassAsCodec },
    parseError: errorInfo(() => validators.command.parse(unsigned)),
    absoluteUri: [isAbsoluteUri('urn:missionweaveprotocol:agent:coordinator'), isAbsoluteUri('relative/path')],
    commandKinds: kinds.length,
    knowsMissionCreate: kinds.includes('mission.create'),
    payloadValid: commandPayloads['work.start'].check(start),
    payloadInvalid: commandPayloads['work.start'].check({ ...start, ownershipEpoch: 0 }),
  }),
)
`
