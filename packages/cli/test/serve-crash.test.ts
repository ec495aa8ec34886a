/**
 * `kill -9` of `weft serve` in the middle of a load of Commands (§4, §15.1, §15.2, §16): the
 * store commits with `synchronous = FULL` before a receipt leaves, so after each kill every
 * acknowledged Command has its Events in the log exactly once, nothing was appended that no client
 * sent, sequences stay contiguous, and the restarted server continues from the fold of the log.
 *
 * `WEFT_CRASH_ROUNDS` (default 2) sets how many kill-and-restart rounds run.
 */
import type { Client } from '@weft/client'
import { ProtocolError } from '@weft/codec'
import type { EventPayload } from '@weft/spec'
import { afterAll, describe, expect, it } from 'vitest'
import { inspectData } from '../src/serve/inspect.js'
import { checkLog, dataDir, groupOf, openMission, party, postLoad, removeTemporaryDirs, startServe, stop, storedGroupLog, type Load, type Party, type ServeProcess } from './serve-world.js'

const ROUNDS = Number(process.env['WEFT_CRASH_ROUNDS'] ?? 2)
const GROUP = groupOf('crash')

let server: ServeProcess | undefined
const parties: Party[] = []

afterAll(async () => {
  await Promise.all(parties.map((p) => p.close()))
  if (server?.child.exitCode === null) await stop(server, 'SIGKILL')
  await removeTemporaryDirs()
})

/** The Main Conversation of the Group, from the stored `mission.created`. */
function conversationOf(dir: string): string {
  return (storedGroupLog(dir, GROUP)[0]!.payload as EventPayload<'mission.created'>).conversation.conversationId
}

describe('weft serve under kill -9', () => {
  it(`keeps every acknowledged Command exactly once across ${ROUNDS} kill-and-restart round(s)`, async () => {
    const dir = await dataDir()
    server = await startServe(dir)
    let p = party(server, GROUP)
    parties.push(p)
    await openMission(p, await p.connect('coordinator'), 'crash')
    const known = [...p.receipts]
    const loads: Load[] = []
    let worker: Client = await p.connect('worker1')

    for (let round = 0; round < ROUNDS; round++) {
      // A different point in the load each round.
      const killAfter = 30 + 17 * round
      let killed = false
      const running = server
      const load = await postLoad(worker, conversationOf(dir), (n) => {
        if (n < killAfter || killed) return
        killed = true
        running.child.kill('SIGKILL')
      })
      loads.push(load)
      expect(await running.exited).toEqual({ code: null, signal: 'SIGKILL' })
      expect(load.refused).toEqual(new Map())
      expect(load.acknowledged.size).toBeGreaterThanOrEqual(killAfter)
      const before = storedGroupLog(dir, GROUP)
      const landed = checkLog(before, [...known, ...loads.slice(0, -1).flatMap((l) => [...l.acknowledged.values()])], load)

      // The restarted server folds exactly the stored log.
      server = await startServe(dir)
      expect(server.log.find((l) => l.msg === 'store opened')).toMatchObject({ groups: 1, groupEvents: before.length })
      p = party(server, GROUP, before)
      parties.push(p)
      worker = await p.connect('worker1')
      // §15.1: an unchanged resend of an unanswered Command gets its original receipt if it landed;
      // one that did not land was built under the old Session Epoch and is fenced, appending nothing.
      for (const id of load.unanswered) {
        const built = load.sent.get(id)!
        const answer = await worker.resend(built).then(
          (receipt) => receipt,
          (error: unknown) => error as ProtocolError,
        )
        if (landed.has(id)) {
          expect(answer).toMatchObject({ duplicate: true, actionId: id })
          load.acknowledged.set(id, answer as never)
        } else {
          expect(answer).toBeInstanceOf(ProtocolError)
          expect((answer as ProtocolError).code).toBe('AUTH_STALE_SESSION')
        }
      }
      expect(storedGroupLog(dir, GROUP)).toHaveLength(before.length)
      // New Commands continue the log where the fold of it ends.
      const next = await worker.messagePost({ messageId: `urn:weft:serve-test:message:after-${round}`, conversationId: conversationOf(dir), content: [{ type: 'text', text: 'Back.' }] })
      expect(next.events.map((e) => e.sequence)).toEqual([before.length + 1])
      known.push(next)
    }

    expect(await stop(server, 'SIGTERM')).toEqual({ code: 0, signal: null })
    const log = storedGroupLog(dir, GROUP)
    const all: Load = { sent: new Map(), acknowledged: new Map(), unanswered: new Set(), refused: new Map() }
    for (const l of loads) {
      for (const [id, built] of l.sent) all.sent.set(id, built)
      for (const [id, receipt] of l.acknowledged) all.acknowledged.set(id, receipt)
      for (const id of l.unanswered) all.unanswered.add(id)
    }
    checkLog(log, known, all)
    // What inspect folds from the file is what the clients were told.
    const inspection = await inspectData(dir)
    expect(inspection.groups.map((g) => [g.groupId, g.head, g.events.length])).toEqual([[GROUP, log.length, log.length]])
    expect(inspection.groups[0]!.events.at(-1)).toMatchObject({ sequence: log.length, kind: 'message.posted' })
  })
})
