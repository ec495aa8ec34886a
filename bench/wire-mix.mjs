// The authority benchmark's one-at-a-time signed figure (bench/authority.mjs: `submit(bytes)` over
// the realistic lifecycle mix, replayed into a fresh log, one Command in flight) on each backend of
// the wire benchmark, so its in-process figures stand beside the authority suite's and the
// in-memory one is the common baseline.
import { cast, createWorld, registry, SEED, seeded } from './authority-world.mjs'

const CYCLES = 150 // 1,650 timed Commands per replay, as in bench/authority.mjs

/** Records {@link CYCLES} lifecycle cycles in memory (trusted, so quickly) for {@link replayOn}. */
export async function recordMix() {
  const recorded = await createWorld({ trusted: true, record: true })
  for (let i = 0; i < CYCLES; i++) await recorded.cycle()
  return recorded
}

/**
 * Replays `recorded` into a fresh log of `backend` with the authority world's keys, seed and clock
 * readings, so every Command is accepted again with the same Events; times the Commands after the
 * bootstrap. @returns {Promise<number>} signed Commands per second
 */
export async function replayOn(recorded, backend) {
  const clock = { nowMs: 0 }
  const log = await backend.open({
    registry: registry(),
    keys: { authority: cast.authority.actor, signingKey: cast.authority.key },
    clock: { now: () => clock.nowMs },
    random: seeded(SEED),
    policy: { controlPlane: [cast.controlPlane.actor.id] },
  })
  try {
    const submit = async (entry) => {
      clock.nowMs = entry.atMs
      const receipt = await log.authority.submit(entry.bytes)
      if (receipt.events.length !== entry.events) throw new Error(`${backend.label}: a replayed Command appended ${receipt.events.length} Events where the recording had ${entry.events}`)
    }
    const timed = recorded.recording.slice(recorded.bootstrapped)
    for (const entry of recorded.recording.slice(0, recorded.bootstrapped)) await submit(entry)
    const began = performance.now()
    for (const entry of timed) await submit(entry)
    return (timed.length * 1000) / (performance.now() - began)
  } finally {
    await log.close()
  }
}
