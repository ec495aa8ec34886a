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
