/**
 * The Organization domain (§6.1, §6.3): the Agent Registry's signed Agent Card versions and the
 * Session Epochs that fence older runtimes of an Agent. Both Commands are Organization-scoped
 * bootstrap Commands of the control plane (§15.1); opening a Session also revokes the Agent's
 * Execution Leases in every Group (§11.3). A card whose `status` is not `active` stops its Agent
 * (see `../ingress/standing.ts`): ingress refuses its Commands and its WorkItems may be offered again at once.
 * @module
 */
import { draft, reject, type AnyEventDraft, type CommandOf, type HandlerContext, type HandlerFor, type ReducerFor } from '../commit/handler.js'
import type { ActorRef } from '../model.js'
import { cardSuccessionFault } from '../ingress/standing.js'
import { isControlPlane, requireRole } from './memberships.js'
import { targetOf } from './work-machine.js'

type OrganizationCommandKind = 'ext.missionweaveprotocol.registry.agent_card_register' | 'ext.missionweaveprotocol.identity.session_open'
type OrganizationEventKind = 'ext.missionweaveprotocol.registry.agent_card_registered' | 'ext.missionweaveprotocol.identity.session_opened'

const SESSION_OPEN = 'ext.missionweaveprotocol.identity.session_open'

function registerCard(command: CommandOf<'ext.missionweaveprotocol.registry.agent_card_register'>, ctx: HandlerContext): readonly AnyEventDraft[] {
  // §6.1, §15.1: the Organization issues Agent Cards, through its control plane.
  requireRole([isControlPlane(ctx, command.actor as ActorRef)], 'register agent cards')
  const { card } = command.payload
  ctx.verifyDocument('agent-card', card)
  const known = ctx.state.org.agents.get(card.agentId)
  // §6.1: cards are versioned; assignments pin a version, so a version is never reissued.
  if (known !== undefined && card.cardVersion <= known.card.cardVersion) {
    reject('INVALID_COMMAND', `card version ${card.cardVersion} is not above the registered version ${known.card.cardVersion}`)
  }
  // A revocation stays: another process with an older organization file must not lift it (§6.4 keeps key boundaries alike).
  const fault = known === undefined ? undefined : cardSuccessionFault(known, card)
  if (fault !== undefined) reject(fault.code, fault.message)
  return [draft('ext.missionweaveprotocol.registry.agent_card_registered', { card })]
}

function openSession(command: CommandOf<typeof SESSION_OPEN>, ctx: HandlerContext): readonly AnyEventDraft[] {
  requireRole([isControlPlane(ctx, command.actor as ActorRef)], 'open agent sessions')
  const { agentId } = command.payload
  const agent = ctx.state.org.agents.get(agentId) ?? reject('INVALID_COMMAND', 'the agent is not registered')
  if (agent.card.status !== 'active') reject('AUTH_FORBIDDEN', `the agent card is ${agent.card.status}`)
  // §6.3: epoch n + 1 fences every session at epoch n or lower.
  const drafts: AnyEventDraft[] = [draft('ext.missionweaveprotocol.identity.session_opened', { agentId, sessionEpoch: agent.sessionEpoch + 1 })]
  // §11.3: the replacement runtime starts nothing until the old one's Execution Leases are revoked
  // and their WorkItems are back in `queued`.
  for (const group of ctx.state.groups.values()) {
    for (const record of group.workItems.values()) {
      const lease = record.executionLease
      if (lease?.state !== 'active' || lease.holderAgentId !== agentId || lease.ownershipEpoch === undefined) continue
      if (targetOf(record.doc.state, SESSION_OPEN) === undefined) continue
      const workItemId = record.doc.workItemId
      drafts.push(
        draft(
          'ext.missionweaveprotocol.core.work_execution_lease_revoked',
          {
            workItemId,
            ownershipEpoch: lease.ownershipEpoch,
            executionLeaseId: lease.leaseId,
            agentId,
            revokedSessionEpoch: lease.sessionEpoch,
            reason: `agent session epoch ${agent.sessionEpoch + 1} replaced the session holding the lease`,
          },
          { groupId: group.groupId, workItemId, actor: ctx.authority },
        ),
      )
    }
  }
  return drafts
}

/** Command handlers of the Organization domain (§6.1, §6.3). */
export const organizationHandlers = {
  'ext.missionweaveprotocol.registry.agent_card_register': registerCard,
  'ext.missionweaveprotocol.identity.session_open': openSession,
} satisfies { readonly [K in OrganizationCommandKind]: HandlerFor<K> }

/** Event reducers of the Organization domain; they write only the Agent Registry. */
export const organizationReducers = {
  'ext.missionweaveprotocol.registry.agent_card_registered': (state, event) => {
    const { card } = event.payload
    const known = state.org.agents.get(card.agentId)
    if (known === undefined) {
      // No session yet: epoch 0 until the first session_open (§6.3).
      state.org.agents.set(card.agentId, { agentId: card.agentId, card, cardVersions: [card], sessionEpoch: 0 })
      return
    }
    known.card = card
    known.cardVersions.push(card)
  },
  'ext.missionweaveprotocol.identity.session_opened': (state, event) => {
    const agent = state.org.agents.get(event.payload.agentId)
    if (agent !== undefined) agent.sessionEpoch = event.payload.sessionEpoch
  },
} satisfies { readonly [K in OrganizationEventKind]: ReducerFor<K> }
