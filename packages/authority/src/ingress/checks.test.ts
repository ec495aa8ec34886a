import { signingHash } from '@weft/codec'
import { describe, expect, it } from 'vitest'
import { cast, testClock, signed } from '@weft/testkit/fixtures'
import type { Command } from '@weft/spec'
import { checkedWithPayload, decodeTrusted, epochMs, knownEpochMs } from './checks.js'

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

  it('reads times of the day it read last from their digits, and what Date.parse refuses as it does', () => {
    expect(knownEpochMs('2026-07-15T10:00:00.000Z')).toBe(Date.parse('2026-07-15T10:00:00.000Z'))
    for (const text of ['2026-07-15T23:59:60.000Z', '2026-07-15T10:60:00.000Z', '2026-07-15T1a:00:00.000Z', '2026-07-15T10:00:00.0a0Z', '2026-07-15T10-00-00.000Z']) {
      expect(Object.is(knownEpochMs(text), epochMs(text)), text).toBe(true)
    }
    for (const text of ['2026-07-15T00:00:00.000Z', '2026-07-15T12:34:56.789Z', '2026-07-15T23:59:59.999Z', '2026-07-16T00:00:00.001Z', '2026-07-15T07:08:09.010Z']) {
      expect(Object.is(knownEpochMs(text), epochMs(text)), text).toBe(true)
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

describe('checkedWithPayload', () => {
  const evidence = { evidenceId: 'urn:weft:test:evidence:1' }
  const submit = { kind: 'work.submit', payload: { workItemId: 'urn:weft:test:work:1', evidence: [evidence] } } as unknown as Command
  const publish = { kind: 'artifact.publish', payload: { artifact: { artifactId: 'urn:weft:test:artifact:1' } } } as unknown as Command

  it('knows the documents a payload schema checked with their own schema, by identity', () => {
    expect(checkedWithPayload(submit, 'evidence', evidence)).toBe(true)
    expect(checkedWithPayload(publish, 'artifact', (publish.payload as { artifact: object }).artifact)).toBe(true)
    for (const kind of ['approval', 'agent-card', 'context-package', 'group-snapshot']) {
      const member = { approval: 'mission.approve', 'agent-card': 'ext.missionweaveprotocol.registry.agent_card_register', 'context-package': 'mission.assign_coordinator', 'group-snapshot': 'ext.missionweaveprotocol.core.group_archive' }[kind]!
      const name = { approval: 'approval', 'agent-card': 'card', 'context-package': 'contextPackage', 'group-snapshot': 'snapshot' }[kind]!
      const document = {}
      expect(checkedWithPayload({ kind: member, payload: { [name]: document } } as unknown as Command, kind, document), kind).toBe(true)
    }
  })

  it('checks anything else: a copy, another document kind, a member of another schema, a kind without documents', () => {
    expect(checkedWithPayload(submit, 'evidence', { ...evidence })).toBe(false)
    expect(checkedWithPayload(submit, 'artifact', evidence)).toBe(false)
    expect(checkedWithPayload(publish, 'evidence', (publish.payload as { artifact: object }).artifact)).toBe(false)
    expect(checkedWithPayload({ kind: 'mission.cancel', payload: { reason: evidence } } as unknown as Command, 'evidence', evidence)).toBe(false)
  })
})
