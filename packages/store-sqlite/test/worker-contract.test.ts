/**
 * The Worker's own `WorkerStore` contract suite (@weft/worker `describeWorkerStoreContract`), run
 * against the SQLite store on real files, the durability cases (reopen) included.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describeWorkerStoreContract, type WorkerStore } from '@weft/worker'
import { afterAll, describe, expect, it } from 'vitest'
import { openSqliteWorkerStore } from '../src/index.js'

const dir = mkdtempSync(join(tmpdir(), 'weft-worker-contract-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const paths = new Map<WorkerStore, string>()
let files = 0

function make(): WorkerStore {
  const path = join(dir, `${++files}.db`)
  const store = openSqliteWorkerStore(path)
  paths.set(store, path)
  return store
}

function reopen(store: WorkerStore): WorkerStore {
  store.close()
  return openSqliteWorkerStore(paths.get(store) as string)
}

describeWorkerStoreContract({ describe, it, expect }, 'SQLite Worker store', make, reopen)
