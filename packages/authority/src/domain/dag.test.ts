import { describe, expect, it } from 'vitest'
import { cycleThrough, requireAcyclicDependencies, type DependencyNode } from './dag.js'

function graph(edges: Record<string, string[]>): Map<string, DependencyNode> {
  return new Map(Object.entries(edges).map(([id, dependencyIds]) => [id, { dependencyIds }]))
}

describe('the WorkItem dependency DAG (§10.4)', () => {
  const g = graph({ a: [], b: ['a'], c: ['b', 'a'], d: [] })

  it('finds the path that a new edge would close into a cycle', () => {
    // a -> c closes two cycles (c depends on a directly and through b); either proves it.
    expect(cycleThrough(g, 'a', ['c'])).toEqual(['a', 'c', 'a'])
    expect(cycleThrough(graph({ a: [], b: ['a'], c: ['b'] }), 'a', ['c'])).toEqual(['a', 'c', 'b', 'a'])
    expect(cycleThrough(g, 'a', ['d'])).toBeUndefined()
    expect(cycleThrough(g, 'new', ['c', 'd'])).toBeUndefined()
  })

  it('rejects self-dependencies, unknown WorkItems and cycles with INVALID_COMMAND', () => {
    expect(() => requireAcyclicDependencies(g, 'd', ['d'])).toThrow(expect.objectContaining({ code: 'INVALID_COMMAND' }))
    expect(() => requireAcyclicDependencies(g, 'd', ['zz'])).toThrow(expect.objectContaining({ code: 'INVALID_COMMAND', details: { unknownDependencyIds: ['zz'] } }))
    expect(() => requireAcyclicDependencies(g, 'b', ['c'])).toThrow(expect.objectContaining({ code: 'INVALID_COMMAND', details: { cycle: ['b', 'c', 'b'] } }))
    expect(() => requireAcyclicDependencies(g, 'd', ['c', 'b'])).not.toThrow()
  })

  it('handles long chains without recursion', () => {
    const long = new Map<string, DependencyNode>()
    for (let i = 0; i < 20_000; i++) long.set(`n${i}`, { dependencyIds: i === 0 ? [] : [`n${i - 1}`] })
    expect(cycleThrough(long, 'n0', ['n19999'])).toHaveLength(20_001)
  })
})
