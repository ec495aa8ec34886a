// Worker benchmark (`npm run bench -- worker [--json]`): the Scheduler's pick cost at 100,000
// queued items across 1,000 Groups against 1,000 items across 10 Groups, Event ingestion into the
// per-Group projection, and queue rebuild from a 100,000-Event log in memory and in SQLite. Each
// part measures against a baseline in the same run; see the three modules for what each row means.
import { ingestCases } from './worker-ingest.mjs'
import { schedulerCases } from './worker-scheduler.mjs'
import { sqliteRebuildCases } from './worker-sqlite.mjs'
import { table } from './table.mjs'

/** @param {{ log: (line: string) => void }} options */
export async function run({ log }) {
  const parts = {
    scheduler: await schedulerCases({ log }),
    ingest: await ingestCases({ log }),
    sqlite: await sqliteRebuildCases({ log }),
  }
  // The SQLite rows have one measured column; widen them to the common header.
  const rows = [...parts.scheduler.rows, ...parts.ingest.rows, ...parts.sqlite.rows.map(([name, measured, target]) => [name, measured, '', '', target])]
  const missed = Object.values(parts).flatMap((part) => part.missed ?? [])
  const summary = Object.fromEntries(Object.entries(parts).map(([name, part]) => [name, part.summary]))
  return { table: table(['worker', 'weft', 'baseline', 'ratio', 'target'], rows), summary: { ...summary, targetsMet: missed.length === 0 }, missed }
}
