// The throughput passes of the authority benchmark, each run in its own worker thread (its own V8
// isolate). A process runs one Authority configuration: the type feedback the JIT gathers from the
// floor's unsigned Events or from the signed path must not shape the code that runs the trusted
// path, nor the other way round, or each figure measures the mix instead of its own configuration.
//
// As a module it exports the passes; as a worker (`startPasses` in the main thread) it runs one
// named pass over the recording it was given each time it is asked, and answers with the figures.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads'
import { createPrivateKey, createPublicKey, sign as nodeSign, verify as nodeVerify } from 'node:crypto'
import { applyEvents, dispatchCommand, DEFAULT_POLICY, emptyState, handlers, materialize, reducers, timestampOf, uuidSource } from '@weft/authority'
import { decodeBase64url, encodeBase64url, signingHash, signingInput } from '@weft/codec'
import { cast, GROUP, replay, seeded, SEED } from './authority-world.mjs'

/** Every Signed Document a payload embeds (Evidence, Artifact manifests, Agent Cards, ...): objects carrying a signature envelope. */
function embeddedDocuments(value, out = []) {
  if (Array.isArray(value)) for (const v of value) embeddedDocuments(v, out)
  else if (typeof value === 'object' && value !== null) {
    if (typeof value.signature?.value === 'string') out.push(value)
    else for (const v of Object.values(value)) embeddedDocuments(v, out)
  }
  return out
}

/**
 * The node:crypto work of the timed Commands of `world`, prepared: per Command, the Ed25519
 * verifications (the Command and each embedded document, KeyObjects prebuilt) and the signatures
 * of the Events the replay appended (`events`, in order).
 */
function cryptoWork(world, events) {
  const publicKeys = new Map()
  for (const who of [cast.owner, cast.coordinator, ...cast.workers, cast.reviewer, cast.controlPlane, cast.registry]) {
    publicKeys.set(who.key.keyId, createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: encodeBase64url(who.key.pair.publicKey) }, format: 'jwk' }))
  }
  const privateKey = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(cast.authority.seed)]), format: 'der', type: 'pkcs8' })
  const toVerify = (doc) => {
    const input = signingInput(doc)
    if (!input.ok) throw new Error('ceiling: a document has no canonical form')
    return { bytes: input.bytes, key: publicKeys.get(doc.signature.keyId), signature: decodeBase64url(doc.signature.value) }
  }
  let next = 0
  const work = world.recording.slice(world.bootstrapped).map((entry) => {
    const command = JSON.parse(entry.bytes)
    const verifies = [command, ...embeddedDocuments(command.payload)].map(toVerify)
    const signs = events.slice(next, (next += entry.events)).map((event) => {
      const input = signingInput(event)
      if (!input.ok) throw new Error('ceiling: an Event has no canonical form')
      return input.bytes
    })
    return { verifies, signs }
  })
  if (next !== events.length) throw new Error(`ceiling: ${events.length} Events for ${next} expected`)
  for (const { verifies } of work) for (const v of verifies) if (!nodeVerify(null, v.bytes, v.key, v.signature)) throw new Error('ceiling: node:crypto rejects a signature the Authority accepted')
  return { work, privateKey }
}

/** One pass of bare node:crypto over {@link cryptoWork}. */
function cryptoPass({ work, privateKey }) {
  let events = 0
  const began = performance.now()
  for (const { verifies, signs } of work) {
    for (const v of verifies) if (!nodeVerify(null, v.bytes, v.key, v.signature)) throw new Error('ceiling: verification failed')
    for (const bytes of signs) nodeSign(null, bytes, privateKey)
    events += signs.length
  }
  return { commands: work.length, events, elapsedMs: performance.now() - began }
}

/**
 * The domain alone over the recording: each Command's handler on a HandlerContext, its drafts
 * materialized without signatures or copies, the reducers applied, as the pipeline would but with
 * no ingress check, signing or copying. IDs come from the Authority's seed in the same order, so the
 * recorded Commands (which name Authority-minted lease IDs) are accepted again.
 */
function domainPass(world) {
  const state = emptyState()
  const newId = uuidSource(seeded(SEED))
  const policy = { ...DEFAULT_POLICY, controlPlane: [cast.controlPlane.actor.id] }
  const commands = world.recording.map((entry) => {
    const command = JSON.parse(entry.bytes)
    return { command, atMs: entry.atMs, commandHash: signingHash(command) }
  })
  const step = ({ command, atMs, commandHash }) => {
    const now = timestampOf(atMs)
    const ctx = {
      state,
      group: command.groupId === undefined ? undefined : state.groups.get(command.groupId),
      now,
      nowMs: atMs,
      authority: cast.authority.actor,
      policy,
      newId,
      after: (seconds) => timestampOf(atMs + seconds * 1000),
      commandHash,
      // §7.2: what the ingress admitted as the current Coordinator Epoch (the handlers' role checks read it)
      coordinatorEpoch: command.coordinatorEpoch,
      verifyDocument: () => {},
    }
    const drafts = dispatchCommand(handlers, command, ctx)
    const cause = {
      type: 'command',
      id: command.actionId,
      actor: command.actor,
      correlationId: command.correlationId,
      commandHash,
      ...(command.groupId === undefined ? {} : { groupId: command.groupId }),
    }
    const events = materialize(state, cause, drafts, { now, newId, authority: cast.authority.actor, sign: (event) => event })
    applyEvents(state, events, reducers)
    return events.length
  }
  for (const c of commands.slice(0, world.bootstrapped)) step(c)
  const timed = commands.slice(world.bootstrapped)
  let events = 0
  const began = performance.now()
  for (const c of timed) events += step(c)
  return { commands: timed.length, events, elapsedMs: performance.now() - began }
}

/** Each pass, given the recorded world: a function running it once. */
const PASSES = {
  signed:
    (world, { signedWindow }) =>
    () =>
      replay(world, { window: signedWindow }),
  sequential: (world) => () => replay(world),
  ceiling: async (world) => {
    const first = await replay(world)
    const work = cryptoWork(world, first.authority.events(GROUP).slice(-first.events))
    return async () => cryptoPass(work)
  },
  trusted: (world) => () => replay(world, { trusted: true }),
  deferred: (world) => () => replay(world, { trusted: true, authority: { deferEventSignatures: true } }),
  floor: (world) => async () => domainPass(world),
}

/**
 * One worker per named pass over `world`'s recording. Each returned function runs its pass once in
 * its worker and resolves to `{ commands, events, elapsedMs }`; only one runs at a time, so the
 * passes never compete for the CPU (a pass may use several threads of its own, as the signed pass
 * checks signatures on the threadpool). `options.signedWindow`: Commands in flight in the `signed`
 * pass. `close()` ends the workers.
 */
export async function startPasses(world, names, options = {}) {
  const shared = { recording: world.recording, bootstrapped: world.bootstrapped }
  const workers = names.map((pass) => new Worker(new URL(import.meta.url), { workerData: { pass, world: shared, options } }))
  const ask = (worker) =>
    new Promise((resolve, reject) => {
      const onError = (error) => reject(error)
      worker.once('error', onError)
      worker.once('message', (reply) => {
        worker.off('error', onError)
        if (reply.error !== undefined) reject(new Error(reply.error))
        else resolve(reply)
      })
      worker.postMessage('run')
    })
  // Each worker prepares its pass and runs it {@link SETTLE_PASSES} times before the caller's rounds
  // begin, one worker at a time; then the background work they leave (concurrent compilation,
  // sweeping) gets a moment to finish, so no timed pass shares the CPU with another isolate's.
  for (const worker of workers) await ask(worker)
  await new Promise((resolve) => setTimeout(resolve, 1000))
  return {
    passes: Object.fromEntries(names.map((name, i) => [name, () => ask(workers[i])])),
    close: () => Promise.all(workers.map((worker) => worker.terminate())),
  }
}

/**
 * Untimed passes each worker runs first. The JIT keeps revising the pipeline's compiled code for
 * the first ten or so passes of a fresh isolate (deoptimizations on newly seen hidden classes, then
 * recompilation); the figures are of the code a long-running Authority settles on.
 */
const SETTLE_PASSES = 12

if (!isMainThread && workerData?.pass !== undefined) {
  const world = workerData.world
  let once
  parentPort.on('message', async () => {
    try {
      if (once === undefined) {
        once = await PASSES[workerData.pass](world, workerData.options)
        for (let i = 1; i < SETTLE_PASSES; i++) {
          // A turn of the event loop between passes, as a serving process has between Commands.
          await new Promise((resolve) => setImmediate(resolve))
          await once()
        }
      }
      const { commands, events, elapsedMs } = await once()
      parentPort.postMessage({ commands, events, elapsedMs })
    } catch (error) {
      parentPort.postMessage({ error: error?.stack ?? String(error) })
    }
  })
}
