import { describe, expect, it } from 'vitest'
import type { Conversation } from '@weft/spec'
import { cast } from '@weft/testkit/fixtures'
import { seedGroup } from '../../test/fixtures-state.js'
import { codeOf, exec, expectValidGroup, expectValidPayloads, inGroup } from '../../test/fixtures-missions.js'
import { emptyState, type GroupState } from '../model.js'

const text = (t: string) => [{ type: 'text' as const, text: t }]

function setup() {
  const state = emptyState()
  const group = seedGroup(state)
  const main = group.group.mainConversationId
  const post = (by = cast.coordinator, messageId = 'urn:weft:test:message:1', conversationId = main) =>
    exec(state, 'message.post', { messageId, conversationId, content: text('Deploy immediately.') }, by, { envelope: inGroup(group) })
  return { state, group, main, post }
}

function addRestricted(group: GroupState, members = [cast.reviewer.actor]): string {
  const conversation: Conversation = {
    conversationId: 'urn:weft:test:conversation:restricted',
    missionId: group.missionId,
    groupId: group.groupId,
    type: 'restricted',
    title: 'Sensitive',
    access: { mode: 'restricted', members },
    createdBy: cast.owner.actor,
    createdAt: group.group.createdAt,
    state: 'active',
    revision: 1,
  }
  group.conversations.set(conversation.conversationId, conversation)
  return conversation.conversationId
}

describe('message.post (§9)', () => {
  it('commits a Message that never carries authority', () => {
    const { group, post } = setup()
    const events = post()
    expect(events.map((e) => e.kind)).toEqual(['message.posted'])
    expect(events[0]!.conversationId).toBe(group.group.mainConversationId)
    expect(events[0]!.payload).toMatchObject({ kind: 'message', authority: false, author: cast.coordinator.actor })
    expect(group.messages.get('urn:weft:test:message:1')?.message.authority).toBe(false)
    expectValidPayloads(events)
    expectValidGroup(group)
  })

  it('refuses a reused Message ID, an unknown Conversation and a non-member', () => {
    const { post } = setup()
    post()
    expect(codeOf(() => post(cast.owner))).toBe('INVALID_COMMAND')
    expect(codeOf(() => post(cast.owner, 'urn:weft:test:message:2', 'urn:weft:test:conversation:none'))).toBe('INVALID_COMMAND')
    expect(codeOf(() => post(cast.worker1, 'urn:weft:test:message:3'))).toBe('MEMBERSHIP_REQUIRED')
  })

  it('admits to a restricted Conversation only its members, the Coordinator and the MissionOwner', () => {
    const { state, group, post } = setup()
    const restricted = addRestricted(group)
    // The reviewer is listed but must still be a current member of the Group.
    exec(state, 'membership.change', { membershipId: 'urn:weft:test:m:rev', member: cast.reviewer.actor, role: 'reviewer', state: 'active', scopes: ['group:read'] }, cast.coordinator, {
      envelope: inGroup(group),
    })
    exec(state, 'membership.change', { membershipId: 'urn:weft:test:m:w2', member: cast.worker2.actor, role: 'worker', state: 'active', scopes: ['group:read'] }, cast.coordinator, {
      envelope: inGroup(group),
    })
    expect(post(cast.reviewer, 'urn:weft:test:message:r1', restricted)).toHaveLength(1)
    expect(post(cast.owner, 'urn:weft:test:message:r2', restricted)).toHaveLength(1)
    expect(post(cast.coordinator, 'urn:weft:test:message:r3', restricted)).toHaveLength(1)
    expect(codeOf(() => post(cast.worker2, 'urn:weft:test:message:r4', restricted))).toBe('AUTH_FORBIDDEN')
  })
})

describe('corrections, retractions and redactions are new Messages (§9.1, §4 invariant 6)', () => {
  it('keeps the original content when its author corrects it', () => {
    const { state, group, post } = setup()
    post()
    const before = structuredClone(group.messages.get('urn:weft:test:message:1')!.message)
    const events = exec(
      state,
      'message.correct',
      { messageId: 'urn:weft:test:message:2', targetMessageId: 'urn:weft:test:message:1', content: text('Deploy after review.'), reason: 'Wrong instruction.' },
      cast.coordinator,
      { envelope: inGroup(group) },
    )
    expect(events.map((e) => e.kind)).toEqual(['message.corrected'])
    expect(events[0]!.payload).toMatchObject({ kind: 'correction', targetMessageId: 'urn:weft:test:message:1', authority: false })
    const original = group.messages.get('urn:weft:test:message:1')!
    expect(original.message).toEqual(before)
    expect(original.followUps).toEqual(['urn:weft:test:message:2'])
    expect(group.messages.get('urn:weft:test:message:2')?.message.content).toEqual(text('Deploy after review.'))
    expectValidPayloads(events)
    expectValidGroup(group)
  })

  it('lets only the author correct or retract', () => {
    const { state, group, post } = setup()
    post()
    const payload = { messageId: 'urn:weft:test:message:2', targetMessageId: 'urn:weft:test:message:1', content: text('Withdrawn.'), reason: 'Not mine to say.' }
    expect(codeOf(() => exec(state, 'message.retract', payload, cast.owner, { envelope: inGroup(group) }))).toBe('AUTH_FORBIDDEN')
    expect(codeOf(() => exec(state, 'message.correct', payload, cast.owner, { envelope: inGroup(group) }))).toBe('AUTH_FORBIDDEN')
    expect(group.messages.size).toBe(1)
  })

  it('refuses to correct a retracted Message, but still lets a moderator redact it', () => {
    const { state, group, post } = setup()
    post()
    const amend = (messageId: string) => ({ messageId, targetMessageId: 'urn:weft:test:message:1', content: text('[withdrawn]'), reason: 'Withdrawn by author.' })
    const retracted = exec(state, 'message.retract', amend('urn:weft:test:message:2'), cast.coordinator, { envelope: inGroup(group) })
    expect(retracted[0]!.payload).toMatchObject({ kind: 'retraction' })
    expect(codeOf(() => exec(state, 'message.correct', amend('urn:weft:test:message:3'), cast.coordinator, { envelope: inGroup(group) }))).toBe('INVALID_STATE_TRANSITION')
    const redacted = exec(state, 'message.redact', amend('urn:weft:test:message:4'), cast.owner, { envelope: inGroup(group) })
    expect(redacted[0]!.payload).toMatchObject({ kind: 'redaction', author: cast.owner.actor, reason: 'Withdrawn by author.' })
    expect(group.messages.get('urn:weft:test:message:1')!.followUps).toEqual(['urn:weft:test:message:2', 'urn:weft:test:message:4'])
    expect(codeOf(() => exec(state, 'message.redact', amend('urn:weft:test:message:5'), cast.owner, { envelope: inGroup(group) }))).toBe('INVALID_STATE_TRANSITION')
    expectValidPayloads([...retracted, ...redacted])
    expectValidGroup(group)
  })

  it('lets the control plane redact but not an ordinary member, and never amends an unknown Message', () => {
    const { state, group, post } = setup()
    post()
    exec(state, 'membership.change', { membershipId: 'urn:weft:test:m:w1', member: cast.worker1.actor, role: 'worker', state: 'active', scopes: ['group:read'] }, cast.coordinator, {
      envelope: inGroup(group),
    })
    const payload = (messageId: string, targetMessageId = 'urn:weft:test:message:1') => ({ messageId, targetMessageId, content: text('[redacted]'), reason: 'Security policy 7.' })
    expect(codeOf(() => exec(state, 'message.redact', payload('urn:weft:test:message:2'), cast.worker1, { envelope: inGroup(group) }))).toBe('AUTH_FORBIDDEN')
    expect(codeOf(() => exec(state, 'message.redact', payload('urn:weft:test:message:2', 'urn:weft:test:message:none'), cast.owner, { envelope: inGroup(group) }))).toBe('INVALID_COMMAND')
    const events = exec(state, 'message.redact', payload('urn:weft:test:message:3'), cast.controlPlane, { envelope: inGroup(group) })
    expect(events[0]!.payload).toMatchObject({ kind: 'redaction', author: cast.controlPlane.actor })
    expectValidPayloads(events)
  })
})
