/**
 * The client's view of its own fencing epochs (§6.3 Session, §8 Membership, §7.2 Coordinator):
 * set explicitly, or learned from the Events of receipts and subscriptions.
 * @module
 */
import { UsageError } from '@weft/codec/errors'
import type { Actor, Event, EventPayload } from '@weft/spec'

/**
 * What a client knows about its epochs. Each value is the client's belief, not the Authority's
 * truth: a fenced epoch shows up as `AUTH_STALE_SESSION`, `MEMBERSHIP_STALE` or
 * `AUTH_STALE_COORDINATOR` on the next Command, after which the caller learns the current epoch
 * (a new session, the latest `membership.changed`) and sends a new Command (§19).
 */
export interface Epochs {
  /** The current Session Epoch of this Agent (§6.3); always `undefined` for humans and services. */
  readonly sessionEpoch: number | undefined
  /** The Membership Epoch of this actor in `groupId` (§8), if it holds a Membership there. */
  membership(groupId: string): number | undefined
  /** The Coordinator Epoch of this Agent in `groupId` (§7.2), if it holds the Coordinator lease. */
  coordinator(groupId: string): number | undefined
  /** Sets (or with `undefined` forgets) the Session Epoch. */
  setSession(epoch: number | undefined): void
  /**
   * Sets (or with `undefined` forgets) the Membership Epoch in `groupId`. Like the Coordinator
   * setter, the value stands until an Event of that Group newer than any already observed changes it.
   */
  setMembership(groupId: string, epoch: number | undefined): void
  /** Sets (or with `undefined` forgets) the Coordinator Epoch in `groupId`. */
  setCoordinator(groupId: string, epoch: number | undefined): void
  /**
   * Learns from Events, in order: a session opened for this Agent, Memberships granted, changed or
   * ended for this actor, the Coordinator lease assigned to this Agent or to another one. Events
   * about other actors or of other kinds are ignored; a Group Event older (by Group sequence) than
   * the one that last set a Group's value is ignored, so replayed or reordered deliveries cannot
   * resurrect an ended Membership.
   */
  observe(events: Iterable<Event>): void
}

/** One known value and the Group sequence of the latest Event seen about it. */
interface Learned {
  readonly epoch: number | undefined
  readonly sequence: number | undefined
}

const isEpoch = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 1

function checkEpoch(name: string, epoch: number | undefined): void {
  if (epoch !== undefined && !isEpoch(epoch)) {
    throw new UsageError(`${name} must be a positive integer (§2), got ${String(epoch)}`)
  }
}

const sameActor = (a: Actor | undefined, b: Actor): boolean => a !== undefined && a.type === b.type && a.id === b.id

/**
 * Creates the epoch view of `actor`.
 * @example
 * ```ts
 * const epochs = createEpochs({ type: 'agent', id: 'urn:example:agent:w1' })
 * epochs.observe(receipt.events) // e.g. a membership.changed naming this Agent
 * epochs.membership('urn:example:group:1') // 3
 * ```
 */
export function createEpochs(actor: Actor): Epochs {
  const isAgent = actor.type === 'agent'
  let session: number | undefined
  const memberships = new Map<string, Learned>()
  const coordinators = new Map<string, Learned>()

  /**
   * Records what `event` says about `table` (`null`: the value ended) unless an Event already seen
   * in that Group is newer. A value that is not an epoch is not news.
   */
  const learn = (table: Map<string, Learned>, event: Event, epoch: unknown): void => {
    const { groupId, sequence } = event
    if (groupId === undefined || (epoch !== null && !isEpoch(epoch))) return
    const known = table.get(groupId)?.sequence
    // §15.2: the Group sequence orders a Group's Events; an older fact must not overwrite a newer one.
    if (known !== undefined && sequence !== undefined && sequence <= known) return
    table.set(groupId, { epoch: epoch ?? undefined, sequence })
  }

  const setBy = (name: string, table: Map<string, Learned>) => (groupId: string, epoch: number | undefined): void => {
    checkEpoch(name, epoch)
    // A value set by hand stands until a newer Event of that Group arrives.
    table.set(groupId, { epoch, sequence: table.get(groupId)?.sequence })
  }
  const agentOnly = (name: string, epoch: number | undefined): void => {
    // §6.3, §15.1: humans and services never carry Session or Coordinator Epochs.
    if (epoch !== undefined && !isAgent) throw new UsageError(`a ${actor.type} has no ${name}; only Agents carry one (§15.1)`)
  }
  const setCoordinator = setBy('coordinatorEpoch', coordinators)

  const observeOne = (event: Event): void => {
    switch (event.kind) {
      case 'ext.missionweaveprotocol.identity.session_opened': {
        const p = event.payload as Partial<EventPayload<'ext.missionweaveprotocol.identity.session_opened'>>
        // §6.3: epochs only grow; a late delivery of an older session must not roll back.
        if (isAgent && p.agentId === actor.id && isEpoch(p.sessionEpoch) && (session === undefined || p.sessionEpoch > session)) {
          session = p.sessionEpoch
        }
        return
      }
      case 'membership.changed': {
        const m = (event.payload as Partial<EventPayload<'membership.changed'>>).membership
        if (sameActor(m?.member, actor)) learn(memberships, event, m?.state === 'ended' ? null : m?.membershipEpoch)
        return
      }
      case 'membership.ended': {
        if (sameActor((event.payload as Partial<EventPayload<'membership.ended'>>).member, actor)) learn(memberships, event, null)
        return
      }
      case 'mission.created': {
        const p = event.payload as Partial<EventPayload<'mission.created'>>
        const mine = Array.isArray(p.memberships) ? p.memberships.find((m) => sameActor(m?.member, actor)) : undefined
        if (mine !== undefined) learn(memberships, event, mine.membershipEpoch)
        const coordinator = p.mission?.coordinator
        if (isAgent && coordinator?.agentId === actor.id) learn(coordinators, event, coordinator.coordinatorEpoch)
        return
      }
      case 'mission.coordinator.assigned': {
        const coordinator = (event.payload as Partial<EventPayload<'mission.coordinator.assigned'>>).coordinator
        if (!isAgent || typeof coordinator?.agentId !== 'string') return
        // §7.2: a new Coordinator Epoch fences the previous holder, so another Agent's assignment ends ours.
        learn(coordinators, event, coordinator.agentId === actor.id ? coordinator.coordinatorEpoch : null)
        return
      }
      default:
        return
    }
  }

  return {
    get sessionEpoch() {
      return session
    },
    membership: (groupId) => memberships.get(groupId)?.epoch,
    coordinator: (groupId) => coordinators.get(groupId)?.epoch,
    setSession(epoch) {
      checkEpoch('sessionEpoch', epoch)
      agentOnly('Session Epoch', epoch)
      session = epoch
    },
    setMembership: setBy('membershipEpoch', memberships),
    setCoordinator(groupId, epoch) {
      agentOnly('Coordinator Epoch', epoch)
      setCoordinator(groupId, epoch)
    },
    observe(events) {
      for (const event of events) observeOne(event)
    },
  }
}
