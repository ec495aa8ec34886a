/**
 * Fencing at every Command kind (§4 invariants 4 and 5, §6.3, §7.2, §11.3, §15.1, §19), generated
 * from the Command catalog. Each case is a Command of one kind, by one issuer type, that the
 * Authority accepts as the client builds it; the tests then drop or age each epoch and lease it
 * carries and expect the exact §19 code:
 *
 * - an envelope epoch `command.schema.json` requires (the catalog's `requiredEpochs`), omitted:
 *   `SCHEMA_VALIDATION_FAILED`; a fenced one: `AUTH_STALE_SESSION`, `MEMBERSHIP_STALE` or
 *   `AUTH_STALE_COORDINATOR`;
 * - the Coordinator Epoch of a Command whose authority comes from the Coordinator role although the
 *   catalog does not list it (§15.1), omitted or fenced: `AUTH_STALE_COORDINATOR`;
 * - a payload's Ownership Epoch or Execution Lease ID (§11.3), omitted: `SCHEMA_VALIDATION_FAILED`
 *   (or, where both are optional, the code of an owner citing no lease at all); an older one:
 *   `WORK_STALE_OWNERSHIP` or `WORK_LEASE_EXPIRED`.
 *
 * Every case runs in a world where each epoch it carries is 2, so the "stale" value 1 is one the
 * Authority really issued and fenced. A catalogued kind or issuer type without a case fails the
 * completeness test, so a new kind must be added to {@link CASES}.
 *
 * The worlds and attempts the cases use are built by `fencing-world.ts`; the Coordinator Epoch is
 * also fenced case by case, by hand, in `fencing-coordinator.test.ts`.
 */
import type { Receipt } from '@weft/client'
import type { ErrorCode } from '@weft/codec'
import { COMMAND_CATALOG, CommandPayloads, commandInfo, type CommandKind, type EpochName } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { snapshotOf } from '@weft/testkit/archive'
import { manifest } from '@weft/testkit/artifacts'
import { childPayload } from '@weft/testkit/documents'
import { agentCard, cast, contract, evidence, GROUP } from '@weft/testkit/fixtures'
import { accept, authorize, block, checkpointNow, expectRefused, failureEvidence, missionCreate, offer, publish, reach, reachMission, start, wid, type Who } from '@weft/testkit/world'
import {
  amendment,
  appoint,
  approval,
  attemptIn,
  booted,
  coordinatorEpochDropped,
  delegation,
  executing,
  executionApproval,
  fenced,
  inChild,
  inFenced,
  inOrganization,
  isPayloadFence,
  mainConversation,
  membershipIdOf,
  offerOf,
  omit,
  override,
  ownedTwice,
  PAYLOAD_FENCES,
  posted,
  resigned,
  text,
  type Attempt,
  type Envelope,
  type Fence,
} from './fencing-world.js'

type IssuerType = 'agent' | 'human' | 'service'

interface Case {
  readonly kind: CommandKind
  readonly issuer: IssuerType
  /** Who acts, on what authority; said in the titles. */
  readonly how: string
  /** Authority from the Coordinator role on a kind whose catalog entry does not list the Coordinator Epoch (§15.1). */
  readonly asCoordinator?: true
  /** The payload cites the owner's execution through optional fencing members (`work.fail`). */
  readonly citesExecution?: true
  /** The code when every optional fencing member is omitted: the owner then holds no authority. */
  readonly uncited?: ErrorCode
  readonly setup: () => Promise<Attempt>
}

// ---------------------------------------------------------------------------------------------
// The cases: every catalogued kind, by every issuer type it admits
// ---------------------------------------------------------------------------------------------

/** The actor of a case by issuer type, where the kind admits the Coordinator, the MissionOwner or the control plane. */
const BY: Readonly<Record<IssuerType, Who>> = { agent: 'coordinator', human: 'owner', service: 'controlPlane' }
const ROLE_NAME: Readonly<Record<IssuerType, string>> = { agent: 'the Coordinator', human: 'the MissionOwner', service: 'the control plane' }

/** A case per issuer type of a kind the Coordinator (by its role), the MissionOwner and the control plane may each issue. */
function byEachRole(kind: CommandKind, what: string, payload: Parameters<typeof attemptIn>[2]): Case[] {
  return (['agent', 'human', 'service'] as const).map((issuer) => ({
    kind,
    issuer,
    how: `${ROLE_NAME[issuer]} ${what}`,
    ...(issuer === 'agent' ? { asCoordinator: true as const } : {}),
    setup: inFenced(BY[issuer], payload),
  }))
}

const CASES: readonly Case[] = [
  { kind: 'mission.create', issuer: 'human', how: 'the owner opens a root Mission', setup: attemptIn(booted, 'owner', () => missionCreate('one'), { groupId: GROUP }) },
  { kind: 'mission.assign_coordinator', issuer: 'human', how: 'the MissionOwner appoints', setup: inFenced('owner', (w) => appoint(w, 'reviewer')) },
  { kind: 'mission.assign_coordinator', issuer: 'agent', how: 'a child MissionOwner appoints', setup: inChild('coordinator', (w) => appoint(w, 'reviewer')) },
  { kind: 'mission.assign_coordinator', issuer: 'service', how: 'the control plane appoints', setup: inFenced('controlPlane', (w) => appoint(w, 'reviewer')) },
  { kind: 'mission.renew_coordinator', issuer: 'agent', how: 'the Coordinator renews', setup: inFenced('coordinator', () => ({ leaseSeconds: 3600 })) },
  {
    kind: 'mission.submit_for_approval',
    issuer: 'agent',
    how: 'the Coordinator submits',
    setup: inFenced('coordinator', async (w) => {
      await reach(w, 'verified', { candidates: ['worker1'] })
      return { artifactHashes: [...new Set([...w.group().artifacts.values()].map((a) => a.manifest.contentHash))] }
    }),
  },
  { kind: 'mission.approve', issuer: 'human', how: 'the MissionOwner approves', setup: inFenced('owner', (w) => approval(w, 'owner', 'approved')) },
  { kind: 'mission.approve', issuer: 'agent', how: 'a child MissionOwner approves', setup: inChild('coordinator', (w) => approval(w, 'coordinator', 'approved')) },
  { kind: 'mission.request_changes', issuer: 'human', how: 'the MissionOwner asks for changes', setup: inFenced('owner', (w) => approval(w, 'owner', 'changes_requested')) },
  { kind: 'mission.request_changes', issuer: 'agent', how: 'a child MissionOwner asks for changes', setup: inChild('coordinator', (w) => approval(w, 'coordinator', 'changes_requested')) },
  { kind: 'mission.cancel', issuer: 'human', how: 'the MissionOwner cancels', setup: inFenced('owner', () => ({ reason: 'Priorities changed.' })) },
  { kind: 'mission.cancel', issuer: 'agent', how: 'a child MissionOwner cancels', setup: inChild('coordinator', () => ({ reason: 'Priorities changed.' })) },
  { kind: 'mission.cancel', issuer: 'service', how: 'the control plane cancels', setup: inFenced('controlPlane', () => ({ reason: 'Policy.' })) },
  { kind: 'mission.terminate', issuer: 'agent', how: 'the Coordinator terminates', setup: inFenced('coordinator', () => ({ reason: 'The Mission cannot succeed.' })) },
  { kind: 'mission.terminate', issuer: 'service', how: 'the control plane terminates', setup: inFenced('controlPlane', () => ({ reason: 'Policy.' })) },
  { kind: 'mission.create_child', issuer: 'agent', how: 'the Coordinator promotes a WorkItem', setup: inFenced('coordinator', async (w) => childPayload(await reach(w, 'queued'), w.fresh('child'))) },
  {
    kind: 'mission.create_follow_up',
    issuer: 'human',
    how: 'the MissionOwner follows an approved Mission up',
    setup: inFenced(
      'owner',
      async (w) => {
        await reachMission(w, 'approved')
        return { ...missionCreate('follow-up'), followUpToMissionId: w.group().missionId, reason: 'A defect was found.' }
      },
      { groupId: 'urn:weft:test:group:follow-up' },
    ),
  },
  ...byEachRole('membership.change', 'changes a Membership', (w) => ({
    membershipId: membershipIdOf(w, 'worker1'),
    member: cast.worker1.actor,
    role: 'worker',
    state: 'active',
    scopes: ['group:read', 'work_item:write'],
  })),
  ...byEachRole('membership.end', 'ends a Membership', (w) => ({ membershipId: membershipIdOf(w, 'worker2'), reason: 'Left the team.' })),
  {
    kind: 'membership.grant_delegation',
    issuer: 'agent',
    how: 'the Coordinator grants a Delegation Grant',
    setup: inFenced('coordinator', delegation),
  },
  {
    kind: 'message.post',
    issuer: 'agent',
    how: 'a Worker posts',
    setup: inFenced('worker1', (w) => ({ messageId: `urn:weft:test:message:${w.fresh('m')}`, conversationId: mainConversation(w), content: text('Hello.') })),
  },
  {
    kind: 'message.post',
    issuer: 'human',
    how: 'the MissionOwner posts',
    setup: inFenced('owner', (w) => ({ messageId: `urn:weft:test:message:${w.fresh('m')}`, conversationId: mainConversation(w), content: text('Hello.') })),
  },
  { kind: 'message.correct', issuer: 'agent', how: 'a Worker corrects its Message', setup: inFenced('worker1', async (w) => amendment(w, await posted(w, 'worker1'))) },
  { kind: 'message.correct', issuer: 'human', how: 'the MissionOwner corrects its Message', setup: inFenced('owner', async (w) => amendment(w, await posted(w, 'owner'))) },
  { kind: 'message.retract', issuer: 'agent', how: 'a Worker retracts its Message', setup: inFenced('worker1', async (w) => amendment(w, await posted(w, 'worker1'))) },
  { kind: 'message.retract', issuer: 'human', how: 'the MissionOwner retracts its Message', setup: inFenced('owner', async (w) => amendment(w, await posted(w, 'owner'))) },
  ...byEachRole('message.redact', 'redacts a Worker’s Message', async (w) => ({ ...amendment(w, await posted(w, 'worker2')), reason: 'Policy: credentials.' })),
  { kind: 'work.propose', issuer: 'agent', how: 'a Worker proposes', setup: inFenced('worker1', (w) => ({ proposalId: wid(w.fresh('idea')), contract: contract() })) },
  { kind: 'work.propose', issuer: 'human', how: 'the MissionOwner proposes', setup: inFenced('owner', (w) => ({ proposalId: wid(w.fresh('idea')), contract: contract() })) },
  {
    kind: 'work.authorize',
    issuer: 'agent',
    how: 'the Coordinator authorizes',
    asCoordinator: true,
    setup: inFenced('coordinator', (w) => ({ workItemId: wid(w.fresh('new')), contract: contract() })),
  },
  {
    kind: 'work.authorize',
    issuer: 'agent',
    how: 'a delegate authorizes under its Delegation Grant, no Coordinator Epoch needed',
    setup: inFenced('worker3', async (w) => {
      const grant = await delegation(w)
      await w.as.coordinator.membershipGrantDelegation(grant)
      const budget = { currency: 'USD', financialLimit: 1, modelTokenLimit: 100, toolCallLimit: 5, computeSecondsLimit: 10, wallClockSecondsLimit: 10, externalSideEffectLimit: 1 }
      return { workItemId: wid(w.fresh('delegated')), contract: contract({ budget }), parentWorkItemId: grant.targetWorkItemId, delegationGrantId: grant.grantId }
    }),
  },
  {
    kind: 'work.authorize',
    issuer: 'human',
    how: 'the MissionOwner authorizes by emergency override',
    setup: inFenced('owner', (w) => ({ workItemId: wid(w.fresh('new')), contract: contract(), emergencyOverride: true })),
  },
  { kind: 'work.offer', issuer: 'agent', how: 'the Coordinator offers', asCoordinator: true, setup: inFenced('coordinator', async (w) => offerOf(await reach(w, 'open'))) },
  {
    kind: 'work.offer',
    issuer: 'human',
    how: 'the MissionOwner offers by emergency override',
    setup: inFenced('owner', async (w) => ({ ...offerOf(await reach(w, 'open')), emergencyOverride: true })),
  },
  {
    kind: 'work.accept_offer',
    issuer: 'agent',
    how: 'a candidate accepts',
    setup: inFenced('worker1', async (w) => ({ workItemId: await reach(w, 'offered', { candidates: ['worker1'] }), ownershipLeaseSeconds: 3600 })),
  },
  { kind: 'work.start', issuer: 'agent', how: 'the owner starts', setup: inFenced('worker1', async (w) => ({ workItemId: await ownedTwice(w), ownershipEpoch: 2, executionLeaseSeconds: 600 })) },
  { kind: 'work.checkpoint', issuer: 'agent', how: 'the owner checkpoints', setup: () => executing((w, ref) => ({ ...ref, checkpoint: checkpointNow(w), resumeWithinSeconds: 600 })) },
  {
    kind: 'work.block',
    issuer: 'agent',
    how: 'the owner blocks',
    setup: () => executing((w, ref) => ({ ...ref, checkpoint: checkpointNow(w), reason: 'Waiting for credentials.', blockedLeaseSeconds: 600 })),
  },
  {
    kind: 'work.unblock',
    issuer: 'agent',
    how: 'the Coordinator unblocks',
    asCoordinator: true,
    setup: inFenced('coordinator', async (w) => ({ workItemId: await reach(w, 'blocked'), resolution: 'Credentials arrived.' })),
  },
  {
    kind: 'work.unblock',
    issuer: 'agent',
    how: 'the Coordinator unblocks a WorkItem it owns, as its owner, no Coordinator Epoch needed',
    setup: async () => {
      const w = await fenced()
      const id = wid(w.fresh('own'))
      await authorize(w, id)
      await offer(w, id, ['coordinator'])
      await accept(w, id, 'coordinator')
      await start(w, id)
      await block(w, id)
      return { world: w, who: 'coordinator', payload: { workItemId: id, resolution: 'Resolved it myself.' }, envelope: coordinatorEpochDropped }
    },
  },
  { kind: 'work.unblock', issuer: 'human', how: 'the MissionOwner unblocks', setup: inFenced('owner', async (w) => ({ workItemId: await reach(w, 'blocked'), resolution: 'Credentials arrived.' })) },
  {
    kind: 'work.submit',
    issuer: 'agent',
    how: 'the owner submits',
    setup: () =>
      executing(async (w, ref) => {
        const artifact = await publish(w, ref.workItemId)
        return { ...ref, artifactIds: [artifact.artifactId], evidence: [evidence(w.group(), ref.workItemId, cast.worker1)] }
      }),
  },
  {
    kind: 'work.accept_result',
    issuer: 'agent',
    how: 'the Coordinator accepts a result',
    setup: inFenced('coordinator', async (w) => {
      const id = await reach(w, 'submitted')
      return { workItemId: id, evidence: [evidence(w.group(), id, cast.reviewer)] }
    }),
  },
  {
    kind: 'work.fail',
    issuer: 'agent',
    how: 'the owner fails its WorkItem under its lease',
    citesExecution: true,
    uncited: 'AUTH_FORBIDDEN',
    setup: () => executing((w, ref) => ({ ...ref, reason: 'Not feasible.', evidence: [failureEvidence(w, ref.workItemId, 'worker1')] })),
  },
  {
    kind: 'work.fail',
    issuer: 'agent',
    how: 'the Coordinator fails a WorkItem',
    asCoordinator: true,
    setup: inFenced('coordinator', async (w) => {
      const id = await reach(w, 'open')
      return { workItemId: id, reason: 'Not feasible.', evidence: [failureEvidence(w, id)] }
    }),
  },
  {
    kind: 'work.fail',
    issuer: 'service',
    how: 'the control plane fails a WorkItem',
    setup: inFenced('controlPlane', async (w) => {
      const id = await reach(w, 'open')
      return { workItemId: id, reason: 'Retry budget exhausted.', evidence: [failureEvidence(w, id)] }
    }),
  },
  ...byEachRole('work.cancel', 'cancels a WorkItem', async (w) => ({ workItemId: await reach(w, 'open'), reason: 'No longer needed.' })),
  {
    kind: 'artifact.publish',
    issuer: 'agent',
    how: 'the owner publishes',
    setup: () => executing((w, ref) => ({ artifact: manifest(w.group(), ref.workItemId, 'a patch', cast.worker1), ownershipEpoch: ref.ownershipEpoch, executionLeaseId: ref.executionLeaseId })),
  },
  {
    kind: 'approval.grant_execution',
    issuer: 'human',
    how: 'the MissionOwner opens the start gate',
    setup: inFenced('owner', async (w) => executionApproval(w, await ownedTwice(w, { executionApproval: 'human_required' }))),
  },
  {
    kind: 'approval.grant_execution',
    issuer: 'service',
    how: 'Organization policy opens the start gate',
    setup: inFenced('controlPlane', async (w) => executionApproval(w, await ownedTwice(w, { executionApproval: 'policy_required' }))),
  },
  { kind: 'policy.grant_cooperation_override', issuer: 'human', how: 'the MissionOwner grants an override', setup: inFenced('owner', override) },
  { kind: 'policy.grant_cooperation_override', issuer: 'agent', how: 'a child MissionOwner grants an override', setup: inChild('coordinator', override) },
  { kind: 'policy.grant_cooperation_override', issuer: 'service', how: 'the control plane grants an override', setup: inFenced('controlPlane', override) },
  { kind: 'ext.missionweaveprotocol.registry.agent_card_register', issuer: 'service', how: 'the Organization registers a card', setup: inOrganization({ card: agentCard(cast.worker1, 2) }) },
  { kind: 'ext.missionweaveprotocol.identity.session_open', issuer: 'service', how: 'the Organization opens a session', setup: inOrganization({ agentId: cast.worker1.actor.id }) },
  {
    kind: 'ext.missionweaveprotocol.core.work_dependency_add',
    issuer: 'agent',
    how: 'the Coordinator adds a dependency',
    asCoordinator: true,
    setup: inFenced('coordinator', async (w) => ({ workItemId: await reach(w, 'open'), dependencyId: await reach(w, 'open') })),
  },
  {
    kind: 'ext.missionweaveprotocol.core.work_dependency_add',
    issuer: 'human',
    how: 'the MissionOwner adds a dependency',
    setup: inFenced('owner', async (w) => ({ workItemId: await reach(w, 'open'), dependencyId: await reach(w, 'open') })),
  },
  {
    kind: 'ext.missionweaveprotocol.core.work_execution_lease_renew',
    issuer: 'agent',
    how: 'the owner renews its Execution Lease',
    setup: () => executing((_w, ref) => ({ ...ref, leaseSeconds: 600 })),
  },
  { kind: 'ext.missionweaveprotocol.core.resource_usage_record', issuer: 'agent', how: 'the owner records usage', setup: () => executing((_w, ref) => ({ ...ref, usageDelta: { toolCalls: 1 } })) },
  {
    kind: 'ext.missionweaveprotocol.core.group_archive',
    issuer: 'service',
    how: 'the control plane archives a finished Group',
    setup: inFenced('controlPlane', async (w) => {
      await reachMission(w, 'approved')
      return { snapshot: snapshotOf(w) }
    }),
  },
]

// ---------------------------------------------------------------------------------------------
// What each case is tested for
// ---------------------------------------------------------------------------------------------

interface PayloadSchema {
  readonly properties?: Readonly<Record<string, unknown>>
  readonly required?: readonly string[]
}

const payloadSchemaOf = (kind: CommandKind): PayloadSchema => (CommandPayloads as Readonly<Record<string, PayloadSchema>>)[kind]!

/** The envelope epochs `command.schema.json` requires of the case's issuer: the catalog's `requiredEpochs`. */
function requiredEpochs(c: Case): readonly EpochName[] {
  return c.issuer === 'service' ? [] : commandInfo(c.kind).requiredEpochs[c.issuer]
}

/** Every epoch and lease the case's Command is fenced by. */
function fencesOf(c: Case): readonly Fence[] {
  const epochs: Fence[] = [...requiredEpochs(c)]
  if (c.asCoordinator === true && !epochs.includes('coordinator')) epochs.push('coordinator')
  const schema = payloadSchemaOf(c.kind)
  const cited = PAYLOAD_FENCES.filter((m) => schema.required?.includes(m) === true || (c.citesExecution === true && schema.properties?.[m] !== undefined))
  return [...epochs, ...cited]
}

const STALE_CODE: Readonly<Record<Fence, ErrorCode>> = {
  session: 'AUTH_STALE_SESSION',
  membership: 'MEMBERSHIP_STALE',
  coordinator: 'AUTH_STALE_COORDINATOR',
  ownershipEpoch: 'WORK_STALE_OWNERSHIP',
  executionLeaseId: 'WORK_LEASE_EXPIRED',
}

/**
 * The code for a Command without `fence`: the schema's, where the envelope or payload schema
 * requires it (`work.fail`'s pair requires each other); for a Coordinator Epoch only the role asks
 * for, `AUTH_STALE_COORDINATOR` (§15.1: without it the Command is not under the current lease).
 */
function omittedCode(c: Case, fence: Fence): ErrorCode {
  return fence === 'coordinator' && !requiredEpochs(c).includes('coordinator') ? 'AUTH_STALE_COORDINATOR' : 'SCHEMA_VALIDATION_FAILED'
}

/** Replaces `fence` with a value the Authority issued and then fenced. */
function age(fence: Fence, attempt: Attempt): (command: Envelope) => void {
  return (command) => {
    if (fence === 'executionLeaseId') {
      expect(attempt.staleLeaseId).toBeDefined()
      expect(attempt.staleLeaseId).not.toBe(command.payload[fence])
      command.payload[fence] = attempt.staleLeaseId
      return
    }
    const holder = isPayloadFence(fence) ? command.payload : command
    const member = isPayloadFence(fence) ? fence : `${fence}Epoch`
    const current = holder[member] as number
    // The world made every current epoch 2, so 1 was issued and has been fenced.
    expect(current).toBeGreaterThan(1)
    holder[member] = current - 1
  }
}

/** Builds the case's Command as the client fills it, applies the case's and then `change`'s envelope changes, and sends it. */
function send(kind: CommandKind, a: Attempt, change?: (command: Envelope) => void): Promise<Receipt> {
  const client = a.world.as[a.who]
  const built = client.build(kind, a.payload as never, a.options)
  if (a.envelope === undefined && change === undefined) return client.resend(built)
  return client.resend(
    resigned(a.world, a.who, built, (command) => {
      a.envelope?.(command)
      change?.(command)
    }),
  )
}

/** The `[error CODE]` tag of a generated title (the coverage test counts literal titles only). */
const errorTag = (code: ErrorCode): string => `[error ${code}]`

/** Runs `setup` once, on first use. */
function once<T>(setup: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined
  return () => (made ??= setup())
}

// ---------------------------------------------------------------------------------------------
// The generated tests
// ---------------------------------------------------------------------------------------------

describe('fencing, kind by kind (generated from the catalog)', () => {
  it('has a case for every catalogued kind and every issuer type it admits', () => {
    const missing = COMMAND_CATALOG.flatMap((entry) =>
      entry.issuerTypes.filter((issuer) => !CASES.some((c) => c.kind === entry.kind && c.issuer === issuer)).map((issuer) => `${entry.kind} by ${issuer}`),
    )
    expect(missing).toEqual([])
    // A kind whose fencing members are optional needs a case that cites them.
    const uncited = COMMAND_CATALOG.filter((entry) =>
      PAYLOAD_FENCES.some((m) => payloadSchemaOf(entry.kind).properties?.[m] !== undefined && payloadSchemaOf(entry.kind).required?.includes(m) !== true),
    )
      .filter((entry) => !CASES.some((c) => c.kind === entry.kind && c.citesExecution === true && c.uncited !== undefined))
      .map((entry) => entry.kind)
    expect(uncited).toEqual([])
  })

  for (const c of CASES) {
    describe(`${c.kind}: ${c.how}`, () => {
      const attempt = once(c.setup)
      const fences = fencesOf(c)
      for (const fence of fences) {
        const omitted = omittedCode(c, fence)
        it(`without ${fence} is refused ${errorTag(omitted)}`, async () => {
          const a = await attempt()
          await expectRefused(a.world, () => send(c.kind, a, omit(fence)), omitted)
        })
        it(`with a fenced ${fence} is refused ${errorTag(STALE_CODE[fence])}`, async () => {
          const a = await attempt()
          await expectRefused(a.world, () => send(c.kind, a, age(fence, a)), STALE_CODE[fence])
        })
      }
      if (c.uncited !== undefined) {
        it(`citing no execution at all is refused ${errorTag(c.uncited)}`, async () => {
          const a = await attempt()
          await expectRefused(a.world, () => send(c.kind, a, (command) => PAYLOAD_FENCES.forEach((m) => delete command.payload[m])), c.uncited!)
        })
      }
      if (fences.length === 0) {
        it('carries no epoch and needs none', async () => {
          const a = await attempt()
          const built = a.world.as[a.who].build(c.kind, a.payload as never, a.options).command
          expect([built.sessionEpoch, built.membershipEpoch, built.coordinatorEpoch]).toEqual([undefined, undefined, undefined])
        })
      }
      it('is accepted as built, so each refusal above is the fence’s', async () => {
        const a = await attempt()
        const receipt = await send(c.kind, a)
        expect(receipt.events.length).toBeGreaterThan(0)
      })
    })
  }
})
