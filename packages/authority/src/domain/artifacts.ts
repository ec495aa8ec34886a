/**
 * Artifact publication (§13.1): the executing owner of a WorkItem records a signed,
 * content-addressed manifest under its current Execution Lease (§11.3). The bytes stay in the
 * blob store; the log carries the manifest with its full provenance.
 * @module
 */
import type { Artifact, WorkOwner } from '@weft/spec'
import { draft, reject, requireGroup, type HandlerFor, type ReducerFor } from '../commit/handler.js'
import type { GroupState } from '../model.js'
import { createProvenanceIndex } from '../delivery/provenance.js'
import { requireCurrentExecution } from './leases.js'

/**
 * §6.1: an Artifact records the Agent Card and capability versions it was produced under, and
 * those must be the ones the assignment pinned: the owner's card version, and for every
 * capability it names, the pinned version of that capability.
 */
function requirePinnedVersions(manifest: Artifact, owner: WorkOwner): void {
  if (manifest.producer.agentCardVersion !== owner.agentCardVersion) {
    reject('INVALID_COMMAND', 'the manifest names another Agent Card version than the assignment pinned', {
      agentCardVersion: manifest.producer.agentCardVersion,
      pinned: owner.agentCardVersion,
    })
  }
  for (const capability of manifest.producer.capabilities) {
    const pinned = owner.capabilityPins.find((p) => p.id === capability.id)
    if (pinned?.version !== capability.version) {
      reject('INVALID_COMMAND', 'the manifest names a capability version the assignment did not pin', { capability })
    }
  }
}

/** §13.1: provenance is closed; every source is an Artifact or contract input the Group knows. */
function requireKnownSources(group: GroupState, manifest: Artifact): void {
  if (manifest.sourceArtifactHashes.length === 0) return
  const provenance = createProvenanceIndex(group)
  const unknown = manifest.sourceArtifactHashes.filter((h) => !provenance.isKnown(h))
  if (unknown.length > 0) reject('INVALID_COMMAND', 'the manifest cites source Artifacts unknown to the Group', { unknownSourceHashes: unknown })
}

/** `artifact.publish` (§13.1, §11.3, §6.1). */
const publish: HandlerFor<'artifact.publish'> = (command, ctx) => {
  const group = requireGroup(ctx)
  const { artifact: manifest, ownershipEpoch, executionLeaseId } = command.payload
  ctx.verifyDocument('artifact', manifest)
  // §13.1, §6.4: the manifest is signed by its producer, and only the producer may publish it.
  if (command.actor.type !== 'agent' || manifest.producer.agentId !== command.actor.id) {
    reject('AUTH_FORBIDDEN', 'only the producing Agent may publish an Artifact manifest')
  }
  // §4 invariant 9: a manifest names the Mission, Group and WorkItem it belongs to.
  if (manifest.missionId !== group.missionId || manifest.groupId !== group.groupId) {
    reject('INVALID_COMMAND', 'the manifest belongs to another Mission or Group')
  }
  const record = group.workItems.get(manifest.workItemId)
  if (record === undefined) reject('INVALID_COMMAND', 'the manifest names an unknown WorkItem', { workItemId: manifest.workItemId })
  // §11.3: publication references the current Execution Lease of the current Ownership Epoch.
  requireCurrentExecution(group, record, command.actor, ownershipEpoch, executionLeaseId, ctx.nowMs)
  if (record.doc.owner === undefined) reject('INVALID_COMMAND', 'the WorkItem has no owner')
  requirePinnedVersions(manifest, record.doc.owner)
  // §4 invariant 6: a published Artifact is immutable; its ID is never reused, even for the same manifest.
  if (group.artifacts.has(manifest.artifactId)) reject('INVALID_COMMAND', 'an Artifact with this ID is already published', { artifactId: manifest.artifactId })
  requireKnownSources(group, manifest)
  return [draft('artifact.published', { artifact: manifest, ownershipEpoch, executionLeaseId }, { workItemId: manifest.workItemId })]
}

/** Records the manifest in the Group and links it to its WorkItem. */
const published: ReducerFor<'artifact.published'> = (state, event) => {
  const group = event.groupId === undefined ? undefined : state.groups.get(event.groupId)
  if (group === undefined) return
  const { artifact: manifest, ownershipEpoch, executionLeaseId } = event.payload
  group.artifacts.set(manifest.artifactId, { manifest, eventId: event.eventId, ownershipEpoch, executionLeaseId })
  group.workItems.get(manifest.workItemId)?.artifactIds.add(manifest.artifactId)
}

/** Handlers of the Artifact Commands. */
export const artifactHandlers = {
  'artifact.publish': publish,
} satisfies { readonly [K in 'artifact.publish']: HandlerFor<K> }

/** Reducers of the Artifact Events. */
export const artifactReducers = {
  'artifact.published': published,
} satisfies { readonly [K in 'artifact.published']: ReducerFor<K> }
