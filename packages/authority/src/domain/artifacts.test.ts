import { describe, expect, it } from 'vitest'
import { ProtocolError } from '@weft/codec'
import type { Artifact } from '@weft/spec'
import { validators } from '@weft/validators'
import { eventPayloads } from '@weft/validators/payloads'
import { signedVerifier } from '@weft/validators/signed'
import { cast, command, evidence, GROUP, testClock, testRegistry, type Cast, type TestClock } from '@weft/testkit/fixtures'
import { context, run, seedGroup } from '../../test/fixtures-state.js'
import { EPOCH, EXECUTION_EXPIRES, hashOf, manifest, seedActiveItem } from '@weft/testkit/artifacts'
import { activate, exec, world, wid } from '../../test/fixtures-work.js'
import { emptyState } from '../model.js'
import { applyEvents, type ReducerTable } from '../commit/transact.js'
import { artifactHandlers, artifactReducers } from './artifacts.js'

const publish = artifactHandlers['artifact.publish']

/** One minute into the seeded Execution Lease. */
const during = (): TestClock => testClock(Date.parse('2026-07-15T00:01:00.000Z'))

function setup() {
  const state = emptyState()
  const group = seedGroup(state)
  const input = hashOf('contract input')
  const item = seedActiveItem(group, 'work-1', cast.worker1, [input])
  return { state, group, item, input }
}

type Setup = ReturnType<typeof setup>

interface Publication {
  readonly artifact: Artifact
  readonly by?: Cast
  readonly ownershipEpoch?: number
  readonly executionLeaseId?: string
  readonly clock?: TestClock
}

function publishCommand(s: Setup, p: Publication) {
  const clock = p.clock ?? during()
  const payload = { artifact: p.artifact, ownershipEpoch: p.ownershipEpoch ?? EPOCH, executionLeaseId: p.executionLeaseId ?? s.item.executionLeaseId }
  return { cmd: command('artifact.publish', payload, p.by ?? cast.worker1, { groupId: GROUP, sessionEpoch: 1 }, clock), clock }
}

function accept(s: Setup, p: Publication) {
  const { cmd, clock } = publishCommand(s, p)
  return run(s.state, publish, cmd, artifactReducers, clock)
}

/** The code a publication is rejected with, after checking the rejection left the state as it was. */
function rejection(s: Setup, p: Publication): string {
  const before = { head: s.group.head, artifacts: s.group.artifacts.size, linked: s.item.record.artifactIds.size }
  try {
    accept(s, p)
  } catch (e) {
    expect(e).toBeInstanceOf(ProtocolError)
    expect({ head: s.group.head, artifacts: s.group.artifacts.size, linked: s.item.record.artifactIds.size }).toEqual(before)
    return (e as ProtocolError).code
  }
  return 'accepted'
}

describe('artifact.publish (§13.1, §11.3)', () => {
  it('starts from a seeded WorkItem and leases the normative schemas accept', () => {
    const { item } = setup()
    expect(validators.workItem.errors(item.record.doc)).toEqual([])
    for (const lease of [item.record.ownershipLease, item.record.executionLease]) expect(validators.lease.errors(lease)).toEqual([])
  })

  it('records the signed manifest under the current Execution Lease and links it to its WorkItem', () => {
    const s = setup()
    const artifact = manifest(s.group, s.item.workItemId, 'the patch', cast.worker1, { sourceArtifactHashes: [s.input] })
    expect(signedVerifier.verify('artifact', JSON.stringify(artifact), testRegistry()).ok).toBe(true)
    const [event, ...more] = accept(s, { artifact })
    expect(more).toEqual([])
    expect(event).toMatchObject({ kind: 'artifact.published', groupId: GROUP, workItemId: s.item.workItemId, sequence: 2, aggregateRevision: 1 })
    expect(eventPayloads['artifact.published'].errors(event!.payload)).toEqual([])
    expect(event!.payload).toEqual({ artifact, ownershipEpoch: EPOCH, executionLeaseId: s.item.executionLeaseId })
    expect(s.group.artifacts.get(artifact.artifactId)).toEqual({ manifest: artifact, eventId: event!.eventId, ownershipEpoch: EPOCH, executionLeaseId: s.item.executionLeaseId })
    expect([...s.item.record.artifactIds]).toEqual([artifact.artifactId])
  })

  it('accepts a derived Artifact whose sources are already published', () => {
    const s = setup()
    const first = manifest(s.group, s.item.workItemId, 'draft')
    accept(s, { artifact: first })
    const second = manifest(s.group, s.item.workItemId, 'final', cast.worker1, { sourceArtifactHashes: [first.contentHash, s.input] })
    expect(accept(s, { artifact: second })).toHaveLength(1)
    expect([...s.item.record.artifactIds]).toEqual([first.artifactId, second.artifactId])
  })

  it('replay of the Events rebuilds the same Artifact records (state = fold(log))', () => {
    const s = setup()
    const events = [manifest(s.group, s.item.workItemId, 'one'), manifest(s.group, s.item.workItemId, 'two')].flatMap((artifact) => accept(s, { artifact }))
    const replayed = setup()
    applyEvents(replayed.state, events, artifactReducers as unknown as ReducerTable)
    expect(replayed.group.artifacts).toEqual(s.group.artifacts)
    expect(replayed.item.record.artifactIds).toEqual(s.item.record.artifactIds)
  })

  it('verifies the manifest signature through the context (§6.4)', () => {
    const s = setup()
    const tampered = { ...manifest(s.group, s.item.workItemId, 'signed'), sizeBytes: 1 }
    const { cmd, clock } = publishCommand(s, { artifact: tampered })
    const ctx = {
      ...context(s.state, GROUP, clock),
      verifyDocument: (kind: 'artifact', doc: unknown) => {
        const result = signedVerifier.verify(kind, JSON.stringify(doc), testRegistry())
        if (!result.ok) throw result.error
      },
    }
    expect(() => publish(cmd, ctx as never)).toThrow(expect.objectContaining({ code: 'AUTH_INVALID_SIGNATURE' }))
  })

  it('rejects each broken precondition with its own code', () => {
    const s = setup()
    const published = manifest(s.group, s.item.workItemId, 'published')
    accept(s, { artifact: published })
    const ok = (content: string, overrides: Partial<Artifact> = {}, by = cast.worker1) => manifest(s.group, s.item.workItemId, content, by, overrides)
    const capability = ok('x').producer.capabilities[0]!
    const cases: Array<[string, Publication, string]> = [
      ['published by another Agent than the producer', { artifact: ok('a'), by: cast.worker2 }, 'AUTH_FORBIDDEN'],
      ['published by a producer that is not the owner', { artifact: ok('b', {}, cast.worker2), by: cast.worker2 }, 'AUTH_FORBIDDEN'],
      ['stale Ownership Epoch', { artifact: ok('c'), ownershipEpoch: EPOCH - 1 }, 'WORK_STALE_OWNERSHIP'],
      ['older Execution Lease ID of the same epoch', { artifact: ok('d'), executionLeaseId: s.item.oldExecutionLeaseId }, 'WORK_LEASE_EXPIRED'],
      ['expired Execution Lease', { artifact: ok('e'), clock: testClock(Date.parse(EXECUTION_EXPIRES) + 1000) }, 'WORK_LEASE_EXPIRED'],
      ['unknown WorkItem', { artifact: manifest(s.group, 'urn:weft:test:work:none', 'f') }, 'INVALID_COMMAND'],
      ['manifest of another Group', { artifact: ok('g', { groupId: 'urn:weft:test:group:two' }) }, 'INVALID_COMMAND'],
      ['manifest of another Mission', { artifact: ok('h', { missionId: 'urn:weft:test:mission:two' }) }, 'INVALID_COMMAND'],
      ['Agent Card version not the pinned one', { artifact: ok('i', { producer: { agentId: cast.worker1.actor.id, agentCardVersion: 2, capabilities: [capability] } }) }, 'INVALID_COMMAND'],
      [
        'capability version not the pinned one',
        { artifact: ok('j', { producer: { agentId: cast.worker1.actor.id, agentCardVersion: 1, capabilities: [{ ...capability, version: '2.0.0' }] } }) },
        'INVALID_COMMAND',
      ],
      [
        'capability the assignment did not pin',
        { artifact: ok('k', { producer: { agentId: cast.worker1.actor.id, agentCardVersion: 1, capabilities: [capability, { id: 'weft.test.other', version: '1.0.0' }] } }) },
        'INVALID_COMMAND',
      ],
      ['source hash unknown to the Group', { artifact: ok('l', { sourceArtifactHashes: [published.contentHash, hashOf('elsewhere')] }) }, 'INVALID_COMMAND'],
      ['the same manifest again', { artifact: published }, 'INVALID_COMMAND'],
      ['another manifest reusing a published Artifact ID', { artifact: ok('m', { artifactId: published.artifactId }) }, 'INVALID_COMMAND'],
    ]
    for (const [name, publication, code] of cases) expect([name, rejection(s, publication)]).toEqual([name, code])
  })

  it('rejects a Command outside any known Group with GROUP_NOT_FOUND', () => {
    const s = setup()
    const { cmd, clock } = publishCommand(s, { artifact: manifest(s.group, s.item.workItemId, 'orphan') })
    expect(() => publish(cmd, context(s.state, 'urn:weft:test:group:missing', clock))).toThrow(expect.objectContaining({ code: 'GROUP_NOT_FOUND' }))
  })

  it('works with WorkItems driven through the §10.2 machine: publish, submit, then publication is closed', () => {
    const w = world()
    const id = wid('driven')
    const running = activate(w, id)
    const artifact = manifest(w.group, id, 'driven patch')
    const payload = { artifact, ownershipEpoch: running.epoch, executionLeaseId: running.leaseId }
    run(w.state, publish, command('artifact.publish', payload, cast.worker1, { groupId: GROUP, sessionEpoch: 1 }, w.clock), artifactReducers, w.clock, w.ids)
    const submitted = { workItemId: id, ownershipEpoch: running.epoch, executionLeaseId: running.leaseId, artifactIds: [artifact.artifactId], evidence: [evidence(w.group, id, cast.worker1)] }
    exec(w, 'work.submit', submitted, cast.worker1)
    expect(w.group.workItems.get(id)?.doc.submission?.artifactHashes).toEqual([artifact.contentHash])
    // §11.3: submission released the Execution Lease, so nothing more is published under it.
    const late = command('artifact.publish', { ...payload, artifact: manifest(w.group, id, 'late') }, cast.worker1, { groupId: GROUP, sessionEpoch: 1 }, w.clock)
    expect(() => run(w.state, publish, late, artifactReducers, w.clock, w.ids)).toThrow(expect.objectContaining({ code: 'INVALID_STATE_TRANSITION' }))
  })
})
