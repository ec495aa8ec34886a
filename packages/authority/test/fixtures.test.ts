import { describe, expect, it } from 'vitest'
import { validators } from '@weft/validators'
import { agentCard, cast, contract, evidence, testRegistry } from '@weft/testkit/fixtures'
import { seedGroup } from './fixtures-state.js'

describe('test fixtures', () => {
  it('build documents the normative schemas accept and a Registry the codec accepts', () => {
    const group = seedGroup()
    expect(validators.mission.errors(group.mission)).toEqual([])
    expect(validators.group.errors(group.group)).toEqual([])
    expect(validators.lease.errors(group.coordinatorLease)).toEqual([])
    for (const m of group.memberships.values()) expect(validators.membership.errors(m)).toEqual([])
    for (const c of group.conversations.values()) expect(validators.conversation.errors(c)).toEqual([])
    expect(validators.workContract.errors(contract())).toEqual([])
    expect(validators.agentCard.errors(agentCard(cast.worker1))).toEqual([])
    expect(validators.evidence.errors(evidence(group, 'urn:weft:test:work:1', cast.reviewer))).toEqual([])
    expect(testRegistry().resolve(cast.worker1.key.keyId).ok).toBe(true)
  })
})
