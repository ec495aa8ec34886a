/**
 * Authority processes as operating-system processes on one log: two children racing appends to
 * one Group, and a child killed with SIGKILL in the middle of a transaction (§15.1: a Command's
 * Events and receipt are committed together or not at all; §15.2: no gap, no fork).
 *
 * WEFT_PG_PROCESS_COMMANDS sets how many Messages each racing child posts (default 40).
 */
import { spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { GROUP } from '@weft/testkit/fixtures'
import { closeAll, contiguous, logShape, openAuthority, pgUrl, rawClient, startedLog, testClock, until } from './pg-world.js'

const COMMANDS = Number(process.env['WEFT_PG_PROCESS_COMMANDS'] ?? 40)
const here = dirname(fileURLToPath(import.meta.url))
/** The application name of the children's connections, to find their backends in `pg_stat_activity`. */
const CHILD_APP = 'weft-test-child'

interface Run {
  readonly lines: string[]
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stderr: string
}

/** A started child Authority process: `ready` resolves once it opened the log, `go()` lets it append. */
interface Child {
  readonly ready: Promise<void>
  readonly done: Promise<Run>
  go(): void
  kill(): void
}

/** Starts a child Authority process posting `count` Messages (see `child.mjs`). */
function child(schema: string, tag: string, count: number, freezeAt?: number): Child {
  const url = `${pgUrl()}${pgUrl().includes('?') ? '&' : '?'}application_name=${CHILD_APP}`
  const args = ['--conditions=@weft/source', '--import', 'tsx', join(here, 'child.mjs'), url, schema, tag, String(count), ...(freezeAt === undefined ? [] : [String(freezeAt)])]
  const proc = spawn(process.execPath, args, { cwd: join(here, '..'), stdio: ['pipe', 'pipe', 'pipe'] })
  let out = ''
  let stderr = ''
  let opened = (): void => {}
  const ready = new Promise<void>((resolve) => (opened = resolve))
  proc.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk
    if (out.startsWith('ready\n')) opened()
  })
  proc.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const done = new Promise<Run>((resolve) =>
    proc.on('close', (code, signal) => {
      opened()
      resolve({ lines: out.split('\n').filter((l) => l !== '' && l !== 'ready'), code, signal, stderr })
    }),
  )
  return { ready, done, go: () => proc.stdin.end('go\n'), kill: () => proc.kill('SIGKILL') }
}

/** Starts `children` together once all are open, and waits for them to end. */
async function race(...children: Child[]): Promise<Run[]> {
  await Promise.all(children.map((c) => c.ready))
  for (const c of children) c.go()
  return Promise.all(children.map((c) => c.done))
}

afterEach(closeAll)

describe('Authority processes on one PostgreSQL log', () => {
  it('two processes racing appends to one Group leave one contiguous log holding every receipt once', async () => {
    const { schema, authority } = await startedLog()
    const head = authority.group(GROUP)!.head
    const runs = await race(child(schema, 'p1', COMMANDS), child(schema, 'p2', COMMANDS))
    for (const run of runs) expect({ code: run.code, stderr: run.stderr, lines: run.lines.length }).toEqual({ code: 0, stderr: '', lines: COMMANDS })

    await authority.catchUp()
    const log = authority.events(GROUP)
    expect(log).toHaveLength(head + 2 * COMMANDS)
    const sequenceOf = new Map(log.map((e) => [(e.cause as { id: string }).id, e.sequence]))
    const printed = runs.flatMap((run) => run.lines.map((line) => line.split(' ') as [string, string]))
    expect(printed.filter(([actionId, sequence]) => sequenceOf.get(actionId) !== Number(sequence))).toEqual([])
    // Both processes wrote while the other did: their receipts interleave in the Group's order.
    const byFirst = new Set(runs[0]!.lines.map((l) => l.split(' ')[0]))
    const order = log.slice(head).map((e) => byFirst.has((e.cause as { id: string }).id))
    expect(order.filter((mine, i) => i > 0 && mine !== order[i - 1]).length).toBeGreaterThan(1)

    const shape = await logShape(schema)
    expect(contiguous(shape)).toBe(true)
    expect(shape).toMatchObject({ transactions: authority.position, orphans: 0, duplicates: 0 })
    const restarted = await openAuthority(schema, testClock())
    expect(restarted.state).toEqual(authority.state)
  })

  it('a process killed with SIGKILL mid-transaction leaves nothing of it, and the log goes on', async () => {
    const { schema, authority } = await startedLog()
    const s = `"${schema}"`
    const db = await rawClient()
    try {
      // A test trigger holds the Events insert of the "freeze-here" Message on an advisory lock this test owns.
      await db.query(`CREATE FUNCTION ${s}.hold() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        IF position('freeze-here' in NEW.body) > 0 THEN PERFORM pg_advisory_xact_lock_shared(4242); END IF; RETURN NEW; END $$;
        CREATE TRIGGER hold BEFORE INSERT ON ${s}.events FOR EACH ROW EXECUTE FUNCTION ${s}.hold();`)
      await db.query('SELECT pg_advisory_lock(4242)')
      const run = child(schema, 'k', 5, 4)
      await run.ready
      run.go()
      // The child's backend waits inside its transaction: its receipt row is written, its Events insert is running.
      await until(
        async () => (await db.query(`SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO ${s}.events%'`, [CHILD_APP])).rowCount === 1,
      )
      run.kill()
      const { lines, signal } = await run.done
      expect(signal).toBe('SIGKILL')
      expect(lines).toHaveLength(3)
      await db.query('SELECT pg_advisory_unlock(4242)')
      // The server ends the orphaned backend when it finds its client gone, rolling its transaction back.
      await until(async () => (await db.query('SELECT 1 FROM pg_stat_activity WHERE application_name = $1', [CHILD_APP])).rowCount === 0)

      const shape = await logShape(schema)
      expect(contiguous(shape)).toBe(true)
      expect(shape).toMatchObject({ orphans: 0, duplicates: 0 })
      expect((await db.query(`SELECT count(*)::int AS n FROM ${s}.events WHERE position('freeze-here' in body) > 0`)).rows[0]).toEqual({ n: 0 })
      await authority.catchUp()
      expect(shape.transactions).toBe(authority.position)
      expect(
        authority
          .events(GROUP)
          .slice(-3)
          .map((e) => (e.cause as { id: string }).id),
      ).toEqual(lines.map((l) => l.split(' ')[0]))
    } finally {
      await db.end()
    }
    // Nothing is left locked: the next process appends right after the last committed transaction.
    const head = authority.group(GROUP)!.head
    const [next] = await race(child(schema, 'after', 1))
    expect({ code: next!.code, stderr: next!.stderr }).toEqual({ code: 0, stderr: '' })
    expect(Number(next!.lines[0]!.split(' ')[1])).toBe(head + 1)
  })
})
