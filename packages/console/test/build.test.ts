/**
 * The browser app's build (scripts/build-app.mjs): it succeeds, lists every file with its media
 * type, SHA-256 and size, and the bundle holds no Node import and no HTML or code sink (the CSP
 * of the console allows 'self' scripts only, and protocol text is never markup).
 */
import { createHash } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../scripts/build-app.mjs'

let dir: string
let bundle: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'weft-console-app-'))
  await buildApp({ outDir: dir })
  bundle = await readFile(join(dir, 'app.js'), 'utf8')
}, 120_000)

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('build-app', () => {
  it('writes the manifest with type, sha256 and size of every file', async () => {
    const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as { files: Record<string, { type: string; sha256: string; bytes: number }> }
    expect(Object.keys(manifest.files).sort()).toEqual(['app.css', 'app.js', 'app.js.map', 'index.html'])
    expect(manifest.files['app.js']!.type).toBe('text/javascript')
    for (const [name, entry] of Object.entries(manifest.files)) {
      const bytes = await readFile(join(dir, name))
      expect([name, entry.bytes, entry.sha256]).toEqual([name, bytes.length, createHash('sha256').update(bytes).digest('hex')])
    }
  })

  it('bundles no node: import', () => {
    expect(bundle).not.toMatch(/(?:from\s*|import\s*\(\s*|require\s*\(\s*)["']node:/)
    expect(bundle).not.toMatch(/["'](?:fs|child_process|ws)["']/)
  })

  it('holds no HTML or code sink', () => {
    for (const sink of ['innerHTML', 'outerHTML', 'dangerouslySetInnerHTML', 'insertAdjacentHTML', 'document.write', 'new Function', 'eval('])
      expect([sink, bundle.includes(sink)]).toEqual([sink, false])
  })

  it('serves HTML without inline script or style (the CSP forbids them)', async () => {
    const html = await readFile(join(dir, 'index.html'), 'utf8')
    expect(html).toMatch(/<script type="module" src="app\.js"><\/script>/)
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/)
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i)
  })
})
