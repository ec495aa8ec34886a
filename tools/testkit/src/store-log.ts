/**
 * Real Authority transactions for the store tests: the Authority test world (a cast with real keys,
 * clients, signed Commands) driven through a scenario that touches the Organization log, two
 * Groups and multi-Event transactions, with every `appendTransaction` recorded.
 */
import { createAuthority, createMemoryStore, type Authority, type AuthorityOptions, type AuthorityStore, type StoredReceipt } from '@weft/authority'
import type { CommandPayload, Event } from '@weft/spec'
import { cast } from './fixtures.js'
import { promote, reach, started, type World } from './world.js'

/** One accepted Command as the store saw it. */
export interface Transaction {
  readonly events: readonly Event[]
  readonly receipt: StoredReceipt
}

/** `store`, with every transaction it accepted appended to `into`. */
export function recording(store: AuthorityStore, into: Transaction[]): AuthorityStore {
  return {
    ...store,
    appendTransaction(events, receipt) {
      store.appendTransaction(events, receipt)
      into.push({ events, receipt })
    },
  }
}

/**
 * Boots the Organization, opens the Mission, brings WorkItems to verified, blocked and cancelled,
 * and promotes an active one to a child Mission (a second Group).
 */
export async function scenario(store: AuthorityStore): Promise<World> {
  const w = await started({ store })
  await reach(w, 'verified')
  await reach(w, 'blocked')
  await reach(w, 'cancelled')
  await promote(w, await reach(w, 'active'))
  return w
}

/** The transactions of {@link scenario}, appended to a memory store on the way. */
export async function scenarioLog(): Promise<readonly Transaction[]> {
  const log: Transaction[] = []
  await scenario(recording(createMemoryStore(), log))
  return log
}

/** A second Authority over `store`, as the world's would restart: same Registry, keys, clock and policy (plus `policy` and `onWarning` when given). */
export function restart(w: World, store: AuthorityStore, options: Pick<AuthorityOptions, 'policy' | 'onWarning'> = {}): Authority {
  return createAuthority({
    registry: w.registry,
    keys: { authority: { type: 'service', id: cast.authority.actor.id }, signingKey: cast.authority.key },
    clock: { now: () => w.clock.nowMs },
    policy: { controlPlane: [cast.controlPlane.actor.id], ...options.policy },
    store,
    ...(options.onWarning === undefined ? {} : { onWarning: options.onWarning }),
  })
}

/** A `message.post` payload named `name` in the world's main Conversation. */
export function post(w: World, name: string): CommandPayload<'message.post'> {
  return { messageId: `urn:weft:test:message:${name}`, conversationId: w.group().group.mainConversationId, content: [{ type: 'text', text: name }] }
}
