/**
 * The chain beside the Authority store's log (`src/log/log-proof.ts` of `@weft/authority`): each Event row
 * holds its link, `chainLink(previous link, body)`, of its Group's chain (or of the Organization
 * log's), written in the same transaction as the row; the store keeps every chain's head in memory
 * for the next append, the state checkpoint and the head file. And the proof of a file's log.
 * @module
 */
import { chainLink, checkpointAnchor, createLogProver, LOG_CHAIN_FORMAT, LogProofError, type ActorRef, type LogHead, type LogProofSummary, type StateCheckpoint } from '@weft/authority'
import type { KeyResolver } from '@weft/codec'
import Database from 'better-sqlite3'
import type { Db } from './database.js'
import type { HeadFile } from './head-file.js'

/** The chain key of the Organization log (a Group ID is an absolute URI, never empty). */
const ORGANIZATION = ''

/**
 * Gives a file of an earlier build, whose Event rows have no `chain` column, the column and every
 * row its link, once, in one transaction (the immutability trigger is lifted for it and
 * `immutableSql` puts it back). The links are computed from the stored text unverified: the proof
 * of such a file finds no heads in its checkpoint and checks every signature instead.
 */
export function migrateChains(db: Db, immutableSql: string): void {
  const has = db.prepare("SELECT count(*) FROM pragma_table_info('events') WHERE name = 'chain'").pluck().get() === 1
  if (has) return
  db.transaction(() => {
    db.exec('ALTER TABLE events ADD COLUMN chain TEXT; DROP TRIGGER events_immutable_update; DROP TRIGGER events_immutable_delete')
    const update = db.prepare('UPDATE events SET chain = ? WHERE pos = ?')
    const last = new Map<string, string>()
    for (const [pos, groupId, body] of db.prepare('SELECT pos, group_id, body FROM events ORDER BY pos').raw().all() as [number, string | null, string][]) {
      const scope = groupId ?? ORGANIZATION
      const chain = chainLink(last.get(scope) ?? LOG_CHAIN_FORMAT, body)
      last.set(scope, chain)
      update.run(chain, pos)
    }
    db.exec(immutableSql)
  }).immediate()
}

/** The heads of the store's chains, and the links of the Events being appended. */
export interface Chains {
  /** The link of the next Event of `groupId` (`undefined`: the Organization log), after those already in `pending` (this transaction's). */
  next(groupId: string | undefined, text: string, pending: (readonly [scope: string, chain: string])[]): string
  /** Advances the heads over a committed transaction's links; returns the heads it reached. */
  commit(links: readonly (readonly [scope: string, chain: string])[]): LogHead[]
  /** Every current head, the Organization log first, then Groups in ID order. */
  heads(): LogHead[]
}

/** The chains of `db` as stored: each head read from the last row of its chain. */
export function createChains(db: Db): Chains {
  const current = new Map<string, { sequence: number; chain: string }>()
  const rows = db.prepare('SELECT group_id, sequence, chain FROM events WHERE pos IN (SELECT max(pos) FROM events GROUP BY group_id)').raw().all() as [string | null, number | null, string | null][]
  for (const [groupId, sequence, chain] of rows) {
    // A row without a link (written by hand) continues from nothing: the proof reports the chain.
    if (groupId !== null) current.set(groupId, { sequence: sequence ?? 0, chain: chain ?? LOG_CHAIN_FORMAT })
    else current.set(ORGANIZATION, { sequence: db.prepare('SELECT count(*) FROM events WHERE group_id IS NULL').pluck().get() as number, chain: chain ?? LOG_CHAIN_FORMAT })
  }
  const headOf = (scope: string, { sequence, chain }: { sequence: number; chain: string }): LogHead => (scope === ORGANIZATION ? { sequence, chain } : { groupId: scope, sequence, chain })
  return {
    next(groupId, text, pending) {
      const scope = groupId ?? ORGANIZATION
      let previous: string | undefined
      for (let i = pending.length - 1; i >= 0 && previous === undefined; i--) if (pending[i]![0] === scope) previous = pending[i]![1]
      const chain = chainLink(previous ?? current.get(scope)?.chain ?? LOG_CHAIN_FORMAT, text)
      pending.push([scope, chain])
      return chain
    },
    commit(links) {
      const reached = new Map<string, { sequence: number; chain: string }>()
      for (const [scope, chain] of links) {
        let head = current.get(scope)
        if (head === undefined) current.set(scope, (head = { sequence: 0, chain }))
        head.sequence++
        head.chain = chain
        reached.set(scope, head)
      }
      return [...reached].map(([scope, head]) => headOf(scope, head))
    },
    heads() {
      const scopes = [...current.keys()].sort()
      return scopes.map((scope) => headOf(scope, current.get(scope)!))
    },
  }
}

/** Whether `error` says the database file itself is damaged (or not a database at all). */
export function isDamage(error: unknown): error is Error {
  return error instanceof Database.SqliteError && (error.code.startsWith('SQLITE_CORRUPT') || error.code === 'SQLITE_NOTADB')
}

/** What a damaged database file fails as: one line naming the file and SQLite's complaint. */
export function damaged(path: string, why: string, cause?: unknown): LogProofError {
  return new LogProofError({ subject: `the database ${path}` }, why, cause === undefined ? undefined : { cause })
}

/**
 * The proof of the store's log (see `SqliteAuthorityStore.proveLog`): `PRAGMA quick_check`, then
 * every Event row in acceptance order through the prover of `@weft/authority`, from the anchor of
 * the state checkpoint, against the heads of the head file.
 * @throws LogProofError at the first failing check.
 */
export function proveSqliteLog(
  db: Db,
  path: string,
  checkpoint: () => StateCheckpoint | undefined,
  heads: HeadFile | undefined,
  options: { readonly registry: KeyResolver; readonly authority: ActorRef },
): LogProofSummary {
  try {
    const check = db.prepare('PRAGMA quick_check').pluck().all() as string[]
    if (check[0] !== 'ok') throw damaged(path, `PRAGMA quick_check: ${check.slice(0, 3).join('; ')}`)
    const anchor = checkpointAnchor({ checkpoint }, options.registry, options.authority)
    const prover = createLogProver({ ...options, ...(anchor === undefined ? {} : { anchor }), remembered: heads?.read() ?? [] })
    const rows = db.prepare('SELECT group_id, sequence, chain, body FROM events ORDER BY pos').raw().iterate() as IterableIterator<[string | null, number | null, string | null, string]>
    for (const [groupId, sequence, chain, text] of rows) prover.add({ text, groupId, sequence, chain })
    return prover.finish()
  } catch (error) {
    if (isDamage(error)) throw damaged(path, error.message, error)
    throw error
  }
}
