/**
 * Model-based test of the Group Authority against the §10.2 WorkItem statechart (STYLE §13):
 * fast-check generates random sequences of protocol actions on a few WorkItems (offers, accepts,
 * starts, renewals, checkpoints, blocks, submissions with current or stale epochs and leases,
 * reviews, failures, cancellations, new Sessions, virtual time passing deadlines), sends each as a
 * signed Command through `@weft/client`, and compares the outcome with the reference model of
 * `model-spec.ts` (the XState machine plus the facts its guards read). After every step the §4
 * invariants are checked on the live state and the log.
 *
 * The actions and the checks after each step are in `model-actions.ts`; scripted runs over the
 * same actions are in `model-scripted.test.ts`.
 *
 * `WEFT_MODEL_RUNS` sets the number of runs (default 100), `WEFT_FUZZ_SEED` the fast-check seed.
 */
import fc from 'fast-check'
import { describe, it } from 'vitest'
import { ownerLive, stateOf, type Model } from './model-spec.js'
import { WORKERS, type World } from './model-world.js'
import {
  acceptOffer,
  acceptResult,
  advance,
  cancel,
  fail,
  ITEMS,
  offer,
  openSession,
  pause,
  PLAIN,
  renew,
  runModel,
  start,
  Step,
  submit,
  unblock,
  type Deadline,
  type Knobs,
  type OwnerParams,
  type Pick,
  type Who,
} from './model-actions.js'

const RUNS = Number(process.env['WEFT_MODEL_RUNS'] ?? 100)
const SEED = process.env['WEFT_FUZZ_SEED'] === undefined ? undefined : Number(process.env['WEFT_FUZZ_SEED'])

/**
 * The next happy-path action for an item, chosen from the model's state, so that random runs reach
 * the deep states often; the model still judges the Command like any other.
 */
async function progress(model: Model, world: World, p: { item: number; candidates: number[]; seconds: number; active: 'submit' | 'checkpoint' | 'block' | 'renew' }): Promise<void> {
  const item = model.items[p.item]!
  const owner: OwnerParams = { item: p.item, who: 'owner', epoch: 'current', lease: 'current', seconds: p.seconds, knobs: PLAIN }
  const offerable = item.offers.some((o) => o.status === 'pending' && o.expiresMs > model.nowMs)
  switch (stateOf(item)) {
    case 'offered':
      return offerable ? acceptOffer(model, world, { item: p.item, who: 'owner', seconds: p.seconds, knobs: PLAIN }) : offer(model, world, { ...p, knobs: PLAIN })
    case 'queued':
      return ownerLive(item, model.nowMs) ? start(model, world, owner) : offer(model, world, { ...p, knobs: PLAIN })
    case 'active':
      if (p.active === 'renew') return renew(model, world, owner)
      return p.active === 'submit' ? submit(model, world, owner) : pause(model, world, { ...owner, block: p.active === 'block' })
    case 'submitted':
      return acceptResult(model, world, { item: p.item, knobs: PLAIN })
    case 'blocked':
      return unblock(model, world, { item: p.item, by: 'coordinator', knobs: PLAIN })
    case 'verified':
    case 'cancelled':
      return
    default:
      return offer(model, world, { ...p, knobs: PLAIN })
  }
}

function step<P>(name: string, params: fc.Arbitrary<P>, action: (model: Model, world: World, p: P) => Promise<void>): fc.Arbitrary<Step> {
  return params.map((p) => new Step(`${name} ${JSON.stringify(p)}`, (model, world) => action(model, world, p)))
}

function weighted<T>(usual: T, ...rare: T[]): fc.Arbitrary<T> {
  return fc.oneof({ weight: 5, arbitrary: fc.constant(usual) }, { weight: 1, arbitrary: fc.constantFrom(...rare) })
}

const itemArb = fc.nat({ max: ITEMS.length - 1 })
const workerArb = fc.nat({ max: WORKERS.length - 1 })
const whoArb: fc.Arbitrary<Who> = fc.oneof({ weight: 4, arbitrary: fc.constant<Who>('owner') }, { weight: 1, arbitrary: workerArb })
const pickArb = weighted<Pick>('current', 'stale')
const secondsArb = fc.integer({ min: 30, max: 1800 })
const knobsArb: fc.Arbitrary<Knobs> = fc.record({ cas: weighted<Knobs['cas']>('none', 'current', 'stale'), staleSession: fc.nat({ max: 7 }).map((n) => n === 7) })
const candidatesArb = fc.subarray([0, 1, 2], { minLength: 1 })
const ownerArb = fc.record({ item: itemArb, who: whoArb, epoch: pickArb, lease: pickArb, seconds: secondsArb, knobs: knobsArb })

/** The actions, weighted towards the ones that move a WorkItem forward. */
const actions: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 12,
    arbitrary: step(
      'progress',
      fc.record({ item: itemArb, candidates: candidatesArb, seconds: secondsArb, active: fc.constantFrom('submit' as const, 'checkpoint' as const, 'block' as const, 'renew' as const) }),
      progress,
    ),
  },
  { weight: 3, arbitrary: step('offer', fc.record({ item: itemArb, candidates: candidatesArb, seconds: secondsArb, knobs: knobsArb }), offer) },
  { weight: 4, arbitrary: step('accept', fc.record({ item: itemArb, who: whoArb, seconds: secondsArb, knobs: knobsArb }), acceptOffer) },
  { weight: 4, arbitrary: step('start', ownerArb, start) },
  { weight: 2, arbitrary: step('renew', ownerArb, renew) },
  {
    weight: 2,
    arbitrary: step(
      'checkpoint',
      ownerArb.map((p) => ({ ...p, block: false })),
      pause,
    ),
  },
  {
    weight: 2,
    arbitrary: step(
      'block',
      ownerArb.map((p) => ({ ...p, block: true })),
      pause,
    ),
  },
  { weight: 2, arbitrary: step('unblock', fc.record({ item: itemArb, by: fc.oneof(fc.constantFrom('coordinator' as const, 'human' as const), whoArb), knobs: knobsArb }), unblock) },
  { weight: 4, arbitrary: step('submit', ownerArb, submit) },
  { weight: 2, arbitrary: step('accept_result', fc.record({ item: itemArb, knobs: knobsArb }), acceptResult) },
  { weight: 2, arbitrary: step('fail', fc.record({ item: itemArb, who: whoArb, epoch: pickArb, lease: pickArb, seconds: secondsArb, knobs: knobsArb, byOwner: fc.boolean() }), fail) },
  { weight: 1, arbitrary: step('cancel', fc.record({ item: itemArb, byHuman: fc.boolean(), knobs: knobsArb }), cancel) },
  { weight: 3, arbitrary: step('session_open', fc.record({ worker: fc.oneof(fc.constant('executing' as const), workerArb) }), openSession) },
  { weight: 5, arbitrary: step('advance', fc.record({ item: itemArb, deadline: fc.constantFrom<Deadline>('offer', 'ownership', 'execution', 'seconds'), seconds: secondsArb }), advance) },
)

describe('the Group Authority against the §10.2 WorkItem statechart, with the §4 invariants', () => {
  it(
    'random Command sequences agree with the machine, keep one current Ownership Epoch (the highest issued), never let a stale result complete a WorkItem, keep sequences 1..head without a gap, and fold(log) equals the live state',
    async () => {
      const property = fc.asyncProperty(fc.commands([actions], { maxCommands: 40, size: 'max' }), async (steps) => void (await runModel(steps)))
      await fc.assert(property, { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }) })
    },
    Math.max(60_000, RUNS * 3_000),
  )
})
