import { signingHash } from '@weft/codec'
import { describe, expect, it } from 'vitest'
import { cast, testClock } from '../test/fixtures.js'
import { signed } from '../test/fixtures-pipeline.js'
import { decodeTrusted, epochMs, knownEpochMs } from './ingress.js'

describe('knownEpochMs', () => {
  it('equals epochMs to the last bit, millisecond by millisecond, before and after 1970', () => {
    const starts = ['1969-12-31T23:59:59.000Z', '2026-07-15T00:00:00.000Z', '0001-01-01T00:00:00.000Z', '9999-12-31T23:59:58.000Z']
    for (const start of starts) {
      const from = Date.parse(start)
      for (let ms = from; ms < from + 2000; ms++) {
        const text = new Date(ms).toISOString()
        expect(Object.is(knownEpochMs(text), epochMs(text)), text).toBe(true)
      }
    }
  })

  it('reads every other form of a timestamp as epochMs does', () => {
    for (const text of ['2026-07-15T00:00:00Z', '2026-07-15T00:00:00.1234Z', '2026-07-15T02:00:00.500+02:00', '2026-07-15T00:00:00.5Z']) {
      expect(knownEpochMs(text)).toBe(epochMs(text))
    }
  })
})

describe('decodeTrusted', () => {
  it('knows the signing hash only once something read it, and then the RFC 8785 hash of the Command', () => {
    const command = JSON.parse(signed('ext.missionweaveprotocol.identity.session_open', { agentId: cast.worker1.actor.id }, cast.controlPlane, {}, testClock())) as object
    const decoded = decodeTrusted(command)
    expect(decoded.knownHash).toBeUndefined()
    expect(decoded.commandHash).toBe(signingHash(command))
    expect(decoded.knownHash).toBe(decoded.commandHash)
  })
})
