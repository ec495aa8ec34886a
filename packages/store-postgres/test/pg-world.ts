/**
 * The Authority test world of `@weft/authority` over PostgreSQL Authorities: the same cast, keys,
 * Registry, clock and steps (`boot`, `openMission`, `reach`, ...), with each view's clients
 * speaking to one {@link PostgresAuthority}. Views made with one {@link Audience} show every
 * receipt to every client, as a subscription would, whichever Authority answered it.
 */
import type { Client, Receipt } from '@weft/client'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { inject } from 'vitest'
import { cast, GROUP, testClock, testRegistry, type TestClock } from '@weft/testkit/fixtures'
import { boot, enrol, MEMBERS, openMission, worldOver, type World } from '@weft/testkit/world'
import { createPostgresAuthority, type PostgresAuthority, type PostgresAuthorityOptions } from '../src/index.js'
export { until } from './pg-server.js'

/** The URL of the test server (see `global-setup.ts`). */
export const pgUrl = (): string => inject('pgUrl')

/** A schema name no other test uses: each test gets an empty log. */
export function freshSchema(): string {
  return `t_${randomBytes(6).toString('hex')}`
}

/** A raw connection to the test database, for checks and hand-written SQL. */
export async function rawClient(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: pgUrl() })
  await client.connect()
  return client
}

const opened: PostgresAuthority[] = []

/** Closes every Authority {@link openAuthority} opened (an `afterEach` of the test files). */
export async function closeAll(): Promise<void> {
  await Promise.all(opened.splice(0).map((a) => a.close()))
}

/**
 * An Authority of the test Organization (the cast's Authority key, `clock`, the cast control plane)
 * on `schema`; `options` override the defaults (`url`, `listen`, `log`, ...).
 */
export async function openAuthority(schema: string, clock: TestClock, options: Partial<PostgresAuthorityOptions> = {}): Promise<PostgresAuthority> {
  const authority = await createPostgresAuthority({
    url: pgUrl(),
    schema,
    registry: testRegistry(),
    keys: { authority: { type: 'service', id: cast.authority.actor.id }, signingKey: cast.authority.key },
    clock: { now: () => clock.nowMs },
    policy: { controlPlane: [cast.controlPlane.actor.id] },
    ...options,
  })
  opened.push(authority)
  return authority
}

/** A fresh log with the Organization booted, the Mission of {@link GROUP} open and its members enrolled. */
export async function startedLog(): Promise<{ clock: TestClock; schema: string; authority: PostgresAuthority; w: World }> {
  const clock = testClock()
  const schema = freshSchema()
  const authority = await openAuthority(schema, clock)
  const w = pgWorld(authority, clock)
  await boot(w)
  await openMission(w)
  await enrol(w, MEMBERS)
  return { clock, schema, authority, w }
}

/**
 * Two Authorities on a fresh log (`b` opened with `bOptions`), the Organization booted, the Mission
 * of {@link GROUP} open and its members enrolled through `a`, with a world each sharing one audience.
 */
export async function twoAuthorities(
  bOptions: Partial<PostgresAuthorityOptions> = {},
): Promise<{ clock: TestClock; schema: string; a: PostgresAuthority; b: PostgresAuthority; wa: World; wb: World }> {
  const clock = testClock()
  const schema = freshSchema()
  const a = await openAuthority(schema, clock)
  const b = await openAuthority(schema, clock, bOptions)
  const audience: Audience = []
  const wa = pgWorld(a, clock, audience, 'a')
  const wb = pgWorld(b, clock, audience, 'b')
  await boot(wa)
  await openMission(wa)
  await enrol(wa, MEMBERS)
  return { clock, schema, a, b, wa, wb }
}

/** The clients that see every receipt of a set of views. */
export type Audience = Client[]

/**
 * A test {@link World} whose clients submit to `authority`; `audience` (shared between views of
 * several Authorities) sees every receipt. `tag` keeps the view's fresh names apart from another's.
 */
export function pgWorld(authority: PostgresAuthority, clock: TestClock, audience: Audience = [], tag = 'a'): World {
  return worldOver({ authority, clock, registry: testRegistry(), submit: (_command, bytes) => authority.submit(bytes), audience, tag })
}

export { testClock }

/**
 * The log's laws read back from the database (§15.1, §15.2): transactions numbered 1..n, every
 * Group's sequences 1..head, every receipt holding exactly its Events, and no Event twice.
 */
export async function logShape(schema: string): Promise<{ transactions: number; events: number; groups: Record<string, [number, number, number]>; orphans: number; duplicates: number }> {
  const db = await rawClient()
  try {
    const s = `"${schema}"`
    const one = async (text: string): Promise<Record<string, unknown>> => (await db.query(text)).rows[0] as Record<string, unknown>
    const txn = await one(`SELECT count(*)::int AS n, coalesce(max(txn), 0)::int AS top, coalesce(sum(event_count), 0)::int AS events FROM ${s}.receipts`)
    if (txn['n'] !== txn['top']) throw new Error(`transactions are not numbered 1..n: ${JSON.stringify(txn)}`)
    const events = await one(`SELECT count(*)::int AS n, count(DISTINCT event_id)::int AS distinct FROM ${s}.events`)
    if (events['n'] !== txn['events']) throw new Error(`receipts name ${String(txn['events'])} Events, the log holds ${String(events['n'])}`)
    const orphans = await one(`SELECT count(*)::int AS n FROM ${s}.events e LEFT JOIN ${s}.receipts r ON r.txn = e.txn WHERE r.txn IS NULL`)
    const rows = (await db.query(`SELECT group_id, count(*)::int AS n, min(sequence)::int AS lo, max(sequence)::int AS hi FROM ${s}.events WHERE group_id IS NOT NULL GROUP BY group_id`)).rows as {
      group_id: string
      n: number
      lo: number
      hi: number
    }[]
    return {
      transactions: txn['n'] as number,
      events: events['n'] as number,
      groups: Object.fromEntries(rows.map((r) => [r.group_id, [r.n, r.lo, r.hi]])),
      orphans: orphans['n'] as number,
      duplicates: (events['n'] as number) - (events['distinct'] as number),
    }
  } finally {
    await db.end()
  }
}

/** Every Group in `shape` runs 1..count: no gap, no fork. */
export function contiguous(shape: Awaited<ReturnType<typeof logShape>>): boolean {
  return Object.values(shape.groups).every(([n, lo, hi]) => lo === 1 && hi === n)
}

/** Worker `who` of `w` posts Message number `n` in the Group's Main Conversation. */
export function post(w: World, who: 'worker1' | 'worker2' | 'worker3', n: number, text = `message ${n}`): Promise<Receipt> {
  return w.as[who].messagePost({ messageId: `urn:weft:test:message:${w.fresh('m')}-${n}`, conversationId: w.group().group.mainConversationId, content: [{ type: 'text', text }] })
}
