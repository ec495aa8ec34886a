import { describe, expect, it, vi } from 'vitest'
import {
  InMemoryAdmissionLog,
  admitFirst,
  replayHistorical,
  type AdmissionLog,
  type AdmissionResult,
  type AppendOutcome,
  type FirstAdmissionRecord,
  type LookupOutcome,
  type TrustedAcceptance,
} from './admission.js'
import { encodeBase64url } from './bytes.js'
import { keyPairFromSeed } from './ed25519.js'
import { canonicalize } from './jcs.js'
import { Registry } from './registry.js'
import { GENERIC_WIRE_MESSAGES, sign, signingHash, type SchemaCheck } from './signed.js'

const ORG = 'urn:weft:test:organization:acme'
const SERVICE = { type: 'service', id: 'urn:weft:test:service:admission' } as const
const OTHER_SERVICE = { type: 'service', id: 'urn:weft:test:service:other' } as const
const coordinator = { type: 'agent', id: 'urn:weft:test:agent:coordinator' } as const
const authority = { type: 'service', id: 'urn:weft:test:service:group-authority' } as const
const coordinatorKey = { keyId: 'urn:weft:test:key:coordinator', pair: keyPairFromSeed(new Uint8Array(32).fill(1)) }
const authorityKey = { keyId: 'urn:weft:test:key:authority', pair: keyPairFromSeed(new Uint8Array(32).fill(2)) }

function registryWith(history: unknown[] = []): Registry {
  return Registry.fromEvidence({
    organizationId: ORG,
    bindings: [
      {
        keyId: coordinatorKey.keyId,
        principal: coordinator,
        algorithm: 'Ed25519',
        publicKey: encodeBase64url(coordinatorKey.pair.publicKey),
        validFrom: '2026-07-15T00:00:00Z',
        validityHistory: history,
      },
      { keyId: authorityKey.keyId, principal: authority, algorithm: 'Ed25519', publicKey: encodeBase64url(authorityKey.pair.publicKey), validFrom: '2026-07-01T00:00:00Z', validityHistory: [] },
    ],
  })
}

// Expires 2026-07-16; a later history record revokes at 01:00 on the signing day.
const registry = registryWith([{ sequence: 1, recordedAt: '2026-07-16T00:00:00Z', validUntil: '2026-07-16T00:00:00Z' }])
const revoked = registryWith([
  { sequence: 1, recordedAt: '2026-07-16T00:00:00Z', validUntil: '2026-07-16T00:00:00Z' },
  { sequence: 2, recordedAt: '2026-07-17T00:00:00Z', revokedAt: '2026-07-15T01:00:00Z' },
])

const RECORD_MEMBERS = ['protocolVersion', 'admissionRecordId', 'organizationId', 'documentKind', 'signingHash', 'keyId', 'principal', 'trustedAcceptedAt', 'acceptedBy']

/** A stand-in for the generated validators: signed documents pass, records get a shape check. */
const validate: SchemaCheck = (kind, value) => {
  if (kind !== 'first-admission-record') return true
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const keys = Object.keys(value)
  const record = value as Record<string, unknown>
  return (
    keys.length === RECORD_MEMBERS.length &&
    RECORD_MEMBERS.every((k) => keys.includes(k)) &&
    (record['acceptedBy'] as { type?: unknown } | null)?.type === 'service' &&
    /^\d{4}-/.test(String(record['trustedAcceptedAt']))
  )
}

const command = sign('command', { actionId: 'urn:uuid:1', actor: coordinator, kind: 'mission.submit', issuedAt: '2026-07-15T00:00:00Z', payload: {} }, coordinatorKey)
const commandBytes = new TextEncoder().encode(JSON.stringify(command))
const commandHash = signingHash(command)
const event = sign('event', { eventId: 'urn:uuid:2', acceptedBy: authority, occurredAt: '2026-07-15T00:00:00Z', payload: {} }, authorityKey)
const eventBytes = new TextEncoder().encode(JSON.stringify(event))

function context(trustedAcceptedAt = '2026-07-15T00:05:00Z', admissionRecordId = 'urn:weft:test:admission:1'): TrustedAcceptance {
  return { admissionRecordId, trustedAcceptedAt, acceptedBy: SERVICE }
}

function recordFor(patch: Partial<Record<keyof FirstAdmissionRecord, unknown>> = {}): Record<string, unknown> {
  return {
    protocolVersion: '0.1',
    admissionRecordId: 'urn:weft:test:admission:1',
    organizationId: ORG,
    documentKind: 'command',
    signingHash: commandHash,
    keyId: coordinatorKey.keyId,
    principal: coordinator,
    trustedAcceptedAt: '2026-07-15T00:05:00Z',
    acceptedBy: SERVICE,
    ...patch,
  }
}

const json = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value))

/** A log answering with fixed outcomes and counting calls. */
function scripted(lookup: LookupOutcome, append?: AppendOutcome): AdmissionLog & { lookups: number; appends: FirstAdmissionRecord[] } {
  const log = {
    lookups: 0,
    appends: [] as FirstAdmissionRecord[],
    lookup() {
      log.lookups++
      return lookup
    },
    appendOrReturnExisting(candidate: FirstAdmissionRecord) {
      log.appends.push(candidate)
      if (append === undefined) throw new Error('append not scripted')
      return append
    },
  }
  return log
}

function expectAdmissionFailure(result: AdmissionResult, reason: string): void {
  if (result.ok) throw new Error(`expected admission failure ${reason}, got success`)
  expect(result.stage).toBe('admission')
  expect(result.reason).toBe(reason)
  expect(result.error.code).toBe('AUTH_INVALID_SIGNATURE')
  expect(result.error.message).toBe(GENERIC_WIRE_MESSAGES.AUTH_INVALID_SIGNATURE)
  expect(JSON.stringify(result.error.toWire('2026-07-15T00:00:00Z'))).not.toContain(reason)
  expect(result.error.cause).toMatchObject({ stage: 'admission', reason })
}

describe('first admission with the in-memory log', () => {
  it('commits once, then finds the record again without appending (idempotent retry)', async () => {
    const log = new InMemoryAdmissionLog({ service: SERVICE })
    const trustedContext = vi.fn(() => context())
    const first = await admitFirst('command', commandBytes, registry, { validate, log, trustedContext })
    if (!first.ok) throw new Error(`${first.stage}/${first.reason} ${first.detail ?? ''}`)
    expect(first.source).toBe('committed')
    expect(first.record).toEqual(recordFor())
    expect(first.authenticatedService).toEqual(SERVICE)
    expect(first.verified.signingHash).toBe(commandHash)
    expect(log.size).toBe(1)

    const append = vi.spyOn(log, 'appendOrReturnExisting')
    const again = await admitFirst('command', commandBytes, registry, { validate, log, trustedContext })
    expect(again.ok && again.source).toBe('found')
    expect(append).not.toHaveBeenCalled()
    expect(trustedContext).toHaveBeenCalledTimes(1)

    const replay = await replayHistorical('command', commandBytes, registry, { validate, log })
    expect(replay.ok && replay.source).toBe('found')
  })

  it('accepts a concurrent winner whose record ID and trusted time differ from the candidate', async () => {
    const winner = json(recordFor({ admissionRecordId: 'urn:weft:test:admission:winner', trustedAcceptedAt: '2026-07-15T02:00:00+02:00' }))
    const log = scripted({ status: 'absent' }, { status: 'existing', record: winner, authenticatedService: SERVICE })
    const result = await admitFirst('command', commandBytes, registry, { validate, log, trustedContext: () => context() })
    expect(result.ok && result.source).toBe('existing')
    expect(result.ok && result.record.admissionRecordId).toBe('urn:weft:test:admission:winner')
    expect(log.appends[0]).toEqual(recordFor())
  })

  it('checks the trusted time before any append: malformed, before validFrom, at validUntil, at revokedAt', async () => {
    const cases: [Registry, string, string][] = [
      [registry, 'not-a-timestamp', 'malformed-trusted-time'],
      [registry, '2026-07-15T00:00:00-00:00', 'malformed-trusted-time'],
      [registry, '2026-07-14T23:59:59.999999Z', 'trusted-time-outside-key-interval'],
      [registry, '2026-07-16T00:00:00Z', 'trusted-time-outside-key-interval'],
      [revoked, '2026-07-15T01:00:00Z', 'trusted-time-outside-key-interval'],
      [revoked, '2026-07-15T02:00:00+01:00', 'trusted-time-outside-key-interval'],
    ]
    for (const [reg, time, reason] of cases) {
      const log = scripted({ status: 'absent' })
      expectAdmissionFailure(await admitFirst('command', commandBytes, reg, { validate, log, trustedContext: () => context(time) }), reason)
      expect(log.appends).toHaveLength(0)
    }
    // Just inside both bounds.
    const ok = await admitFirst('command', commandBytes, revoked, { validate, log: new InMemoryAdmissionLog({ service: SERVICE }), trustedContext: () => context('2026-07-15T00:59:59.999999999Z') })
    expect(ok.ok).toBe(true)
  })

  it('maps every typed lookup and append failure, and adapter throws, to a stable reason', async () => {
    const lookups: [LookupOutcome['status'], string][] = [
      ['unavailable', 'log-unavailable'],
      ['indeterminate', 'log-indeterminate'],
      ['unauthenticated', 'log-authentication-failed'],
      ['integrity-failed', 'append-integrity-not-established'],
    ]
    for (const [status, reason] of lookups) {
      const trustedContext = vi.fn(() => context())
      const log = scripted({ status } as LookupOutcome)
      expectAdmissionFailure(await admitFirst('command', commandBytes, registry, { validate, log, trustedContext }), reason)
      expect(trustedContext).not.toHaveBeenCalled()
      expect(log.appends).toHaveLength(0)
    }
    const appends: [AppendOutcome['status'], string][] = [
      ['conflict', 'record-conflict'],
      ['unavailable', 'log-unavailable'],
      ['indeterminate', 'log-indeterminate'],
      ['unauthenticated', 'log-authentication-failed'],
      ['integrity-failed', 'append-integrity-not-established'],
      ['failed-commit', 'commit-failed'],
    ]
    for (const [status, reason] of appends) {
      const log = scripted({ status: 'absent' }, { status } as AppendOutcome)
      expectAdmissionFailure(await admitFirst('command', commandBytes, registry, { validate, log, trustedContext: () => context() }), reason)
    }
    const throwing: AdmissionLog = {
      lookup: () => Promise.reject(new Error('network')),
      appendOrReturnExisting: () => ({ status: 'committed', record: json(recordFor()), authenticatedService: SERVICE }),
    }
    expectAdmissionFailure(await admitFirst('command', commandBytes, registry, { validate, log: throwing, trustedContext: () => context() }), 'log-unavailable')
    const appendThrows: AdmissionLog = {
      lookup: () => ({ status: 'absent' }),
      appendOrReturnExisting: () => {
        throw new Error('timeout')
      },
    }
    expectAdmissionFailure(await admitFirst('command', commandBytes, registry, { validate, log: appendThrows, trustedContext: () => context() }), 'log-indeterminate')
    const noContext = scripted({ status: 'absent' })
    expectAdmissionFailure(
      await admitFirst('command', commandBytes, registry, {
        validate,
        log: noContext,
        trustedContext: () => {
          throw new Error('clock down')
        },
      }),
      'trusted-context-unavailable',
    )
    const bogus = scripted({ status: 'maybe' } as unknown as LookupOutcome)
    expectAdmissionFailure(await admitFirst('command', commandBytes, registry, { validate, log: bogus, trustedContext: () => context() }), 'log-indeterminate')
  })

  it('validates the returned record, not the candidate', async () => {
    const returning = (record: unknown, service: { type: 'agent' | 'human' | 'service'; id: string } = SERVICE) =>
      scripted({ status: 'absent' }, { status: 'committed', record: json(record), authenticatedService: service })
    const run = (log: AdmissionLog) => admitFirst('command', commandBytes, registry, { validate, log, trustedContext: () => context() })
    expectAdmissionFailure(await run(returning(recordFor({ signingHash: `sha256:${'0'.repeat(64)}` }))), 'record-binding-mismatch')
    expectAdmissionFailure(await run(returning(recordFor({ keyId: authorityKey.keyId }))), 'record-binding-mismatch')
    expectAdmissionFailure(await run(returning(recordFor({ principal: authority }))), 'record-binding-mismatch')
    expectAdmissionFailure(await run(returning(recordFor({ organizationId: 'urn:weft:test:organization:other' }))), 'record-binding-mismatch')
    expectAdmissionFailure(await run(returning(recordFor({ documentKind: 'event' }))), 'record-binding-mismatch')
    expectAdmissionFailure(await run(returning(recordFor(), OTHER_SERVICE)), 'record-binding-mismatch')
    expectAdmissionFailure(await run(returning(recordFor(), { type: 'agent', id: SERVICE.id })), 'log-authentication-failed')
    expectAdmissionFailure(await run(returning(recordFor({ acceptedBy: { type: 'human', id: SERVICE.id } }))), 'record-schema-invalid')
    expectAdmissionFailure(await run(returning({ ...recordFor(), signature: {} })), 'record-schema-invalid')
    expectAdmissionFailure(await run(returning(recordFor({ trustedAcceptedAt: '2026-07-16T00:00:00Z' }))), 'trusted-time-outside-key-interval')
    const duplicate = scripted({ status: 'absent' }, { status: 'committed', record: '{"protocolVersion":"0.1","protocolVersion":"0.1"}', authenticatedService: SERVICE })
    expectAdmissionFailure(await run(duplicate), 'record-schema-invalid')
  })

  it('returns a cryptographic failure unchanged and never consults the log', async () => {
    const log = scripted({ status: 'absent' })
    const tampered = JSON.stringify(command).replace('mission.submit', 'mission.cancel')
    const result = await admitFirst('command', tampered, registry, { validate, log, trustedContext: () => context() })
    expect(result.ok).toBe(false)
    expect(!result.ok && result.stage).toBe('signature')
    expect(log.lookups).toBe(0)
  })
})

describe('historical replay', () => {
  it('requires a found record and never appends or issues trusted context', async () => {
    const log = scripted({ status: 'absent' })
    expectAdmissionFailure(await replayHistorical('command', commandBytes, registry, { validate, log }), 'record-missing')
    expect(log.appends).toHaveLength(0)
  })

  it('survives a later revocation when both instants were inside the interval', async () => {
    const log = scripted({ status: 'found', record: json(recordFor()), authenticatedService: SERVICE })
    expect((await replayHistorical('command', commandBytes, revoked, { validate, log })).ok).toBe(true)
    const late = scripted({ status: 'found', record: json(recordFor({ trustedAcceptedAt: '2026-07-15T01:00:00Z' })), authenticatedService: SERVICE })
    expectAdmissionFailure(await replayHistorical('command', commandBytes, revoked, { validate, log: late }), 'trusted-time-outside-key-interval')
  })

  it('rejects Event self-anchoring through lookup and through append', async () => {
    const viaLookup = scripted({ status: 'found', record: eventBytes, authenticatedService: SERVICE })
    expectAdmissionFailure(await replayHistorical('event', eventBytes, registry, { validate, log: viaLookup }), 'event-self-anchoring')
    const { signature: _s, ...stripped } = event
    const strippedBytes = canonicalize(stripped)
    if (!strippedBytes.ok) throw new Error('jcs')
    const viaAppend = scripted({ status: 'absent' }, { status: 'committed', record: strippedBytes.bytes, authenticatedService: SERVICE })
    expectAdmissionFailure(await admitFirst('event', eventBytes, registry, { validate, log: viaAppend, trustedContext: () => context() }), 'event-self-anchoring')
    // A proper record for the Event is fine.
    const log = new InMemoryAdmissionLog({ service: SERVICE })
    expect((await admitFirst('event', eventBytes, registry, { validate, log, trustedContext: () => context('2026-07-15T00:05:00Z', 'urn:weft:test:admission:event') })).ok).toBe(true)
  })
})

describe('InMemoryAdmissionLog', () => {
  const candidate = recordFor() as unknown as FirstAdmissionRecord

  it('appends or returns the existing record atomically per (organizationId, signingHash)', () => {
    const log = new InMemoryAdmissionLog({ service: SERVICE })
    expect(log.lookup(ORG, commandHash)).toEqual({ status: 'absent' })
    const committed = log.appendOrReturnExisting(candidate)
    expect(committed.status).toBe('committed')
    const later = log.appendOrReturnExisting({ ...candidate, admissionRecordId: 'urn:weft:test:admission:2', trustedAcceptedAt: '2026-07-15T00:09:00Z' })
    expect(later.status).toBe('existing')
    if (later.status === 'existing' && committed.status === 'committed') expect(Buffer.from(later.record as Uint8Array).equals(Buffer.from(committed.record as Uint8Array))).toBe(true)
    expect(log.appendOrReturnExisting({ ...candidate, keyId: authorityKey.keyId }).status).toBe('conflict')
    expect(log.appendOrReturnExisting({ ...candidate, principal: authority }).status).toBe('conflict')
    expect(log.appendOrReturnExisting({ ...candidate, documentKind: 'event' }).status).toBe('conflict')
    // One admissionRecordId never names records under two keys.
    expect(log.appendOrReturnExisting({ ...candidate, signingHash: `sha256:${'1'.repeat(64)}` }).status).toBe('conflict')
    // Same content under another Organization is another key.
    expect(log.appendOrReturnExisting({ ...candidate, organizationId: 'urn:weft:test:organization:other', admissionRecordId: 'urn:weft:test:admission:3' }).status).toBe('committed')
    expect(log.size).toBe(2)
    expect(log.lookup(ORG, commandHash).status).toBe('found')
  })

  it('writes only as its authenticated service and for its Organizations', () => {
    const log = new InMemoryAdmissionLog({ service: SERVICE, organizationIds: [ORG] })
    expect(log.appendOrReturnExisting({ ...candidate, acceptedBy: OTHER_SERVICE }).status).toBe('unauthenticated')
    expect(log.appendOrReturnExisting({ ...candidate, organizationId: 'urn:weft:test:organization:other' }).status).toBe('unauthenticated')
    expect(() => new InMemoryAdmissionLog({ service: { type: 'agent', id: 'x' } as never })).toThrow()
  })

  it('never lets the caller mutate stored bytes', () => {
    const log = new InMemoryAdmissionLog({ service: SERVICE })
    const committed = log.appendOrReturnExisting(candidate)
    if (committed.status !== 'committed') throw new Error('not committed')
    ;(committed.record as Uint8Array).fill(0)
    const found = log.lookup(ORG, commandHash)
    expect(found.status === 'found' && JSON.parse(new TextDecoder().decode(found.record as Uint8Array))).toEqual(recordFor())
  })
})
