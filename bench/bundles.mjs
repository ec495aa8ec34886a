// Bundle-size benchmark (issue 24): what each browser entry point costs a web application.
// Every entry is bundled the way a browser build would bundle it: esbuild, `platform: 'browser'`
// (so the `browser` export/import conditions pick the browser platform modules), ESM, minified,
// nothing external, from the built packages (`dist/`, no `@weft/source` condition: what npm
// consumers get). The table gives minified and gzip (level 9) bytes and the three largest
// contributors (by bytes in the output) of each bundle.
//
// An entry that does not bundle for the browser (say, one that still imports a `node:` module)
// is reported as an error row, not a failed run, so the other rows are still measured.
import { gzipSync } from 'node:zlib'
import { table } from './table.mjs'

/** The entries measured, in the order of the table. */
export const ENTRIES = [
  '@weft/codec',
  '@weft/codec/json',
  '@weft/codec/formats',
  '@weft/codec/errors',
  '@weft/validators',
  '@weft/validators/payloads',
  '@weft/validators/signed',
  '@weft/client',
  '@weft/client/wire',
]

/** The package a bundled input file belongs to: `@noble/curves`, `@weft/codec`, ... */
function packageOf(path) {
  const nm = path.lastIndexOf('node_modules/')
  if (nm >= 0) {
    const parts = path.slice(nm + 'node_modules/'.length).split('/')
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]
  }
  const ws = /(?:^|\/)(packages\/[^/]+|spec)\//.exec(path)
  if (ws) return ws[1] === 'spec' ? '@weft/spec' : `@weft/${ws[1].slice('packages/'.length)}`
  return path
}

/** Bundles one entry; resolves with its sizes and largest parts, or with the build error. */
export async function measureEntry(esbuild, entry, root) {
  try {
    const result = await esbuild.build({
      stdin: { contents: `export * from '${entry}'`, resolveDir: root, sourcefile: 'entry.js', loader: 'js' },
      bundle: true,
      platform: 'browser',
      format: 'esm',
      target: 'es2022',
      minify: true,
      metafile: true,
      write: false,
      logLevel: 'silent',
    })
    const code = result.outputFiles[0].contents
    const byPackage = new Map()
    for (const output of Object.values(result.metafile.outputs)) {
      for (const [path, input] of Object.entries(output.inputs)) byPackage.set(packageOf(path), (byPackage.get(packageOf(path)) ?? 0) + input.bytesInOutput)
    }
    const parts = [...byPackage]
      .filter(([, bytes]) => bytes > 0)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
      .map(([name, bytes]) => ({ name, bytes }))
    const text = Buffer.from(code).toString('utf8')
    return { entry, minBytes: code.length, gzipBytes: gzipSync(code, { level: 9 }).length, nodeBuiltins: /["']node:/.test(text), parts }
  } catch (error) {
    const first = error?.errors?.[0]
    const where = first?.location ? ` (${first.location.file}:${first.location.line})` : ''
    return { entry, error: first ? `${first.text}${where}` : String(error?.message ?? error) }
  }
}

const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`

export async function run({ log }) {
  const esbuild = await import('esbuild')
  const root = import.meta.dirname
  const rows = []
  const entries = {}
  for (const entry of ENTRIES) {
    log(`bundles: ${entry}`)
    const m = await measureEntry(esbuild, entry, root)
    entries[entry] = m.error === undefined ? { minBytes: m.minBytes, gzipBytes: m.gzipBytes, nodeBuiltins: m.nodeBuiltins, parts: m.parts } : { error: m.error }
    if (m.error !== undefined) rows.push([entry, 'error', '', m.error.length > 90 ? `${m.error.slice(0, 87)}...` : m.error])
    else rows.push([entry, kb(m.minBytes), kb(m.gzipBytes), m.parts.map((p) => `${p.name} ${kb(p.bytes)}`).join(', ') + (m.nodeBuiltins ? ' [node: import!]' : '')])
  }
  const failed = Object.entries(entries)
    .filter(([, e]) => e.error !== undefined)
    .map(([name]) => name)
  const summary = { esbuild: esbuild.version, platform: 'browser', source: 'dist', entries, failed }
  const missed = failed.map((name) => `${name} does not bundle for the browser`)
  return { table: table(['browser bundle (esbuild, minified)', 'min', 'gzip', 'largest parts'], rows), summary, missed }
}
