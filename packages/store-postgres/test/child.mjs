// An Authority process of the process tests: opens the shared log, posts `count` Messages to the
// test Group as the three Workers, and after each receipt writes `<actionId> <sequence>` to stdout.
// It writes `ready` once open and starts when a line arrives on stdin.
// The Message numbered `freezeAt` (if any) says "freeze-here", which a test trigger may hold.
// Run by processes.test.ts under tsx:
//   node --conditions=@weft/source --import tsx child.mjs <url> <schema> <tag> <count> [freezeAt]
import { writeSync } from 'node:fs'
import { createClient } from '@weft/client'
import { cast, GROUP, testClock, testRegistry } from '@weft/testkit/fixtures'
import { createPostgresAuthority } from '../src/index.ts'

const [url, schema, tag, count, freezeAt] = process.argv.slice(2)
const clock = testClock()
const authority = await createPostgresAuthority({
  url,
  schema,
  registry: testRegistry(),
  keys: { authority: { type: 'service', id: cast.authority.actor.id }, signingKey: cast.authority.key },
  clock: { now: () => clock.nowMs },
  policy: { controlPlane: [cast.controlPlane.actor.id] },
})
const transport = { submit: (_command, bytes) => authority.submit(bytes) }
const workers = ['worker1', 'worker2', 'worker3'].map((who) => {
  const client = createClient({ actor: cast[who].actor, signingKey: cast[who].key, transport, groupId: GROUP, clock: { now: () => clock.nowMs } })
  // The epochs the setup left, as a subscription would have delivered them.
  client.observe(authority.organizationEvents())
  client.observe(authority.events(GROUP))
  return client
})
const conversationId = authority.group(GROUP).group.mainConversationId
// A start barrier: the parent answers `ready` once every child is open, so their appends overlap.
writeSync(1, 'ready\n')
await new Promise((resolve) => process.stdin.once('data', resolve))
process.stdin.destroy()
for (let n = 1; n <= Number(count); n++) {
  const text = String(n) === freezeAt ? 'freeze-here' : `${tag} ${n}`
  const receipt = await workers[n % 3].messagePost({ messageId: `urn:weft:test:message:${tag}-${n}`, conversationId, content: [{ type: 'text', text }] })
  writeSync(1, `${receipt.actionId} ${receipt.events[0].sequence}\n`)
}
await authority.close()
