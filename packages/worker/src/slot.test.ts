import { canonicalizeOrThrow, keyPairFromSeed, ProtocolError, sha256Tagged } from '@weft/codec'
import type { BuiltCommand, Receipt } from '@weft/client'
import type { Command } from '@weft/spec'
import { CAPABILITY, contract } from '@weft/testkit/work-contract'
import { describe, expect, it } from 'vitest'
import { createMemoryWorkerStore } from './memory-store.js'
import { contractEvent } from './store-contract.js'
import { BOUNDED_OFFLINE_EXECUTION, createOfflineBuffer } from './offline.js'
import { ExecutorFailure } from './retry.js'
import { Preempted, PreemptionRequested, type ExecutorFn, type SlotContext } from './executor.js'
import { createSlot, type Slot } from './slot.js'
import type { SlotHost, SlotWork } from './slot-host.js'

const T0 = Date.parse('2026-07-15T00:00:00.000Z')
const iso = (ms: number) => new Date(ms).toISOString()

const CONTRACT = contract()

function work(id = 'a'): SlotWork {
  return {
    workItemId: `urn:weft:test:work:${id}`,
    groupId: 'urn:weft:test:group:one',
    missionId: 'urn:weft:test:mission:one',
    ownershipEpoch: 1,
    contract: CONTRACT,
    dependencyIds: [],
    agentCardVersion: 1,
    capabilityPins: [CAPABILITY],
  }
}

/**
 * A host whose "Authority" answers every Command, issues leases on start and renewal, and can be cut
 * off, lose its replies, or refuse a kind. Like the real one, it refuses a Command issued over 300 s
 * ago (before idempotency), answers a repeated Action ID with its first receipt, refuses a Command
 * that cites a lease other than the current one, and releases the lease on a checkpoint, block or
 * submission.
 */
function fakeHost() {
  const store = createMemoryWorkerStore()
  const offline = createOfflineBuffer({ store, graceSeconds: 300 })
  const sent: Command[] = []
  const answered = new Map<string, Receipt>()
  const refusals = new Map<string, ProtocolError>()
  let ids = 0
  let leases = 0
  let lease = ''
  // `up: false`: nothing arrives; `dropReplies`: Commands arrive and are applied, their answers are
  // lost; `dropRepliesTo`: the next answer to each of these kinds only.
  const link = { up: true, dropReplies: false, dropRepliesTo: new Set<string>() }
  const clock = { now: T0 }
  const newId = () => `urn:uuid:00000000-0000-4000-8000-${(++ids).toString(16).padStart(12, '0')}`
  const receiptOf = (command: Command): Receipt => {
    const kind = command.kind
    const leased = kind === 'work.start' || kind === 'ext.missionweaveprotocol.core.work_execution_lease_renew'
    if (kind === 'work.start') lease = `urn:weft:test:lease:${++leases}`
    const events = leased
      ? [
          {
            kind: kind === 'work.start' ? 'work.started' : 'work.progressed',
            payload: { executionLease: { leaseId: lease, sessionEpoch: 1, issuedAt: iso(clock.now) }, executionLeaseExpiresAt: iso(clock.now + 600_000) },
          },
        ]
      : []
    return { actionId: command.actionId, kind, events } as unknown as Receipt
  }
  const host: SlotHost = {
    actor: { type: 'agent', id: 'urn:weft:test:agent:worker-1' },
    signingKey: { keyId: 'urn:weft:test:key:worker-1', pair: keyPairFromSeed(new Uint8Array(32).fill(3)) },
    store,
    offline,
    timing: { leaseSeconds: 600, resumeWithinSeconds: 3600, blockedLeaseSeconds: 3600, baseRetryDelayMs: 1000 },
    blobs: undefined,
    artifactUri: (hash) => `urn:weft:blob:${hash.slice(7)}`,
    tokenFor: (scope) => ({ ...scope }),
    now: () => clock.now,
    newId,
    build: (kind, payload, options = {}) => {
      const command = {
        kind,
        payload,
        actionId: options.actionId ?? newId(),
        groupId: options.groupId,
        issuedAt: iso(clock.now),
        ...(options.extensions === undefined ? {} : { extensions: options.extensions }),
      }
      return { command, bytes: JSON.stringify(command) } as unknown as BuiltCommand<typeof kind>
    },
    submit: async (built) => {
      if (!link.up) {
        offline.markDisconnected(clock.now)
        throw new Error('ECONNREFUSED')
      }
      const command = built.command as Command & { payload: Record<string, unknown> }
      if (clock.now - Date.parse(command.issuedAt) > 300_000) throw new ProtocolError('AUTH_INVALID_SIGNATURE', 'stale')
      let receipt = answered.get(command.actionId)
      if (receipt === undefined) {
        const refusal = refusals.get(command.kind)
        if (refusal !== undefined) throw refusal
        const cited = command.payload['executionLeaseId']
        if (cited !== undefined && cited !== lease) throw new ProtocolError('WORK_LEASE_EXPIRED', 'not the current lease')
        // §10.2: a checkpoint, block or submission releases the lease.
        if (command.kind === 'work.checkpoint' || command.kind === 'work.block' || command.kind === 'work.submit') lease = ''
        sent.push(command)
        receipt = receiptOf(command)
        answered.set(command.actionId, receipt)
      }
      if (link.dropReplies || link.dropRepliesTo.delete(command.kind)) {
        offline.markDisconnected(clock.now)
        throw new Error('ECONNRESET')
      }
      return receipt
    },
    expectedDurationMs: () => 60_000,
  }
  /** The usage the "Authority" charged: the deltas of the usage records it applied and of the offline bindings (§11.5), nonzero dimensions. */
  const charged = () => {
    const total: Record<string, number> = {}
    const add = (delta: Record<string, number>) => {
      for (const [k, v] of Object.entries(delta)) if (v !== 0) total[k] = (total[k] ?? 0) + v
    }
    for (const c of sent) {
      if (c.kind === USAGE) add((c.payload as { usageDelta: Record<string, number> }).usageDelta)
      const binding = c.extensions?.[BOUNDED_OFFLINE_EXECUTION] as { data: { usageDelta: Record<string, number> } } | undefined
      if (binding !== undefined) add(binding.data.usageDelta)
    }
    return total
  }
  return { host, store, offline, sent, answered, refusals, link, clock, charged, kinds: () => sent.map((c) => c.kind) }
}

const USAGE = 'ext.missionweaveprotocol.core.resource_usage_record'

/**
 * Brings `f`'s link back and reconnects `slot` as the Worker does: the buffered Commands first, then
 * the slot, told whether a buffered checkpoint of it was applied.
 */
async function reconnect(f: ReturnType<typeof fakeHost>, slot: Slot) {
  f.link.up = true
  f.link.dropReplies = false
  const report = await f.offline.reconcile(async (c) => f.host.submit({ command: c, bytes: JSON.stringify(c) } as unknown as BuiltCommand))
  expect(report.complete).toBe(true)
  await slot.reconnected(report.accepted.some((a) => a.entry.kind === 'work.checkpoint'))
}

/** A slot of WorkItem `id` started on a fresh fake host. */
async function started(id = 'a') {
  const f = fakeHost()
  const slot = createSlot(f.host, work(id))
  await slot.start()
  return { f, slot }
}

/** A promise the test resolves by hand. */
function gate(): { readonly promise: Promise<void>; readonly open: () => void } {
  let open!: () => void
  const promise = new Promise<void>((resolve) => (open = resolve))
  return { promise, open }
}

const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve))
}

/** A result the slot can submit. */
async function finish(ctx: SlotContext) {
  const artifact = await ctx.publishArtifact('diff', { mediaType: 'text/x-diff' })
  return { artifacts: [artifact], evidence: [ctx.evidence({ type: 'deterministic_test', criterionIds: ['tests-pass'], method: 'npm test', result: 'passed', artifactHashes: [artifact.contentHash] })] }
}

describe('a slot online', () => {
  it('starts, checkpoints (then starts again under a new lease), publishes and submits', async () => {
    const { f, slot } = await started()
    const first = slot.lease?.leaseId
    const outcome = await slot.run(async (_item, ctx) => {
      await ctx.checkpoint({ step: 1 }, { phase: 'build' })
      return finish(ctx)
    })
    expect(outcome).toEqual({ kind: 'submitted' })
    expect(f.kinds()).toEqual(['work.start', 'work.checkpoint', 'work.start', 'artifact.publish', 'work.submit'])
    const checkpoint = f.sent[1]!.payload as { executionLeaseId: string; checkpoint: { stateArtifactHash: string; phase: string } }
    expect(checkpoint.executionLeaseId).toBe(first)
    // §11.3: the hash names the canonical stored state, attempt counter included.
    expect(checkpoint.checkpoint.stateArtifactHash).toBe(sha256Tagged(canonicalizeOrThrow({ attempt: 1, state: { step: 1 } })))
    expect(f.store.checkpoint(work().workItemId)).toEqual({ ownershipEpoch: 1, state: { attempt: 1, state: { step: 1 } } })
    const submit = f.sent[4]!.payload as { executionLeaseId: string; evidence: { generatedBy: { id: string }; signature: object }[] }
    expect(submit.executionLeaseId).not.toBe(first)
    expect(submit.evidence[0]).toMatchObject({ generatedBy: { id: f.host.actor.id }, signature: { algorithm: 'Ed25519' } })
  })

  it('runs a side effect once per key, concurrently or again, and keys per attempt on request', async () => {
    const { f, slot } = await started()
    const calls: string[] = []
    let keys: string[] = []
    await slot.run(async (_item, ctx) => {
      const fn = async (key: string) => (calls.push(key), { n: calls.length })
      const results = await Promise.all([ctx.sideEffect('deploy', fn), ctx.sideEffect('deploy', fn)])
      expect(results).toEqual([{ n: 1 }, { n: 1 }])
      expect(await ctx.sideEffect('deploy', fn)).toEqual({ n: 1 })
      await ctx.sideEffect('deploy', fn, { perAttempt: true })
      keys = [ctx.sideEffectKey('deploy'), calls[1]!]
      return finish(ctx)
    })
    expect(calls).toHaveLength(2)
    expect(keys[0]).toBe(calls[0])
    expect(keys[1]).not.toBe(keys[0])
    expect(f.store.sideEffect(calls[0]!)).toEqual({ result: { n: 1 } })
  })

  it('gives each run a frozen snapshot of its own and a token bound to its lease', async () => {
    const f = fakeHost()
    const contexts: SlotContext[] = []
    const executor: ExecutorFn = async (_item, ctx) => (contexts.push(ctx), finish(ctx))
    for (const id of ['a', 'b']) {
      const slot = createSlot(f.host, work(id))
      await slot.start()
      await slot.run(executor)
    }
    const [a, b] = contexts as [SlotContext, SlotContext]
    expect(a.item).not.toBe(b.item)
    expect(Object.isFrozen(a.item.contract.retryPolicy)).toBe(true)
    expect(a.item.contract).not.toBe(CONTRACT)
    expect(a.sideEffectKey('x')).not.toBe(b.sideEffectKey('x'))
  })
})

describe('a slot losing its lease (§11.3)', () => {
  it('loses the lease when a renewal is refused: signal raised, no further side effect', async () => {
    const { f, slot } = await started()
    const held = gate()
    const calls: string[] = []
    const run = slot.run(async (_item, ctx) => {
      await held.promise
      expect(ctx.signal.aborted).toBe(true)
      await ctx.sideEffect('late', (k) => calls.push(k))
      return finish(ctx)
    })
    f.refusals.set('ext.missionweaveprotocol.core.work_execution_lease_renew', new ProtocolError('WORK_LEASE_EXPIRED', 'expired'))
    f.clock.now += 300_000
    await slot.renewIfDue(f.clock.now)
    held.open()
    expect(await run).toMatchObject({ kind: 'lost', error: { code: 'WORK_LEASE_EXPIRED' } })
    expect(calls).toEqual([])
  })

  it('does not renew before half the lease has passed', async () => {
    const { f, slot } = await started()
    f.clock.now += 299_000
    await slot.renewIfDue(f.clock.now)
    f.clock.now += 1000
    await slot.renewIfDue(f.clock.now)
    expect(f.kinds()).toEqual(['work.start', 'ext.missionweaveprotocol.core.work_execution_lease_renew'])
  })
})

describe('answers lost with the link (§19)', () => {
  /** The Event of `command` as the Worker's feed stores it: its first receipt's, caused by its Action ID. */
  function logged(f: ReturnType<typeof fakeHost>, command: Command, sequence: number) {
    const [event] = f.answered.get(command.actionId)!.events
    f.store.appendEvents(work().groupId, [{ ...contractEvent(work().groupId, sequence), kind: event!.kind, payload: event!.payload, cause: { type: 'command', id: command.actionId } }])
  }

  it('sends a start whose answer was lost again, unchanged, and takes the lease it names', async () => {
    const f = fakeHost()
    const slot = createSlot(f.host, work())
    f.link.dropReplies = true
    await expect(slot.start()).rejects.toThrow(/ECONNRESET/)
    expect(slot.lease).toBeUndefined()
    f.link.dropReplies = false
    await slot.start()
    expect(f.kinds()).toEqual(['work.start'])
    expect(slot.lease?.leaseId).toBe('urn:weft:test:lease:1')
  })

  for (const [name, laterMs, leases] of [
    ['past the freshness window, takes the lease from the log while it lasts', 400_000, ['urn:weft:test:lease:1', 1]],
    ['past the lease too, starts anew', 700_000, ['urn:weft:test:lease:2', 2]],
  ] as const) {
    it(`of a start whose answer was lost, ${name}`, async () => {
      const f = fakeHost()
      const slot = createSlot(f.host, work())
      f.link.dropReplies = true
      await expect(slot.start()).rejects.toThrow(/ECONNRESET/)
      f.link.dropReplies = false
      logged(f, f.sent[0]!, 1)
      f.clock.now += laterMs
      await slot.start()
      expect(slot.lease?.leaseId).toBe(leases[0])
      expect(f.kinds()).toHaveLength(leases[1])
    })
  }

  for (const [lost, name] of [
    ['work.checkpoint', 'learns on reconnection that a checkpoint whose answer was lost released the lease (its buffered copy refused), and starts a new one'],
    ['work.start', 'after a checkpoint, waits for reconnection when the new start loses its answer, then goes on under that start'],
  ] as const) {
    it(name, async () => {
      const { f, slot } = await started()
      f.link.dropRepliesTo.add(lost)
      const run = slot.run(async (_item, ctx) => {
        await ctx.checkpoint({ step: 1 })
        return finish(ctx)
      })
      await settle()
      expect(f.offline.offline).toBe(true)
      await reconnect(f, slot)
      expect(await run).toEqual({ kind: 'submitted' })
      expect(f.kinds()).toEqual(['work.start', 'work.checkpoint', 'work.start', 'artifact.publish', 'work.submit'])
    })
  }

  it('learns on reconnection that a renewal whose answer was lost extended the lease, and sends its progress once', async () => {
    const { f, slot } = await started()
    f.clock.now += 350_000
    f.link.dropRepliesTo.add(RENEW)
    const run = slot.run(async (_item, ctx) => {
      await ctx.progress({ phase: 'halfway' })
      return finish(ctx)
    })
    await settle()
    // Past the first expiry (600 s), within the renewed one and the freshness window.
    f.clock.now += 270_000
    await reconnect(f, slot)
    expect(await run).toEqual({ kind: 'submitted' })
    expect(f.kinds()).toEqual(['work.start', RENEW, 'artifact.publish', 'work.submit'])
  })
})

const RENEW = 'ext.missionweaveprotocol.core.work_execution_lease_renew'

describe('preemption at safe points (§11.3)', () => {
  it('raises the signal on request, checkpoints only at the safe point, and ends the run as preempted', async () => {
    const { f, slot } = await started()
    const step = gate()
    let thrown: unknown
    const run = slot.run(async (_item, ctx) => {
      await step.promise
      expect(ctx.signal.reason).toBeInstanceOf(PreemptionRequested)
      await ctx.safePoint({ step: 7 }).catch((e: unknown) => {
        thrown = e
        throw e
      })
      return finish(ctx)
    })
    slot.requestPreemption()
    await settle()
    expect(f.kinds()).toEqual(['work.start'])
    step.open()
    expect(await run).toEqual({ kind: 'preempted' })
    expect(thrown).toBeInstanceOf(Preempted)
    expect(f.kinds()).toEqual(['work.start', 'work.checkpoint'])
    expect(f.store.checkpoint(work().workItemId)?.state).toEqual({ attempt: 1, state: { step: 7 } })
    // The next run resumes from it.
    const again = createSlot(f.host, work())
    await again.start()
    let resumed: unknown
    await again.run(async (_item, ctx) => ((resumed = ctx.resumeState), finish(ctx)))
    expect(resumed).toEqual({ step: 7 })
  })
})

describe('retries (§11.4)', () => {
  it('stores the next attempt before releasing the lease, and fails with failure Evidence when exhausted', async () => {
    const f = fakeHost()
    const attempts: number[] = []
    const failing: ExecutorFn = async (_item, ctx) => {
      attempts.push(ctx.attempt)
      throw new ExecutorFailure('TRANSIENT', 'flaky upstream')
    }
    const outcomes = []
    for (let i = 0; i < 3; i++) {
      const slot = createSlot(f.host, work())
      await slot.start()
      outcomes.push(await slot.run(failing))
    }
    expect(attempts).toEqual([1, 2, 3])
    expect(outcomes).toEqual([
      { kind: 'retry', delayMs: 1000, attempt: 2 },
      { kind: 'retry', delayMs: 2000, attempt: 3 },
      { kind: 'failed', failure: { code: 'TRANSIENT', message: 'flaky upstream', permanent: false } },
    ])
    expect(f.kinds().filter((k) => k !== 'work.start')).toEqual(['work.checkpoint', 'work.checkpoint', 'work.fail'])
    const fail = f.sent.at(-1)!.payload as { reason: string; evidence: { type: string; result: string; criterionIds: string[] }[] }
    expect(fail.reason).toBe('TRANSIENT: exhausted')
    expect(fail.evidence).toMatchObject([{ type: 'failure_report', result: 'failed', criterionIds: ['tests-pass'] }])
  })
})

describe('a slot offline (§11.5)', () => {
  it('buffers progress and checkpoints with the binding, carries usage, refuses irreversible effects, and goes on after reconnection', async () => {
    const { f, slot } = await started()
    f.link.up = false
    f.clock.now += 100_000
    const effects: string[] = []
    let refused: unknown
    let reachedSubmit = false
    const run = slot.run(async (_item, ctx) => {
      await ctx.progress({ phase: 'offline' })
      await ctx.reportUsage({ toolCalls: 3 })
      await ctx.progress({ phase: 'still offline' })
      await ctx.reportUsage({ modelTokens: 10 })
      await ctx.checkpoint({ step: 1 })
      await ctx.sideEffect('tmp', (k) => effects.push(k), { reversible: true })
      await ctx.sideEffect('mail', (k) => effects.push(k)).catch((e: unknown) => (refused = e))
      reachedSubmit = true
      return finish(ctx)
    })
    await settle()
    expect(reachedSubmit).toBe(true)
    expect(f.sent.map((c) => c.kind)).toEqual(['work.start'])
    const buffered = f.offline.pending()
    // The checkpoint superseded both progress reports and carries all usage in its binding.
    expect(buffered.map((b) => b.kind)).toEqual(['work.checkpoint'])
    const command = JSON.parse(buffered[0]!.command) as Command
    expect(command.extensions?.[BOUNDED_OFFLINE_EXECUTION]).toMatchObject({ critical: true, data: { usageDelta: { toolCalls: 3, modelTokens: 10 }, bufferedAt: iso(f.clock.now) } })
    expect(effects).toHaveLength(1)
    expect(refused).toMatchObject({ code: 'WORK_LEASE_EXPIRED', details: { offline: true } })
    await reconnect(f, slot)
    expect(await run).toEqual({ kind: 'submitted' })
    expect(f.kinds()).toEqual(['work.start', 'work.checkpoint', 'work.start', 'artifact.publish', 'work.submit'])
  })

  const usageRecords = (f: ReturnType<typeof fakeHost>) => f.sent.filter((c) => c.kind === USAGE)

  /** A started slot whose run reports each delta with the answers lost from the first on (offline after it), then finishes. */
  async function reportingUnanswered(deltas: readonly Record<string, number>[]) {
    const { f, slot } = await started()
    const run = slot.run(async (_item, ctx) => {
      f.link.dropReplies = true
      for (const delta of deltas) await ctx.reportUsage(delta)
      return finish(ctx)
    })
    await settle()
    return { f, slot, run }
  }

  it('retries a usage record whose answer was lost unchanged, so the Authority charges it once (§19)', async () => {
    // The second delta is reported offline and carried to the reconnection.
    const { f, slot, run } = await reportingUnanswered([{ toolCalls: 2 }, { modelTokens: 5 }])
    expect(f.offline.offline).toBe(true)
    expect(f.charged()).toEqual({ toolCalls: 2 })
    await reconnect(f, slot)
    expect(await run).toEqual({ kind: 'submitted' })
    expect(f.charged()).toEqual({ toolCalls: 2, modelTokens: 5 })
    expect(usageRecords(f).map((c) => c.payload)).toMatchObject([{ usageDelta: { toolCalls: 2 } }, { usageDelta: { modelTokens: 5 } }])
  })

  it('charges a usage record that never arrived once, under the lease that replaced the one it cited', async () => {
    const { f, slot } = await started()
    const first = slot.lease!.leaseId
    const run = slot.run(async (_item, ctx) => {
      f.link.up = false
      await ctx.reportUsage({ toolCalls: 2 })
      await ctx.checkpoint({ step: 1 })
      return finish(ctx)
    })
    await settle()
    expect(f.charged()).toEqual({})
    // The buffered checkpoint releases the lease: the unchanged retry cites a closed one and is refused.
    await reconnect(f, slot)
    expect(await run).toEqual({ kind: 'submitted' })
    expect(f.charged()).toEqual({ toolCalls: 2 })
    const [record] = usageRecords(f)
    expect(record!.payload).toMatchObject({ executionLeaseId: expect.not.stringMatching(first) })
  })

  it('keeps a usage record unanswered across a second drop, and sends the same Command again', async () => {
    const { f, slot, run } = await reportingUnanswered([{ toolCalls: 1 }, { toolCalls: 4 }])
    // The link comes back only to lose the answers again: the reconnection does not complete.
    f.link.up = true
    await slot.reconnected(false)
    expect(slot.lease).toBeDefined()
    await reconnect(f, slot)
    expect(await run).toEqual({ kind: 'submitted' })
    expect(f.charged()).toEqual({ toolCalls: 5 })
    expect(usageRecords(f).map((c) => c.payload)).toMatchObject([{ usageDelta: { toolCalls: 1 } }, { usageDelta: { toolCalls: 4 } }])
  })

  for (const inLog of [true, false]) {
    it(`past the freshness window, looks in the Worker's log: ${inLog ? 'a charge found there is not repeated' : 'a charge not found is made anew'}`, async () => {
      const { f, slot } = await started()
      const run = slot.run(async (_item, ctx) => {
        if (!inLog) f.link.up = false
        else f.link.dropReplies = true
        await ctx.reportUsage({ toolCalls: 3 })
        return finish(ctx)
      })
      await settle()
      const lost = f.sent.find((c) => c.kind === USAGE)
      expect(lost !== undefined).toBe(inLog)
      if (lost !== undefined)
        f.store.appendEvents(work().groupId, [{ ...contractEvent(work().groupId, 1), kind: 'ext.missionweaveprotocol.core.resource_usage_recorded', cause: { type: 'command', id: lost.actionId } }])
      // 400 s later: within the lease (600 s), past the Authority's freshness window (300 s).
      f.clock.now += 400_000
      await reconnect(f, slot)
      expect(await run).toEqual({ kind: 'submitted' })
      expect(f.charged()).toEqual({ toolCalls: 3 })
      expect(usageRecords(f)).toHaveLength(1)
    })
  }

  it('stops at the end of the grace', async () => {
    const { f, slot } = await started()
    f.link.up = false
    f.clock.now += 300_000
    // The renewal cannot be delivered: offline from here on.
    await slot.renewIfDue(f.clock.now)
    expect(f.offline.offline).toBe(true)
    // Past the lease (600 s) but within its grace (300 s): work goes on.
    f.clock.now += 500_000
    slot.checkExpiry(f.clock.now)
    expect(slot.lease).toBeDefined()
    f.clock.now += 100_001
    slot.checkExpiry(f.clock.now)
    expect(slot.lease).toBeUndefined()
    expect(await slot.run(async (_item, ctx) => finish(ctx))).toMatchObject({ kind: 'lost' })
  })
})
