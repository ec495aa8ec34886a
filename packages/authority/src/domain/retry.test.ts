import type { Evidence, RetryPolicy } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { backoffMs, failureFacts } from './retry.js'

const POLICY: RetryPolicy = { maxAttempts: 3, backoff: 'exponential', maxDelay: 'PT5S', retryableFailures: ['TRANSIENT'] }
const AT = '2026-07-15T00:00:00Z'

/** The members of Evidence `failureFacts` reads. */
function report(fields: Partial<Evidence>): Evidence {
  return { type: 'failure_report', result: 'failed', ...fields } as Evidence
}

describe('retry policy arithmetic (§11.4)', () => {
  it('backs off not at all, a fixed second, or a doubling second per attempt, never above maxDelay', () => {
    expect([1, 2, 3].map((n) => backoffMs({ ...POLICY, backoff: 'none' }, n))).toEqual([0, 0, 0])
    expect([1, 2, 3].map((n) => backoffMs({ ...POLICY, backoff: 'fixed' }, n))).toEqual([1000, 1000, 1000])
    expect([1, 2, 3, 4].map((n) => backoffMs(POLICY, n))).toEqual([1000, 2000, 4000, 5000])
    expect(backoffMs({ ...POLICY, maxDelay: 'PT0.5S' }, 1)).toBe(500)
    expect(backoffMs({ ...POLICY, maxDelay: 'P1DT2H3M4S' }, 30)).toBe(((26 * 60 + 3) * 60 + 4) * 1000)
  })

  it('reads the failure code, the attempts used and permanence from failure Evidence', () => {
    expect(failureFacts([report({ details: { code: 'TRANSIENT', attempts: 2 } })], POLICY, AT)).toEqual({ failedAt: AT, code: 'TRANSIENT', attempts: 2, permanent: false })
    // A code the policy does not list, or a report that says so, is permanent.
    expect(failureFacts([report({ details: { code: 'BAD_INPUT' } })], POLICY, AT)).toMatchObject({ code: 'BAD_INPUT', attempts: 1, permanent: true })
    expect(failureFacts([report({ details: { code: 'TRANSIENT', stopped: 'permanent' } })], POLICY, AT).permanent).toBe(true)
    // Reported attempts are at least one and at most the policy's.
    expect(failureFacts([report({ details: { code: 'TRANSIENT', attempts: 9 } })], POLICY, AT).attempts).toBe(3)
    expect(failureFacts([report({ details: { code: 'TRANSIENT', attempts: 0 } })], POLICY, AT).attempts).toBe(1)
  })

  it('treats Evidence without a well-formed code, or passing Evidence, as an unclassified failure', () => {
    const unclassified = { failedAt: AT, attempts: 1, permanent: false }
    expect(failureFacts([report({})], POLICY, AT)).toEqual(unclassified)
    expect(failureFacts([report({ details: { code: 'transient' } })], POLICY, AT)).toEqual(unclassified)
    expect(failureFacts([report({ type: 'deterministic_test', result: 'passed', details: { code: 'TRANSIENT' } })], POLICY, AT)).toEqual(unclassified)
  })
})
