/**
 * The integration harness: a real Group Authority (the authority test world: cast, keys, Registry,
 * a Mission with its Coordinator, on a virtual clock) and reference Workers that reach it only
 * through `authority.connect()` (a `Transport`, behind a switch that can cut the link) and
 * `deliveryFeed(createDelivery(authority), agent)` (an `EventFeed`).
 */
import { createDelivery, deliveryFeed, type Delivery } from '@weft/authority'
import type { Transport } from '@weft/client'
import type { Artifact, Event, WorkContract } from '@weft/spec'
import { createWorker, type ExecutorResult, type SlotContext, type Worker, type WorkerOptions } from '@weft/worker'
import { seededRandom, cast, GROUP } from '@weft/testkit/fixtures'
import { authorize, boot, coordinatorOf, createWorld, offer, openMission, wid, type Who, type World } from '@weft/testkit/world'

export { GROUP, cast }

/** The second Group the fairness tests use. */
export const GROUP_TWO = 'urn:weft:test:group:two'

/** A link between a Worker and the Authority that a test can cut (§11.5). */
export interface Link {
  up: boolean
  /** Commands that reached the Authority through this link, by kind. */
  readonly sent: string[]
}

/** The Authority world plus its delivery. */
export interface Rig {
  readonly w: World
  readonly delivery: Delivery
}

/**
 * Boots the Organization, opens the Mission of each Group and enrols `members` with complete
 * visibility (`visibilityStartSequence: 0`), so a Worker's inbox can fold its Groups from sequence 1.
 */
export async function rig(groups: readonly string[] = [GROUP], members: readonly Who[] = ['worker1', 'worker2', 'reviewer']): Promise<Rig> {
  const w = createWorld()
  await boot(w)
  for (const groupId of groups) {
    const g = w.in(groupId)
    await openMission(g)
    for (const who of members) {
      await coordinatorOf(g).membershipChange({
        membershipId: `${groupId}:membership:${who}`,
        member: cast[who].actor,
        role: who === 'reviewer' ? 'reviewer' : 'worker',
        state: 'active',
        scopes: ['group:read'],
        visibilityStartSequence: 0,
      })
    }
  }
  return { w, delivery: createDelivery(w.authority) }
}

let seed = 1000

/**
 * A Worker of cast member `who` on the rig's Authority, with a link the test can cut. Each Worker
 * gets its own seeded random source: a restarted process never reuses an Action ID (§15.1).
 */
export function spawn(r: Rig, who: Who, options: Partial<WorkerOptions> & Pick<WorkerOptions, 'slots'>): { readonly worker: Worker; readonly link: Link } {
  const inner = r.w.authority.connect()
  const link: Link = { up: true, sent: [] }
  const transport: Transport = {
    submit: async (command, bytes) => {
      // A cut link fails like a socket: a plain Error, not a protocol refusal.
      if (!link.up) throw new Error('ECONNREFUSED: the Group service is unreachable')
      const receipt = await inner.submit(command, bytes)
      link.sent.push(receipt.kind)
      return receipt
    },
  }
  const actor = { type: 'agent' as const, id: cast[who].actor.id }
  const worker = createWorker({
    actor,
    signingKey: cast[who].key,
    sessionEpoch: 1,
    transport,
    feed: deliveryFeed(r.delivery, actor),
    clock: { now: () => r.w.clock.nowMs },
    random: seededRandom(++seed),
    ...options,
  })
  return { worker, link }
}

/** The Coordinator authorizes WorkItem `name` (with contract `overrides`) and offers it to `candidates`. Returns its ID. */
export async function offered(r: Rig, name: string, candidates: readonly Who[] = ['worker1'], overrides: Partial<WorkContract> = {}, groupId = GROUP): Promise<string> {
  const g = r.w.in(groupId)
  const id = wid(name)
  await authorize(g, id, overrides)
  await offer(g, id, candidates)
  return id
}

/** What a successful executor returns: one published Artifact and passing Evidence for `tests-pass`. */
export async function deliver(ctx: SlotContext, content = `patch for ${ctx.item.workItemId}`): Promise<ExecutorResult> {
  const artifact: Artifact = await ctx.publishArtifact(content, { mediaType: 'text/x-diff' })
  const evidence = ctx.evidence({ type: 'deterministic_test', criterionIds: ['tests-pass'], method: 'Ran the test suite.', result: 'passed', artifactHashes: [artifact.contentHash] })
  return { artifacts: [artifact], evidence: [evidence] }
}

/** The Group Events about WorkItem `id`, in order. */
export function eventsOf(r: Rig, id: string, groupId = GROUP): Event[] {
  return r.w.authority.events(groupId).filter((e) => {
    const p = e.payload as { workItemId?: string; artifact?: { workItemId?: string }; workItem?: { workItemId?: string } }
    return (p.workItemId ?? p.artifact?.workItemId ?? p.workItem?.workItemId) === id
  })
}

/** The kinds of the Group Events about WorkItem `id`. */
export function kindsOf(r: Rig, id: string, groupId = GROUP): string[] {
  return eventsOf(r, id, groupId).map((e) => e.kind)
}

/** A promise and its resolver: lets a test hold an executor at a point and release it. */
export function gate(): { readonly promise: Promise<void>; readonly open: () => void } {
  let open!: () => void
  const promise = new Promise<void>((resolve) => (open = resolve))
  return { promise, open }
}

/** Lets pending promise callbacks run (the executor reaching its next await). */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve))
}
