/**
 * The seeded fault schedule: before each step it draws, from the seed's `schedule` stream, at
 * most one fault to inject, and it keeps the ones that last (a link down, a crashed Worker, a
 * feed with lost Events) until they heal. Delivery faults of single Events (drop, duplicate,
 * reorder) are drawn by each Worker's {@link faultyFeed} from a stream of its own.
 * @module
 */
import type { DeliveryTally, SimLink } from './faults.js'
import type { Prng } from './prng.js'
import { SIM_LEASES, SIM_OFFER_SECONDS, type SimWorld } from './world.js'

/** The kinds of fault the schedule injects. */
export const FAULT_KINDS = [
  'disconnect',
  'reply-lost',
  'duplicate-submit',
  'crash',
  'crash-state-lost',
  'clock-jump-offer',
  'clock-jump-lease',
  'clock-jump-ownership',
  'coordinator-replacement',
  'concurrent-accept',
  'feed-reconnect',
] as const

/** A kind of injected fault. */
export type FaultKind = (typeof FAULT_KINDS)[number]

/** Relative weights of the kinds when a step draws a fault. */
const WEIGHTS: Readonly<Record<FaultKind, number>> = {
  disconnect: 4,
  'reply-lost': 3,
  'duplicate-submit': 2,
  crash: 2,
  'crash-state-lost': 2,
  'clock-jump-offer': 2,
  'clock-jump-lease': 2,
  'clock-jump-ownership': 1,
  'coordinator-replacement': 1,
  'concurrent-accept': 4,
  'feed-reconnect': 2,
}

/** The chance that a step draws a fault at all. */
const FAULT_RATE = 0.22

/** Counts of faults injected (and of their effects) over one or more seeds. */
export type FaultTally = Record<
  FaultKind | 'duplicate-submit-diverged' | 'concurrent-accept-won' | 'concurrent-accept-both-won' | 'delivery-dropped' | 'delivery-duplicated' | 'delivery-reordered',
  number
>

/** An empty {@link FaultTally}. */
export function emptyTally(): FaultTally {
  const tally = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as FaultTally
  return { ...tally, 'duplicate-submit-diverged': 0, 'concurrent-accept-won': 0, 'concurrent-accept-both-won': 0, 'delivery-dropped': 0, 'delivery-duplicated': 0, 'delivery-reordered': 0 }
}

/** Adds `from` into `into`. */
export function addTally(into: FaultTally, from: FaultTally): void {
  for (const key of Object.keys(from) as (keyof FaultTally)[]) into[key] += from[key]
}

/** A fault schedule over one world. */
export interface FaultSchedule {
  /** Heals what is due and injects this step's fault, if any; returns its kind. */
  before(step: number): Promise<FaultKind | undefined>
  /**
   * Runs between the Coordinators' and the Workers' turns of a round: an armed concurrent
   * accept fires here, on an offer made this very round, before any Worker could take it.
   */
  midRound(): Promise<void>
  /** What was injected so far, delivery faults included. */
  tally(): FaultTally
}

function addDeliveries(into: FaultTally, from: DeliveryTally): void {
  into['delivery-dropped'] += from.dropped
  into['delivery-duplicated'] += from.duplicated
  into['delivery-reordered'] += from.reordered
}

function drawKind(prng: Prng): FaultKind {
  const total = FAULT_KINDS.reduce((n, k) => n + WEIGHTS[k], 0)
  let r = prng.next() * total
  for (const kind of FAULT_KINDS) {
    r -= WEIGHTS[kind]
    if (r < 0) return kind
  }
  return FAULT_KINDS[FAULT_KINDS.length - 1]!
}

/**
 * A schedule for `world` drawn from `prng`.
 * @example
 * ```ts
 * const schedule = createFaultSchedule(world, createPrng(seed, 'schedule'))
 * for (let step = 1; step <= 100; step++) { await schedule.before(step); await world.round() }
 * ```
 */
export function createFaultSchedule(world: SimWorld, prng: Prng): FaultSchedule {
  const tally = emptyTally()
  /** Step at which a cut link comes back, by link owner (`worker:w1`, `coordinator:<group>`). */
  const linksDown = new Map<string, { readonly up: () => void; readonly atStep: number }>()
  /** Step at which a crashed Worker is started again. */
  const respawns = new Map<string, number>()
  /** Step at which a feed with lost Events reconnects (§16: the client notices the gap and resubscribes). */
  const reconnects = new Map<string, number>()
  const workerNames = [...world.workers.keys()]
  /** Every link a duplicated submission was armed on: their `diverged` counts are summed in {@link FaultSchedule.tally}. */
  const duplicating = new Set<SimLink>()

  /** The link of `key` (`worker:w1`, `coordinator:<group>`). */
  const linkOf = (key: string): SimLink => (key.startsWith('worker:') ? world.workers.get(key.slice('worker:'.length))!.link : world.coordinatorLinks.get(key.slice('coordinator:'.length))!)
  const linkKeys = (): string[] => [...workerNames.map((n) => `worker:${n}`), ...[...world.coordinatorLinks.keys()].map((g) => `coordinator:${g}`)]

  async function heal(step: number): Promise<void> {
    for (const [key, down] of linksDown) {
      if (down.atStep > step) continue
      down.up()
      linksDown.delete(key)
    }
    for (const [name, atStep] of respawns) {
      if (atStep > step) continue
      respawns.delete(name)
      await world.respawn(name)
    }
    for (const slot of world.workers.values()) {
      if (slot.feed === undefined || slot.feed.lost() === 0) continue
      const at = reconnects.get(slot.name)
      if (at === undefined) reconnects.set(slot.name, step + prng.between(1, 4))
      else if (at <= step) {
        reconnects.delete(slot.name)
        slot.feed.reconnect()
      }
    }
  }

  /** A concurrent accept waits for an open offer (at most this many rounds), then fires. */
  let raceArmedFor = 0

  /** §10.3: two Workers accept the same open offer in the same instant; at most one may win. */
  async function concurrentAccept(): Promise<boolean> {
    const nowMs = world.clock.now()
    const open: { groupId: string; workItemId: string; candidates: string[] }[] = []
    for (const [groupId, group] of world.authority.state.groups) {
      for (const [workItemId, record] of group.workItems) {
        if (record.doc.state !== 'offered' || record.offerExpiresAt === undefined || Date.parse(record.offerExpiresAt) <= nowMs) continue
        open.push({ groupId, workItemId, candidates: (record.doc.offers ?? []).filter((o) => o.status === 'pending').map((o) => o.agentId) })
      }
    }
    if (open.length === 0) return false
    const target = prng.pick(open)
    const live = [...world.workers.values()].filter((s) => s.worker !== undefined)
    // Candidates first: the race that matters is between two Agents the offer names.
    const racers = [...live.filter((s) => target.candidates.includes(s.agentId)), ...live.filter((s) => !target.candidates.includes(s.agentId))].slice(0, 2)
    if (racers.length < 2) return false
    const outcomes = await Promise.allSettled(
      racers.map((s) => s.worker!.client.withGroup(target.groupId).workAcceptOffer({ workItemId: target.workItemId, ownershipLeaseSeconds: SIM_LEASES.ownershipLeaseSeconds })),
    )
    const winners = outcomes.filter((o) => o.status === 'fulfilled').length
    // Races with a winner, and races both won: the second must never happen (the invariant check sees it too).
    if (winners > 0) tally['concurrent-accept-won']++
    if (winners > 1) tally['concurrent-accept-both-won']++
    return true
  }

  async function inject(kind: FaultKind, step: number): Promise<boolean> {
    switch (kind) {
      case 'duplicate-submit': {
        // §19: the network repeats the next request; the Authority must answer it as the first.
        const link = linkOf(prng.pick(linkKeys()))
        link.duplicateNext = true
        duplicating.add(link)
        return true
      }
      case 'disconnect':
      case 'reply-lost': {
        const targets = linkKeys().filter((k) => !linksDown.has(k))
        if (targets.length === 0) return false
        const key = prng.pick(targets)
        const link = linkOf(key)
        // A lost reply cuts the link at the next submission, which then reaches the Authority unanswered.
        if (kind === 'disconnect') link.up = false
        else link.loseNextReply = true
        const up = (): void => {
          link.up = true
          link.loseNextReply = false
        }
        linksDown.set(key, { up, atStep: step + prng.between(1, 6) })
        return true
      }
      case 'crash':
      case 'crash-state-lost': {
        const live = workerNames.filter((n) => world.workers.get(n)!.worker !== undefined)
        if (live.length === 0) return false
        const name = prng.pick(live)
        const feed = world.workers.get(name)!.feed
        if (feed !== undefined) addDeliveries(tally, feed.tally)
        await world.crash(name, kind === 'crash')
        respawns.set(name, step + prng.between(0, 4))
        reconnects.delete(name)
        return true
      }
      case 'clock-jump-offer':
        await world.jump((SIM_OFFER_SECONDS + prng.between(1, 600)) * 1000)
        return true
      case 'clock-jump-lease':
        await world.jump((SIM_LEASES.executionLeaseSeconds + prng.between(1, 1200)) * 1000)
        return true
      case 'clock-jump-ownership':
        await world.jump((SIM_LEASES.ownershipLeaseSeconds + prng.between(1, 1800)) * 1000)
        return true
      case 'coordinator-replacement':
        return world.replaceCoordinator(prng.pick(world.missions).groupId)
      case 'concurrent-accept':
        // Counted when it fires (see midRound).
        raceArmedFor = 5
        return false
      case 'feed-reconnect': {
        const slot = world.workers.get(prng.pick(workerNames))!
        if (slot.feed === undefined) return false
        slot.feed.reconnect()
        return true
      }
    }
  }

  return {
    async before(step) {
      await heal(step)
      if (!prng.chance(FAULT_RATE)) return undefined
      const kind = drawKind(prng)
      if (!(await inject(kind, step))) return undefined
      tally[kind]++
      return kind
    },
    async midRound() {
      if (raceArmedFor === 0) return
      raceArmedFor--
      if (!(await concurrentAccept())) return
      raceArmedFor = 0
      tally['concurrent-accept']++
    },
    tally() {
      const out = { ...tally }
      for (const link of duplicating) out['duplicate-submit-diverged'] += link.diverged ?? 0
      // The running runtimes' feeds; a crashed runtime's counts were added when it stopped.
      for (const slot of world.workers.values()) if (slot.feed !== undefined) addDeliveries(out, slot.feed.tally)
      return out
    },
  }
}
