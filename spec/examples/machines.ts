// The README's statechart example of @weft/spec, run by the release check (tools/release-check).
import assert from 'node:assert/strict'

// Record what the README block prints, so the checks below can hold it to its comments.
const printed: unknown[][] = []
const print = console.log
console.log = (...args: unknown[]) => {
  printed.push(args)
  print(...args)
}

import { transition } from 'xstate'
import { WORK_ITEM_TRANSITIONS, workItemMachine } from '@weft/spec/machines'

// The rows: which transitions leave `blocked`?
for (const row of WORK_ITEM_TRANSITIONS.filter((r) => r.from === 'blocked')) {
  console.log(`${row.event} -> ${row.to}`, row.guard ?? '', row.emits, row.section)
}

// The machine: guards read a flag the authority computes and puts on the event.
const blocked = workItemMachine.resolveState({ value: 'blocked', context: {} })
const [next] = transition(workItemMachine, blocked, { type: 'work.unblock', ownershipLive: true })
console.log(next.value) // 'queued'; without `ownershipLive` it would be 'open'
console.log(blocked.can({ type: 'work.submit' })) // false: §10.2 has no such row

console.log = print

// One printed line per row leaving `blocked`, in table order, and the rows include both guarded
// `work.unblock` outcomes the comment relies on.
const fromBlocked = WORK_ITEM_TRANSITIONS.filter((r) => r.from === 'blocked')
assert.ok(fromBlocked.length > 0)
assert.deepEqual(
  printed.slice(0, fromBlocked.length).map((line) => line[0]),
  fromBlocked.map((r) => `${r.event} -> ${r.to}`),
)
assert.ok(fromBlocked.some((r) => r.event === 'work.unblock' && r.to === 'queued' && r.guard === 'ownershipLive'))
assert.ok(fromBlocked.some((r) => r.event === 'work.unblock' && r.to === 'open' && r.guard === undefined))
for (const row of fromBlocked) assert.match(row.section, /^§\d+(\.\d+)*$/)

// `// 'queued'`, and `'open'` without the flag.
assert.equal(next.value, 'queued')
assert.deepEqual(printed[fromBlocked.length], ['queued'])
const [withoutFlag] = transition(workItemMachine, blocked, { type: 'work.unblock' })
assert.equal(withoutFlag.value, 'open')

// `// false: §10.2 has no such row`
assert.deepEqual(printed[fromBlocked.length + 1], [false])
assert.ok(!fromBlocked.some((r) => r.event === 'work.submit'))
// ...while a Command that does have a row from `blocked` is accepted.
assert.equal(blocked.can({ type: 'work.unblock' }), true)
assert.equal(printed.length, fromBlocked.length + 2)
