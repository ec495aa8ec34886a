/**
 * Fixtures for Artifact tests: a WorkItem seeded in `active` with a current Execution Lease (as
 * `work.start` would leave it, without running the WorkItem handlers), and signed manifests.
 */
import { sha256Tagged, sign } from '@weft/codec'
import type { Artifact, Lease, WorkContract, WorkItem } from '@weft/spec'
import type { GroupState, WorkItemRecord } from '@weft/authority'
import { SELECTION } from './documents.js'
import { CAPABILITY, cast, contract, T0, type Cast } from './fixtures.js'

/** The Ownership Epoch the seeded WorkItem is owned under. */
export const EPOCH = 2

/** When the seeded Execution Lease expires: ten minutes after {@link T0}. */
export const EXECUTION_EXPIRES = '2026-07-15T00:10:00.000Z'

/** A seeded active WorkItem, with the IDs tests address it by. */
export interface ActiveItem {
  readonly record: WorkItemRecord
  readonly workItemId: string
  readonly executionLeaseId: string
  /** An Execution Lease ID issued earlier for the same item and Ownership Epoch (§11.3). */
  readonly oldExecutionLeaseId: string
}

/**
 * Seeds WorkItem `name` in `group` as `active`, owned by `owner` at Ownership Epoch {@link EPOCH}
 * (card version 1, the test capability pinned) under a current Execution Lease that expires at
 * {@link EXECUTION_EXPIRES}. `inputArtifacts` become the contract's input hashes.
 */
export function seedActiveItem(group: GroupState, name = 'work-1', owner: Cast = cast.worker1, inputArtifacts: string[] = []): ActiveItem {
  const workItemId = `urn:weft:test:work:${name}`
  const lease = (leaseId: string, leaseType: 'ownership' | 'execution', state: Lease['state']): Lease => ({
    leaseId,
    leaseType,
    missionId: group.missionId,
    groupId: group.groupId,
    workItemId,
    holderAgentId: owner.actor.id,
    sessionEpoch: 1,
    ownershipEpoch: EPOCH,
    ...(leaseType === 'ownership' ? { startBy: '2026-07-15T01:00:00.000Z' } : {}),
    issuedAt: T0,
    startsAt: T0,
    expiresAt: leaseType === 'ownership' ? '2026-07-15T02:00:00.000Z' : EXECUTION_EXPIRES,
    state,
    renewalCount: 0,
    ...(state === 'active' ? {} : { closedAt: T0, closureReason: 'checkpointed' }),
  })
  const ownershipLease = lease(`${workItemId}:lease:ownership:${EPOCH}`, 'ownership', 'active')
  const oldExecutionLeaseId = `${workItemId}:lease:execution:1`
  const executionLease = lease(`${workItemId}:lease:execution:2`, 'execution', 'active')
  const workContract: WorkContract = contract({ inputArtifacts })
  const doc: WorkItem = {
    workItemId,
    missionId: group.missionId,
    groupId: group.groupId,
    conversationId: group.group.mainConversationId,
    revision: 5,
    state: 'active',
    exclusive: true,
    contract: workContract,
    owner: {
      agentId: owner.actor.id,
      agentCardVersion: 1,
      capabilityPins: [CAPABILITY],
      ownershipEpoch: EPOCH,
      ownershipLeaseId: ownershipLease.leaseId,
      acceptedAt: T0,
    },
    selectionBasis: SELECTION,
    createdBy: cast.coordinator.actor,
    authorizedBy: cast.coordinator.actor,
    createdAt: T0,
    updatedAt: T0,
  }
  const record: WorkItemRecord = {
    doc,
    dependencyIds: [],
    depth: 0,
    lastOwnershipEpoch: EPOCH,
    ownershipLease,
    executionLease,
    executionLeaseIds: new Set([oldExecutionLeaseId, executionLease.leaseId]),
    executionApprovals: [],
    artifactIds: new Set(),
    reservedBudget: workContract.budget,
  }
  group.workItems.set(workItemId, record)
  group.revisions.set(`workItem:${workItemId}`, doc.revision)
  return { record, workItemId, executionLeaseId: executionLease.leaseId, oldExecutionLeaseId }
}

/** The content hash of a UTF-8 text, for manifests of small text Artifacts. */
export function hashOf(text: string): string {
  return sha256Tagged(new TextEncoder().encode(text))
}

/**
 * A manifest for `content` published for `workItemId`, signed by `by` (the producer unless
 * `overrides.producer` says otherwise); `overrides` replace fields before signing.
 */
export function manifest(group: GroupState, workItemId: string, content: string, by: Cast = cast.worker1, overrides: Partial<Artifact> = {}): Artifact {
  const contentHash = hashOf(content)
  return sign(
    'artifact',
    {
      artifactId: `urn:weft:test:artifact:${contentHash.slice(7, 19)}`,
      contentHash,
      uri: `https://blobs.test.invalid/${contentHash.slice(7)}`,
      sizeBytes: new TextEncoder().encode(content).byteLength,
      // The deliverable of the fixture contract (§10.1), so a submission of it is complete.
      mediaType: 'text/x-diff',
      schemaUri: 'urn:weft:test:schema:patch',
      producer: { agentId: by.actor.id, agentCardVersion: 1, capabilities: [CAPABILITY] },
      missionId: group.missionId,
      groupId: group.groupId,
      workItemId,
      sourceArtifactHashes: [],
      toolVersions: [{ name: 'weft-test-tool', version: '1.0.0' }],
      modelVersions: [{ provider: 'test', model: 'test-model', version: '2026-01' }],
      classification: 'internal',
      createdAt: '2026-07-15T00:01:00Z',
      ...overrides,
    },
    by.key,
  ) as unknown as Artifact
}
