/**
 * Crash safety of a Worker's local state (§11.1, §16): a child process writes Events, side
 * effects, checkpoints and ACKs the way a running Worker does and prints each round after its
 * writes returned; it is killed with SIGKILL mid-stream. Reopened, the file must hold every printed
 * round (its Event, side effect and ACK), a contiguous log, and at most the one round the kill
 * interrupted after its writes besides. A restarted child continues the log from there.
 *
 * WEFT_CRASH_COMMITS sets how many printed rounds the test waits for before the kill (default 200).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSqliteWorkerStore } from '../src/index.js'
import { runUntilKilled } from './files.js'

const ROUNDS = Number(process.env['WEFT_CRASH_COMMITS'] ?? 200)
const GROUP = 'urn:weft:crash:group'

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'weft-worker-crash-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Runs the child on `file` until it printed `rounds` more lines, kills it, and returns the printed round numbers. */
async function writeUntilKilled(file: string, rounds: number): Promise<{ printed: number[]; signal: NodeJS.Signals | null; stderr: string }> {
  const { lines, signal, stderr } = await runUntilKilled('worker-crash-child.mjs', [file], rounds)
  return { printed: lines.map(Number), signal, stderr }
}

/** Everything a reopened store must hold for rounds 1..`through`, and that the log is contiguous. */
function expectDurable(file: string, through: number, interrupted?: number): number {
  const store = openSqliteWorkerStore(file)
  try {
    const cursor = store.cursor(GROUP)
    // Every printed round survived; at most the round interrupted after its writes is extra.
    expect(cursor).toBeGreaterThanOrEqual(through)
    expect(cursor).toBeLessThanOrEqual(through + 1)
    const events = store.events(GROUP)
    expect(events.map((e) => e.sequence)).toEqual(Array.from({ length: cursor }, (_, i) => i + 1))
    // A round cut between its Event and its side effect is not printed; the restarted writer moves on.
    for (let n = 1; n <= through; n++) if (n !== interrupted) expect(store.sideEffect(`sha256:${n.toString(16).padStart(64, '0')}`)).toEqual({ result: { round: n } })
    expect(store.acked(GROUP)).toBeGreaterThanOrEqual(through)
    expect(store.checkpoint('urn:weft:crash:work')?.ownershipEpoch).toBeGreaterThanOrEqual(through)
    return cursor
  } finally {
    store.close()
  }
}

describe('a Worker store killed with SIGKILL mid-write', () => {
  it('keeps every printed round and a contiguous log, and a restarted writer continues it', async () => {
    const file = join(dir, 'worker.db')
    const first = await writeUntilKilled(file, ROUNDS)
    expect(first.signal, first.stderr).toBe('SIGKILL')
    expect(first.printed.length).toBeGreaterThanOrEqual(ROUNDS)
    const cursor = expectDurable(file, first.printed.at(-1)!)

    const second = await writeUntilKilled(file, 20)
    expect(second.signal, second.stderr).toBe('SIGKILL')
    // The restarted writer continued right after what the file held, with no gap and no repeat.
    expect(second.printed[0]).toBe(cursor + 1)
    const interrupted = cursor > first.printed.at(-1)! ? cursor : undefined
    expectDurable(file, second.printed.at(-1)!, interrupted)
  }, 60_000)
})
