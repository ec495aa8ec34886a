/**
 * The handler and reducer tables of the Authority, composed from the domain modules. Typed by the
 * generated `CommandHandlers` and `EventReducers`, so a Command or Event kind added to the spec
 * fails to compile here until a domain module handles it.
 * @module
 */
import { artifactHandlers, artifactReducers } from './domain/artifacts.js'
import { membershipHandlers, membershipReducers } from './domain/memberships.js'
import { messageHandlers, messageReducers } from './domain/messages.js'
import { missionHandlers, missionReducers } from './domain/missions.js'
import { organizationHandlers, organizationReducers } from './domain/organization.js'
import { policyHandlers, policyReducers } from './domain/policy.js'
import { workHandlers, workReducers } from './domain/work.js'
import type { CommandHandlers } from './gen/handlers.js'
import type { EventReducers } from './gen/reducers.js'

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

/** The reducer of every Event kind; live acceptance and replay both use it (state = fold(log)). */
export const reducers: EventReducers = {
  ...organizationReducers,
  ...missionReducers,
  ...membershipReducers,
  ...messageReducers,
  ...policyReducers,
  ...workReducers,
  ...artifactReducers,
}
