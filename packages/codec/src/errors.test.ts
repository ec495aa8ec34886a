import { describe, expect, it } from 'vitest'
import { ProtocolError, UsageError, isErrorCode } from './errors.js'
import { ERROR_CODE_INFO, ERROR_CODES } from './gen/error-codes.js'

describe('ProtocolError', () => {
  it('takes retry-safety from the catalog unless overridden', () => {
    expect(new ProtocolError('BACKPRESSURE', 'slow down').retryable).toBe(true)
    expect(new ProtocolError('ACTION_ID_COLLISION', 'reused').retryable).toBe(false)
    expect(new ProtocolError('REVISION_CONFLICT', 'x', { retryable: true }).retryable).toBe(true)
  })

  it('is recognised across duplicate package copies by its brand', () => {
    const foreign = Object.create(Error.prototype) as Record<symbol, unknown>
    Object.defineProperty(foreign, Symbol.for('@weft/ProtocolError'), { value: true })
    expect(foreign instanceof ProtocolError).toBe(true)
    expect(new Error('x') instanceof ProtocolError).toBe(false)
    expect(new ProtocolError('INTERNAL_ERROR', 'x') instanceof Error).toBe(true)
  })

  it('wraps unknown failures as INTERNAL_ERROR without leaking their message', () => {
    const e = ProtocolError.from(new TypeError('secret detail'))
    expect(e.code).toBe('INTERNAL_ERROR')
    expect(e.message).not.toContain('secret')
    expect(e.cause).toBeInstanceOf(TypeError)
    const same = new ProtocolError('GROUP_NOT_FOUND', 'no such group')
    expect(ProtocolError.from(same)).toBe(same)
  })

  it('serializes to the error.schema.json shape without the cause', () => {
    const wire = new ProtocolError('WORK_ALREADY_OWNED', 'another candidate won', { relatedActionId: 'urn:a', cause: new Error('x') }).toWire('2026-12-02T00:00:00Z')
    expect(wire).toEqual({ code: 'WORK_ALREADY_OWNED', message: 'another candidate won', retryable: false, occurredAt: '2026-12-02T00:00:00Z', relatedActionId: 'urn:a' })
  })

  it('carries every optional member of error.schema.json and writes it on the wire (§16, §17.3, §19)', () => {
    const members = {
      fatal: false,
      relatedFrameId: 'urn:f',
      groupId: 'urn:g',
      expectedRevision: 3,
      currentRevision: 4,
      retryAfterMs: 0,
      snapshotArtifactHash: `sha256:${'c'.repeat(64)}`,
      details: { throughSequence: 9 },
    }
    const error = new ProtocolError('CURSOR_TOO_OLD', 'restore the snapshot', members)
    expect(error).toMatchObject(members)
    expect(error.toWire('2026-12-02T00:00:00Z')).toEqual({ code: 'CURSOR_TOO_OLD', message: 'restore the snapshot', retryable: false, occurredAt: '2026-12-02T00:00:00Z', ...members })
  })

  it('lifts a schema member reported only in details to the top level, when it has the member’s form', () => {
    const lifted = new ProtocolError('REVISION_CONFLICT', 'stale', { details: { expectedRevision: 2, currentRevision: 5 } })
    expect([lifted.expectedRevision, lifted.currentRevision, lifted.details]).toEqual([2, 5, { expectedRevision: 2, currentRevision: 5 }])
    expect(new ProtocolError('RATE_LIMITED', 'wait', { details: { retryAfterMs: 1500 } }).toWire('2026-12-02T00:00:00Z').retryAfterMs).toBe(1500)
    // An explicit member wins over details; values without the schema's form never reach the wire.
    expect(new ProtocolError('BACKPRESSURE', 'x', { retryAfterMs: 10, details: { retryAfterMs: 20 } }).retryAfterMs).toBe(10)
    const odd = new ProtocolError('CURSOR_TOO_OLD', 'x', {
      retryAfterMs: -1,
      currentRevision: 1.5,
      snapshotArtifactHash: 'sha256:XY',
      relatedActionId: 'not a uri',
      details: { expectedRevision: '3', fatal: 'yes' },
    })
    expect([odd.retryAfterMs, odd.currentRevision, odd.snapshotArtifactHash, odd.expectedRevision, odd.fatal]).toEqual([undefined, undefined, undefined, undefined, undefined])
    expect(Object.keys(odd.toWire('2026-12-02T00:00:00Z')).sort()).toEqual(['code', 'details', 'message', 'occurredAt', 'retryable'])
  })

  it('copies itself with overrides, keeping every other member and the cause', () => {
    const cause = new Error('why')
    const original = new ProtocolError('CURSOR_TOO_OLD', 'restore', { groupId: 'urn:g', fatal: true, snapshotArtifactHash: `sha256:${'d'.repeat(64)}`, retryAfterMs: 5, details: { a: 1 }, cause })
    const copy = original.with({ relatedActionId: 'urn:action', retryable: true })
    expect(copy).not.toBe(original)
    expect(copy).toMatchObject({
      code: 'CURSOR_TOO_OLD',
      message: 'restore',
      retryable: true,
      relatedActionId: 'urn:action',
      groupId: 'urn:g',
      fatal: true,
      snapshotArtifactHash: original.snapshotArtifactHash,
      retryAfterMs: 5,
      details: { a: 1 },
    })
    expect(copy.cause).toBe(cause)
    expect(original.relatedActionId).toBeUndefined()
  })

  it('knows the 27 codes of §19', () => {
    expect(ERROR_CODES).toHaveLength(27)
    expect(Object.keys(ERROR_CODE_INFO)).toEqual([...ERROR_CODES])
    expect(isErrorCode('MEMBERSHIP_STALE')).toBe(true)
    expect(isErrorCode('STALE_COORDINATOR')).toBe(false)
  })

  it('keeps usage errors apart from protocol errors', () => {
    const e = new UsageError('maxErrors must be positive')
    expect(e instanceof UsageError).toBe(true)
    expect(e instanceof ProtocolError).toBe(false)
  })
})
