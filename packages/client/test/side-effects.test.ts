import { createHash } from 'node:crypto'
import { UsageError } from '@weft/codec'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { RetryPolicy } from '@weft/spec'
import { attemptKey, retryBackoffMs, sideEffectKey, type SideEffectScope } from '../src/side-effects.js'

const scope: SideEffectScope = {
  missionId: 'urn:weft:test:mission:one',
  workItemId: 'urn:weft:test:work:déploiement',
  ownershipEpoch: 2,
  operationId: 'deploy:web',
}

/** SHA-256 of UTF-8 `text`, tagged: written here with node:crypto, not with the codec under test. */
function tagged(text: string): string {
  return `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`
}

describe('sideEffectKey (§16)', () => {
  it('is the tagged SHA-256 of the RFC 8785 form of the four members, computed here by hand', () => {
    // RFC 8785 for this value: members sorted by UTF-16 code units, no whitespace, JSON strings
    // (no character here needs escaping), the integer in its shortest form.
    const jcs = `{"missionId":${JSON.stringify(scope.missionId)},"operationId":"deploy:web","ownershipEpoch":2,"workItemId":${JSON.stringify(scope.workItemId)}}`
    expect(sideEffectKey(scope)).toBe(tagged(jcs))
  })

  it('depends on nothing but the four members: order and extra members do not matter', () => {
    const reordered = { operationId: scope.operationId, ownershipEpoch: 2, workItemId: scope.workItemId, missionId: scope.missionId }
    const extra = { ...scope, attempt: 7, note: 'ignored' } as SideEffectScope
    expect(sideEffectKey(reordered)).toBe(sideEffectKey(scope))
    expect(sideEffectKey(extra)).toBe(sideEffectKey(scope))
  })

  it('changes when any one member changes', () => {
    const variants: SideEffectScope[] = [
      { ...scope, missionId: `${scope.missionId}:x` },
      { ...scope, workItemId: `${scope.workItemId}:x` },
      { ...scope, ownershipEpoch: 3 },
      { ...scope, operationId: 'deploy:api' },
    ]
    const keys = new Set([scope, ...variants].map(sideEffectKey))
    expect(keys.size).toBe(5)
  })

  it('keeps member boundaries: moving text from one member to the next gives another key', () => {
    const a = sideEffectKey({ ...scope, missionId: 'urn:a:b', workItemId: 'c' })
    const b = sideEffectKey({ ...scope, missionId: 'urn:a', workItemId: 'b:c' })
    expect(a).not.toBe(b)
  })

  it('property: two scopes get the same key exactly when their four members are equal', () => {
    const text = fc.string({ minLength: 1, maxLength: 12 })
    const scopes = fc.record({ missionId: text, workItemId: text, ownershipEpoch: fc.integer({ min: 1, max: 5 }), operationId: text })
    fc.assert(
      fc.property(scopes, scopes, (x, y) => {
        const same = x.missionId === y.missionId && x.workItemId === y.workItemId && x.ownershipEpoch === y.ownershipEpoch && x.operationId === y.operationId
        expect(sideEffectKey(x) === sideEffectKey(y)).toBe(same)
      }),
    )
  })

  it.each([
    ['missionId', { ...scope, missionId: '' }],
    ['workItemId', { ...scope, workItemId: 42 }],
    ['ownershipEpoch', { ...scope, ownershipEpoch: 0 }],
    ['ownershipEpoch', { ...scope, ownershipEpoch: 1.5 }],
    ['operationId', { ...scope, operationId: undefined }],
  ])('refuses a malformed %s with UsageError', (_name, bad) => {
    expect(() => sideEffectKey(bad as unknown as SideEffectScope)).toThrow(UsageError)
  })
})

describe('attemptKey (§11.4)', () => {
  const base = sideEffectKey(scope)

  it('is the tagged SHA-256 of the RFC 8785 form of { attempt, base }, computed here by hand', () => {
    expect(attemptKey(base, 3)).toBe(tagged(`{"attempt":3,"base":"${base}"}`))
  })

  it('is stable per attempt, distinct across attempts and from the base key', () => {
    const keys = [1, 2, 3, 4].map((n) => attemptKey(base, n))
    expect(keys).toEqual([1, 2, 3, 4].map((n) => attemptKey(base, n)))
    expect(new Set([base, ...keys]).size).toBe(5)
    expect(attemptKey(sideEffectKey({ ...scope, ownershipEpoch: 3 }), 1)).not.toBe(keys[0])
  })

  it('refuses a base that is not a side-effect key and a non-positive attempt', () => {
    expect(() => attemptKey('deploy:web', 1)).toThrow(UsageError)
    expect(() => attemptKey(base.toUpperCase(), 1)).toThrow(UsageError)
    expect(() => attemptKey(base, 0)).toThrow(UsageError)
    expect(() => attemptKey(base, Number.NaN)).toThrow(UsageError)
  })
})

const POLICY: RetryPolicy = { maxAttempts: 3, backoff: 'exponential', maxDelay: 'PT5S', retryableFailures: ['TRANSIENT'] }

describe('retryBackoffMs (§11.4)', () => {
  it('doubles exponentially up to maxDelay', () => {
    expect([1, 2, 3, 4, 5].map((a) => retryBackoffMs(POLICY, a))).toEqual([1000, 2000, 4000, 5000, 5000])
  })
  it('is constant for fixed and zero for none', () => {
    expect(retryBackoffMs({ ...POLICY, backoff: 'fixed' }, 4, 700)).toBe(700)
    expect(retryBackoffMs({ ...POLICY, backoff: 'fixed', maxDelay: 'PT0.2S' }, 1, 700)).toBe(200)
    expect(retryBackoffMs({ ...POLICY, backoff: 'none' }, 3)).toBe(0)
  })
})
