/**
 * Test fixtures of @weft/client: Principals with real Ed25519 keys and a Registry binding them,
 * a fake Authority transport that verifies every Command it receives (§6.4) and answers with
 * synthetic Events signed by the Authority, and document samples for those Events.
 */
import { encodeBase64url, keyPairFromSeed, ProtocolError, Registry, sign, signingHash, type SigningKey } from '@weft/codec'
import type { Actor, Command, Event, EventKind, Membership, Mission } from '@weft/spec'
import { groupGenesis } from '@weft/testkit/genesis'
import { signedVerifier } from '@weft/validators/signed'
import { createClient, type Client, type Receipt, type Transport } from '../src/index.js'

export const ORG = 'urn:weft:client-test:org'
export const GROUP = 'urn:weft:client-test:group:one'
export const OTHER_GROUP = 'urn:weft:client-test:group:two'
export const MISSION = 'urn:weft:client-test:mission:one'
/** The fixed test time, and its text as the client prints it. */
export const T0_MS = Date.parse('2026-07-15T00:00:00.000Z')
export const T0 = new Date(T0_MS).toISOString()

/** A Principal with its signing key. */
export interface Principal {
  readonly actor: Actor
  readonly key: SigningKey
}

function principal(type: Actor['type'], name: string, seed: number): Principal {
  return {
    actor: { type, id: `urn:weft:client-test:${type}:${name}` },
    key: { keyId: `urn:weft:client-test:key:${name}`, pair: keyPairFromSeed(new Uint8Array(32).fill(seed)) },
  }
}

/** The cast: a human owner, a Coordinator, a Worker, the control plane and the Authority. */
export const cast = {
  owner: principal('human', 'owner', 11),
  coordinator: principal('agent', 'coordinator', 12),
  worker: principal('agent', 'worker', 13),
  controlPlane: principal('service', 'control-plane', 14),
  authority: principal('service', 'authority', 15),
} as const

/** A Registry binding every cast key to its Principal. */
export const registry: Registry = (() => {
  const bindings = Object.values(cast).map((p) => ({
    keyId: p.key.keyId,
    principal: p.actor,
    algorithm: 'Ed25519',
    publicKey: encodeBase64url(p.key.pair.publicKey),
    validFrom: '2026-01-01T00:00:00Z',
    validityHistory: [],
  }))
  return Registry.fromEvidence({ organizationId: ORG, bindings })
})()

/** A seeded random source: a counter, so every minted ID differs and runs repeat. */
export function counterRandom(): (size: number) => Uint8Array {
  let n = 0
  return (size) => {
    n += 1
    const bytes = new Uint8Array(size)
    new DataView(bytes.buffer).setUint32(0, n)
    return bytes
  }
}

/** An Event the fake Authority appends: its kind, payload and (for Group Events) nothing else to say. */
export interface EventSpec {
  readonly kind: EventKind
  readonly payload: Record<string, unknown>
  /** Defaults to the Command's Group; `null` for an Organization-scoped fact. */
  readonly groupId?: string | null
}

/** Decides the Events answering a Command, or throws a ProtocolError to refuse it. */
export type Respond = (command: Command) => readonly EventSpec[]

/** What the fake Authority saw. */
export interface Submission {
  readonly command: Readonly<Record<string, unknown>>
  readonly bytes: string
}

/**
 * A fake Authority behind a {@link Transport}: verifies the Command bytes in all six §6.4 stages
 * (envelope schema included) against {@link registry}, answers a byte-identical retry with the
 * original receipt marked `duplicate` (§15.1), and signs synthetic Events with contiguous
 * sequences per Group.
 */
export function fakeAuthority(respond: Respond = () => []) {
  const submissions: Submission[] = []
  const receipts = new Map<string, { bytes: string; receipt: Receipt }>()
  const heads = new Map<string, number>()
  let eventCount = 0
  const event = (command: Command, spec: EventSpec): Event => {
    const groupId = spec.groupId === null ? undefined : (spec.groupId ?? command.groupId)
    const sequence = groupId === undefined ? undefined : (heads.get(groupId) ?? 0) + 1
    if (groupId !== undefined && sequence !== undefined) heads.set(groupId, sequence)
    const unsigned = {
      protocolVersion: '0.1',
      eventId: `urn:weft:client-test:event:${++eventCount}`,
      ...(groupId !== undefined && { groupId, sequence, aggregateRevision: sequence }),
      kind: spec.kind,
      actor: cast.authority.actor,
      cause: { type: 'command', id: command.actionId },
      correlationId: command.correlationId,
      occurredAt: command.issuedAt,
      payload: spec.payload,
      acceptedBy: cast.authority.actor,
      commandHash: signingHash(command),
    }
    return sign('event', unsigned, cast.authority.key) as unknown as Event
  }
  const transport: Transport = {
    async submit(command, bytes) {
      submissions.push({ command, bytes })
      const result = signedVerifier.verify('command', bytes, registry)
      if (!result.ok) throw result.error
      const parsed = JSON.parse(bytes) as Command
      const key = `${parsed.actor.type}|${parsed.actor.id}|${parsed.actionId}`
      const previous = receipts.get(key)
      if (previous !== undefined) {
        if (previous.bytes !== bytes) throw new ProtocolError('ACTION_ID_COLLISION', 'The Action ID was used for other content.')
        return { ...previous.receipt, duplicate: true }
      }
      const receipt: Receipt = {
        actionId: parsed.actionId,
        actor: parsed.actor,
        kind: parsed.kind as Receipt['kind'],
        ...(parsed.groupId !== undefined && { groupId: parsed.groupId }),
        commandHash: result.verified.signingHash,
        events: respond(parsed).map((spec) => event(parsed, spec)),
        acceptedAt: parsed.issuedAt,
        duplicate: false,
      }
      receipts.set(key, { bytes, receipt })
      return receipt
    },
  }
  return { transport, submissions }
}

/** A client for `who` on `transport` at the fixed test time with seeded IDs; default Group {@link GROUP}, `null` for none. */
export function clientOf(who: Principal, transport: Transport, groupId: string | null = GROUP): Client {
  return createClient({ actor: who.actor, signingKey: who.key, transport, ...(groupId !== null && { groupId }), clock: { now: () => T0_MS }, random: counterRandom() })
}

/** The parsed body of the last submission. */
export function lastCommand(submissions: readonly Submission[]): Command {
  const last = submissions.at(-1)
  if (last === undefined) throw new Error('nothing submitted')
  return JSON.parse(last.bytes) as Command
}

/** A complete Membership of `who` in `groupId` (§8). */
export function membership(who: Principal, epoch: number, groupId = GROUP, state: Membership['state'] = 'active'): Membership {
  return {
    membershipId: `${groupId}:membership:${who.actor.id.split(':').pop()}`,
    missionId: MISSION,
    groupId,
    member: who.actor,
    role: who === cast.owner ? 'mission_owner' : who === cast.coordinator ? 'coordinator' : 'worker',
    state,
    membershipEpoch: epoch,
    scopes: ['group:read', 'group:write'],
    visibilityStartSequence: 0,
    grantedAt: T0,
    ...(state === 'active' && { activatedAt: T0 }),
    ...(state === 'ended' && { activatedAt: T0, endedAt: T0 }),
    ...(state === 'provisional' && { provisionalExpiresAt: T0, contextPackageId: 'urn:weft:client-test:context:1' }),
  }
}

/** The Mission's current Coordinator entry naming `who` at `epoch` (§7.2). */
export function coordinatorEntry(who: Principal, epoch: number): Mission['coordinator'] {
  return { agentId: who.actor.id, agentCardVersion: 1, coordinatorEpoch: epoch, leaseId: `${GROUP}:lease:coordinator:${epoch}` }
}

/** A `mission.created` payload for a Mission owned by `cast.owner` and coordinated by `coordinator`. */
export function missionCreated(groupId: string, coordinator: Principal, coordinatorEpoch = 1): Record<string, unknown> {
  return groupGenesis({
    groupId,
    missionId: MISSION,
    owner: cast.owner.actor,
    coordinator: coordinatorEntry(coordinator, coordinatorEpoch),
    createdAt: T0,
    leaseExpiresAt: '2026-07-16T00:00:00.000Z',
    budget: { currency: 'USD', financialLimit: 1000 },
  })
}

/** The reason `promise` rejects with; fails when it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection')
}
