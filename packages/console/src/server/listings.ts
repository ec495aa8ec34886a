/**
 * What a signed-in person may list, read from the Authority's state at each request: the Groups
 * they may see (§8) and the Organization's registered Agents (§6.1), the Coordinators they may name.
 * @module
 */
import { actorKey, type AuthorityState, type GroupState } from '@weft/authority'
import type { ConsoleAgent, ConsoleGroup } from '../shared/sign-in.js'

/** The part of the Authority's state the listings read. */
export type ListedState = Pick<AuthorityState, 'groups'> & Partial<Pick<AuthorityState, 'org'>>

/** Whether a Group is the person's to see (§8): a Membership not ended, or the Mission is theirs. */
function visibleTo(group: GroupState, person: { readonly id: string }): { readonly role?: string } | undefined {
  const id = group.membershipByMember.get(actorKey({ type: 'human', id: person.id }))
  const membership = id === undefined ? undefined : group.memberships.get(id)
  if (membership !== undefined && membership.state !== 'ended') return { role: membership.role }
  const owner = group.mission.missionOwner
  if (owner.type === 'human' && owner.id === person.id) return { role: 'mission_owner' }
  return undefined
}

/** The Groups `person` may see, in ID order; a hidden Group is absent, exactly as a missing one. */
export function groupsOf(state: ListedState, person: { readonly id: string }): ConsoleGroup[] {
  const groups: ConsoleGroup[] = []
  for (const group of state.groups.values()) {
    const seen = visibleTo(group, person)
    if (seen === undefined) continue
    // The Mission's title is its main Conversation's (§7.1 mission.create).
    const title = group.conversations.get(group.group.mainConversationId)?.title
    groups.push({
      groupId: group.groupId,
      missionId: group.missionId,
      ...(title === undefined ? {} : { title }),
      missionState: group.mission.state,
      ...(seen.role === undefined ? {} : { role: seen.role }),
      headSequence: group.head,
    })
  }
  groups.sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0))
  return groups
}

/** The Organization's Agents as their latest Agent Cards state them (§6.1), in ID order. */
export function agentsOf(state: ListedState): ConsoleAgent[] {
  const agents: ConsoleAgent[] = []
  for (const record of state.org?.agents.values() ?? []) {
    const card = record.card
    agents.push({
      agentId: record.agentId,
      displayName: card.displayName,
      status: card.status,
      capabilities: card.capabilities.map((c) => ({ id: c.id, version: c.version })),
      maxConcurrency: card.maxConcurrency,
    })
  }
  agents.sort((a, b) => (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0))
  return agents
}
