/**
 * One test per §19 code the Authority produces, as the client receives it: every Command is built
 * and signed by `@weft/client` and carried by `authority.connect()`, and each test claims the code
 * it asserts in its title (see `coverage.test.ts`). The scenarios are in `lifecycle-scenarios.test.ts`
 * and one test per Command and Event kind in `lifecycle-kinds.test.ts`.
 */
import { describe, expect, it } from 'vitest'
import { cast, contract, evidence, GROUP } from '@weft/testkit/fixtures'
import { createMemoryStore, type AuthorityStore } from '../src/log/store.js'
import { contextPackage } from './fixtures-missions.js'
import { text } from './lifecycle-world.js'
import { accept, authorize, cancelWork, codeOf, expectIntegrity, expectRefused, offer, promote, publish, reach, runningOf, start, started, wid, type World } from '@weft/testkit/world'

/** A store whose next append fails once, like a full disk. */
function flakyStore(): AuthorityStore & { failNext(): void } {
  const inner = createMemoryStore()
  let failing = false
  return {
    ...inner,
    appendTransaction(events, receipt) {
      if (failing) {
        failing = false
        throw new Error('disk full')
      }
      inner.appendTransaction(events, receipt)
    },
    failNext: () => {
      failing = true
    },
  }
}

describe('§19 codes as the client receives them', () => {
  const post = (w: World, id = 'urn:weft:test:message:x', content = 'Hello.') => w.as.worker1.messagePost({ messageId: id, conversationId: w.group().group.mainConversationId, content: text(content) })

  it('[error AUTH_INVALID_SIGNATURE] for a Command issued outside the freshness window', async () => {
    const w = await started()
    await expectRefused(
      w,
      () => w.as.worker1.messagePost({ messageId: 'urn:weft:test:message:old', conversationId: w.group().group.mainConversationId, content: text('Old.') }, { issuedAt: '2026-07-14T23:50:00.000Z' }),
      'AUTH_INVALID_SIGNATURE',
    )
  })

  it('[error AUTH_STALE_COORDINATOR] for a Coordinator Epoch a reappointment fenced', async () => {
    const w = await started()
    await w.as.owner.missionAssignCoordinator({ coordinatorAgentId: cast.coordinator.actor.id, leaseSeconds: 3600, contextPackage: contextPackage(w.group()) })
    expect(w.as.coordinator.epochs.coordinator(GROUP)).toBe(2)
    w.as.coordinator.epochs.setCoordinator(GROUP, 1)
    await expectRefused(w, () => authorize(w, wid('fenced')), 'AUTH_STALE_COORDINATOR')
  })

  it('[error AUTH_FORBIDDEN] when a Worker authorizes work', async () => {
    const w = await started()
    await expectRefused(w, () => w.as.worker1.workAuthorize({ workItemId: wid('mine'), contract: contract() }), 'AUTH_FORBIDDEN')
  })

  it('[error GROUP_NOT_FOUND] for a Group the Authority does not serve', async () => {
    const w = await started()
    const nowhere = w.in('urn:weft:test:group:nowhere')
    nowhere.as.owner.epochs.setMembership(nowhere.groupId, 1)
    expect(await codeOf(nowhere.as.owner.missionCancel({ reason: 'Whatever it is.' }))).toBe('GROUP_NOT_FOUND')
  })

  it('[error SCHEMA_VALIDATION_FAILED] for a payload off its kind’s schema', async () => {
    const w = await started()
    await expectRefused(w, () => w.as.coordinator.workCancel({ workItemId: wid('x'), reason: 'r', force: true } as never), 'SCHEMA_VALIDATION_FAILED')
  })

  it('[error INVALID_COMMAND] for a dependency on an unknown WorkItem', async () => {
    const w = await started()
    await expectRefused(w, () => w.as.coordinator.workAuthorize({ workItemId: wid('a'), contract: contract(), dependencyIds: [wid('unknown')] }), 'INVALID_COMMAND')
  })

  it('[error INVALID_STATE_TRANSITION] for a transition the WorkItem table does not have', async () => {
    const w = await started()
    const id = await reach(w, 'verified')
    await expectRefused(w, () => cancelWork(w, id), 'INVALID_STATE_TRANSITION', id)
  })

  it('[error REVISION_CONFLICT] for a stale expectedRevision', async () => {
    const w = await started()
    const id = await reach(w, 'offered')
    const revision = w.item(id).doc.revision
    await offer(w, id, ['worker1'])
    await expectRefused(w, () => w.as.worker1.workAcceptOffer({ workItemId: id, ownershipLeaseSeconds: 600 }, { expectedRevision: revision }), 'REVISION_CONFLICT', id)
    await w.as.worker1.workAcceptOffer({ workItemId: id, ownershipLeaseSeconds: 600 }, { expectedRevision: revision + 1 })
    expect(w.item(id).doc.state).toBe('queued')
  })

  it('[error ACTION_ID_COLLISION] for another Command under a used Action ID; the exact retry gets its receipt', async () => {
    const w = await started()
    const built = w.as.worker1.build('message.post', { messageId: 'urn:weft:test:message:once', conversationId: w.group().group.mainConversationId, content: text('Once.') })
    const first = await w.as.worker1.resend(built)
    expect(await w.as.worker1.resend(built)).toEqual({ ...first, duplicate: true })
    await expectRefused(
      w,
      () => w.as.worker1.messagePost({ messageId: 'urn:weft:test:message:other', conversationId: w.group().group.mainConversationId, content: text('Other.') }, { actionId: built.command.actionId }),
      'ACTION_ID_COLLISION',
    )
  })

  it('[error UNKNOWN_CRITICAL_EXTENSION] for a critical Extension Profile the Authority cannot interpret', async () => {
    const w = await started()
    const extensions = { 'urn:weft:test:profile': { version: '1.0.0', critical: true, data: {} } }
    await expectRefused(
      w,
      () => w.as.worker1.messagePost({ messageId: 'urn:weft:test:message:ext', conversationId: w.group().group.mainConversationId, content: text('Hi.') }, { extensions }),
      'UNKNOWN_CRITICAL_EXTENSION',
    )
  })

  it('[error WORK_CONTRACT_INCOMPLETE] for a contract without a goal', async () => {
    const w = await started()
    await expectRefused(w, () => authorize(w, wid('vague'), { goal: '   ' }), 'WORK_CONTRACT_INCOMPLETE')
  })

  it('[error WORK_OFFER_EXPIRED] for an acceptance after the offer expired', async () => {
    const w = await started()
    const id = await reach(w, 'offered')
    w.clock.advance(601)
    await expectRefused(w, () => accept(w, id), 'WORK_OFFER_EXPIRED', id)
  })

  it('[error WORK_LEASE_EXPIRED] for a submission after the Execution Lease expired', async () => {
    const w = await started()
    const id = await reach(w, 'active')
    const artifact = await publish(w, id)
    w.clock.advance(601)
    const { epoch, leaseId } = runningOf(w, id)
    await expectRefused(
      w,
      () => w.as.worker1.workSubmit({ workItemId: id, ownershipEpoch: epoch, executionLeaseId: leaseId, artifactIds: [artifact.artifactId], evidence: [evidence(w.group(), id, cast.worker1)] }),
      'WORK_LEASE_EXPIRED',
      id,
    )
  })

  it('[error APPROVAL_REQUIRED] for a start without the Execution Approval the contract requires', async () => {
    const w = await started()
    const id = await reach(w, 'queued', { contract: { executionApproval: 'human_required' } })
    await expectRefused(w, () => start(w, id), 'APPROVAL_REQUIRED', id)
  })

  it('[error BUDGET_EXCEEDED] for usage beyond the WorkItem budget', async () => {
    const w = await started()
    const id = await reach(w, 'active')
    const { epoch, leaseId } = runningOf(w, id)
    await expectRefused(w, () => w.as.worker1.coreResourceUsageRecord({ workItemId: id, ownershipEpoch: epoch, executionLeaseId: leaseId, usageDelta: { toolCalls: 51 } }), 'BUDGET_EXCEEDED', id)
  })

  it('[error RATE_LIMITED] for a child Mission beyond the Organization’s depth', async () => {
    const w = await started({ policy: { maxMissionDepth: 0 } })
    const id = await reach(w, 'queued')
    await expectRefused(w, () => promote(w, id), 'RATE_LIMITED', id)
  })

  it('[error PROTOCOL_VIOLATION] for a Command over the size limit', async () => {
    const w = await started({ policy: { maxCommandBytes: 8192 } })
    await expectRefused(w, () => post(w, 'urn:weft:test:message:big', 'x'.repeat(8192)), 'PROTOCOL_VIOLATION')
    await post(w, 'urn:weft:test:message:small', 'x')
  })

  it('[error INTERNAL_ERROR] when the store fails; nothing is appended and the same Command succeeds later', async () => {
    const store = flakyStore()
    const w = await started({ store })
    const built = w.as.worker1.build('message.post', { messageId: 'urn:weft:test:message:flaky', conversationId: w.group().group.mainConversationId, content: text('Hi.') })
    store.failNext()
    await expectRefused(w, () => w.as.worker1.resend(built), 'INTERNAL_ERROR')
    expect(w.group().messages.has('urn:weft:test:message:flaky')).toBe(false)
    expectIntegrity(w)
    expect((await w.as.worker1.resend(built)).duplicate).toBe(false)
    expect(w.group().messages.has('urn:weft:test:message:flaky')).toBe(true)
  })
})
