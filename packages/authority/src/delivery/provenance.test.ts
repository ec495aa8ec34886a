import { describe, expect, it } from 'vitest'
import type { Artifact } from '@weft/spec'
import { cast } from '@weft/testkit/fixtures'
import { seedGroup } from '../../test/fixtures-state.js'
import { EPOCH, hashOf, manifest, seedActiveItem } from '@weft/testkit/artifacts'
import type { GroupState } from '../model.js'
import { createProvenanceIndex } from './provenance.js'

/** Records a manifest as the `artifact.published` reducer would, without the handler's checks. */
function record(group: GroupState, m: Artifact): Artifact {
  group.artifacts.set(m.artifactId, { manifest: m, eventId: `urn:weft:test:event:${m.artifactId}`, ownershipEpoch: EPOCH, executionLeaseId: 'urn:weft:test:lease' })
  return m
}

/**
 * input -> a -> b -> d
 *            \-> c -/
 * input -----/
 * (c derives from a and input; d from b and c), plus a second manifest of a's bytes in item 2.
 */
function dag() {
  const group = seedGroup()
  const input = hashOf('contract input')
  const one = seedActiveItem(group, 'work-1', cast.worker1, [input]).workItemId
  const two = seedActiveItem(group, 'work-2', cast.worker2).workItemId
  const a = record(group, manifest(group, one, 'a', cast.worker1, { sourceArtifactHashes: [input] }))
  const b = record(group, manifest(group, one, 'b', cast.worker1, { sourceArtifactHashes: [a.contentHash] }))
  const c = record(group, manifest(group, one, 'c', cast.worker1, { sourceArtifactHashes: [a.contentHash, input] }))
  const d = record(group, manifest(group, one, 'd', cast.worker1, { sourceArtifactHashes: [b.contentHash, c.contentHash], toolVersions: [{ name: 'linker', version: '3.1.0' }] }))
  const aAgain = record(group, manifest(group, two, 'a', cast.worker2, { artifactId: 'urn:weft:test:artifact:a-again', modelVersions: [] }))
  return { group, input, one, two, a, b, c, d, aAgain }
}

describe('provenance index (§13.1)', () => {
  it('knows published content and contract inputs, nothing else', () => {
    const { group, input, a, d } = dag()
    const p = createProvenanceIndex(group)
    expect(p.isKnown(input)).toBe(true)
    expect(p.isKnown(a.contentHash)).toBe(true)
    expect(p.isKnown(d.contentHash)).toBe(true)
    expect(p.isKnown(hashOf('never published'))).toBe(false)
  })

  it('answers direct sources and derivations', () => {
    const { group, input, a, b, c, d } = dag()
    const p = createProvenanceIndex(group)
    expect(p.sources(d.contentHash)).toEqual([b.contentHash, c.contentHash])
    expect(p.sources(input)).toEqual([])
    expect(p.derived(a.contentHash)).toEqual([b.contentHash, c.contentHash])
    expect(p.derived(input)).toEqual([a.contentHash, c.contentHash])
    expect(p.derived(d.contentHash)).toEqual([])
  })

  it('walks ancestors and descendants transitively, nearest first, without the start', () => {
    const { group, input, a, b, c, d } = dag()
    const p = createProvenanceIndex(group)
    expect(p.ancestors(d.contentHash)).toEqual([b.contentHash, c.contentHash, a.contentHash, input])
    expect(p.descendants(input)).toEqual([a.contentHash, c.contentHash, b.contentHash, d.contentHash])
    expect(p.descendants(d.contentHash)).toEqual([])
  })

  it('terminates on a cycle made by republished content', () => {
    const group = seedGroup()
    const item = seedActiveItem(group).workItemId
    // x derives from y, and a later manifest of y's bytes claims x as its source.
    const y = hashOf('y')
    const x = record(group, manifest(group, item, 'x', cast.worker1, { sourceArtifactHashes: [y] }))
    record(group, manifest(group, item, 'y', cast.worker1, { sourceArtifactHashes: [x.contentHash] }))
    const p = createProvenanceIndex(group)
    expect(p.ancestors(x.contentHash)).toEqual([y])
    expect(p.descendants(x.contentHash)).toEqual([y])
  })

  it('reports every producer of a hash with card, capability, tool and model versions', () => {
    const { group, a, aAgain, d } = dag()
    const p = createProvenanceIndex(group)
    expect(p.manifests(a.contentHash).map((m) => m.artifactId)).toEqual([a.artifactId, aAgain.artifactId])
    expect(p.producedBy(a.contentHash).map((r) => [r.producer.agentId, r.workItemId, r.modelVersions.length])).toEqual([
      [cast.worker1.actor.id, a.workItemId, 1],
      [cast.worker2.actor.id, aAgain.workItemId, 0],
    ])
    const [producer] = p.producedBy(d.contentHash)
    expect(producer).toMatchObject({ artifactId: d.artifactId, producer: { agentCardVersion: 1, capabilities: d.producer.capabilities }, toolVersions: [{ name: 'linker', version: '3.1.0' }] })
    expect(p.producedBy(hashOf('nobody'))).toEqual([])
  })

  it('lists a WorkItem’s Artifacts so the hashes its Evidence cites resolve (§13.2)', () => {
    const { group, one, two, a, b, c, d, aAgain } = dag()
    const p = createProvenanceIndex(group)
    expect(p.forWorkItem(one).map((m) => m.artifactId)).toEqual([a, b, c, d].map((m) => m.artifactId))
    expect(p.forWorkItem(two)).toEqual([aAgain])
    expect(p.forWorkItem('urn:weft:test:work:none')).toEqual([])
  })
})
