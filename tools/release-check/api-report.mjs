#!/usr/bin/env node
// Public API reports: one API Extractor report per entry point (`exports` key with a `types`
// target) of every publishable workspace package, committed as `<package>/etc/<name>.api.md`.
//
//   node tools/release-check/api-report.mjs            check: exit 1 when a built API differs from
//                                                      its committed report, or a report is missing
//                                                      or left over
//   node tools/release-check/api-report.mjs --update   rewrite the reports (root: `npm run api`)
//
// It reads the built declarations (`dist/**/*.d.ts`), so build first; `npm run api` and
// `npm run api:check` do. The release check (tools/release-check/test/packaging.test.ts) runs the
// check right after its clean build, which is how `npm test` and CI reach it.
//
// API Extractor bundles its own TypeScript (6.0.x) and only reads the .d.ts files that tsc 7 wrote.
// One compiler state holds every entry point, so the whole run costs one program (~5 s).
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { CompilerState, Extractor, ExtractorConfig } from '@microsoft/api-extractor'

const repo = resolve(import.meta.dirname, '..', '..')
const update = process.argv.includes('--update')
const REPORT_FOLDER = 'etc'
const REPORT_SUFFIX = '.api.md'

/** Workspace folders of the publishable (not private) packages, from the root `workspaces` globs. */
function publishablePackages() {
  const root = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'))
  const dirs = []
  for (const pattern of root.workspaces) {
    if (pattern.endsWith('/*')) {
      const parent = pattern.slice(0, -2)
      for (const name of readdirSync(join(repo, parent)).sort()) dirs.push(`${parent}/${name}`)
    } else dirs.push(pattern)
  }
  return dirs
    .filter((dir) => existsSync(join(repo, dir, 'package.json')))
    .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(repo, dir, 'package.json'), 'utf8')) }))
    .filter(({ manifest }) => manifest.private !== true)
}

/** `@weft/authority` + `./wire` → `authority-wire`; the root entry is the bare package name. */
function reportName(packageName, subpath) {
  const base = packageName.replace(/^@[^/]+\//, '')
  return subpath === '.' ? base : `${base}-${subpath.replace(/^\.\//, '').replace(/[/*]+/g, '-')}`
}

/** Every entry point of the packages: an `exports` key whose conditions name a `types` target. */
function entryPoints() {
  const entries = []
  for (const { dir, manifest } of publishablePackages()) {
    for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
      if (target === null || typeof target !== 'object' || typeof target.types !== 'string') continue
      entries.push({ dir, packageName: manifest.name, subpath, types: join(repo, dir, target.types), name: reportName(manifest.name, subpath) })
    }
  }
  return entries
}

const entries = entryPoints()
const missing = entries.filter((e) => !existsSync(e.types)).map((e) => relative(repo, e.types))
if (missing.length > 0) {
  console.error(`api-report: built declarations missing (${missing.join(', ')}); build first: TURBO_TELEMETRY_DISABLED=1 npx turbo run build`)
  process.exit(1)
}

const scratch = mkdtempSync(join(tmpdir(), 'weft-api-report-'))
const configs = entries.map((e) =>
  ExtractorConfig.prepare({
    configObject: {
      projectFolder: join(repo, e.dir),
      mainEntryPointFilePath: e.types,
      compiler: {
        // Only the entry's declarations: no tsconfig of the package, no sources.
        overrideTsconfig: {
          compilerOptions: { target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true, skipLibCheck: true, types: ['node'] },
          files: [e.types],
        },
      },
      // Declarations that an export reaches without being exported by this entry (types of the
      // root entry used by a subpath, internal option shapes) are part of what a user depends on.
      apiReport: { enabled: true, reportFileName: e.name, reportFolder: scratch, reportTempFolder: scratch, includeForgottenExports: true },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      newlineKind: 'lf',
      messages: {
        // The reports record the API's shape; documentation lint is the TSDoc test's business.
        compilerMessageReporting: { default: { logLevel: 'error' } },
        extractorMessageReporting: { default: { logLevel: 'none', addToApiReportFile: false } },
        tsdocMessageReporting: { default: { logLevel: 'none', addToApiReportFile: false } },
      },
    },
    packageJsonFullPath: join(repo, e.dir, 'package.json'),
  }),
)

const started = Date.now()
const compilerState = CompilerState.create(configs[0], { additionalEntryPoints: entries.map((e) => e.types) })
let errors = 0
const generated = new Map()
for (const [i, config] of configs.entries()) {
  const result = Extractor.invoke(config, {
    localBuild: true,
    compilerState,
    messageCallback: (message) => {
      if (message.logLevel === 'error') console.error(`api-report: ${entries[i].packageName} ${entries[i].subpath}: ${message.formatMessageWithLocation(repo)}`)
      message.handled = true
    },
  })
  const file = join(scratch, `${entries[i].name}${REPORT_SUFFIX}`)
  if (!result.succeeded || !existsSync(file)) {
    errors++
    console.error(`api-report: API Extractor failed for ${entries[i].packageName} ${entries[i].subpath} (${result.errorCount} errors)`)
    continue
  }
  generated.set(join(repo, entries[i].dir, REPORT_FOLDER, `${entries[i].name}${REPORT_SUFFIX}`), readFileSync(file, 'utf8'))
}
if (errors > 0) {
  rmSync(scratch, { recursive: true, force: true })
  process.exit(1)
}

// Reports in an `etc/` folder that no entry point produces any more (a removed subpath export).
const leftover = []
for (const { dir } of publishablePackages()) {
  const folder = join(repo, dir, REPORT_FOLDER)
  if (!existsSync(folder)) continue
  for (const f of readdirSync(folder)) if (f.endsWith(REPORT_SUFFIX) && !generated.has(join(folder, f))) leftover.push(join(folder, f))
}

const changed = []
for (const [path, text] of generated) {
  const committed = existsSync(path) ? readFileSync(path, 'utf8') : undefined
  if (committed === text) continue
  changed.push(path)
  if (update) {
    mkdirSync(join(path, '..'), { recursive: true })
    writeFileSync(path, text)
  } else if (committed === undefined) {
    console.error(`\napi-report: ${relative(repo, path)} is missing (new entry point?)`)
  } else {
    const fresh = join(scratch, `fresh-${changed.length}${REPORT_SUFFIX}`)
    writeFileSync(fresh, text)
    const diff = spawnSync('git', ['diff', '--no-index', '--no-color', '--', path, fresh], { encoding: 'utf8' })
    const lines = (diff.stdout ?? '').split('\n')
    console.error(`\napi-report: the built API of ${relative(repo, path)} differs from the committed report:`)
    console.error(lines.length > 200 ? `${lines.slice(0, 200).join('\n')}\n... (${lines.length - 200} more lines)` : lines.join('\n'))
  }
}
for (const path of leftover) {
  if (update) rmSync(path)
  else console.error(`api-report: ${relative(repo, path)} belongs to no entry point any more`)
}
rmSync(scratch, { recursive: true, force: true })

const seconds = ((Date.now() - started) / 1000).toFixed(1)
const total = generated.size
if (update) {
  console.log(`api-report: ${total} entry points, ${changed.length} reports written, ${leftover.length} removed (${seconds} s)`)
} else if (changed.length > 0 || leftover.length > 0) {
  console.error(
    `\napi-report: ${changed.length + leftover.length} of ${total} public API reports are out of date. If the change is intended, run \`npm run api\`, ` +
      'commit the updated etc/*.api.md, and add a changeset that tells users about it (a removed or changed export is a breaking change).',
  )
  process.exit(1)
} else {
  console.log(`api-report: ${total} entry points match their committed reports (${seconds} s)`)
}
