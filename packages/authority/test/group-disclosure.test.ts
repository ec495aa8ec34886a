/**
 * §17.2, §19: a Group is not disclosed to whoever never held a Membership in it. For every
 * Group-scoped Command kind of the catalog, a registered outsider's Command into an existing Group
 * is answered exactly as the same Command into an absent one (code, message, details,
 * retryability, and on the wire the shape of the `ERROR` frame), whatever the outsider's type and
 * whether that type may issue the kind. Only the kinds that create a Group are left out: their
 * Group ID names the Group to be made, so a taken one cannot be answered as a free one.
 */
import { keyPairFromSeed, ProtocolError } from '@weft/codec'
import { COMMAND_CATALOG, commandInfo, type CommandInfo, type CommandKind, type CommandPayload, type ErrorFrame } from '@weft/spec'
import { validators } from '@weft/validators'
import { commandPayloads } from '@weft/validators/payloads'
import { afterEach, describe, expect, it } from 'vitest'
import { actorKey } from '../src/model.js'
import { snapshotOf } from '@weft/testkit/archive'
import { manifest } from '@weft/testkit/artifacts'
import { childPayload, decision, SELECTION } from '@weft/testkit/documents'
import { contextPackage } from './fixtures-missions.js'
import { refusal, CAPABILITY, cast, command, contract, evidence, type Cast } from '@weft/testkit/fixtures'
import { FULL_BUDGET } from './fixtures-work.js'
import { rawSocket, wireWorld, type WireWorld } from './wire-world.js'
import { checkpointNow, openMission, started, type World } from '@weft/testkit/world'

/** The existing Group the outsiders never joined: only its MissionOwner and Coordinator hold Memberships. */
const FOREIGN = 'urn:weft:test:group:foreign'
/** A Group ID no Group has. */
const ABSENT = 'urn:weft:test:group:absent'

/** A human the Registry binds who holds no Membership anywhere. */
const stranger: Cast = { actor: { type: 'human', id: 'urn:weft:test:human:stranger' }, key: { keyId: 'urn:weft:test:key:stranger', pair: keyPairFromSeed(new Uint8Array(32).fill(41)) } }

/** The kinds whose Group ID names the Group they create. */
const CREATING: readonly string[] = ['mission.create', 'mission.create_follow_up']

/** Every Group-scoped kind of the catalog but the creating ones. */
const GROUP_KINDS = (COMMAND_CATALOG as readonly CommandInfo[]).filter((r) => r.scope === 'group' && !CREATING.includes(r.kind)).map((r) => r.kind)

const id = (name: string): string => `urn:weft:test:outsider:${name}`
const WORK = id('work')

/** A payload of each kind that passes the kind's payload schema, built in the foreign Group `w` (embedded documents are only schema-checked before Membership). */
const PAYLOADS: { readonly [K in CommandKind]?: (w: World) => CommandPayload<K> } = {
  'mission.assign_coordinator': (w) => ({ coordinatorAgentId: cast.worker1.actor.id, leaseSeconds: 600, contextPackage: contextPackage(w.group()) }),
  'mission.renew_coordinator': () => ({ leaseSeconds: 600 }),
  'mission.submit_for_approval': () => ({ artifactHashes: [`sha256:${'a'.repeat(64)}`] }),
  'mission.approve': (w) => ({ approval: decision(w.group(), cast.owner, 'approved', { artifactHashes: [`sha256:${'a'.repeat(64)}`] }) }),
  'mission.request_changes': (w) => ({ approval: decision(w.group(), cast.owner, 'changes_requested', { artifactHashes: [`sha256:${'a'.repeat(64)}`] }) }),
  'mission.cancel': () => ({ reason: 'Not needed.' }),
  'mission.terminate': () => ({ reason: 'Runaway.' }),
  'mission.create_child': () => childPayload(WORK, 'outsider-child'),
  'membership.change': () => ({ membershipId: id('membership'), member: cast.worker1.actor, role: 'worker', state: 'active', scopes: ['group:read'] }),
  'membership.end': () => ({ membershipId: id('membership'), reason: 'Done.' }),
  'membership.grant_delegation': () => ({
    grantId: id('grant'),
    granteeAgentId: cast.worker2.actor.id,
    targetWorkItemId: WORK,
    allowedCapabilities: [CAPABILITY],
    budget: FULL_BUDGET,
    maxDescendantDepth: 1,
    granteeMembershipEpoch: 1,
    expiresAt: '2026-08-01T00:00:00Z',
  }),
  'message.post': (w) => ({ messageId: id('message'), conversationId: w.group().group.mainConversationId, content: [{ type: 'text', text: 'Hello?' }] }),
  'message.correct': () => ({ messageId: id('message-2'), targetMessageId: id('message'), content: [{ type: 'text', text: 'Hello!' }], reason: 'Typo.' }),
  'message.retract': () => ({ messageId: id('message-3'), targetMessageId: id('message'), content: [{ type: 'text', text: 'Retracted.' }], reason: 'Wrong.' }),
  'message.redact': () => ({ messageId: id('message-4'), targetMessageId: id('message'), content: [{ type: 'text', text: 'Redacted.' }], reason: 'Secret.' }),
  'work.propose': () => ({ proposalId: id('proposal'), contract: contract() }),
  'work.authorize': () => ({ workItemId: WORK, contract: contract() }),
  'work.offer': () => ({ workItemId: WORK, candidateAgentIds: [cast.worker1.actor.id], selectionBasis: SELECTION, offerExpiresInSeconds: 600 }),
  'work.accept_offer': () => ({ workItemId: WORK, ownershipLeaseSeconds: 600 }),
  'work.start': () => ({ workItemId: WORK, ownershipEpoch: 1, executionLeaseSeconds: 600 }),
  'work.checkpoint': (w) => ({ workItemId: WORK, ownershipEpoch: 1, executionLeaseId: id('lease'), checkpoint: checkpointNow(w), resumeWithinSeconds: 600 }),
  'work.block': (w) => ({ workItemId: WORK, ownershipEpoch: 1, executionLeaseId: id('lease'), checkpoint: checkpointNow(w), reason: 'Waiting.', blockedLeaseSeconds: 600 }),
  'work.unblock': () => ({ workItemId: WORK }),
  'work.submit': (w) => ({ workItemId: WORK, ownershipEpoch: 1, executionLeaseId: id('lease'), artifactIds: [id('artifact')], evidence: [evidence(w.group(), WORK, cast.worker1)] }),
  'work.accept_result': (w) => ({ workItemId: WORK, evidence: [evidence(w.group(), WORK, cast.reviewer)] }),
  'work.fail': (w) => ({ workItemId: WORK, reason: 'No.', evidence: [evidence(w.group(), WORK, cast.coordinator, ['tests-pass'], 'failed')] }),
  'work.cancel': () => ({ workItemId: WORK, reason: 'Not needed.' }),
  'artifact.publish': (w) => ({ artifact: manifest(w.group(), WORK, 'patch'), ownershipEpoch: 1, executionLeaseId: id('lease') }),
  'approval.grant_execution': () => ({
    approvalId: id('approval'),
    workItemId: WORK,
    ownershipEpoch: 1,
    operations: ['write'],
    resources: [id('resource')],
    budget: { currency: 'USD', financialLimit: 1 },
    expiresInSeconds: 600,
  }),
  'policy.grant_cooperation_override': () => ({
    grantId: id('override'),
    policyName: 'message_rate',
    beneficiary: cast.worker1.actor,
    targetCommandKind: 'message.post',
    targetActionId: id('target'),
    reason: 'Needed.',
    expiresAt: '2026-08-01T00:00:00Z',
  }),
  'ext.missionweaveprotocol.core.work_dependency_add': () => ({ workItemId: WORK, dependencyId: id('other-work') }),
  'ext.missionweaveprotocol.core.work_execution_lease_renew': () => ({ workItemId: WORK, ownershipEpoch: 1, executionLeaseId: id('lease'), leaseSeconds: 600 }),
  'ext.missionweaveprotocol.core.resource_usage_record': () => ({ workItemId: WORK, ownershipEpoch: 1, executionLeaseId: id('lease'), usageDelta: { modelTokens: 10 } }),
  'ext.missionweaveprotocol.core.group_archive': (w) => ({ snapshot: snapshotOf(w) }),
}

/** The payload of `kind`, checked against its schema: an outsider's Command reaches the Group checks. */
function payloadOf(kind: string, w: World): object {
  const payload = PAYLOADS[kind as CommandKind]!(w)
  expect(commandPayloads[kind as CommandKind].check(payload as never), `${kind} payload`).toBe(true)
  return payload
}

/**
 * The envelope an outsider of `by`'s type sends into `groupId` with a `kind` Command: the epochs
 * its type carries (an Agent at Session Epoch `session`, under the Coordinator lease where the kind
 * requires it), as a Command that passes the Command schema would.
 */
function envelopeOf(kind: string, by: Cast, groupId: string, session = 1): Record<string, unknown> {
  if (by.actor.type === 'service') return { groupId }
  if (by.actor.type === 'human') return { groupId, membershipEpoch: 1 }
  const rule: CommandInfo = commandInfo(kind as CommandKind)
  const coordinator = rule.coordinatorOnly || rule.requiredEpochs.agent.includes('coordinator') || kind === 'mission.terminate'
  return { groupId, sessionEpoch: session, membershipEpoch: 1, ...(coordinator ? { coordinatorEpoch: 1 } : {}) }
}

/** What an answer tells, apart from what names the Command itself (its Action ID, its frame, its time). */
function told(error: ProtocolError): Record<string, unknown> {
  const { relatedActionId: _action, relatedFrameId: _frame, occurredAt: _at, ...rest } = error.toWire('2026-07-15T00:00:00Z')
  return rest
}

describe('a registered outsider learns nothing of a Group it never joined (§17.2, §19)', () => {
  it('the catalog’s Group-scoped kinds are all covered', () => {
    expect(Object.keys(PAYLOADS).sort()).toEqual([...GROUP_KINDS].sort())
  })

  it('in process: every Group-scoped kind from an Agent, a human or a service outside the control plane is answered alike for an existing and an absent Group', async () => {
    const w = await started({ principals: [stranger] })
    const foreign = w.in(FOREIGN)
    await openMission(foreign)
    const outsiders: readonly Cast[] = [cast.worker1, stranger, cast.registry]
    const answers: Record<string, unknown>[] = []
    for (const kind of GROUP_KINDS) {
      const payload = payloadOf(kind, foreign)
      for (const by of outsiders) {
        const doc = (groupId: string) => command(kind as CommandKind, payload as never, by, envelopeOf(kind, by, groupId), w.clock)
        // The Command schema lets no human or service send some kinds at all (coordinator-only
        // ones, say): refused alike everywhere, before any Group is read. Agents reach the Group.
        if (!validators.command.check(doc(FOREIGN))) {
          expect(by.actor.type, kind).not.toBe('agent')
          continue
        }
        const attempt = async (groupId: string) => told(await refusal(w.authority.submitCommand(doc(groupId))))
        const [existing, absent] = [await attempt(FOREIGN), await attempt(ABSENT)]
        expect({ kind, by: by.actor.id, answer: existing }).toEqual({ kind, by: by.actor.id, answer: absent })
        answers.push(existing)
      }
    }
    // Agents and humans get the absent Group's answer; a service outside the control plane is refused for any Group.
    expect([...new Set(answers.map((a) => `${a['code']}: ${a['message']}`))].sort()).toEqual([
      'AUTH_FORBIDDEN: The service is not authorized by Organization policy.',
      'GROUP_NOT_FOUND: group not found',
    ])
    expect(
      w.authority
        .audit()
        .filter((a) => a.groupId === FOREIGN && a.code === 'GROUP_NOT_FOUND')
        .every((a) => a.reason === 'no-membership'),
    ).toBe(true)
  })

  it('a former member and a stale epoch knew the Group [error MEMBERSHIP_REQUIRED] [error MEMBERSHIP_STALE]', async () => {
    const w = await started()
    const ended = w.group().membershipByMember.get(actorKey(cast.worker2.actor))
    expect(ended).toBeDefined()
    await w.as.coordinator.membershipEnd({ membershipId: ended!, reason: 'Done.' })
    const post = (by: Cast, membershipEpoch: number) =>
      refusal(w.authority.submitCommand(command('message.post', payloadOf('message.post', w) as never, by, { ...envelopeOf('message.post', by, w.groupId), membershipEpoch }, w.clock)))
    expect((await post(cast.worker2, 1)).code).toBe('MEMBERSHIP_REQUIRED')
    expect((await post(cast.worker1, 7)).code).toBe('MEMBERSHIP_STALE')
  })
})

describe('over the WebSocket binding', () => {
  let world: WireWorld | undefined
  afterEach(async () => {
    await world?.close()
    world = undefined
  })

  it('every Group-scoped kind, and SUBSCRIBE and ACK, get the same ERROR frame for an existing and an absent Group', async () => {
    world = await wireWorld()
    const foreign = world.w.in(FOREIGN)
    await openMission(foreign)
    const raw = await rawSocket(world.server.url)
    const accept = await raw.hello('worker1')
    if (accept.frameType !== 'HELLO' || accept.phase !== 'server_accept') throw new Error(`no session: ${JSON.stringify(accept)}`)
    let frames = 0
    const frameId = (): string => `urn:weft:test:frame:outsider-${++frames}`
    /** The `error` of the ERROR frame answering `frame`, without what names the frame itself. */
    const answer = async (frame: object): Promise<Record<string, unknown>> => {
      raw.send(frame)
      const { error } = (await raw.next()) as ErrorFrame
      const { relatedActionId: _action, relatedFrameId: _frame, occurredAt: _at, ...rest } = error
      return rest
    }
    for (const kind of GROUP_KINDS) {
      const payload = payloadOf(kind, foreign)
      const send = (groupId: string) =>
        answer({
          protocolVersion: '0.1',
          frameId: frameId(),
          frameType: 'COMMAND',
          command: command(kind as CommandKind, payload as never, cast.worker1, envelopeOf(kind, cast.worker1, groupId, accept.sessionEpoch), world!.w.clock),
        })
      const [existing, absent] = [await send(FOREIGN), await send(ABSENT)]
      expect({ kind, answer: existing }).toEqual({ kind, answer: absent })
      expect(existing['code']).toBe('GROUP_NOT_FOUND')
    }
    const subscribe = (groupId: string) =>
      answer({ protocolVersion: '0.1', frameId: frameId(), frameType: 'SUBSCRIBE', subscriptionId: id(`subscription-${frames}`), groups: [{ groupId, afterSequence: 0 }] })
    const ack = (groupId: string) => answer({ protocolVersion: '0.1', frameId: frameId(), frameType: 'ACK', acknowledgements: [{ groupId, sequence: 1 }], sentAt: '2026-07-15T00:00:00Z' })
    const subscribed = [await subscribe(FOREIGN), await subscribe(ABSENT)]
    const acked = [await ack(FOREIGN), await ack(ABSENT)]
    expect([subscribed[0]!['code'], acked[0]!['code']]).toEqual(['GROUP_NOT_FOUND', 'GROUP_NOT_FOUND'])
    // The frame names the Group the Agent named, so compare all else.
    const unnamed = ({ groupId: _g, ...rest }: Record<string, unknown>) => rest
    expect(subscribed.map(unnamed)).toEqual([unnamed(subscribed[1]!), unnamed(subscribed[1]!)])
    expect(acked.map(unnamed)).toEqual([unnamed(acked[1]!), unnamed(acked[1]!)])
  })
})
