// The process the crash test kills: appends transactions to a SQLite Authority store as fast as it
// can and, after each append returns, writes the transaction's Action ID to stdout. Each
// transaction is a template from a real Authority run under fresh Event and Action IDs, with its
// Group Events renumbered to continue their Group. Run by crash.test.ts under tsx:
//   node --conditions=@weft/source --import tsx crash-child.mjs <db> <templates.json> <synchronous>
import { readFileSync, writeSync } from 'node:fs'
import { openSqliteAuthorityStore } from '../src/index.ts'

const [path, templatesPath, synchronous] = process.argv.slice(2)
const templates = JSON.parse(readFileSync(templatesPath, 'utf8'))
const store = openSqliteAuthorityStore(path, { synchronous })
const heads = new Map()

for (let n = 1; ; n++) {
  const template = templates[n % templates.length]
  const events = template.events.map((event, i) => {
    const copy = { ...event, eventId: `urn:weft:crash:event:${n}:${i}` }
    if (event.groupId !== undefined) {
      copy.sequence = (heads.get(event.groupId) ?? 0) + 1
      heads.set(event.groupId, copy.sequence)
    }
    return copy
  })
  const actionId = `urn:weft:crash:action:${n}`
  store.appendTransaction(events, { ...template.receipt, actionId })
  // A synchronous write: once the parent reads the line, the append had returned.
  writeSync(1, `${actionId} ${events.length}\n`)
}
