import { decodeBase64url, encodeBase64url, ProtocolError, UsageError, type ErrorCode } from '@weft/codec'
import type { WorkContract } from '@weft/spec'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { cast, command, GROUP, seededRandom } from '@weft/testkit/fixtures'
import { run } from '../test/fixtures-state.js'
import { accept, activate, authorize, checkpointOf, exec, failure, item, offer, start, wid, world, type Running, type World } from '../test/fixtures-work.js'
import * as tw from '@weft/testkit/world'
import { reducers as allReducers } from './domain/compose.js'
import { missionUsageOf } from './domain/work-budget.js'
import { organizationHandlers } from './domain/organization.js'
import { containsTokenMaterial, createAuthorizationService, type AuthorizationService, type AuthorizationServiceOptions, type TokenRequest } from './tokens.js'

const REPO = 'urn:weft:test:resource:repo'
const DOCS = 'urn:weft:test:resource:docs'
const W1 = cast.worker1.actor.id
const TWO_RESOURCES: Partial<WorkContract> = {
  allowedResources: [
    { resource: REPO, operations: ['read', 'write'] },
    { resource: DOCS, operations: ['read'] },
  ],
}

/** The code of the `ProtocolError` `act` throws (fails when it throws nothing or something else). */
function codeOf(act: () => unknown): ErrorCode {
  try {
    act()
  } catch (error) {
    if (error instanceof ProtocolError) return error.code
    throw error
  }
  throw new Error('expected a ProtocolError, nothing was thrown')
}

function serviceOver(w: World, options: Partial<AuthorizationServiceOptions> = {}): AuthorizationService {
  return createAuthorizationService({ authority: { state: w.state }, clock: { now: () => w.clock.nowMs }, random: seededRandom(7), ...options })
}

function requestFor(id: string, running: Running, extra: Partial<TokenRequest> = {}): TokenRequest {
  return { agentId: W1, groupId: GROUP, workItemId: id, ownershipEpoch: running.epoch, executionLeaseId: running.leaseId, operations: ['write'], resources: [REPO], ttlSeconds: 300, ...extra }
}

/** A WorkItem `active` under `cast.worker1` (Execution Lease of 600 s) and a service over the world. */
function fixture(overrides: Partial<WorkContract> = {}, options: Partial<AuthorizationServiceOptions> = {}) {
  const w = world()
  const id = wid('token')
  const running = activate(w, id, cast.worker1, overrides)
  const service = serviceOver(w, options)
  return { w, id, running, service, ask: (extra: Partial<TokenRequest> = {}) => requestFor(id, running, extra) }
}

const use = { operation: 'write', resource: REPO }

function recordUsage(w: World, id: string, running: Running, usageDelta: Record<string, number>): void {
  exec(w, 'ext.missionweaveprotocol.core.resource_usage_record', { workItemId: id, ownershipEpoch: running.epoch, executionLeaseId: running.leaseId, usageDelta }, cast.worker1)
}

/** The execution approval `approval.grant_execution` payload the MissionOwner signs in these tests. */
function approvalOf(id: string, expiresInSeconds = 600) {
  return {
    approvalId: `urn:weft:test:approval:${id.split(':').pop()}`,
    workItemId: id,
    ownershipEpoch: 1,
    operations: ['write'],
    resources: [REPO],
    budget: { currency: 'USD', financialLimit: 1, toolCallLimit: 10 },
    expiresInSeconds,
  }
}

/** A `human_required` WorkItem approved for `write` on the repo and started under a lease of `leaseSeconds`. */
function approvedFixture(leaseSeconds = 3000, approvalSeconds = 600) {
  const w = world()
  const id = wid('gated')
  authorize(w, id, { executionApproval: 'human_required' })
  offer(w, id, [cast.worker1])
  accept(w, id)
  exec(w, 'approval.grant_execution', approvalOf(id, approvalSeconds), cast.owner)
  const running = start(w, id, cast.worker1, leaseSeconds)
  return { w, id, running, ask: (extra: Partial<TokenRequest> = {}) => requestFor(id, running, extra) }
}

describe('issue (§12)', () => {
  it('binds the token to the owner, its Session Epoch, the WorkItem, the Ownership Epoch and the current Execution Lease', () => {
    const { w, id, running, service, ask } = fixture()
    const { token, claims } = service.issue(ask())
    expect(claims).toMatchObject({ agentId: W1, sessionEpoch: 1, missionId: w.group.missionId, groupId: GROUP, workItemId: id, ownershipEpoch: running.epoch, executionLeaseId: running.leaseId })
    expect(claims.issuedAt).toBe(new Date(w.clock.nowMs).toISOString())
    expect(claims.expiresAt).toBe(new Date(w.clock.nowMs + 300_000).toISOString())
    expect(service.check(token, use)).toEqual(claims)
    expect(Object.isFrozen(claims) && Object.isFrozen(claims.operations)).toBe(true)
  })

  it('grants exactly what is asked: write only, although the contract also allows read', () => {
    const { service, ask } = fixture()
    const { token, claims } = service.issue(ask({ operations: ['write', 'write'] }))
    expect(claims.operations).toEqual(['write'])
    expect(claims.resources).toEqual([REPO])
    expect(codeOf(() => service.check(token, { operation: 'read', resource: REPO }))).toBe('AUTH_FORBIDDEN')
  })

  it('is an opaque bearer string of fixed length that names none of its claims', () => {
    const { running, service, ask } = fixture(TWO_RESOURCES)
    const small = service.issue(ask()).token
    const large = service.issue(ask({ operations: ['read'], resources: [REPO, DOCS], limits: { toolCalls: 3 } })).token
    for (const token of [small, large]) {
      expect(token).toMatch(/^wct_[A-Za-z0-9_-]{64}$/)
      const bytes = Buffer.from(decodeBase64url(token.slice(4))!).toString('latin1')
      for (const text of [W1, running.leaseId, GROUP, 'write', REPO]) expect(bytes.includes(text) || token.includes(text)).toBe(false)
    }
    expect(small).not.toBe(large)
  })

  it('never outlives the Execution Lease: expiry is the lease expiry when the ttl reaches past it', () => {
    const { w, service, ask } = fixture()
    const lease = item(w, wid('token')).executionLease!
    expect(service.issue(ask({ ttlSeconds: 86_400 })).claims.expiresAt).toBe(new Date(Date.parse(lease.expiresAt)).toISOString())
  })

  it('refuses anyone but the owner, a fenced Ownership Epoch, an unknown or superseded lease, and an expired lease', () => {
    const { w, running, service, ask } = fixture()
    expect(codeOf(() => service.issue(ask({ agentId: cast.worker2.actor.id })))).toBe('AUTH_FORBIDDEN')
    expect(codeOf(() => service.issue(ask({ ownershipEpoch: running.epoch + 1 })))).toBe('WORK_STALE_OWNERSHIP')
    expect(codeOf(() => service.issue(ask({ executionLeaseId: 'urn:weft:test:lease:other' })))).toBe('WORK_LEASE_EXPIRED')
    w.clock.advance(600)
    expect(codeOf(() => service.issue(ask()))).toBe('WORK_LEASE_EXPIRED')
  })

  it('refuses before start (no Execution Lease), in an unknown Group and for an unknown WorkItem', () => {
    const w = world()
    const id = wid('queued')
    authorize(w, id)
    offer(w, id, [cast.worker1])
    accept(w, id)
    const service = serviceOver(w)
    const ask = requestFor(id, { epoch: 1, leaseId: 'urn:weft:test:lease:none' })
    expect(codeOf(() => service.issue(ask))).toBe('WORK_LEASE_EXPIRED')
    expect(codeOf(() => service.issue({ ...ask, groupId: 'urn:weft:test:group:none' }))).toBe('GROUP_NOT_FOUND')
    expect(codeOf(() => service.issue({ ...ask, workItemId: wid('none') }))).toBe('INVALID_COMMAND')
  })

  it('stays within the Work Contract: every asked operation on every asked resource', () => {
    const { service, ask } = fixture(TWO_RESOURCES)
    expect(codeOf(() => service.issue(ask({ operations: ['delete'] })))).toBe('AUTH_FORBIDDEN')
    expect(codeOf(() => service.issue(ask({ resources: ['urn:weft:test:resource:prod'] })))).toBe('AUTH_FORBIDDEN')
    // write is allowed on the repo and read on the docs, but not write on the docs.
    expect(codeOf(() => service.issue(ask({ operations: ['write'], resources: [REPO, DOCS] })))).toBe('AUTH_FORBIDDEN')
    expect(service.issue(ask({ operations: ['read'], resources: [REPO, DOCS] })).claims.resources).toEqual([REPO, DOCS])
    expect(codeOf(() => service.issue(ask({ operations: [] })))).toBe('INVALID_COMMAND')
  })

  it('refuses a malformed request with UsageError', () => {
    const { service, ask } = fixture()
    expect(() => service.issue(ask({ ttlSeconds: 0 }))).toThrow(UsageError)
    expect(() => service.issue(ask({ limits: { toolCalls: -1 } }))).toThrow(UsageError)
    expect(() => service.issue(ask({ limits: { dollars: 1 } as never }))).toThrow(UsageError)
    expect(() => service.issue(ask({ operations: 'write' as never }))).toThrow(UsageError)
  })

  it('caps limits by the contract budget and fills unasked dimensions with the cap', () => {
    const { service, ask } = fixture()
    // contract(): 10 USD, 10,000 model tokens, 50 tool calls; nothing caps compute seconds.
    expect(service.issue(ask()).claims.limits).toEqual({ financialMicrounits: 10_000_000, modelTokens: 10_000, toolCalls: 50 })
    expect(service.issue(ask({ limits: { toolCalls: 5, computeSeconds: 30 } })).claims.limits).toEqual({ financialMicrounits: 10_000_000, modelTokens: 10_000, toolCalls: 5, computeSeconds: 30 })
    expect(codeOf(() => service.issue(ask({ limits: { toolCalls: 51 } })))).toBe('BUDGET_EXCEEDED')
  })

  it('caps limits by the authoritative remaining budget of the WorkItem and of the Mission', () => {
    const { w, id, running, service, ask } = fixture()
    recordUsage(w, id, running, { toolCalls: 20 })
    expect(service.issue(ask()).claims.limits.toolCalls).toBe(30)
    expect(codeOf(() => service.issue(ask({ limits: { toolCalls: 31 } })))).toBe('BUDGET_EXCEEDED')
    // Usage the ledger charged to the Mission outside this WorkItem leaves it 9,975 - 9,960 = 15 tool calls.
    missionUsageOf(w.group).toolCalls += 9_960
    expect(service.issue(ask()).claims.limits.toolCalls).toBe(20)
    expect(codeOf(() => service.issue(ask({ limits: { toolCalls: 21 } })))).toBe('BUDGET_EXCEEDED')
  })
})

describe('budgets that inherit (§12)', () => {
  it('caps a dimension the contract leaves out by what the ancestry has left', () => {
    // The contract limits only model tokens; money and tool calls come from the Mission (1000 USD, 10,000 calls).
    const { w, id, running, service, ask } = fixture({ budget: { modelTokenLimit: 100 } })
    recordUsage(w, id, running, { toolCalls: 40 })
    expect(service.issue(ask()).claims.limits).toEqual({ financialMicrounits: 1_000_000_000, modelTokens: 100, toolCalls: 9_960 })
    expect(codeOf(() => service.issue(ask({ limits: { toolCalls: 9_961 } })))).toBe('BUDGET_EXCEEDED')
    const { token } = service.issue(ask({ limits: { modelTokens: 10 } }))
    missionUsageOf(w.group).toolCalls += 9_960
    expect(codeOf(() => service.check(token, { ...use, cost: { toolCalls: 1 } }))).toBe('BUDGET_EXCEEDED')
  })
})

describe('the execution approval gate (§12)', () => {
  it('issues within a valid approval for the epoch, capped by the approval budget', () => {
    const { w, ask } = approvedFixture()
    const service = serviceOver(w)
    const { claims } = service.issue(ask())
    expect(claims.approvalId).toBe(approvalOf(wid('gated')).approvalId)
    expect(claims.limits).toMatchObject({ financialMicrounits: 1_000_000, toolCalls: 10 })
    expect(codeOf(() => service.issue(ask({ limits: { toolCalls: 11 } })))).toBe('BUDGET_EXCEEDED')
  })

  it('withholds what the approval does not cover, though the contract allows it', () => {
    const { w, ask } = approvedFixture()
    expect(codeOf(() => serviceOver(w).issue(ask({ operations: ['read'] })))).toBe('APPROVAL_REQUIRED')
  })

  it('withholds the token once the approval expired, also over a bare { state } source', () => {
    const { w, ask } = approvedFixture(3000, 600)
    expect(createAuthorizationService({ authority: { state: w.state }, clock: { now: () => w.clock.nowMs } }).issue(ask()).claims.operations.length).toBeGreaterThan(0)
    w.clock.advance(600)
    expect(codeOf(() => serviceOver(w).issue(ask()))).toBe('APPROVAL_REQUIRED')
  })

  it('applies the Organization policy that raises a WorkItem to policy_required', () => {
    const { service, ask } = fixture({}, { policy: { requiresExecutionApproval: () => true } })
    expect(codeOf(() => service.issue(ask()))).toBe('APPROVAL_REQUIRED')
  })
})

describe('check (§12)', () => {
  it('refuses strings that are not tokens, tampered MACs and tokens of another service', () => {
    const { w, service, ask } = fixture()
    const { token } = service.issue(ask())
    const bytes = decodeBase64url(token.slice(4))!
    bytes[bytes.length - 1]! ^= 1
    const tampered = `wct_${encodeBase64url(bytes)}`
    const other = createAuthorizationService({ authority: { state: w.state }, clock: { now: () => w.clock.nowMs }, random: seededRandom(7), secret: new Uint8Array(32).fill(9) })
    for (const bad of ['', 'wct_', 'wct_abc', token.slice(0, -2), token.replace('wct_', 'wcx_'), tampered, other.issue(ask()).token]) {
      expect([bad, codeOf(() => service.check(bad, use))]).toEqual([bad, 'AUTH_FORBIDDEN'])
    }
  })

  it('refuses an operation, a resource or a presenting Agent the token does not name', () => {
    const { service, ask } = fixture(TWO_RESOURCES)
    const { token } = service.issue(ask({ operations: ['read'], resources: [DOCS] }))
    expect(service.check(token, { operation: 'read', resource: DOCS, agentId: W1 }).resources).toEqual([DOCS])
    expect(codeOf(() => service.check(token, { operation: 'write', resource: DOCS }))).toBe('AUTH_FORBIDDEN')
    expect(codeOf(() => service.check(token, { operation: 'read', resource: REPO }))).toBe('AUTH_FORBIDDEN')
    expect(codeOf(() => service.check(token, { operation: 'read', resource: DOCS, agentId: cast.worker2.actor.id }))).toBe('AUTH_FORBIDDEN')
  })

  it('tells an expired token (AUTH_FORBIDDEN) from an ended lease (WORK_LEASE_EXPIRED)', () => {
    const { w, id, running, service, ask } = fixture()
    const short = service.issue(ask({ ttlSeconds: 60 })).token
    const long = service.issue(ask({ ttlSeconds: 3600 })).token
    w.clock.advance(60)
    expect(codeOf(() => service.check(short, use))).toBe('AUTH_FORBIDDEN')
    expect(service.check(long, use).executionLeaseId).toBe(running.leaseId)
    exec(w, 'ext.missionweaveprotocol.core.work_execution_lease_renew', { workItemId: id, ownershipEpoch: running.epoch, executionLeaseId: running.leaseId, leaseSeconds: 600 }, cast.worker1)
    // The renewed lease lives on; the token still ends at the lease boundary it was issued under.
    w.clock.advance(540)
    expect(codeOf(() => service.check(long, use))).toBe('AUTH_FORBIDDEN')
    w.clock.advance(60)
    expect(codeOf(() => service.check(long, use))).toBe('WORK_LEASE_EXPIRED')
  })

  it('refuses after the owner checkpoints: the lease is released (§11.3)', () => {
    const { w, id, running, service, ask } = fixture()
    const { token } = service.issue(ask())
    exec(w, 'work.checkpoint', { workItemId: id, ownershipEpoch: running.epoch, executionLeaseId: running.leaseId, checkpoint: checkpointOf(w), resumeWithinSeconds: 600 }, cast.worker1)
    expect(codeOf(() => service.check(token, use))).toBe('WORK_LEASE_EXPIRED')
    expect(codeOf(() => service.issue(ask()))).toBe('WORK_LEASE_EXPIRED')
  })

  it('refuses after cancellation and after failure of the WorkItem (§12)', () => {
    for (const end of ['cancel', 'fail'] as const) {
      const { w, id, service, ask } = fixture()
      const { token } = service.issue(ask())
      if (end === 'cancel') exec(w, 'work.cancel', { workItemId: id, reason: 'No longer needed.' }, cast.coordinator)
      else exec(w, 'work.fail', { workItemId: id, reason: 'Not feasible.', evidence: [failure(w, id)] }, cast.coordinator)
      expect([end, codeOf(() => service.check(token, use))]).toEqual([end, 'AUTH_FORBIDDEN'])
    }
  })

  it('refuses once the Mission is no longer active, whatever its WorkItems say (§12: termination revokes)', () => {
    const { w, service, ask } = fixture()
    const { token } = service.issue(ask())
    // Seeded like fixtures.seedGroup seeds it: only the Mission document changes.
    w.group.mission = { ...w.group.mission, state: 'cancelled' }
    expect(item(w, wid('token')).doc.state).toBe('active')
    expect(codeOf(() => service.check(token, use))).toBe('AUTH_FORBIDDEN')
    expect(codeOf(() => service.issue(ask()))).toBe('AUTH_FORBIDDEN')
  })

  it('refuses after the Agent opens a replacement session (§6.3, §11.3)', () => {
    const { w, service, ask } = fixture()
    const { token } = service.issue(ask())
    const open = command('ext.missionweaveprotocol.identity.session_open', { agentId: W1 }, cast.controlPlane, {}, w.clock)
    run(w.state, organizationHandlers['ext.missionweaveprotocol.identity.session_open'], open, allReducers, w.clock, w.ids)
    expect(codeOf(() => service.check(token, use))).toBe('AUTH_STALE_SESSION')
  })

  it('refuses over-budget uses against the token limits, counted across rotations, and against the ledger', () => {
    const { w, id, running, service, ask } = fixture()
    const { token } = service.issue(ask({ limits: { toolCalls: 5 } }))
    expect(service.check(token, { ...use, cost: { toolCalls: 5 } }).limits.toolCalls).toBe(5)
    recordUsage(w, id, running, { toolCalls: 3 })
    expect(codeOf(() => service.check(token, { ...use, cost: { toolCalls: 3 } }))).toBe('BUDGET_EXCEEDED')
    const rotated = service.rotate(token).token
    expect(codeOf(() => service.check(rotated, { ...use, cost: { toolCalls: 3 } }))).toBe('BUDGET_EXCEEDED')
    expect(service.check(rotated, { ...use, cost: { toolCalls: 2 } })).toBeDefined()
    // A token without its own tool-call limit still cannot overrun what the Mission has left.
    const wide = service.issue(ask({ limits: { modelTokens: 1 } })).token
    missionUsageOf(w.group).toolCalls = 9_999
    expect(codeOf(() => service.check(wide, { ...use, cost: { toolCalls: 2 } }))).toBe('BUDGET_EXCEEDED')
  })

  it('refuses a malformed use with UsageError', () => {
    const { service, ask } = fixture()
    const { token } = service.issue(ask())
    expect(() => service.check(token, { operation: 'write' } as never)).toThrow(UsageError)
    expect(() => service.check(token, { ...use, cost: { toolCalls: 1.5 } })).toThrow(UsageError)
  })
})

describe('rotate (§11.3)', () => {
  it('replaces the token under the same lease and revokes the old one', () => {
    const { service, ask } = fixture()
    const parent = service.issue(ask())
    const child = service.rotate(parent.token)
    expect(child.token).not.toBe(parent.token)
    expect(child.claims).toMatchObject({ parentTokenId: parent.claims.tokenId, executionLeaseId: parent.claims.executionLeaseId, operations: ['write'], limits: parent.claims.limits })
    expect(codeOf(() => service.check(parent.token, use))).toBe('AUTH_FORBIDDEN')
    expect(service.check(child.token, use).tokenId).toBe(child.claims.tokenId)
    expect(codeOf(() => service.rotate(parent.token))).toBe('AUTH_FORBIDDEN')
  })

  it('narrows, and refuses any widening without revoking the old token', () => {
    const { service, ask } = fixture(TWO_RESOURCES)
    const parent = service.issue(ask({ operations: ['read'], resources: [REPO, DOCS], limits: { toolCalls: 10 }, ttlSeconds: 120 }))
    for (const wider of [{ operations: ['read', 'write'] }, { resources: [REPO, 'urn:weft:test:resource:prod'] }, { limits: { toolCalls: 11 } }, { ttlSeconds: 121 }]) {
      expect([wider, codeOf(() => service.rotate(parent.token, wider))]).toEqual([wider, 'AUTH_FORBIDDEN'])
    }
    const child = service.rotate(parent.token, { resources: [DOCS], limits: { toolCalls: 4 } })
    expect(child.claims).toMatchObject({ operations: ['read'], resources: [DOCS], limits: { toolCalls: 4 } })
    expect(codeOf(() => service.check(child.token, { operation: 'read', resource: REPO }))).toBe('AUTH_FORBIDDEN')
  })

  it('refreshes the expiry from now, within the renewed lease', () => {
    const { w, id, running, service, ask } = fixture()
    const parent = service.issue(ask({ ttlSeconds: 300 }))
    w.clock.advance(200)
    exec(w, 'ext.missionweaveprotocol.core.work_execution_lease_renew', { workItemId: id, ownershipEpoch: running.epoch, executionLeaseId: running.leaseId, leaseSeconds: 120 }, cast.worker1)
    const child = service.rotate(parent.token)
    expect(child.claims.expiresAt).toBe(item(w, id).executionLease!.expiresAt)
    // Past the parent's expiry (issue + 300 s), because the lease now runs to issue + 320 s.
    expect(Date.parse(child.claims.expiresAt)).toBeGreaterThan(Date.parse(parent.claims.expiresAt))
  })

  it('property: a narrowed token grants a subset of its parent and never outlives the lease', () => {
    const { w, id, service, ask } = fixture({
      allowedResources: [
        { resource: REPO, operations: ['read', 'write'] },
        { resource: DOCS, operations: ['read', 'write'] },
      ],
    })
    const base = w.clock.nowMs
    const leaseEnd = Date.parse(item(w, id).executionLease!.expiresAt)
    const narrowing = fc.record(
      {
        operations: fc.subarray(['read', 'write', 'delete']),
        resources: fc.subarray([REPO, DOCS, 'urn:weft:test:resource:prod']),
        limits: fc.record({ toolCalls: fc.integer({ min: 0, max: 40 }), modelTokens: fc.integer({ min: 0, max: 1000 }), computeSeconds: fc.integer({ min: 0, max: 100 }) }, { requiredKeys: [] }),
        ttlSeconds: fc.integer({ min: 1, max: 900 }),
      },
      { requiredKeys: [] },
    )
    let narrowed = 0
    fc.assert(
      fc.property(narrowing, fc.integer({ min: 0, max: 500 }), (narrower, elapsed) => {
        w.clock.nowMs = base
        const parent = service.issue(ask({ operations: ['read', 'write'], resources: [REPO, DOCS], limits: { toolCalls: 20, modelTokens: 500 }, ttlSeconds: 600 }))
        w.clock.nowMs = base + elapsed * 1000
        const { operations, resources, limits = {}, ttlSeconds = 600 } = narrower
        const widens =
          (operations ?? []).some((op) => op === 'delete') ||
          (resources ?? []).some((r) => r !== REPO && r !== DOCS) ||
          (limits.toolCalls ?? 0) > 20 ||
          (limits.modelTokens ?? 0) > 500 ||
          ttlSeconds > 600
        const empty = operations?.length === 0 || resources?.length === 0
        let child
        try {
          child = service.rotate(parent.token, narrower)
        } catch (error) {
          expect(ProtocolError.from(error).code).toBe(widens ? 'AUTH_FORBIDDEN' : 'INVALID_COMMAND')
          expect(widens || empty).toBe(true)
          return
        }
        expect(widens || empty).toBe(false)
        narrowed++
        const c = child.claims
        const p = parent.claims
        expect(c.operations.every((op) => p.operations.includes(op))).toBe(true)
        expect(c.resources.every((r) => p.resources.includes(r))).toBe(true)
        for (const [dimension, limit] of Object.entries(p.limits)) expect(c.limits[dimension as keyof typeof c.limits]).toBeLessThanOrEqual(limit)
        expect(Date.parse(c.expiresAt)).toBeLessThanOrEqual(leaseEnd)
        expect(Date.parse(p.expiresAt)).toBeLessThanOrEqual(leaseEnd)
      }),
      { numRuns: 200 },
    )
    expect(narrowed).toBeGreaterThan(0)
  })
})

describe('explicit revocation', () => {
  it('revokes one token, every token of a WorkItem, every token of an Agent; prune forgets them', () => {
    const { w, service, ask } = fixture()
    const other = wid('other')
    const running = activate(w, other, cast.worker2)
    const a = service.issue(ask()).token
    const b = service.issue(ask()).token
    const c = service.issue(ask()).token
    const d = service.issue({ ...requestFor(other, running), agentId: cast.worker2.actor.id }).token
    expect([service.revoke(a), service.revoke(a)]).toEqual([true, false])
    expect(service.revokeForWorkItem(GROUP, wid('token'))).toBe(2)
    expect([b, c].map((t) => codeOf(() => service.check(t, use)))).toEqual(['AUTH_FORBIDDEN', 'AUTH_FORBIDDEN'])
    expect(service.check(d, use).agentId).toBe(cast.worker2.actor.id)
    expect(service.revokeForAgent(cast.worker2.actor.id)).toBe(1)
    expect(codeOf(() => service.check(d, use))).toBe('AUTH_FORBIDDEN')
    expect(service.prune()).toBe(4)
    expect(codeOf(() => service.check(a, use))).toBe('AUTH_FORBIDDEN')
  })

  it('refuses bad options with UsageError', () => {
    const w = world()
    expect(() => createAuthorizationService({} as never)).toThrow(UsageError)
    expect(() => createAuthorizationService({ authority: { state: w.state }, secret: new Uint8Array(16) })).toThrow(UsageError)
  })
})

describe('containsTokenMaterial', () => {
  it('finds a token, a run of its MAC in any spelling, and a run of the secret; not unrelated text', () => {
    const { service, ask } = fixture()
    const { token } = service.issue(ask())
    const mac = Buffer.from(decodeBase64url(token.slice(4))!.subarray(16))
    const secret = new Uint8Array(32).fill(42)
    expect(containsTokenMaterial(`{"note":"${token}"}`)).toBe(true)
    expect(containsTokenMaterial(`x${mac.toString('hex').slice(10, 30)}x`, { tokens: [token] })).toBe(true)
    expect(containsTokenMaterial(mac.toString('base64').slice(3, 22), { tokens: [token] })).toBe(true)
    expect(containsTokenMaterial(token.slice(30, 50), { tokens: [token] })).toBe(true)
    expect(containsTokenMaterial(Buffer.from(secret).toString('base64url').slice(5, 25), { secrets: [secret] })).toBe(true)
    expect(containsTokenMaterial(JSON.stringify(ask()), { tokens: [token], secrets: [secret] })).toBe(false)
  })
})

describe('tokens never reach the log (§12), through a whole lifecycle on a real Authority', () => {
  it('issues, rotates and checks across every ending, and no Event or audit record holds token material', async () => {
    const w = await tw.started()
    const secret = new Uint8Array(32).fill(77)
    const service = createAuthorizationService({ authority: w.authority, clock: { now: () => w.clock.nowMs }, random: seededRandom(3), secret })
    const issued: string[] = []
    const issue = (id: string, operations = ['write']): string => {
      const { epoch, leaseId } = tw.runningOf(w, id)
      const { token } = service.issue({
        agentId: w.item(id).doc.owner!.agentId,
        groupId: w.groupId,
        workItemId: id,
        ownershipEpoch: epoch,
        executionLeaseId: leaseId,
        operations,
        resources: [REPO],
        limits: { toolCalls: 10 },
        ttlSeconds: 300,
      })
      issued.push(token)
      return token
    }
    const rotate = (token: string): string => {
      const next = service.rotate(token).token
      issued.push(next)
      return next
    }
    const checked = (token: string): ErrorCode | 'ok' => {
      try {
        service.check(token, { ...use, cost: { toolCalls: 1 } })
        return 'ok'
      } catch (error) {
        return ProtocolError.from(error).code
      }
    }

    // Verified: issue, use, record usage, renew, rotate, publish and submit, accept.
    const done = await tw.reach(w, 'active')
    let token = issue(done)
    expect(checked(token)).toBe('ok')
    const { epoch, leaseId } = tw.runningOf(w, done)
    await w.as.worker1.coreResourceUsageRecord({ workItemId: done, ownershipEpoch: epoch, executionLeaseId: leaseId, usageDelta: { toolCalls: 2 } })
    await tw.renew(w, done)
    token = rotate(token)
    expect(checked(token)).toBe('ok')
    await tw.submit(w, done)
    expect(checked(token)).toBe('WORK_LEASE_EXPIRED')
    await tw.acceptResult(w, done)
    expect(checked(token)).toBe('AUTH_FORBIDDEN')

    // Gated by a human approval, read from the Event log, then cancelled.
    const gated = await tw.reach(w, 'queued', { contract: { executionApproval: 'human_required' } })
    await tw.grantExecution(w, gated)
    await tw.start(w, gated)
    const gatedToken = rotate(issue(gated))
    expect(checked(gatedToken)).toBe('ok')
    await tw.cancelWork(w, gated)
    expect(checked(gatedToken)).toBe('AUTH_FORBIDDEN')

    // Reassigned after the first owner let both leases lapse.
    const lapsed = await tw.reach(w, 'active', { candidates: ['worker2'] })
    const lapsedToken = issue(lapsed)
    w.clock.advance(3601)
    await tw.offer(w, lapsed, ['worker3'])
    await tw.accept(w, lapsed, 'worker3')
    await tw.start(w, lapsed)
    expect(checked(lapsedToken)).toBe('WORK_STALE_OWNERSHIP')
    const reassignedToken = issue(lapsed)
    expect(checked(reassignedToken)).toBe('ok')

    // Session replacement, then termination of the whole Mission.
    const replaced = await tw.reach(w, 'active', { candidates: ['worker1'] })
    const replacedToken = issue(replaced)
    await w.as.controlPlane.identitySessionOpen({ agentId: W1 })
    expect(checked(replacedToken)).toBe('AUTH_STALE_SESSION')
    await w.as.owner.missionCancel({ reason: 'Stopped by the owner.' })
    expect(checked(reassignedToken)).toBe('AUTH_FORBIDDEN')

    tw.expectIntegrity(w)
    const groupIds = [...w.authority.state.groups.keys()]
    const log = JSON.stringify([...w.authority.organizationEvents(), ...groupIds.flatMap((g) => w.authority.events(g)), ...w.authority.audit()])
    expect(issued.length).toBe(7)
    expect(log.length).toBeGreaterThan(10_000)
    expect(containsTokenMaterial(log, { tokens: issued, secrets: [secret] })).toBe(false)
    // The scan is not vacuous: the same log with one token's MAC run spliced in is caught.
    const mac = Buffer.from(decodeBase64url(issued[0]!.slice(4))!.subarray(16)).toString('hex')
    expect(containsTokenMaterial(log.replace('"payload"', `"${mac.slice(4, 24)}","payload"`), { tokens: issued })).toBe(true)
  })
})
