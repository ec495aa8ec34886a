/**
 * Reading an Event's payload by its kind (`payloads/event-of.ts`): the kind tested decides, a
 * payload of another kind is never returned, and a missing Event reads as no payload.
 */
import { describe, expect, it } from 'vitest'
import type { Event } from '../src/documents/index.js'
import { catalogued, isEventOf, payloadOf } from '../src/payloads/index.js'

function event(kind: string, payload: Record<string, unknown>): Event {
  return { kind, payload } as unknown as Event
}

describe('payloadOf, isEventOf, catalogued', () => {
  const started = event('work.started', { workItemId: 'wi-1' })

  it('payloadOf returns the payload of an Event of the kind asked for', () => {
    expect(payloadOf(started, 'work.started')?.workItemId).toBe('wi-1')
  })

  it('payloadOf returns undefined for another kind and for no Event', () => {
    expect(payloadOf(started, 'work.progressed')).toBeUndefined()
    expect(payloadOf(undefined, 'work.started')).toBeUndefined()
  })

  it('isEventOf narrows only on the exact kind', () => {
    expect(isEventOf(started, 'work.started')).toBe(true)
    expect(isEventOf(started, 'work.start' as 'work.started')).toBe(false)
    expect(isEventOf(event('ext.example.unknown', {}), 'work.started')).toBe(false)
  })

  it('catalogued keeps the Event as it is, for a switch over its kind', () => {
    const read = catalogued(started)
    expect(read).toBe(started)
    let seen = ''
    switch (read.kind) {
      case 'work.started':
        seen = read.payload.workItemId
        break
      default:
        seen = 'other'
    }
    expect(seen).toBe('wi-1')
  })
})
