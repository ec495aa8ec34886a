/**
 * Where `weft serve` keeps the log: the embedded SQLite store of the data directory, or a
 * PostgreSQL database shared by several `weft serve` processes of one Organization. Either way the
 * server gets an Authority, the ACK Cursor store of its delivery, what the `store opened` log line
 * says, and how to close it without losing an accepted Event.
 * @module
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { createAuthority, historyPosition, LogProofError, type Authority, type AuthorityPolicy, type Clock, type CursorStore } from '@weft/authority'
import { UsageError } from '@weft/codec'
import { openSqliteAuthorityStore } from '@weft/store-sqlite'
import { createPrivateFile } from './files.js'
import type { ServeLog } from './log.js'
import { STORE_FILE, type Organization } from './organization.js'

/**
 * What `weft serve` uses of its Authority, whichever store keeps the log: Commands in, the folded
 * state and the log out. The Authority of `@weft/authority` and the PostgreSQL one both are one.
 */
export type ServedAuthority = Pick<Authority, 'submit' | 'submitCommand' | 'connect' | 'state' | 'group' | 'events' | 'eventPage' | 'snapshot' | 'organizationEvents' | 'replayState' | 'onCommit'>

/**
 * The exit code of `weft serve` and `weft inspect --verify` when the stored log fails its proof
 * (`LogProofError`): it was tampered with or damaged, and nothing of it is served.
 */
export const LOG_PROOF_EXIT = 3

/**
 * `error` as the failed proof it means when SQLite says the file `path` is damaged
 * (`SQLITE_CORRUPT…`) or is no database (`SQLITE_NOTADB`), found wherever it is read: the same one
 * line and exit code ({@link LOG_PROOF_EXIT}) as a log that fails its proof. Anything else: as is.
 */
export function asDamage(path: string, error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code
  if (error instanceof LogProofError || typeof code !== 'string' || !(code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB')) return error
  return new LogProofError({ subject: `the database ${path}` }, (error as Error).message, { cause: error })
}

/**
 * The data directory's existing SQLite store, opened for reading by the offline commands
 * (`weft inspect`, `weft inspect --verify`): they never create a log where there is none.
 * @throws UsageError when `dataDir` holds no store; the failed proof ({@link asDamage}) when the
 * file is damaged or no database.
 */
export function openExistingSqliteStore(dataDir: string): { readonly store: ReturnType<typeof openSqliteAuthorityStore>; readonly path: string } {
  const path = join(dataDir, STORE_FILE)
  if (!existsSync(path)) throw new UsageError(`${path} does not exist; weft serve creates it on its first start`)
  try {
    return { store: openSqliteAuthorityStore(path), path }
  } catch (error) {
    throw asDamage(path, error)
  }
}

/** A PostgreSQL database holding the log (`weft serve --postgres URL --pg-schema NAME`). */
export interface PostgresTarget {
  /** A `postgres://` or `postgresql://` connection URL. */
  readonly url: string
  /** The schema of the log's tables, created when absent. Default `weft`. */
  readonly schema?: string
}

/** An open log. */
export interface Backend {
  readonly authority: ServedAuthority
  readonly cursorStore: CursorStore
  /** The members of the `store opened` log line that say where the log is. */
  readonly where: Readonly<Record<string, string>>
  /**
   * Lets the Commands under way finish (their Events committed), stores the pending ACK Cursors
   * and closes the store. Call it after nothing submits any more.
   */
  close(): Promise<void>
}

/** What opening a log needs besides where it is. */
export interface BackendOptions {
  readonly dataDir: string
  readonly organization: Organization
  readonly clock: Clock
  readonly policy: Partial<AuthorityPolicy>
  readonly log: ServeLog
  /** The Authority's `maxAuditEntries`. */
  readonly maxAuditEntries: number
}

/**
 * The embedded store of the data directory. Its commits run with `synchronous = FULL`: a receipt
 * leaves only after its Events are flushed to disk (§4, §16).
 */
export function openSqliteBackend(options: BackendOptions): Backend {
  const path = join(options.dataDir, STORE_FILE)
  try {
    // An empty file is an empty database. SQLite creates the -wal and -shm files with the mode of
    // the database file, so the log, its receipts and its blobs stay the owner's alone.
    createPrivateFile(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  // Stated here rather than left to the store's default: no acknowledged Event is lost even with the machine.
  let store: ReturnType<typeof openSqliteAuthorityStore>
  try {
    store = openSqliteAuthorityStore(path, { synchronous: 'full' })
  } catch (error) {
    throw asDamage(path, error)
  }
  try {
    const { organization } = options
    // §6.4, §15.2, §16: nothing of the stored log is folded, served or built on before it is proved.
    const proof = store.proveLog({ registry: organization.registry, authority: organization.authority.actor })
    options.log({ level: 'info', msg: 'log proved', events: proof.events, signatures: proof.signatures, anchoredAt: proof.anchoredAt })
    const authority = createAuthority({
      registry: organization.registry,
      keys: { authority: organization.authority.actor, signingKey: organization.authority.signingKey },
      store,
      clock: options.clock,
      policy: options.policy,
      maxAuditEntries: options.maxAuditEntries,
      // A checkpoint that cannot be used is not an error (the log is folded instead), but the operator should know.
      onWarning: (warning) => options.log({ level: 'warn', msg: 'restore warning', kind: warning.kind, detail: warning.message }),
    })
    const close = async (): Promise<void> => {
      // §7.4, §16: a signed state checkpoint at the head lets the next start resume there instead of
      // folding the whole history again. It is an optimization: failing to save one loses nothing.
      try {
        // This process is the file's one writer, so its state is the fold of everything stored.
        if (historyPosition(authority.state) > (store.checkpoint()?.manifest.position ?? 0)) authority.checkpoint()
      } catch (error) {
        options.log({ level: 'warn', msg: 'checkpoint not saved', detail: (error as Error).message })
      }
      store.close()
    }
    return { authority, cursorStore: store.cursorStore, where: { backend: 'sqlite', path }, close }
  } catch (error) {
    store.close()
    throw asDamage(path, error)
  }
}

/**
 * A connection URL checked before anything connects with it.
 * @throws UsageError for anything but a `postgres://` or `postgresql://` URL.
 */
export function checkPostgresUrl(url: string): URL {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new UsageError(`--postgres must be a postgres:// connection URL, got ${JSON.stringify(redactedUrl(url))}`)
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') throw new UsageError(`--postgres must be a postgres:// connection URL, got a ${parsed.protocol} URL`)
  return parsed
}

/**
 * The `--postgres URL [--pg-schema NAME]` pair, checked before anything connects.
 * @throws UsageError for a URL that is not `postgres://`, or `--pg-schema` alone.
 */
export function postgresTarget(url: string | undefined, schema: string | undefined): PostgresTarget | undefined {
  if (url === undefined) {
    if (schema !== undefined) throw new UsageError('--pg-schema goes with --postgres URL')
    return undefined
  }
  checkPostgresUrl(url)
  // The schema name is checked by @weft/store-postgres when the server opens the log, before it connects.
  return schema === undefined ? { url } : { url, schema }
}

/** `url` without its password, for logs and messages. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    return parsed.toString()
  } catch {
    // Not a URL: say nothing of what it holds beyond its scheme-looking start.
    return `${url.slice(0, url.indexOf(':') + 1 || 12)}…`
  }
}

/**
 * The shared log in a PostgreSQL database, through `@weft/store-postgres` (loaded only here, so
 * a SQLite server never loads `pg`). The Authority listens for the other processes' commits, so
 * this server's subscribers receive their Events live; the ACK Cursors are the database's.
 * @throws UsageError for a bad URL or schema name; an Error naming the database (password
 * removed) when it cannot be reached.
 */
export async function openPostgresBackend(target: PostgresTarget, options: BackendOptions): Promise<Backend> {
  checkPostgresUrl(target.url)
  const { createPostgresAuthority, schemaIdentifier } = await import('@weft/store-postgres')
  const schema = target.schema ?? 'weft'
  try {
    schemaIdentifier(schema)
  } catch (error) {
    throw new UsageError(`--pg-schema: ${(error as Error).message}`)
  }
  const database = redactedUrl(target.url)
  const { organization } = options
  let authority: Awaited<ReturnType<typeof createPostgresAuthority>>
  try {
    authority = await createPostgresAuthority({
      url: target.url,
      schema,
      registry: organization.registry,
      keys: { authority: organization.authority.actor, signingKey: organization.authority.signingKey },
      clock: options.clock,
      policy: options.policy,
      maxAuditEntries: options.maxAuditEntries,
      listen: true,
      log: (entry) => options.log({ ...entry, backend: 'postgres' }),
    })
  } catch (error) {
    if (error instanceof UsageError || error instanceof LogProofError) throw error
    throw new Error(`the PostgreSQL database ${database} (schema ${schema}) cannot be used: ${failureReason(error)}`, { cause: error })
  }
  return { authority, cursorStore: authority.cursorStore, where: { backend: 'postgres', database, schema }, close: () => authority.close() }
}

/** An error's message; a refused connection to a host with several addresses has an empty one and a code. */
export function failureReason(error: unknown): string {
  const { message, code } = error as { message?: string; code?: string }
  return message || code || String(error)
}
