import type { DelegationGrant, ResourceBudget } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { cast, contract } from '@weft/testkit/fixtures'
import { authorize, exec, FULL_BUDGET, item, refused, rejection, seedGrant, wid, world, type World } from '../../test/fixtures-work.js'
import { SELECTION } from '@weft/testkit/documents'

const GRANT = 'urn:weft:test:grant:1'
const TINY_BUDGET = { currency: 'USD', financialLimit: 0.5, modelTokenLimit: 1, toolCallLimit: 1, computeSecondsLimit: 1, wallClockSecondsLimit: 1, externalSideEffectLimit: 0 }

/** A world with root WorkItem `root` and a Grant over it to `cast.worker3`. */
function delegated(overrides: Partial<DelegationGrant> = {}): World {
  const w = world()
  authorize(w, wid('root'))
  seedGrant(w, wid('root'), overrides)
  return w
}

function child(name: string, parent = wid('root'), budget: ResourceBudget = FULL_BUDGET) {
  return { workItemId: wid(name), contract: contract({ budget }), parentWorkItemId: parent, delegationGrantId: GRANT }
}

function offerOf(name: string) {
  return { workItemId: wid(name), candidateAgentIds: [cast.worker1.actor.id], selectionBasis: SELECTION, offerExpiresInSeconds: 60, delegationGrantId: GRANT }
}

describe('delegated work authority (§9.1)', () => {
  it('lets the grantee authorize a linked descendant and offer it, counting both against the Grant', () => {
    const w = delegated()
    const [authorized] = exec(w, 'work.authorize', child('a'), cast.worker3)
    expect(authorized?.payload).toMatchObject({ delegationGrantId: GRANT, parentWorkItemId: wid('root') })
    exec(w, 'work.offer', offerOf('a'), cast.worker3)
    expect([...(w.group.grants.get(GRANT)?.workItemIds ?? [])]).toEqual([wid('a')])
    expect(item(w, wid('a')).delegationGrantId).toBe(GRANT)
  })

  it('refuses a new WorkItem not linked into the subtree, and an offer outside it', () => {
    const w = delegated()
    const unlinked = { workItemId: wid('a'), contract: contract({ budget: FULL_BUDGET }), delegationGrantId: GRANT }
    expect(refused(w, 'work.authorize', unlinked, cast.worker3)).toBe('AUTH_FORBIDDEN')
    authorize(w, wid('elsewhere'))
    expect(refused(w, 'work.authorize', child('b', wid('elsewhere')), cast.worker3)).toBe('AUTH_FORBIDDEN')
    expect(refused(w, 'work.offer', offerOf('elsewhere'), cast.worker3)).toBe('AUTH_FORBIDDEN')
  })

  it('is non-transferable and needs the active work_delegate Membership at the Grant epoch', () => {
    const w = delegated()
    expect(refused(w, 'work.authorize', child('a'), cast.worker2)).toBe('AUTH_FORBIDDEN')
    const m = w.group.memberships.get('urn:weft:test:membership:delegate')!
    w.group.memberships.set(m.membershipId, { ...m, membershipEpoch: 2 })
    expect(refused(w, 'work.authorize', child('a'), cast.worker3)).toBe('AUTH_FORBIDDEN')
    w.group.memberships.set(m.membershipId, { ...m, role: 'worker' })
    expect(refused(w, 'work.authorize', child('a'), cast.worker3)).toBe('AUTH_FORBIDDEN')
    w.group.memberships.set(m.membershipId, m)
    exec(w, 'work.authorize', child('a'), cast.worker3)
  })

  it('dies with a replaced Coordinator, outside its validity, or with an unknown Grant ID', () => {
    expect(refused(delegated({ coordinatorEpoch: 2 }), 'work.authorize', child('a'), cast.worker3)).toBe('AUTH_FORBIDDEN')
    const expired = delegated({ expiresAt: '2026-07-15T00:01:00.000Z' })
    expired.clock.advance(60)
    expect(refused(expired, 'work.authorize', child('a'), cast.worker3)).toBe('AUTH_FORBIDDEN')
    const w = delegated()
    expect(refused(w, 'work.authorize', { ...child('a'), delegationGrantId: 'urn:weft:test:grant:none' }, cast.worker3)).toBe('AUTH_FORBIDDEN')
  })

  it('dies when its target root is cancelled', () => {
    const w = delegated()
    exec(w, 'work.cancel', { workItemId: wid('root'), reason: 'Descoped.' }, cast.coordinator)
    expect(refused(w, 'work.authorize', child('a'), cast.worker3)).toBe('AUTH_FORBIDDEN')
  })

  it('allows only granted capabilities at their minimum version', () => {
    const w = delegated({ allowedCapabilities: [{ id: 'weft.test.implementation', version: '2.0.0' }] })
    expect(rejection(w, 'work.authorize', child('a'), cast.worker3)).toMatchObject({ code: 'AUTH_FORBIDDEN', details: { capability: { id: 'weft.test.implementation' } } })
    const older = delegated({ allowedCapabilities: [{ id: 'weft.test.implementation', version: '0.5.0' }] })
    exec(older, 'work.authorize', child('a'), cast.worker3)
  })

  it('keeps cumulative budgets within every ceiling', () => {
    const w = delegated()
    exec(w, 'work.authorize', child('a'), cast.worker3)
    exec(w, 'work.authorize', child('b'), cast.worker3)
    // Ceiling 15 USD; a and b hold 5 each, so 5 more fits and 6 does not.
    expect(refused(w, 'work.authorize', child('c', wid('root'), { ...FULL_BUDGET, financialLimit: 6 }), cast.worker3)).toBe('BUDGET_EXCEEDED')
    const unbounded = { currency: 'USD', financialLimit: 1, modelTokenLimit: 10, toolCallLimit: 10 }
    expect(refused(w, 'work.authorize', child('c', wid('root'), unbounded), cast.worker3)).toBe('WORK_CONTRACT_INCOMPLETE')
  })

  it('bounds descendant depth by the Grant and by Organization policy', () => {
    const w = delegated({ maxDescendantDepth: 1 })
    exec(w, 'work.authorize', child('a'), cast.worker3)
    const grandchild = { ...child('aa', wid('a')), contract: contract({ budget: TINY_BUDGET }) }
    expect(rejection(w, 'work.authorize', grandchild, cast.worker3)).toMatchObject({ code: 'AUTH_FORBIDDEN', details: { depth: 2 } })
    const deeper = delegated({ maxDescendantDepth: 2 })
    exec(deeper, 'work.authorize', child('a'), cast.worker3)
    exec(deeper, 'work.authorize', grandchild, cast.worker3)
    expect(item(deeper, wid('aa')).depth).toBe(2)
    const policyBound = delegated({ maxDescendantDepth: 20 })
    exec(policyBound, 'work.authorize', child('a'), cast.worker3)
    let parent = wid('a')
    for (let depth = 2; depth <= 8; depth++) {
      const next = wid(`d${depth}`)
      exec(policyBound, 'work.authorize', { ...grandchild, workItemId: next, parentWorkItemId: parent }, cast.worker3)
      parent = next
    }
    // DEFAULT_TEST_POLICY.maxDelegationDepth is 8.
    expect(rejection(policyBound, 'work.authorize', { ...grandchild, workItemId: wid('d9'), parentWorkItemId: parent }, cast.worker3)).toMatchObject({ code: 'AUTH_FORBIDDEN', details: { depth: 9 } })
  })

  it('cites either a Grant or an emergency override, not both', () => {
    const w = delegated()
    expect(refused(w, 'work.authorize', { ...child('a'), emergencyOverride: true }, cast.worker3)).toBe('INVALID_COMMAND')
  })
})
