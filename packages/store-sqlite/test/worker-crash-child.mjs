// The process worker-crash.test.ts kills: a Worker's local state on SQLite, written as a running
// Worker writes it. Each round appends one Group Event (continuing the log), records one side
// effect, stores a checkpoint and records an ACK, then prints the round number once all four
// returned. Run under tsx:
//   node --conditions=@weft/source --import tsx worker-crash-child.mjs <db>
import { writeSync } from 'node:fs'
import { openSqliteWorkerStore } from '../src/index.ts'

const [path] = process.argv.slice(2)
const store = openSqliteWorkerStore(path)
const GROUP = 'urn:weft:crash:group'
const at = '2026-07-15T00:00:00Z'

for (let n = store.cursor(GROUP) + 1; ; n++) {
  const event = {
    protocolVersion: '0.1',
    eventId: `urn:weft:crash:worker-event:${n}`,
    kind: 'message.posted',
    groupId: GROUP,
    sequence: n,
    aggregateType: 'conversation',
    aggregateId: 'urn:weft:crash:conversation',
    aggregateRevision: n,
    acceptedAt: at,
    acceptedBy: { type: 'service', id: 'urn:weft:crash:authority' },
    actor: { type: 'agent', id: 'urn:weft:crash:agent' },
    cause: { type: 'command', id: `urn:weft:crash:action:${n}` },
    payload: { n },
    signature: { algorithm: 'Ed25519', keyId: 'urn:weft:crash:key', value: 'AA' },
  }
  store.appendEvents(GROUP, [event])
  store.recordSideEffect(`sha256:${n.toString(16).padStart(64, '0')}`, { round: n })
  store.putCheckpoint('urn:weft:crash:work', n, { step: n })
  store.setAcked(GROUP, n)
  // A synchronous write: once the parent reads the line, every write of the round had returned.
  writeSync(1, `${n}\n`)
}
