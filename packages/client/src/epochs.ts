/**
 * The client's view of its own fencing epochs (§6.3 Session, §8 Membership, §7.2 Coordinator):
 * set explicitly, or learned from the Events of receipts and subscriptions.
 * @module
 */
import { UsageError } from '@weft/codec/errors'
import type { Actor, Event, EventPayload } from '@weft/spec'

/**
 * Epochs to set at once (see {@link Epochs.set}): the Agent's Session Epoch, and the Membership
 * and Coordinator Epochs of one Group. An absent member leaves that value as it is.
 */
export interface EpochSetting {
  /** The Session Epoch of this Agent (§6.3); Agents only. */
  readonly session?: number
  /** The Group `membership` and `coordinator` belong to; required with either. */
  readonly groupId?: string
  /** The Membership Epoch of this actor in `groupId` (§8). */
  readonly membership?: number
  /** The Coordinator Epoch of this Agent in `groupId` (§7.2): it holds the Coordinator lease there. */
  readonly coordinator?: number
}

/**
 * What a client knows about its epochs. Each value is the client's belief, not the Authority's
 * truth: a fenced epoch shows up as `AUTH_STALE_SESSION`, `MEMBERSHIP_STALE` or
 * `AUTH_STALE_COORDINATOR` on the next Command, after which the caller learns the current epoch
 * (a new session, the latest `membership.changed`) and sends a new Command (§19).
 *
 * A value set by hand is what the caller knows to be current (a restarted runtime told its epochs
 * by its control plane, a handshake, its own saved state), so Events the client sees afterwards
 * move it only forward: an Event naming a lower epoch of the same kind is older news and is
 * ignored, whatever its Group sequence; one naming the same or a higher epoch (or ending the
 * Membership or lease at such an epoch) is applied, and from then on the Group's Events are
 * ordered by sequence again. Setting by hand always wins over what the client knew before, lower
 * values included: it is the caller's explicit intent.
 */
export interface Epochs {
  /** The current Session Epoch of this Agent (§6.3); always `undefined` for humans and services. */
  readonly sessionEpoch: number | undefined
  /** The Membership Epoch of this actor in `groupId` (§8), if it holds a Membership there. */
  membership(groupId: string): number | undefined
  /** The Coordinator Epoch of this Agent in `groupId` (§7.2), if it holds the Coordinator lease. */
  coordinator(groupId: string): number | undefined
  /**
   * Sets several epochs at once, e.g. those a restarted runtime must carry; all or nothing.
   * @throws UsageError when a value is not a positive integer, `membership` or `coordinator`
   * comes without `groupId` (or `groupId` without either), or a human or service is given a
   * Session or Coordinator Epoch (§15.1).
   * @example
   * ```ts
   * client.epochs.set({ session: 2, groupId, membership: 3, coordinator: 2 })
   * ```
   */
  set(setting: EpochSetting): void
  /** Sets (or with `undefined` forgets) the Session Epoch; a later `session_opened` moves it only upward. */
  setSession(epoch: number | undefined): void
  /**
   * Sets (or with `undefined` forgets) the Membership Epoch in `groupId`. Like the Coordinator
   * setter, the value stands against every later Event of that Group naming a lower epoch.
   */
  setMembership(groupId: string, epoch: number | undefined): void
  /** Sets (or with `undefined` forgets) the Coordinator Epoch in `groupId`. */
  setCoordinator(groupId: string, epoch: number | undefined): void
  /**
   * Learns from Events, in order: a session opened for this Agent, Memberships granted, changed or
   * ended for this actor, the Coordinator lease assigned to this Agent or to another one. Events
   * about other actors or of other kinds are ignored; a Group Event older (by Group sequence) than
   * the one that last set a Group's value is ignored, so replayed or reordered deliveries cannot
   * resurrect an ended Membership; and a value set by hand yields only to an Event naming the
   * same or a higher epoch.
   */
  observe(events: Iterable<Event>): void
}

/** One known value and the Group sequence of the latest Event seen about it. */
interface Learned {
  readonly epoch: number | undefined
  readonly sequence: number | undefined
  /** The value set by hand, until an Event naming it or a higher epoch is applied. */
  readonly floor?: number
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
   * Records what `event` says about `table`: the epoch it names, or that the value ended at that
   * epoch (`ends`), unless it is older news. A value that is not an epoch is not news, except
   * that an end needs none while nothing was set by hand.
   */
  const learn = (table: Map<string, Learned>, event: Event, epoch: unknown, ends = false): void => {
    const { groupId, sequence } = event
    const named = isEpoch(epoch) ? epoch : undefined
    if (groupId === undefined || (named === undefined && !ends)) return
    const known = table.get(groupId)
    if (known?.floor !== undefined) {
      // §6.3, §7.2, §8: an epoch fences every lower one, so an Event naming a lower epoch than the
      // one the caller set is older news, however late it arrives.
      if (named === undefined || named < known.floor) return
    } else if (known?.sequence !== undefined && sequence !== undefined && sequence <= known.sequence) {
      // §15.2: the Group sequence orders a Group's Events; an older fact must not overwrite a newer one.
      return
    }
    table.set(groupId, { epoch: ends ? undefined : named, sequence })
  }

  const setBy =
    (name: string, table: Map<string, Learned>) =>
    (groupId: string, epoch: number | undefined): void => {
      checkEpoch(name, epoch)
      // The sequence of the last Event seen stays, for when the floor goes: forgetting clears the
      // floor, and a later Event of the Group is news again.
      const sequence = table.get(groupId)?.sequence
      table.set(groupId, epoch === undefined ? { epoch, sequence } : { epoch, sequence, floor: epoch })
    }
  const agentOnly = (name: string, epoch: number | undefined): void => {
    // §6.3, §15.1: humans and services never carry Session or Coordinator Epochs.
    if (epoch !== undefined && !isAgent) throw new UsageError(`a ${actor.type} has no ${name}; only Agents carry one (§15.1)`)
  }
  const setMembership = setBy('membershipEpoch', memberships)
  const setCoordinator = setBy('coordinatorEpoch', coordinators)
  const setSession = (epoch: number | undefined): void => {
    checkEpoch('sessionEpoch', epoch)
    agentOnly('Session Epoch', epoch)
    session = epoch
  }

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
        if (sameActor(m?.member, actor)) learn(memberships, event, m?.membershipEpoch, m?.state === 'ended')
        return
      }
      case 'membership.ended': {
        const p = event.payload as Partial<EventPayload<'membership.ended'>>
        if (sameActor(p.member, actor)) learn(memberships, event, p.membershipEpoch, true)
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
        learn(coordinators, event, coordinator.coordinatorEpoch, coordinator.agentId !== actor.id)
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
    set(setting) {
      const { session: sessionEpoch, groupId, membership, coordinator } = setting ?? {}
      const inGroup = membership !== undefined || coordinator !== undefined
      if (inGroup !== (groupId !== undefined)) {
        throw new UsageError(inGroup ? 'epochs.set: membership and coordinator epochs belong to a Group; name its groupId' : 'epochs.set: groupId names no epoch to set')
      }
      if (groupId !== undefined && typeof groupId !== 'string') throw new UsageError('epochs.set: groupId must be a string')
      // Check everything before setting anything, so a refused setting changes nothing.
      checkEpoch('sessionEpoch', sessionEpoch)
      checkEpoch('membershipEpoch', membership)
      checkEpoch('coordinatorEpoch', coordinator)
      agentOnly('Session Epoch', sessionEpoch)
      agentOnly('Coordinator Epoch', coordinator)
      if (sessionEpoch !== undefined) setSession(sessionEpoch)
      if (groupId !== undefined && membership !== undefined) setMembership(groupId, membership)
      if (groupId !== undefined && coordinator !== undefined) setCoordinator(groupId, coordinator)
    },
    setSession,
    setMembership,
    setCoordinator(groupId, epoch) {
      agentOnly('Coordinator Epoch', epoch)
      setCoordinator(groupId, epoch)
    },
    observe(events) {
      for (const event of events) observeOne(event)
    },
  }
}
