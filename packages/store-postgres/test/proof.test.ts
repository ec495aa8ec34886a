/**
 * The proof of a shared PostgreSQL log (`provePostgresLog`, §6.4, §15.2), run by every Authority
 * before it folds the log: rows edited by hand in the database (one letter of a Message, the member
 * of a `membership.changed` swapped for an outsider, a middle Event deleted, two Events swapped) are
 * refused naming the Group, the sequence and the check, and no Authority starts over them.
 */
import { LogProofError } from '@weft/authority'
import type { Event } from '@weft/spec'
import { afterEach, describe, expect, it } from 'vitest'
import { cast, GROUP, testRegistry } from '@weft/testkit/fixtures'
import { provePostgresLog } from '../src/index.js'
import { closeAll, openAuthority, pgUrl, post, rawClient, startedLog, testClock } from './pg-world.js'

afterEach(closeAll)

const authority = { type: 'service', id: cast.authority.actor.id } as const
const at = (sequence: number, check: string): string => `the log of group ${GROUP} fails its proof at sequence ${sequence}: ${check}`

/** A started log with three Messages: its Group's Events, and the sequences of the second Message and of worker-1's `membership.changed`. */
async function grownLog(): Promise<{ schema: string; events: readonly Event[]; message: number; membership: number; head: number }> {
  const { schema, authority: a, w } = await startedLog()
  for (let n = 1; n <= 3; n++) await post(w, 'worker1', n, `hello-${n}`)
  const events = a.events(GROUP)
  const message = events.find((e) => e.kind === 'message.posted' && JSON.stringify(e).includes('hello-2'))!.sequence!
  const membership = events.find((e) => e.kind === 'membership.changed' && JSON.stringify(e).includes(cast.worker1.actor.id))!.sequence!
  await a.close()
  return { schema, events, message, membership, head: events.length }
}

/** Runs `sql` on the log's tables with their triggers off, as someone with the database's owner rights would. */
async function tamper(schema: string, sql: string, values: unknown[] = []): Promise<void> {
  const db = await rawClient()
  try {
    const s = `"${schema}"`
    await db.query(`ALTER TABLE ${s}.events DISABLE TRIGGER USER`)
    await db.query(sql.replaceAll('$s', s), values)
    await db.query(`ALTER TABLE ${s}.events ENABLE TRIGGER USER`)
  } finally {
    await db.end()
  }
}

/** The proof of `schema` and a new Authority over it both fail with `message`. */
async function expectRefused(schema: string, message: string): Promise<void> {
  const proving = provePostgresLog({ url: pgUrl(), schema, registry: testRegistry(), authority })
  await expect(proving).rejects.toBeInstanceOf(LogProofError)
  await expect(proving).rejects.toThrow(message)
  await expect(openAuthority(schema, testClock())).rejects.toThrow(message)
}

describe('the proof of a shared PostgreSQL log', () => {
  it('passes an unmodified log, checking every signature, and an Authority opens it', async () => {
    const { schema, head } = await grownLog()
    const summary = await provePostgresLog({ url: pgUrl(), schema, registry: testRegistry(), authority })
    expect(summary).toMatchObject({ groups: 1, anchoredAt: 0, signatures: summary.events })
    expect(summary.heads.find((h) => h.groupId === GROUP)?.sequence).toBe(head)
    expect((await openAuthority(schema, testClock())).group(GROUP)?.head).toBe(head)
  })

  it('refuses a Message with one letter changed, and the member of a membership.changed swapped for an outsider', async () => {
    const { schema, message } = await grownLog()
    await tamper(schema, "UPDATE $s.events SET body = replace(body, 'hello-2', 'hallo-2') WHERE group_id = $1 AND sequence = $2", [GROUP, message])
    await expectRefused(schema, at(message, 'signature does not verify'))
    const other = await grownLog()
    await tamper(other.schema, 'UPDATE $s.events SET body = replace(body, $3, $4) WHERE group_id = $1 AND sequence = $2', [
      GROUP,
      other.membership,
      `"id":"${cast.worker1.actor.id}"`,
      '"id":"urn:weft:test:agent:outsider"',
    ])
    await expectRefused(other.schema, at(other.membership, 'signature does not verify'))
  })

  it('refuses a log with a middle Event deleted, or two Events swapped', async () => {
    const { schema, message } = await grownLog()
    await tamper(schema, 'DELETE FROM $s.events WHERE group_id = $1 AND sequence = $2', [GROUP, message])
    await expectRefused(schema, at(message, `the Event is missing (the next one stored is sequence ${message + 1})`))
    const other = await grownLog()
    // The two Events change places in acceptance order; each row keeps its Group sequence.
    await tamper(
      other.schema,
      `UPDATE $s.events e SET body = o.body FROM $s.events o
        WHERE e.group_id = $1 AND o.group_id = $1 AND ((e.sequence = $2 AND o.sequence = $2 + 1) OR (e.sequence = $2 + 1 AND o.sequence = $2))`,
      [GROUP, other.message],
    )
    const next = other.events[other.message]!
    await expectRefused(other.schema, at(other.message, `the row holds Event ${next.eventId} of group ${GROUP} at sequence ${other.message + 1}`))
  })

  it('lets an Authority open a tampered log only when told to trust the database', async () => {
    const { schema, message } = await grownLog()
    await tamper(schema, "UPDATE $s.events SET body = replace(body, 'hello-2', 'hallo-2') WHERE group_id = $1 AND sequence = $2", [GROUP, message])
    const trusting = await openAuthority(schema, testClock(), { verifyLog: false })
    expect(JSON.stringify(trusting.events(GROUP, message - 1)[0])).toContain('hallo-2')
  })
})
