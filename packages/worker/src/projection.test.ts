import { describe, expect, it } from 'vitest'
import { UsageError } from '@weft/codec'
import type { Event } from '@weft/spec'
import { OTHER, SELF, groupLog, lifecycle } from '../test/events.js'
import { createProjection, type Projection } from './projection.js'

const run = lifecycle()
const logs = [run.alpha, run.beta, run.gamma]

function folded(events: readonly Event[] = logs.flatMap((l) => l.events)): Projection {
  const projection = createProjection(SELF)
  for (const event of events) projection.apply(event)
  return projection
}

const ids = (items: readonly { workItemId: string }[]): string[] => items.map((w) => w.workItemId).sort()

describe('createProjection', () => {
  it('folds Groups independently, each from sequence 1, and keeps each head', () => {
    const projection = folded()
    for (const log of logs) expect(projection.group(log.groupId)?.head).toBe(log.events.length)
    expect(projection.group('urn:weft:test:group:unknown')).toBeUndefined()
  })

  it('refuses an Event that does not continue its Group, and stays unchanged', () => {
    const projection = createProjection(SELF)
    const [first, second, third] = run.alpha.events
    expect(() => projection.apply(second!)).toThrow(UsageError)
    expect(projection.view.groups.size).toBe(0)
    projection.apply(first!)
    projection.apply(second!)
    expect(() => projection.apply(second!)).toThrow(/expects 3/)
    projection.apply(third!)
    expect(projection.group(run.alpha.groupId)?.head).toBe(3)
  })

  it('refuses an Organization-scoped Event, which has no Group order (§15.2)', () => {
    const { groupId: _g, sequence: _s, aggregateRevision: _r, ...bare } = run.alpha.events[0]!
    const session: Event = { ...bare, kind: 'ext.missionweaveprotocol.identity.session_opened', payload: { agentId: SELF, sessionEpoch: 2 } }
    expect(() => createProjection(SELF).apply(session)).toThrow(UsageError)
  })

  it('finds WorkItems across Groups', () => {
    const projection = folded()
    expect(projection.work(run.gamma.id('c1'))?.groupId).toBe(run.gamma.groupId)
    expect(projection.work(run.alpha.id('a3'))?.state).toBe('active')
    expect(projection.work('urn:weft:test:work:none')).toBeUndefined()
  })

  it('drains each changed record once', () => {
    const projection = folded(run.alpha.events)
    const first = projection.drainChanges()
    expect(ids(first)).toEqual(['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8'].map(run.alpha.id).sort())
    expect(projection.drainChanges()).toEqual([])
    for (const event of run.beta.events) projection.apply(event)
    expect(ids(projection.drainChanges())).toEqual([run.beta.id('b1'), run.beta.id('b2')].sort())
  })

  it('lists as ready the queued WorkItems it owns whose dependencies are verified, in every Group or one', () => {
    const projection = folded()
    expect(ids(projection.readyForMe())).toEqual([run.alpha.id('a2'), run.alpha.id('a4'), run.alpha.id('a5'), run.alpha.id('a8'), run.gamma.id('c2')].sort())
    expect(ids(projection.readyForMe(run.gamma.groupId))).toEqual([run.gamma.id('c2')])
    expect(projection.readyForMe(run.beta.groupId)).toEqual([])
    expect(projection.readyForMe('urn:weft:test:group:unknown')).toEqual([])
  })

  it('holds back a WorkItem until every dependency is verified (§10.4)', () => {
    const log = groupLog('deps')
      .genesis()
      .authorize('d1')
      .authorize('d2', ['d1'])
      .offer('d2')
      .accept('d2')
      .offer('d1', ['urn:weft:test:agent:other'])
      .accept('d1', 'urn:weft:test:agent:other')
      .start('d1')
      .submit('d1')
    const projection = folded(log.events)
    expect(projection.readyForMe()).toEqual([])
    log.verify('d1')
    projection.apply(log.events.at(-1)!)
    expect(ids(projection.readyForMe())).toEqual([log.id('d2')])
    // A dependency added later holds it back again until that one is verified too.
    log.authorize('d3')
    log.emit('work.contract.revised', {
      workItemId: log.id('d2'),
      contract: projection.work(log.id('d2'))!.contract!,
      previousContractVersion: 1,
      revisionReason: 'dependency_added',
      dependencyIds: [log.id('d1'), log.id('d3')],
      addedDependencyId: log.id('d3'),
      requiresReacceptance: false,
    })
    for (const event of log.events.slice(-2)) projection.apply(event)
    expect(projection.readyForMe()).toEqual([])
  })

  it('judges ownership against its own Agent ID', () => {
    const log = groupLog('owners').genesis().authorize('x1').authorize('x2').offer('x1', [OTHER]).accept('x1', OTHER).offer('x2').accept('x2')
    const mine = folded(log.events)
    const theirs = createProjection(OTHER)
    for (const event of log.events) theirs.apply(event)
    expect(ids(mine.readyForMe())).toEqual([log.id('x2')])
    expect(ids(theirs.readyForMe())).toEqual([log.id('x1')])
  })
})
