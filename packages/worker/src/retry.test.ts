import { ProtocolError, UsageError } from '@weft/codec'
import type { RetryPolicy } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { ExecutorFailure, failureFacts, retryDecision, UNCLASSIFIED_FAILURE } from './retry.js'

const POLICY: RetryPolicy = { maxAttempts: 3, backoff: 'exponential', maxDelay: 'PT5S', retryableFailures: ['TRANSIENT'] }
const NOW = 1_000_000
const transient = failureFacts(new ExecutorFailure('TRANSIENT', 'cache unreachable'))

describe('failureFacts', () => {
  it('keeps the code of an ExecutorFailure and its permanence', () => {
    expect(transient).toEqual({ code: 'TRANSIENT', message: 'cache unreachable', permanent: false })
    expect(failureFacts(new ExecutorFailure('TRANSIENT', 'x', { retryable: false })).permanent).toBe(true)
    expect(() => new ExecutorFailure('lower', 'x')).toThrow(UsageError)
  })
  it('classifies protocol errors by catalog retry-safety and anything else as unclassified', () => {
    expect(failureFacts(new ProtocolError('WORK_LEASE_EXPIRED', 'gone'))).toMatchObject({ code: 'WORK_LEASE_EXPIRED', permanent: true })
    expect(failureFacts(new TypeError('boom'))).toEqual({ code: UNCLASSIFIED_FAILURE, message: 'boom', permanent: false })
    expect(failureFacts(Object.assign(new Error('reset'), { code: 'ECONNRESET' })).code).toBe('ECONNRESET')
    expect(failureFacts('text').code).toBe(UNCLASSIFIED_FAILURE)
  })
})

describe('retryDecision (§11.4)', () => {
  const far = NOW + 3_600_000
  it('retries a listed failure while attempts remain, with growing delays', () => {
    expect(retryDecision({ policy: POLICY, failure: transient, attempts: 1, nowMs: NOW, deadlineMs: far })).toEqual({ retry: true, delayMs: 1000, nextAttempt: 2 })
    expect(retryDecision({ policy: POLICY, failure: transient, attempts: 2, nowMs: NOW, deadlineMs: far })).toEqual({ retry: true, delayMs: 2000, nextAttempt: 3 })
  })
  it('stops on exhaustion, an unlisted code, a permanent failure or a deadline it cannot meet', () => {
    expect(retryDecision({ policy: POLICY, failure: transient, attempts: 3, nowMs: NOW, deadlineMs: far })).toEqual({ retry: false, reason: 'exhausted' })
    expect(retryDecision({ policy: POLICY, failure: failureFacts(new Error('x')), attempts: 1, nowMs: NOW, deadlineMs: far })).toEqual({ retry: false, reason: 'not_retryable' })
    expect(retryDecision({ policy: POLICY, failure: { ...transient, permanent: true }, attempts: 1, nowMs: NOW, deadlineMs: far })).toEqual({ retry: false, reason: 'permanent' })
    expect(retryDecision({ policy: POLICY, failure: transient, attempts: 1, nowMs: NOW, deadlineMs: NOW + 1500, attemptMs: 1000 })).toEqual({ retry: false, reason: 'deadline' })
  })
  it('never makes more than maxAttempts attempts in total', () => {
    for (const maxAttempts of [1, 2, 5]) {
      let attempts = 1
      while (retryDecision({ policy: { ...POLICY, maxAttempts }, failure: transient, attempts, nowMs: NOW, deadlineMs: far }).retry) attempts++
      expect(attempts).toBe(maxAttempts)
    }
  })
})
