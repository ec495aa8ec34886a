/**
 * Shared test fixtures: a cast of Principals with real Ed25519 keys and a Registry binding each,
 * sample documents valid against the normative schemas, a test clock, signed Commands (§6.4) and a
 * seeded random source, so every run has the same identities and IDs.
 */
import type { ActorRef, AuthorityPolicy, CommandOf, GroupState } from '@weft/authority'
import { encodeBase64url, keyPairFromSeed, ProtocolError, Registry, sign, type SigningKey } from '@weft/codec'
import type { AgentCard, CommandKind, Evidence } from '@weft/spec'
import { CAPABILITY } from './work-contract.js'

// The Work Contract lives in its own module, free of keys and of the Authority (the Worker's tests use it alone).
export { CAPABILITY, contract, PATCH_SCHEMA } from './work-contract.js'

/** The fixed start of test time. */
export const T0 = '2026-07-15T00:00:00.000Z'
/** {@link T0} in epoch milliseconds. */
export const T0_MS = Date.parse(T0)

/** The test Organization: the Registry's `organizationId`. */
export const ORG = 'urn:weft:test:org'

/** A Principal with its signing key. */
export interface Cast {
  readonly actor: ActorRef
  readonly key: SigningKey
}

function member(type: ActorRef['type'], name: string, seed: number): Cast {
  return {
    actor: { type, id: `urn:weft:test:${type}:${name}` },
    key: { keyId: `urn:weft:test:key:${name}`, pair: keyPairFromSeed(new Uint8Array(32).fill(seed)) },
  }
}

/** The cast: a human owner, a Coordinator, three Workers, a reviewer, the control plane and the Authority itself. */
export const cast = {
  owner: member('human', 'owner', 1),
  coordinator: member('agent', 'coordinator', 2),
  worker1: member('agent', 'worker-1', 3),
  worker2: member('agent', 'worker-2', 4),
  worker3: member('agent', 'worker-3', 5),
  reviewer: member('agent', 'reviewer', 6),
  controlPlane: member('service', 'control-plane', 7),
  authority: member('service', 'authority', 8),
  registry: member('service', 'registry', 9),
} as const

/** A Registry binding every cast member's key, valid from 2026-01-01. */
export function testRegistry(extra: readonly Cast[] = []): Registry {
  const bindings = [...Object.values(cast), ...extra].map((m) => ({
    keyId: m.key.keyId,
    principal: m.actor,
    algorithm: 'Ed25519',
    publicKey: encodeBase64url(m.key.pair.publicKey),
    validFrom: '2026-01-01T00:00:00Z',
    validityHistory: [],
  }))
  const result = Registry.fromEvidence({ organizationId: ORG, bindings })
  if (!(result instanceof Registry)) throw new Error(`test registry rejected: ${JSON.stringify(result)}`)
  return result
}

/**
 * An Organization-signed Agent Card for `who` with the test capability; `changes` replace members
 * before the signature (a `status`, the `publicKeys` with their validity boundaries).
 */
export function agentCard(who: Cast, cardVersion = 1, changes: Partial<Pick<AgentCard, 'status' | 'publicKeys'>> = {}): AgentCard {
  return sign(
    'agent-card',
    {
      agentId: who.actor.id,
      organizationId: ORG,
      cardVersion,
      displayName: who.actor.id.split(':').pop()!,
      owner: cast.owner.actor,
      status: 'active',
      protocolVersions: ['0.1'],
      endpoints: [{ transport: 'wss', uri: `wss://agents.test.invalid/${who.actor.id.split(':').pop()}` }],
      publicKeys: [{ keyId: who.key.keyId, algorithm: 'Ed25519', publicKey: encodeBase64url(who.key.pair.publicKey), validFrom: '2026-01-01T00:00:00Z' }],
      capabilities: [
        {
          id: CAPABILITY.id,
          version: CAPABILITY.version,
          inputSchema: 'urn:weft:test:schema:input',
          inputSchemaHash: `sha256:${'a'.repeat(64)}`,
          outputSchema: 'urn:weft:test:schema:output',
          outputSchemaHash: `sha256:${'b'.repeat(64)}`,
          constraints: {},
          verifiedEvidence: ['urn:weft:test:evidence:capability'],
        },
      ],
      maxConcurrency: 2,
      issuedAt: '2026-07-01T00:00:00Z',
      ...changes,
    },
    cast.registry.key,
  ) as unknown as AgentCard
}

/** Evidence for `criterionIds` of a WorkItem, signed by `by` at `createdAt`. */
export function evidence(group: GroupState, workItemId: string, by: Cast, criterionIds = ['tests-pass'], result: Evidence['result'] = 'passed', createdAt = '2026-07-15T00:00:00Z'): Evidence {
  return sign(
    'evidence',
    {
      evidenceId: `urn:weft:test:evidence:${Math.random().toString(36).slice(2)}`,
      missionId: group.missionId,
      groupId: group.groupId,
      workItemId,
      type: 'deterministic_test',
      subject: { type: 'work_item', id: workItemId },
      criterionIds,
      method: 'Ran the test suite.',
      result,
      artifactHashes: [],
      generatedBy: by.actor,
      createdAt,
    },
    by.key,
  ) as unknown as Evidence
}

/** The Group of the test Mission {@link MISSION}. */
export const GROUP = 'urn:weft:test:group:one'
/** The test Mission, whose Group is {@link GROUP}. */
export const MISSION = 'urn:weft:test:mission:one'

/** A deterministic `newId`: `urn:uuid:`-shaped, counting up. */
export function counterIds(prefix = '00000000-0000-4000-8000'): () => string {
  let n = 0
  return () => `urn:uuid:${prefix}-${(++n).toString(16).padStart(12, '0')}`
}

/** The Authority policy of the handler tests: fixed freshness, size and depth limits, and the cast's control plane (§6.1). */
export const DEFAULT_TEST_POLICY: AuthorityPolicy = {
  freshnessSeconds: 300,
  maxCommandBytes: 1 << 20,
  maxMissionDepth: 4,
  maxDelegationDepth: 8,
  controlPlane: [cast.controlPlane.actor.id],
}

/** A clock the test moves by hand. */
export interface TestClock {
  nowMs: number
  advance(seconds: number): void
}

/** A {@link TestClock} at `startMs` (default {@link T0}). */
export function testClock(startMs = T0_MS): TestClock {
  return {
    nowMs: startMs,
    advance(seconds) {
      this.nowMs += seconds * 1000
    },
  }
}

/** A Command envelope around `payload`, signed by `by` (epochs as given). */
export function command<K extends CommandKind>(
  kind: K,
  payload: CommandOf<K>['payload'],
  by: Cast,
  envelope: Partial<Omit<CommandOf<K>, 'kind' | 'payload' | 'signature'>> = {},
  clock: TestClock = testClock(),
): CommandOf<K> {
  const unsigned = {
    protocolVersion: '0.1',
    actionId: `urn:weft:test:action:${Math.random().toString(36).slice(2)}`,
    actor: by.actor,
    kind,
    correlationId: 'urn:weft:test:correlation:1',
    issuedAt: new Date(clock.nowMs).toISOString(),
    payload,
    ...envelope,
  }
  return sign('command', unsigned, by.key) as unknown as CommandOf<K>
}

/** A seeded random source (a linear congruential generator), so Event IDs repeat run to run. */
export function seededRandom(seed = 1): (n: number) => Uint8Array {
  let x = seed >>> 0
  return (n) => {
    const bytes = new Uint8Array(n)
    for (let i = 0; i < n; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0
      bytes[i] = x >>> 24
    }
    return bytes
  }
}

/** A Command signed by `by` at the clock's time, as the JSON text a transport carries. */
export function signed<K extends CommandKind>(kind: K, payload: CommandOf<K>['payload'], by: Cast, envelope: Parameters<typeof command<K>>[3], clock: TestClock): string {
  return JSON.stringify(command(kind, payload, by, envelope, clock))
}

/** Awaits a refusal and returns its `ProtocolError` (fails when the promise resolves or rejects with anything else). */
export async function refusal(promise: Promise<unknown>): Promise<ProtocolError> {
  const outcome = await promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  )
  if (!('error' in outcome)) throw new Error(`expected a refusal, got ${JSON.stringify(outcome.value).slice(0, 200)}`)
  if (!(outcome.error instanceof ProtocolError)) throw new Error(`expected a ProtocolError, got ${String(outcome.error)}`)
  return outcome.error
}
