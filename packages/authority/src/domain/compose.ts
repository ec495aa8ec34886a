/**
 * The handler and reducer tables of the Authority, composed from the domain modules. Typed by the
 * generated `CommandHandlers` and `EventReducers`, so a Command or Event kind added to the spec
 * fails to compile here until a domain module handles it.
 * @module
 */
import { artifactHandlers, artifactReducers } from './artifacts.js'
import { membershipHandlers, membershipReducers } from './memberships.js'
import { messageHandlers, messageReducers } from './messages.js'
import { missionHandlers, missionReducers } from './missions.js'
import { organizationHandlers, organizationReducers } from './organization.js'
import { policyHandlers, policyReducers } from './policy.js'
import { consumeOverride } from './runaway.js'
import { workHandlers, workReducers } from './work.js'
import type { CommandHandlers } from '../gen/handlers.js'
import type { EventReducers } from '../gen/reducers.js'
import type { AuthorityState } from '../model.js'
import type { Event } from '@weft/spec'

/** The handler of every Command kind. */
export const handlers: CommandHandlers = {
  ...organizationHandlers,
  ...missionHandlers,
  ...membershipHandlers,
  ...messageHandlers,
  ...policyHandlers,
  ...workHandlers,
  ...artifactHandlers,
}

const domainReducers: EventReducers = {
  ...organizationReducers,
  ...missionReducers,
  ...membershipReducers,
  ...messageReducers,
  ...policyReducers,
  ...workReducers,
  ...artifactReducers,
}

/**
 * The reducer of every Event kind; live acceptance and replay both use it (state = fold(log)).
 * §20: whatever its kind, the first Event of the Command a Cooperation Override Grant targets
 * spends that grant, in the same transaction; this is done here once, for every kind.
 */
export const reducers: EventReducers = Object.fromEntries(
  Object.entries(domainReducers).map(([kind, reduce]) => [
    kind,
    (state: AuthorityState, event: Event) => {
      ;(reduce as (s: AuthorityState, e: Event) => void)(state, event)
      consumeOverride(state, event)
    },
  ]),
) as unknown as EventReducers
