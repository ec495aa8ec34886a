import { describe, expect, it } from 'vitest'
import { ProtocolError, UsageError } from '@weft/codec'
import { validators } from '@weft/validators'
import { signedVerifier } from '@weft/validators/signed'
import { cast, testRegistry } from '@weft/testkit/fixtures'
import { seedGroup } from '../../test/fixtures-state.js'
import { EPOCH, manifest, seedActiveItem } from '@weft/testkit/artifacts'
import { buildContextPackage, checkContextPackageScope, signContextPackage, type BuildContextPackageInput } from './context-packages.js'
import { emptyState, type GroupState, type StoredEvent } from '../model.js'

/** A Group Event as the log would hold it; only the fields a package reads matter here. */
function logged(group: GroupState, sequence: number, kind: string, payload: Record<string, unknown>, workItemId?: string): StoredEvent {
  return {
    protocolVersion: '0.1',
    eventId: `urn:weft:test:event:${sequence}`,
    kind,
    groupId: group.groupId,
    sequence,
    aggregateRevision: 1,
    ...(workItemId === undefined ? {} : { workItemId }),
    payload,
  } as unknown as StoredEvent
}

/**
 * A Group with two active WorkItems and a log of six Events: the Mission's creation, a Message,
 * one Artifact for each item, a progress report of item one and a second Artifact of item two.
 */
function history() {
  const state = emptyState()
  const group = seedGroup(state)
  const one = seedActiveItem(group, 'work-1', cast.worker1).workItemId
  const two = seedActiveItem(group, 'work-2', cast.worker2).workItemId
  const published = (seq: number, item: string, by: typeof cast.worker1, content: string) => {
    const artifact = manifest(group, item, content, by)
    return logged(group, seq, 'artifact.published', { artifact, ownershipEpoch: EPOCH, executionLeaseId: 'urn:weft:test:lease' }, item)
  }
  const events = [
    logged(group, 1, 'mission.created', {}),
    logged(group, 2, 'message.committed', { messageId: 'urn:weft:test:message:1' }),
    published(3, one, cast.worker1, 'draft one'),
    published(4, two, cast.worker2, 'draft two'),
    logged(group, 5, 'work.progressed', { workItemId: one }),
    published(6, two, cast.worker2, 'final two'),
  ]
  group.head = events.length
  return { state, group, events, one, two }
}

function input(h: ReturnType<typeof history>, overrides: Partial<BuildContextPackageInput> = {}): BuildContextPackageInput {
  return {
    group: h.group,
    events: h.events,
    fromSequence: 1,
    toSequence: h.group.head,
    scope: {},
    summary: 'Two drafts are in; item two has a final version.',
    decisions: [{ description: 'Item two supersedes its first draft.', sourceEventIds: ['urn:weft:test:event:6'] }],
    constraints: ['No external publication before approval.'],
    unresolvedQuestions: ['Does item one need a reviewer?'],
    generatedBy: { type: 'agent', id: cast.coordinator.actor.id },
    generatedAt: '2026-07-15T00:05:00Z',
    packageId: 'urn:weft:test:context:1',
    ...overrides,
  }
}

function expectVerified(pkg: object): void {
  const result = signedVerifier.verify('context-package', JSON.stringify(pkg), testRegistry())
  expect(result.ok ? 'verified' : `${result.stage}: ${result.reason}`).toBe('verified')
}

function codeOf(f: () => unknown): string | undefined {
  try {
    f()
  } catch (e) {
    return e instanceof ProtocolError ? e.code : e instanceof UsageError ? 'UsageError' : String(e)
  }
  return undefined
}

describe('buildContextPackage (§13.3)', () => {
  it('cites the Event range and the Artifact hashes in it, and verifies once signed by its generator', () => {
    const h = history()
    const pkg = buildContextPackage(input(h))
    expect(pkg).toMatchObject({ version: 1, missionId: h.group.missionId, groupId: h.group.groupId })
    expect(pkg).not.toHaveProperty('previousContextPackageId')
    expect(pkg.sourceEventRange).toEqual({ fromSequence: 1, toSequence: 6, eventIds: h.events.map((e) => e.eventId) })
    const hashes = h.events.filter((e) => e.kind === 'artifact.published').map((e) => (e.payload as { artifact: { contentHash: string } }).artifact.contentHash)
    expect(pkg.artifactHashes).toEqual(hashes)
    const signed = signContextPackage(pkg, cast.coordinator.key)
    expect(validators.contextPackage.errors(signed)).toEqual([])
    expectVerified(signed)
  })

  it('a signature by anyone but the generator, or an edit after signing, fails verification', () => {
    const h = history()
    const pkg = buildContextPackage(input(h))
    const forged = signContextPackage(pkg, cast.worker1.key)
    expect(signedVerifier.verify('context-package', JSON.stringify(forged), testRegistry()).ok).toBe(false)
    const edited = { ...signContextPackage(pkg, cast.coordinator.key), constraints: [] }
    expect(signedVerifier.verify('context-package', JSON.stringify(edited), testRegistry()).ok).toBe(false)
  })

  it('scoped to a WorkItem, keeps only that item’s Events and Artifacts', () => {
    const h = history()
    const pkg = buildContextPackage(input(h, { scope: { workItemId: h.one }, decisions: [] }))
    expect(pkg.workItemId).toBe(h.one)
    expect(pkg.sourceEventRange.eventIds).toEqual(['urn:weft:test:event:3', 'urn:weft:test:event:5'])
    expect(pkg.artifactHashes).toEqual([(h.events[2]!.payload as { artifact: { contentHash: string } }).artifact.contentHash])
    expectVerified(signContextPackage(pkg, cast.coordinator.key))
  })

  it('updating creates numbered versions, each linking to the one it supersedes', () => {
    const h = history()
    const v1 = signContextPackage(buildContextPackage(input(h, { toSequence: 3, decisions: [] })), cast.coordinator.key)
    const v2 = signContextPackage(buildContextPackage(input(h, { previous: v1, packageId: 'urn:weft:test:context:2' })), cast.coordinator.key)
    const v3 = signContextPackage(buildContextPackage(input(h, { previous: v2, packageId: 'urn:weft:test:context:3', generatedAt: '2026-07-15T00:06:00Z' })), cast.coordinator.key)
    expect([v1, v2, v3].map((p) => [p.version, p.previousContextPackageId])).toEqual([
      [1, undefined],
      [2, 'urn:weft:test:context:1'],
      [3, 'urn:weft:test:context:2'],
    ])
    expect(v1.sourceEventRange.toSequence).toBe(3)
    for (const p of [v1, v2, v3]) expectVerified(p)
  })

  it('refuses inputs that would make a package cite what it does not cover', () => {
    const h = history()
    const v1 = buildContextPackage(input(h))
    const cases: Array<[string, Partial<BuildContextPackageInput>]> = [
      ['range beyond the head', { toSequence: 7 }],
      ['reversed range', { fromSequence: 4, toSequence: 3 }],
      ['log with a gap', { events: h.events.filter((e) => e.sequence !== 4) }],
      ['decision citing an Event outside the range', { toSequence: 5 }],
      ['scope with no Event in the range', { scope: { workItemId: h.two }, toSequence: 3, decisions: [] }],
      ['unknown WorkItem scope', { scope: { workItemId: 'urn:weft:test:work:none' } }],
      ['previous version of another scope', { scope: { workItemId: h.two }, previous: v1, packageId: 'urn:weft:test:context:2' }],
      ['new version reusing the previous ID', { previous: v1 }],
    ]
    for (const [name, overrides] of cases) expect([name, codeOf(() => buildContextPackage(input(h, overrides)))]).toEqual([name, 'UsageError'])
  })
})

describe('checkContextPackageScope (§13.3, §4 invariant 9)', () => {
  it('accepts a package of the same Group within its head', () => {
    const h = history()
    expect(codeOf(() => checkContextPackageScope(buildContextPackage(input(h)), h.group))).toBeUndefined()
  })

  it('rejects another Mission’s package with AUTH_FORBIDDEN', () => {
    const h = history()
    const other = seedGroup(h.state, 'urn:weft:test:group:two', 'urn:weft:test:mission:two')
    other.head = 10
    const pkg = signContextPackage(buildContextPackage(input(h)), cast.coordinator.key)
    expect(codeOf(() => checkContextPackageScope(pkg, other))).toBe('AUTH_FORBIDDEN')
    // The same Group ID under another Mission is still another Mission's content.
    expect(codeOf(() => checkContextPackageScope({ ...pkg, missionId: 'urn:weft:test:mission:two' }, h.group))).toBe('AUTH_FORBIDDEN')
  })

  it('rejects a range beyond the Group head, a malformed range or an unknown WorkItem with INVALID_COMMAND', () => {
    const h = history()
    const pkg = buildContextPackage(input(h))
    const range = pkg.sourceEventRange
    expect(codeOf(() => checkContextPackageScope({ ...pkg, sourceEventRange: { ...range, toSequence: 7 } }, h.group))).toBe('INVALID_COMMAND')
    expect(codeOf(() => checkContextPackageScope({ ...pkg, sourceEventRange: { ...range, fromSequence: 5 } }, h.group))).toBe('INVALID_COMMAND')
    expect(codeOf(() => checkContextPackageScope({ ...pkg, workItemId: 'urn:weft:test:work:none' }, h.group))).toBe('INVALID_COMMAND')
  })
})
