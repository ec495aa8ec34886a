/**
 * `weft inspect --verify`: the proof `weft serve` runs on the stored log before it serves it
 * (`log-proof.ts` of `@weft/authority`), run offline on a data directory's `authority.db` or on a
 * PostgreSQL log, reading only. It passes exactly when a server would start over the log.
 * @module
 */
import { join } from 'node:path'
import type { LogProofSummary } from '@weft/authority'
import { asDamage, openExistingSqliteStore, type PostgresTarget } from './backend.js'
import { loadOrganization, ORGANIZATION_FILE } from './organization.js'

/**
 * Proves the log of the data directory `dataDir` (or of `options.postgres`) as `weft serve` would
 * on start, under the Authority key of its `organization.json`.
 * @throws LogProofError naming the Group, the sequence and the failed check; UsageError when there
 * is no Organization or no log; the database's error when PostgreSQL cannot be read.
 */
export async function verifyData(dataDir: string, options: { readonly postgres?: PostgresTarget } = {}): Promise<LogProofSummary> {
  const organization = await loadOrganization(join(dataDir, ORGANIZATION_FILE))
  const proof = { registry: organization.registry, authority: organization.authority.actor }
  if (options.postgres !== undefined) {
    const { provePostgresLog } = await import('@weft/store-postgres')
    return provePostgresLog({ url: options.postgres.url, schema: options.postgres.schema ?? 'weft', ...proof })
  }
  const { store, path } = openExistingSqliteStore(dataDir)
  try {
    return store.proveLog(proof)
  } catch (error) {
    throw asDamage(path, error)
  } finally {
    store.close()
  }
}

/** The line `weft inspect --verify` prints for a log that passed. */
export function verificationText({ events, groups, signatures, anchoredAt }: LogProofSummary): string {
  const anchored = anchoredAt === 0 ? '' : `, the first ${anchoredAt} by the chain heads the state checkpoint signed`
  return `log verified: ${events} Events in ${groups} Group${groups === 1 ? '' : 's'} and the Organization log; ${signatures} signatures checked${anchored}\n`
}
