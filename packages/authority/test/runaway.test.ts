import { describe, expect, it } from 'vitest'
import { ProtocolError } from '@weft/codec'
import { cast, contract, refusal } from '@weft/testkit/fixtures'
import { childPayload } from '@weft/testkit/documents'
import { accept, authorize, CHILD_CONTRACT, codeOf, coordinatorOf, expectRefused, offer, promote, started, wid, type World } from '@weft/testkit/world'

const text = (t: string) => [{ type: 'text' as const, text: t }]

function post(w: World, n: number, options: { actionId?: string; cooperationOverrideGrantId?: string } = {}) {
  return w.as.worker1.messagePost({ messageId: `urn:weft:test:message:rw${n}`, conversationId: w.group().group.mainConversationId, content: text(`note ${n}`) }, options)
}

/** The MissionOwner issues a one-shot grant for `worker1`'s future Command `actionId` of `kind`. */
function grantFor(w: World, grantId: string, policyName: string, kind: string, actionId: string, seconds = 600) {
  return w.as.owner.policyGrantCooperationOverride({
    grantId,
    policyName,
    beneficiary: cast.worker1.actor,
    targetCommandKind: kind as 'message.post',
    targetActionId: actionId,
    reason: 'A legitimate burst of status notes.',
    expiresAt: new Date(w.clock.nowMs + seconds * 1000).toISOString(),
  })
}

describe('§20 message rate', () => {
  it('[error RATE_LIMITED] refuses a Message beyond the per-minute rate with retry guidance, and admits it once the window passes', async () => {
    const w = await started({ policy: { maxMessagesPerMinute: 2 } })
    await post(w, 1)
    w.clock.advance(10)
    await post(w, 2)
    const error = await refusal(post(w, 3))
    expect(error.code).toBe('RATE_LIMITED')
    expect(error.retryable).toBe(true)
    // The oldest counted Message leaves the window 50 s later.
    expect(error.details).toMatchObject({ policyName: 'message_rate', limit: 2, windowSeconds: 60 })
    expect((error.details as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(49_000)
    expect((error.details as { retryAfterMs: number }).retryAfterMs).toBeLessThanOrEqual(50_001)
    // Another actor has its own budget.
    await w.as.coordinator.messagePost({ messageId: 'urn:weft:test:message:other', conversationId: w.group().group.mainConversationId, content: text('mine') })
    w.clock.advance(51)
    await post(w, 3)
    await expectRefused(w, () => post(w, 4), 'RATE_LIMITED')
  })

  it('is unlimited when the Organization sets no rate', async () => {
    const w = await started()
    for (let n = 1; n <= 5; n++) await post(w, n)
    expect(w.group().messages.size).toBe(5)
  })
})

describe('§20 proposal rate', () => {
  it('refuses a Work Proposal beyond the per-minute rate of the live Authority, and admits it once the window passes', async () => {
    const w = await started({ policy: { maxProposalsPerMinute: 1 } })
    await w.as.worker1.workPropose({ proposalId: wid('idea-1'), contract: contract() })
    const error = await refusal(w.as.worker1.workPropose({ proposalId: wid('idea-2'), contract: contract() }))
    expect([error.code, (error.details as { policyName?: string }).policyName]).toEqual(['RATE_LIMITED', 'proposal_rate'])
    w.clock.advance(61)
    await w.as.worker1.workPropose({ proposalId: wid('idea-2'), contract: contract() })
    expect(w.group().proposals.size).toBe(2)
    // §16: the window is a fold of the log, so replay rebuilds the same counts.
    expect(w.authority.replayState()).toEqual(w.authority.state)
  })
})

describe('§20 Cooperation Override Grant', () => {
  it('lets exactly the target Command pass the exceeded limit, consumes the grant atomically, and refuses a second use', async () => {
    const w = await started({ policy: { maxMessagesPerMinute: 1 } })
    await post(w, 1)
    const actionId = 'urn:weft:test:action:override-1'
    const grantId = 'urn:weft:test:override:1'
    await grantFor(w, grantId, 'message_rate', 'message.post', actionId)
    expect(w.group().overrides.get(grantId)?.consumedByActionId).toBeUndefined()
    const receipt = await post(w, 2, { actionId, cooperationOverrideGrantId: grantId })
    expect(receipt.events.map((e) => e.kind)).toEqual(['message.posted'])
    // §20: consumption links to the accepted Event through its cause.
    expect(receipt.events[0]!.cause.id).toBe(actionId)
    expect(w.group().overrides.get(grantId)?.consumedByActionId).toBe(actionId)
    await expectRefused(w, () => post(w, 3, { actionId: 'urn:weft:test:action:override-2', cooperationOverrideGrantId: grantId }), 'AUTH_FORBIDDEN')
  })

  it('[error AUTH_FORBIDDEN] refuses a grant cited for another Action, another kind, an unknown grant or an expired one', async () => {
    const w = await started({ policy: { maxMessagesPerMinute: 1 } })
    await post(w, 1)
    await grantFor(w, 'urn:weft:test:override:a', 'message_rate', 'message.post', 'urn:weft:test:action:a', 30)
    await grantFor(w, 'urn:weft:test:override:b', 'message_rate', 'message.correct', 'urn:weft:test:action:b')
    await expectRefused(w, () => post(w, 2, { actionId: 'urn:weft:test:action:x', cooperationOverrideGrantId: 'urn:weft:test:override:a' }), 'AUTH_FORBIDDEN')
    await expectRefused(w, () => post(w, 2, { actionId: 'urn:weft:test:action:b', cooperationOverrideGrantId: 'urn:weft:test:override:b' }), 'AUTH_FORBIDDEN')
    await expectRefused(w, () => post(w, 2, { actionId: 'urn:weft:test:action:a', cooperationOverrideGrantId: 'urn:weft:test:override:none' }), 'AUTH_FORBIDDEN')
    w.clock.advance(31)
    // The rate window still holds message 1 at +31 s, and the grant has expired.
    await expectRefused(w, () => post(w, 2, { actionId: 'urn:weft:test:action:a', cooperationOverrideGrantId: 'urn:weft:test:override:a' }), 'AUTH_FORBIDDEN')
  })

  it('[error RATE_LIMITED] a grant for another policy does not lift the limit hit', async () => {
    const w = await started({ policy: { maxMessagesPerMinute: 1 } })
    await post(w, 1)
    const actionId = 'urn:weft:test:action:wrong-policy'
    await grantFor(w, 'urn:weft:test:override:p', 'proposal_rate', 'message.post', actionId)
    const error = await refusal(post(w, 2, { actionId, cooperationOverrideGrantId: 'urn:weft:test:override:p' }))
    expect(error).toBeInstanceOf(ProtocolError)
    expect(error.code).toBe('RATE_LIMITED')
    expect(w.group().overrides.get('urn:weft:test:override:p')?.consumedByActionId).toBeUndefined()
  })

  it('only the MissionOwner or the Organization policy actor issues a grant', async () => {
    const w = await started()
    const attempt = w.as.worker1.policyGrantCooperationOverride({
      grantId: 'urn:weft:test:override:self',
      policyName: 'message_rate',
      beneficiary: cast.worker1.actor,
      targetCommandKind: 'message.post',
      targetActionId: 'urn:weft:test:action:self',
      reason: 'Self-service.',
      expiresAt: new Date(w.clock.nowMs + 60_000).toISOString(),
    })
    expect(await codeOf(attempt)).toBe('AUTH_FORBIDDEN')
  })
})

describe('§20 queued and active WorkItems', () => {
  it('[error RATE_LIMITED] refuses work.authorize beyond the Group backlog, non-retryable, until an override names it', async () => {
    const w = await started({ policy: { maxQueuedWorkItems: 2 } })
    await authorize(w, wid('q1'))
    await authorize(w, wid('q2'))
    const error = await refusal(authorize(w, wid('q3')))
    expect([error.code, error.retryable, error.details?.['policyName']]).toEqual(['RATE_LIMITED', false, 'queued_work_items'])
    const actionId = 'urn:weft:test:action:q3'
    await w.as.owner.policyGrantCooperationOverride({
      grantId: 'urn:weft:test:override:q3',
      policyName: 'queued_work_items',
      beneficiary: cast.coordinator.actor,
      targetCommandKind: 'work.authorize',
      targetActionId: actionId,
      reason: 'The release needs one more parallel item.',
      expiresAt: new Date(w.clock.nowMs + 600_000).toISOString(),
    })
    await coordinatorOf(w).workAuthorize({ workItemId: wid('q3'), contract: contract() }, { actionId, cooperationOverrideGrantId: 'urn:weft:test:override:q3' })
    expect(w.item(wid('q3')).doc.state).toBe('open')
  })

  it('[error RATE_LIMITED] refuses work.accept_offer when the Worker already holds its limit of unfinished work', async () => {
    const w = await started({ policy: { maxActiveWorkItems: 1 } })
    for (const name of ['a1', 'a2']) {
      await authorize(w, wid(name))
      await offer(w, wid(name))
    }
    await accept(w, wid('a1'))
    await expectRefused(w, () => accept(w, wid('a2')), 'RATE_LIMITED', wid('a2'))
    // Another Worker is not held back by worker1's load.
    await accept(w, wid('a2'), 'worker2')
    expect(w.item(wid('a2')).doc.owner?.agentId).toBe(cast.worker2.actor.id)
  })
})

/** A budget and deadline that fit inside a grandchild's parent. */
const SMALL = { deadline: '2026-07-29T00:00:00Z', budget: { currency: 'USD', financialLimit: 1, modelTokenLimit: 500, toolCallLimit: 2 } }

/** A child Mission under WorkItem `root`, with an owned WorkItem `inner` ready to promote again. */
async function nested(w: World): Promise<World> {
  await authorize(w, wid('root'), CHILD_CONTRACT)
  await offer(w, wid('root'))
  await accept(w, wid('root'))
  const { child } = await promote(w, wid('root'), { overrides: { deadline: '2026-07-30T00:00:00Z', budget: { currency: 'USD', financialLimit: 2, modelTokenLimit: 1000, toolCallLimit: 5 } } })
  await authorize(child, wid('inner'), SMALL)
  await offer(child, wid('inner'), ['worker3'])
  await accept(child, wid('inner'), 'worker3')
  return child
}

describe('§20 recursion', () => {
  it('rejects a child Mission that would reuse an ancestor and so close a cycle', async () => {
    const w = await started()
    const child = await nested(w)
    const cyclic = childPayload(wid('inner'), 'loop', cast.worker3, { ...SMALL, childMissionId: w.group().missionId, childGroupId: w.groupId })
    await expectRefused(child, () => coordinatorOf(child).missionCreateChild(cyclic), 'INVALID_COMMAND')
    expect((await refusal(coordinatorOf(child).missionCreateChild(cyclic))).message).toMatch(/cyclic/)
  })

  it('[error RATE_LIMITED] refuses a child Mission deeper than the Organization depth', async () => {
    const w = await started({ policy: { maxMissionDepth: 1 } })
    const child = await nested(w)
    await expectRefused(child, () => coordinatorOf(child).missionCreateChild(childPayload(wid('inner'), 'deep', cast.worker3, SMALL)), 'RATE_LIMITED')
  })
})
