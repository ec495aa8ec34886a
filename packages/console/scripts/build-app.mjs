// Builds the console's browser app into dist/app/: esbuild bundles src/app/main.tsx (Preact, the
// browser builds of @weft/codec and @weft/client) into one ES module, the HTML and CSS are copied,
// and manifest.json lists every file with its media type, SHA-256 and size, which is all the
// server serves (the CSP allows only 'self' scripts and styles: nothing inline).
import { createHash } from 'node:crypto'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const out = join(root, 'dist', 'app')

const TYPES = { 'app.js': 'text/javascript', 'app.js.map': 'application/json', 'index.html': 'text/html', 'app.css': 'text/css' }

/**
 * Takes the HTML sink out of Preact: its diff honours `dangerouslySetInnerHTML` by writing
 * `innerHTML`. The console never renders protocol text as HTML, so the prop is made inert (it no
 * longer matches) and the write is removed; the build fails if Preact's code changes shape, so the
 * patch is reviewed rather than silently skipped.
 */
const noHtmlSink = {
  name: 'no-html-sink',
  setup(b) {
    b.onLoad({ filter: /[\\/]preact[\\/]dist[\\/]preact\.mjs$/ }, async (args) => {
      let code = await readFile(args.path, 'utf8')
      const edits = [
        ['"dangerouslySetInnerHTML"==s?y=k:', ''],
        ['"dangerouslySetInnerHTML"==s?h=k:', ''],
        ['h?(l||y&&(h.__html==y.__html||h.__html==t.innerHTML)||(t.innerHTML=h.__html),r.__k=[]):(', '('],
      ]
      for (const [from, to] of edits) {
        const at = code.indexOf(from)
        if (at < 0 || code.indexOf(from, at + 1) >= 0) throw new Error(`no-html-sink: Preact's ${args.path} changed; review the patch (${from})`)
        code = code.replace(from, to)
      }
      return { contents: code, loader: 'js' }
    })
  },
}

export async function buildApp({ outDir = out, minify = true } = {}) {
  await rm(outDir, { recursive: true, force: true })
  await mkdir(outDir, { recursive: true })
  const result = await build({
    entryPoints: [join(root, 'src', 'app', 'main.tsx')],
    outfile: join(outDir, 'app.js'),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    // `browser` picks the browser builds (codec's #platform, client's #socket); `@weft/source`
    // bundles the workspace sources directly, so no prior tsc build of the dependencies is needed.
    conditions: ['browser', '@weft/source'],
    mainFields: ['browser', 'module', 'main'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify,
    sourcemap: 'external',
    legalComments: 'none',
    tsconfig: join(root, 'tsconfig.app.json'),
    plugins: [noHtmlSink],
    logLevel: 'warning',
    metafile: true,
  })
  for (const name of ['index.html', 'app.css']) await writeFile(join(outDir, name), await readFile(join(root, 'src', 'app', name)))
  const files = {}
  for (const name of Object.keys(TYPES)) {
    const bytes = await readFile(join(outDir, name))
    files[name] = { type: TYPES[name], sha256: createHash('sha256').update(bytes).digest('hex'), bytes: bytes.length }
  }
  await writeFile(join(outDir, 'manifest.json'), `${JSON.stringify({ files }, null, 2)}\n`)
  return { files, metafile: result.metafile }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { files } = await buildApp()
  for (const [name, f] of Object.entries(files)) console.log(`${name.padEnd(12)} ${String(f.bytes).padStart(9)} B  ${f.sha256.slice(0, 16)}…`)
}
