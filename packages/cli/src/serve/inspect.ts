/**
 * `weft inspect`: what a `weft serve` log holds, read without writing: each Group's Events,
 * WorkItems, leases and budget ledger, folded from the stored log by the Authority's own reducers
 * (`restoreState`), so what it shows is exactly the state a restarted server would have. The log is
 * the data directory's `authority.db`, or a PostgreSQL database shared by several servers.
 *
 * It reads while servers run: the SQLite store is in WAL mode, where readers see the last committed
 * transaction and never block the writer; PostgreSQL is read in one read-only transaction, which
 * takes no lock the writers wait for and sees every transaction committed before it started.
 * @module
 */
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import {
  budgetLedgerOf,
  LogProofError,
  reducers,
  restoreState,
  type AuthorityState,
  type AuthorityStore,
  type BudgetLedger,
  type BudgetLedgerEntry,
  type BudgetRef,
  type GroupState,
} from '@weft/authority'
import { UsageError } from '@weft/codec'
import { USAGE_DIMENSIONS, type Lease, type UsageDimension } from '@weft/spec'
import { asDamage, checkPostgresUrl, failureReason, LOG_PROOF_EXIT, openExistingSqliteStore, postgresTarget, redactedUrl, type PostgresTarget } from './backend.js'
import { loadOrganization, ORGANIZATION_FILE, type Organization } from './organization.js'

/** One Event as `inspect` lists it. */
export interface EventLine {
  readonly sequence: number
  readonly kind: string
  /** The Principal the Event is attributed to (`type:id`). */
  readonly actor: string
  readonly occurredAt: string
}

/** One lease of a Group (§7.2, §10.3, §11.3). */
export interface LeaseLine {
  readonly leaseId: string
  readonly leaseType: Lease['leaseType']
  readonly holderAgentId: string
  readonly workItemId?: string
  /** The Coordinator Epoch of a coordinator lease, the Ownership Epoch of the others. */
  readonly epoch?: number
  readonly state: Lease['state']
  readonly expiresAt: string
  /** Active and not past `expiresAt` at the time of inspection (the Authority checks expiry when a Command arrives). */
  readonly live: boolean
}

/** One WorkItem's line. */
export interface WorkItemLine {
  readonly workItemId: string
  readonly state: string
  readonly owner?: string
  readonly ownershipEpoch?: number
  readonly ownershipLeaseExpiresAt?: string
  readonly executionLeaseId?: string
  readonly executionLeaseExpiresAt?: string
}

/**
 * One dimension of a budget (§12), as the Authority's `budgetLedgerOf` reads it: amounts in the
 * ledger's units, money in microunits of the currency.
 */
export interface LedgerCell extends Omit<BudgetLedgerEntry, 'limit'> {
  /** The limit the budget lists; `null` when it lists none (`source` tells whether it is inherited or unlimited). */
  readonly allocated: number | null
}

/** The six-dimensional ledger of one budget: a Mission's or a WorkItem's. */
export interface LedgerLine {
  readonly scope: 'mission' | 'workItem'
  readonly id: string
  readonly currency?: string
  readonly dimensions: Readonly<Record<UsageDimension, LedgerCell>>
}

/** Everything `inspect` reports on one Group. */
export interface GroupReport {
  readonly groupId: string
  readonly missionId: string
  readonly missionState: string
  readonly objective: string
  readonly head: number
  readonly events: readonly EventLine[]
  readonly workItems: readonly WorkItemLine[]
  readonly leases: readonly LeaseLine[]
  readonly budget: readonly LedgerLine[]
}

/** One registered Agent. */
export interface AgentLine {
  readonly agentId: string
  readonly cardVersion: number
  readonly status: string
  readonly sessionEpoch: number
}

/** What {@link inspectData} returns; `--json` prints it. */
export interface Inspection {
  readonly organizationId: string
  readonly agents: readonly AgentLine[]
  readonly groups: readonly GroupReport[]
}

/** Options of {@link inspectData}. */
export interface InspectOptions {
  /** Only this Group. */
  readonly groupId?: string
  /** Only the last `n` Events of each Group. */
  readonly lastEvents?: number
  /** The time leases are judged at. Default: the wall clock. */
  readonly now?: number
  /** Read the log from this PostgreSQL database (and schema, default `weft`) instead of the data directory's `authority.db`. */
  readonly postgres?: PostgresTarget
}

/** A store that serves reads of `inner` and refuses every write. */
function readOnly(inner: AuthorityStore): AuthorityStore {
  return {
    appendTransaction() {
      throw new UsageError('weft inspect never writes to the store')
    },
    groupEvents: (groupId, after, max) => inner.groupEvents(groupId, after, max),
    organizationEvents: () => inner.organizationEvents(),
    receipt: (key, actionId) => inner.receipt(key, actionId),
    allEvents: () => inner.allEvents(),
  }
}

/** The ledger line of `ledger`, the Authority's reading of one budget (§12). */
function ledgerLine(ledger: BudgetLedger): LedgerLine {
  const dimensions = Object.fromEntries(
    USAGE_DIMENSIONS.map((d) => {
      const { limit, ...rest } = ledger.dimensions[d]
      return [d, { allocated: limit, ...rest }]
    }),
  ) as Record<UsageDimension, LedgerCell>
  const id = ledger.workItemId ?? ledger.missionId
  return { scope: ledger.scope, id, ...(ledger.currency === undefined ? {} : { currency: ledger.currency }), dimensions }
}

function leaseLine(lease: Lease, now: number): LeaseLine {
  const epoch = lease.leaseType === 'coordinator' ? lease.coordinatorEpoch : lease.ownershipEpoch
  return {
    leaseId: lease.leaseId,
    leaseType: lease.leaseType,
    holderAgentId: lease.holderAgentId,
    ...(lease.workItemId === undefined ? {} : { workItemId: lease.workItemId }),
    ...(epoch === undefined ? {} : { epoch }),
    state: lease.state,
    expiresAt: lease.expiresAt,
    live: lease.state === 'active' && Date.parse(lease.expiresAt) > now,
  }
}

function groupReport(store: AuthorityStore, state: AuthorityState, group: GroupState, options: InspectOptions): GroupReport {
  const now = options.now ?? Date.now()
  const after = options.lastEvents === undefined ? 0 : Math.max(0, group.head - options.lastEvents)
  const events = store.groupEvents(group.groupId, after).map((e) => ({ sequence: e.sequence ?? 0, kind: e.kind, actor: `${e.actor.type}:${e.actor.id}`, occurredAt: e.occurredAt }))
  const records = [...group.workItems.values()]
  const workItems = records.map((r): WorkItemLine => {
    const owner = r.doc.owner
    return {
      workItemId: r.doc.workItemId,
      state: r.doc.state,
      ...(owner === undefined ? {} : { owner: owner.agentId, ownershipEpoch: owner.ownershipEpoch }),
      ...(r.ownershipLease === undefined ? {} : { ownershipLeaseExpiresAt: r.ownershipLease.expiresAt }),
      ...(r.executionLease === undefined ? {} : { executionLeaseId: r.executionLease.leaseId, executionLeaseExpiresAt: r.executionLease.expiresAt }),
    }
  })
  const leases = [group.coordinatorLease, ...records.flatMap((r) => [r.ownershipLease, r.executionLease].filter((l): l is Lease => l !== undefined))].map((l) => leaseLine(l, now))
  // The Authority's own reading of each budget (§12), so the two never disagree.
  const budget = [undefined, ...records.map((r) => r.doc.workItemId)].map((id) => ledgerLine(budgetLedgerOf(state, group.groupId, id)!))
  return { groupId: group.groupId, missionId: group.missionId, missionState: group.mission.state, objective: group.mission.objective, head: group.head, events, workItems, leases, budget }
}

/** An opened log to fold, where it is (for messages), and how to let it go. */
interface StoredLog {
  readonly store: AuthorityStore
  readonly where: string
  close(): void
}

/** The data directory's SQLite store, which must exist: inspection never creates anything. */
function sqliteLog(dataDir: string): StoredLog {
  const { store, path } = openExistingSqliteStore(dataDir)
  return { store, where: path, close: () => store.close() }
}

/** The log in PostgreSQL, read in one read-only transaction (`readPostgresLog`), which creates nothing. */
async function postgresLog(target: PostgresTarget): Promise<StoredLog> {
  checkPostgresUrl(target.url)
  const { readPostgresLog } = await import('@weft/store-postgres')
  const schema = target.schema ?? 'weft'
  const where = `${redactedUrl(target.url)} (schema ${schema})`
  try {
    return { store: await readPostgresLog({ url: target.url, schema }), where, close: () => {} }
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(`${where}: ${error.message}`)
    throw new Error(`the PostgreSQL database ${where} cannot be read: ${failureReason(error)}`, { cause: error })
  }
}

/**
 * Reads the log of the data directory `dataDir` (or of `options.postgres`) and folds it (§15.2:
 * the state is the fold of the log).
 * @throws UsageError when the directory holds no Organization, there is no log, or `options.groupId`
 * is unknown; an Error naming the database when PostgreSQL cannot be read.
 */
export async function inspectData(dataDir: string, options: InspectOptions = {}): Promise<Inspection> {
  const organization = await loadOrganization(join(dataDir, ORGANIZATION_FILE))
  const stored = options.postgres === undefined ? sqliteLog(dataDir) : await postgresLog(options.postgres)
  try {
    return foldedReport(stored, organization, options)
  } catch (error) {
    // Damage in pages read only while folding is found here, not on open.
    throw options.postgres === undefined ? asDamage(stored.where, error) : error
  } finally {
    stored.close()
  }
}

/** The inspection of an opened log: folded, then reported by Group. */
function foldedReport(stored: StoredLog, organization: Organization, options: InspectOptions): Inspection {
  const store = readOnly(stored.store)
  const state = restoreState(store, reducers, organization.registry)
  if (options.groupId !== undefined && !state.groups.has(options.groupId)) throw new UsageError(`no Group ${options.groupId} in ${stored.where}`)
  const groups = [...state.groups.values()].filter((g) => options.groupId === undefined || g.groupId === options.groupId)
  return {
    organizationId: organization.organizationId,
    agents: [...state.org.agents.values()].map((a) => ({ agentId: a.agentId, cardVersion: a.card.cardVersion, status: a.card.status, sessionEpoch: a.sessionEpoch })),
    groups: groups.map((g) => groupReport(store, state, g, options)),
  }
}

// ---------------------------------------------------------------------------------------------
// Text tables
// ---------------------------------------------------------------------------------------------

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: readonly string[]): string => `  ${cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ')}`.trimEnd()
  return [line(header), ...rows.map(line)].join('\n')
}

const DIMENSION_LABEL: Readonly<Record<UsageDimension, string>> = {
  financialMicrounits: 'money',
  modelTokens: 'model tokens',
  toolCalls: 'tool calls',
  computeSeconds: 'compute s',
  wallClockSeconds: 'wall-clock s',
  externalActions: 'external actions',
}

function amount(d: UsageDimension, value: number | null, currency: string | undefined): string {
  if (value === null) return 'unlimited'
  return d === 'financialMicrounits' ? `${(value / 1_000_000).toFixed(2)}${currency === undefined ? '' : ` ${currency}`}` : String(value)
}

/** `Mission <id>` or `WorkItem <id>`, as the budget table names a budget. */
function budgetName(ref: BudgetRef): string {
  return ref.workItemId === undefined ? `Mission ${ref.missionId}` : `WorkItem ${ref.workItemId}`
}

function groupText(g: GroupReport): string {
  const out = [`Group ${g.groupId}`, `  Mission ${g.missionId} (${g.missionState}), ${g.head} Events: ${g.objective}`, '', `Events (${g.events.length} of ${g.head})`]
  out.push(
    table(
      ['seq', 'time', 'kind', 'actor'],
      g.events.map((e) => [String(e.sequence), e.occurredAt, e.kind, e.actor]),
    ),
  )
  out.push('', `WorkItems (${g.workItems.length})`)
  out.push(
    table(
      ['workItem', 'state', 'owner', 'epoch', 'ownership until', 'execution until'],
      g.workItems.map((w) => [
        w.workItemId,
        w.state,
        w.owner ?? '-',
        w.ownershipEpoch === undefined ? '-' : String(w.ownershipEpoch),
        w.ownershipLeaseExpiresAt ?? '-',
        w.executionLeaseExpiresAt ?? '-',
      ]),
    ),
  )
  out.push('', `Leases (${g.leases.length})`)
  out.push(
    table(
      ['type', 'holder', 'workItem', 'epoch', 'state', 'expires', 'live'],
      g.leases.map((l) => [l.leaseType, l.holderAgentId, l.workItemId ?? '-', l.epoch === undefined ? '-' : String(l.epoch), l.state, l.expiresAt, l.live ? 'yes' : 'no']),
    ),
  )
  out.push('', 'Budget (allocated / reserved by children / used / remaining on the whole path; dimensions neither limited nor used are left out)')
  const rows = g.budget.flatMap((b) =>
    USAGE_DIMENSIONS.filter((d) => b.dimensions[d].source !== 'unlimited' || b.dimensions[d].used > 0).map((d) => {
      const c = b.dimensions[d]
      const allocated = c.inheritedFrom === undefined ? amount(d, c.allocated, b.currency) : `inherited from ${budgetName(c.inheritedFrom)}`
      return [
        `${b.scope === 'mission' ? 'Mission' : 'WorkItem'} ${b.id}`,
        DIMENSION_LABEL[d],
        allocated,
        amount(d, c.reserved, b.currency),
        amount(d, c.used, b.currency),
        amount(d, c.remaining, b.currency),
      ]
    }),
  )
  out.push(table(['budget', 'dimension', 'allocated', 'reserved', 'used', 'remaining'], rows))
  return out.join('\n')
}

/** The human-readable form of an {@link Inspection}: one block of tables per Group. */
export function inspectionText(inspection: Inspection): string {
  const agents = table(
    ['agent', 'card', 'status', 'session'],
    inspection.agents.map((a) => [a.agentId, `v${a.cardVersion}`, a.status, String(a.sessionEpoch)]),
  )
  const head = `Organization ${inspection.organizationId}: ${inspection.agents.length} Agents, ${inspection.groups.length} Groups\n${agents}`
  return `${[head, ...inspection.groups.map(groupText)].join('\n\n')}\n`
}

/**
 * `weft inspect --data DIR [--postgres URL [--pg-schema NAME]] [--group ID] [--last N] [--json] [--verify]` on its arguments.
 * With `--verify`, proves the log as `weft serve` does on start (`verify.ts`) and prints one line.
 * @returns 0 after printing; 1 when the log cannot be read; 2 for bad arguments, a directory
 * without an Organization or log, or an unknown Group; 3 when the log fails its proof or its file is damaged.
 */
export async function inspectCommand(args: readonly string[], io: { readonly stdout: (text: string) => void; readonly stderr: (text: string) => void }): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    allowPositionals: false,
    options: {
      data: { type: 'string' },
      group: { type: 'string' },
      last: { type: 'string' },
      json: { type: 'boolean' },
      postgres: { type: 'string' },
      'pg-schema': { type: 'string' },
      verify: { type: 'boolean' },
    },
  })
  try {
    if (values.data === undefined) throw new UsageError('--data DIR is required (inspect reads the organization.json of a weft serve data directory)')
    const last = values.last === undefined ? undefined : Number(values.last)
    if (last !== undefined && (!Number.isSafeInteger(last) || last < 0)) throw new UsageError(`--last must be a non-negative integer, got ${values.last}`)
    const postgres = postgresTarget(values.postgres, values['pg-schema'])
    if (values.verify === true) {
      const { verifyData, verificationText } = await import('./verify.js')
      io.stdout(verificationText(await verifyData(values.data, postgres === undefined ? {} : { postgres })))
      return 0
    }
    const inspection = await inspectData(values.data, {
      ...(values.group === undefined ? {} : { groupId: values.group }),
      ...(last === undefined ? {} : { lastEvents: last }),
      ...(postgres === undefined ? {} : { postgres }),
    })
    io.stdout(values.json === true ? `${JSON.stringify(inspection, null, 2)}\n` : inspectionText(inspection))
    return 0
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`weft inspect: ${error.message}\n`)
      return 2
    }
    // A tampered or damaged log (`--verify`, or a file SQLite cannot read): the one line of `weft serve`.
    if (error instanceof LogProofError) {
      io.stderr(`weft inspect: ${error.message}\n`)
      return LOG_PROOF_EXIT
    }
    // Anything else that failed (an unreachable database, an unreadable file) is one line too, never a stack trace.
    io.stderr(`weft inspect: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}\n`)
    return 1
  }
}
