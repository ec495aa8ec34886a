/**
 * The built browser app (`npm run build -w @weft/console` writes it to `dist/app/`): its files are
 * served from memory, looked up by name in the app's `manifest.json`. No part of a request's URL
 * ever reaches the file system: a name the manifest does not list is not found, whatever it holds
 * (`..`, `%2e%2e`, an absolute path), and the manifest's own names are checked before any is read.
 * @module
 */
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import type { IncomingMessage } from 'node:http'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ConsoleLogEntry } from './console-server.js'
import { header, type Answer } from './http.js'

/** The file that lists the app's files. */
export const APP_MANIFEST = 'manifest.json'

/** The page every console URL without a file name shows. */
export const APP_INDEX = 'index.html'

/** One file of the app, held in memory. */
export interface AppFile {
  /** The file's bytes, as read when the app was loaded. */
  readonly body: Buffer
  /** Its `Content-Type`: the manifest's `type`, else one known for its extension, else `application/octet-stream`. */
  readonly contentType: string
  /** A strong validator of the bytes, for `If-None-Match`. */
  readonly etag: string
}

/** The loaded app: its files by name (`index.html`, `app.js`, `assets/x.svg`). */
export type LoadedApp = ReadonlyMap<string, AppFile>

/** Why the app could not be loaded: `missing` when it was never built, `invalid` for a manifest that cannot be trusted. */
export class AppUnavailableError extends Error {
  /** `missing`: no manifest (not built); `invalid`: a manifest or file that cannot be served. */
  readonly reason: 'missing' | 'invalid'
  /** @param reason - See {@link AppUnavailableError.reason}. @param message - What is wrong, naming the file. */
  constructor(reason: 'missing' | 'invalid', message: string) {
    super(message)
    this.name = 'AppUnavailableError'
    this.reason = reason
  }
}

/** A name of the manifest: path segments of a portable alphabet, none of them starting with a dot. */
const SAFE_NAME = /^(?:[A-Za-z0-9_-][A-Za-z0-9._-]*\/)*[A-Za-z0-9_-][A-Za-z0-9._-]*$/

/** Media types by extension; anything else is served as bytes. */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  json: 'application/json',
  map: 'application/json',
  svg: 'image/svg+xml',
  png: 'image/png',
  ico: 'image/x-icon',
  woff2: 'font/woff2',
  txt: 'text/plain; charset=utf-8',
}

/** `type` with `charset=utf-8` when it is text without a charset, so that no browser guesses one. */
function withCharset(type: string | undefined): string | undefined {
  if (type === undefined) return undefined
  const textual = /^text\//i.test(type) || /^application\/(?:json|javascript)/i.test(type)
  return textual && !/charset=/i.test(type) ? `${type}; charset=utf-8` : type
}

function contentTypeOf(name: string): string {
  const dot = name.lastIndexOf('.')
  return (dot < 0 ? undefined : CONTENT_TYPES[name.slice(dot + 1).toLowerCase()]) ?? 'application/octet-stream'
}

/** What the manifest says of one file: its name, and optionally its media type and SHA-256 (hex). */
interface ManifestEntry {
  readonly name: string
  readonly type?: string
  readonly sha256?: string
}

/** A media type the manifest may state: `type/subtype` with parameters, no line breaks. */
const MEDIA_TYPE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+(?:\s*;\s*[a-z0-9!#$&^_.+-]+=[a-z0-9!#$&^_.+-]+)*$/i

/**
 * The files a manifest lists. Accepted shapes: `{ "files": { NAME: { "type", "sha256", ... } } }`
 * (what `scripts/build-app.mjs` writes), or a list of names (`[NAME, ...]` or `{ "files": [...] }`,
 * each entry a name or an object with a `path`, `name` or `file` member).
 */
function entriesOf(manifest: unknown): ManifestEntry[] {
  const files = Array.isArray(manifest) ? manifest : typeof manifest === 'object' && manifest !== null ? (manifest as Record<string, unknown>)['files'] : undefined
  const raw: [unknown, unknown][] = Array.isArray(files)
    ? files.map((entry: unknown) => [
        typeof entry === 'string'
          ? entry
          : typeof entry === 'object' && entry !== null
            ? ['path', 'name', 'file'].map((k) => (entry as Record<string, unknown>)[k]).find((v) => typeof v === 'string')
            : undefined,
        entry,
      ])
    : typeof files === 'object' && files !== null
      ? Object.entries(files)
      : []
  if (raw.length === 0) throw new AppUnavailableError('invalid', `${APP_MANIFEST} must list the app's files ("files": { NAME: { "type", "sha256" } })`)
  return raw.map(([name, about]) => {
    if (typeof name !== 'string' || !SAFE_NAME.test(name) || name.split('/').includes('..'))
      throw new AppUnavailableError('invalid', `${APP_MANIFEST} lists ${JSON.stringify(name ?? about)}, which is not a plain relative file name`)
    const info = typeof about === 'object' && about !== null ? (about as Record<string, unknown>) : {}
    const type = info['type']
    const sha256 = info['sha256']
    if (type !== undefined && (typeof type !== 'string' || !MEDIA_TYPE.test(type))) throw new AppUnavailableError('invalid', `${APP_MANIFEST}: the type of ${name} is not a media type`)
    if (sha256 !== undefined && (typeof sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(sha256))) throw new AppUnavailableError('invalid', `${APP_MANIFEST}: the sha256 of ${name} is not 64 hex digits`)
    return { name, ...(type === undefined ? {} : { type }), ...(sha256 === undefined ? {} : { sha256 }) }
  })
}

/**
 * Reads the app in `dir`: its manifest, then each file it lists, at most `maxBytes` in all.
 * @throws AppUnavailableError `missing` when there is no manifest (the app was not built),
 * `invalid` when the manifest is malformed, names an unsafe path or a missing file, lacks
 * `index.html`, or the files exceed `maxBytes`.
 */
export async function loadApp(dir: string, maxBytes: number): Promise<LoadedApp> {
  let text: string
  try {
    text = await readFile(join(dir, APP_MANIFEST), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') throw new AppUnavailableError('missing', `${join(dir, APP_MANIFEST)} does not exist`)
    throw new AppUnavailableError('invalid', `${join(dir, APP_MANIFEST)}: ${(error as Error).message}`)
  }
  let manifest: unknown
  try {
    manifest = JSON.parse(text)
  } catch (error) {
    throw new AppUnavailableError('invalid', `${join(dir, APP_MANIFEST)} is not JSON: ${(error as Error).message}`)
  }
  const entries = entriesOf(manifest)
  if (!entries.some((e) => e.name === APP_INDEX)) throw new AppUnavailableError('invalid', `${APP_MANIFEST} does not list ${APP_INDEX}`)
  const files = new Map<string, AppFile>()
  let total = 0
  for (const { name, type, sha256 } of entries) {
    let body: Buffer
    try {
      body = await readFile(join(dir, ...name.split('/')))
    } catch (error) {
      throw new AppUnavailableError('invalid', `${APP_MANIFEST} lists ${name}, which cannot be read: ${(error as Error).message}`)
    }
    total += body.byteLength
    if (total > maxBytes) throw new AppUnavailableError('invalid', `the app's files exceed ${maxBytes} bytes`)
    const digest = createHash('sha256').update(body)
    const hex = digest.copy().digest('hex')
    // A file that is not the one built (edited, half copied) is refused rather than served.
    if (sha256 !== undefined && sha256 !== hex) throw new AppUnavailableError('invalid', `${name} does not have the SHA-256 ${APP_MANIFEST} states; rebuild the app`)
    files.set(name, { body, contentType: withCharset(type) ?? contentTypeOf(name), etag: `"${digest.digest('base64url')}"` })
  }
  return files
}

/** The default app directory: `dist/app/` of this package, from its sources and from its build alike. */
export function defaultAppDir(): string {
  return fileURLToPath(new URL('../../dist/app/', import.meta.url))
}

/**
 * The answers of the app's files in `appDir` (`GET` or `HEAD`, by manifest name, with `ETag`
 * revalidation). The app is loaded at the first request; a failed load is tried again at the next
 * one, since the app may be built meanwhile.
 */
export function appAnswers(appDir: string, maxBytes: number, log: (entry: ConsoleLogEntry) => void): (request: IncomingMessage, name: string) => Promise<Answer> {
  let app: Promise<LoadedApp> | undefined

  function loadedApp(): Promise<LoadedApp> {
    app ??= loadApp(appDir, maxBytes).catch((error: unknown) => {
      app = undefined
      throw error
    })
    return app
  }

  return async (request, name) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return { status: 405, headers: { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }, body: 'GET only.\n' }
    let files: LoadedApp
    try {
      files = await loadedApp()
    } catch (error) {
      if (error instanceof AppUnavailableError && error.reason === 'missing') {
        return { status: 503, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }, body: 'The console app has not been built: run npm run build -w @weft/console\n' }
      }
      log({ level: 'error', msg: 'console app unavailable', detail: (error as Error).message, appDir })
      return { status: 500, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }, body: 'The console app cannot be served; the server log says why.\n' }
    }
    const file = files.get(name)
    if (file === undefined) return { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'Not found.\n' }
    const headers = { 'content-type': file.contentType, etag: file.etag, 'cache-control': 'no-cache' }
    if (header(request, 'if-none-match') === file.etag) return { status: 304, headers }
    return { status: 200, headers, body: request.method === 'HEAD' ? undefined : file.body }
  }
}
