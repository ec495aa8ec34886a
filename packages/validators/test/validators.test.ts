import { describe, expect, it } from 'vitest'
import { COMMAND_KINDS, EVENT_KINDS } from '@weft/spec'
import { ProtocolError, UsageError, createValidators, validatorForFile, validatorForSchemaId, validators } from '../src/index.js'
import { commandPayloads, createPayloadValidators, eventPayloads } from '../src/payloads.js'

const command = {
  protocolVersion: '0.1',
  actionId: 'urn:uuid:00000000-0000-4000-8000-000000000001',
  actor: { type: 'human', id: 'urn:weft:human:ada' },
  kind: 'mission.create',
  groupId: 'urn:weft:group:1',
  correlationId: 'urn:weft:correlation:1',
  issuedAt: '2026-12-02T10:00:00Z',
  payload: {},
  signature: { algorithm: 'Ed25519', keyId: 'urn:weft:key:ada', createdAt: '2026-12-02T10:00:00Z', value: 'c2ln' },
}

describe('document validators', () => {
  it('accept a valid Command and narrow its type', () => {
    const value: unknown = structuredClone(command)
    expect(validators.command.check(value)).toBe(true)
    if (validators.command.check(value)) expect(value.kind).toBe('mission.create')
    expect(validators.command.errors(value)).toEqual([])
    expect(validators.command.parse(value)).toBe(value)
  })

  it('report each problem with its instance path and keyword', () => {
    const bad = { ...command, actionId: 'urn:x\n', extra: 1, issuedAt: '2026-12-31T23:59:60Z' }
    const issues = validators.command.errors(bad)
    expect(issues.map((i) => [i.path, i.keyword])).toEqual(
      expect.arrayContaining([
        ['/actionId', 'format'],
        ['/issuedAt', 'format'],
        ['/extra', 'additionalProperties'],
      ]),
    )
  })

  it('throw ProtocolError SCHEMA_VALIDATION_FAILED from parse, with the issues as details', () => {
    const bad = { ...command, kind: 'Mission.Create' }
    let caught: unknown
    try {
      validators.command.parse(bad)
    } catch (e) {
      caught = e
    }
    expect(caught).toBeInstanceOf(ProtocolError)
    const e = caught as ProtocolError
    expect(e.code).toBe('SCHEMA_VALIDATION_FAILED')
    expect(e.retryable).toBe(false)
    expect(e.message).toContain('/kind')
    expect((e.details!['issues'] as unknown[]).length).toBeGreaterThan(0)
    expect(e.details).toMatchObject({ truncated: false })
  })

  it('bound the issue list for hostile input', () => {
    const extensions = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`urn:bad:${i}`, { version: 'x', critical: 'no', data: 0 }]))
    const hostile = { ...command, extensions }
    expect(validators.command.check(hostile)).toBe(false)
    expect(validators.command.errors(hostile)).toHaveLength(20)
    expect(validators.command.errors(hostile, { maxErrors: 3 })).toHaveLength(3)
    expect(createValidators({ maxErrors: 7 }).documents.command.errors(hostile)).toHaveLength(7)
    const e = (() => {
      try {
        validators.command.parse(hostile, { maxErrors: 4 })
      } catch (caught) {
        return caught as ProtocolError
      }
      throw new Error('hostile command accepted')
    })()
    expect(e.message).toContain('(stopped after 4 issues)')
    expect(e.details).toMatchObject({ truncated: true })
    expect((e.details!['issues'] as unknown[]).length).toBe(4)
  })

  it('refuse oversized or non-JSON text as PROTOCOL_VIOLATION before validating', () => {
    const text = JSON.stringify(command)
    expect(validators.command.parseText(text).kind).toBe('mission.create')
    expect(validators.command.parseText(new TextEncoder().encode(text)).kind).toBe('mission.create')
    const code = (f: () => unknown): string | undefined => {
      try {
        f()
      } catch (e) {
        return e instanceof ProtocolError ? e.code : 'not a ProtocolError'
      }
      return undefined
    }
    expect(code(() => validators.command.parseText(text, { maxBytes: 100 }))).toBe('PROTOCOL_VIOLATION')
    expect(code(() => validators.command.parseText('{"a":'))).toBe('PROTOCOL_VIOLATION')
    expect(code(() => validators.command.parseText(new Uint8Array([0x7b, 0xff, 0x7d])))).toBe('PROTOCOL_VIOLATION')
    expect(code(() => validators.command.parseText('{}'))).toBe('SCHEMA_VALIDATION_FAILED')
    // strict JSON: a duplicate member after unescaping, trailing data, a byte-order mark
    expect(code(() => validators.command.parseText(text.replace('"kind":', '"kind":"x","\\u006bind":')))).toBe('PROTOCOL_VIOLATION')
    expect(code(() => validators.command.parseText(`${text} {}`))).toBe('PROTOCOL_VIOLATION')
    expect(code(() => validators.command.parseText(new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(text)])))).toBe('PROTOCOL_VIOLATION')
    // multi-byte text is measured in UTF-8 bytes, not UTF-16 units
    expect(code(() => validators.message.parseText(`"${'é'.repeat(60)}"`, { maxBytes: 100 }))).toBe('PROTOCOL_VIOLATION')
  })

  it('treat bad limits as local misuse, not a protocol error', () => {
    expect(() => createValidators({ maxErrors: 0 })).toThrow(UsageError)
    expect(() => validators.command.errors({}, { maxErrors: 1.5 })).toThrow(UsageError)
    expect(() => validators.command.parseText('{}', { maxBytes: -1 })).toThrow(UsageError)
  })

  it('look validators up by file name and schema $id', () => {
    expect(validatorForFile('work-item.schema.json')).toBe(validators.workItem)
    expect(validatorForSchemaId('https://missionweaveprotocol.dev/schemas/0.1/lease.schema.json')).toBe(validators.lease)
    expect(validatorForFile('common.schema.json')).toBe(validators.common)
    expect(Object.keys(validators)).toHaveLength(22)
  })

  it('give the definitions-only common.schema.json a validator that accepts every JSON value (§21)', () => {
    const common = validators.common
    expect([common.file, common.schemaId]).toEqual(['common.schema.json', 'https://missionweaveprotocol.dev/schemas/0.1/common.schema.json'])
    // Its root has only `$defs`; a value that breaks a definition is still a valid instance.
    for (const value of [{}, { protocolVersion: '9.9' }, [], 0, -1.5, '', 'urn:x\n', true, null]) {
      expect(common.check(value), JSON.stringify(value)).toBe(true)
      expect(common.errors(value)).toEqual([])
      expect(common.parse(value)).toBe(value)
    }
    expect(common.parseText('[1, {"a": null}]')).toEqual([1, { a: null }])
  })
})

describe('payload validators (@weft/validators/payloads)', () => {
  it('validate a Command payload by kind and reject unknown members', () => {
    const offer = commandPayloads['work.offer']
    expect(offer.name).toBe('work.offer')
    expect(offer.check({})).toBe(false)
    expect(offer.errors({}).map((i) => i.keyword)).toContain('required')
    expect(Object.keys(commandPayloads)).toEqual([...COMMAND_KINDS])
    expect(Object.keys(eventPayloads)).toEqual([...EVENT_KINDS])
  })

  it('honour the limits of their set', () => {
    const set = createPayloadValidators({ maxErrors: 1 })
    expect(set.commandPayloads['work.offer'].errors({ unknown: 1 })).toHaveLength(1)
    expect(() => createPayloadValidators({ maxBytes: 0 })).toThrow(UsageError)
  })
})

describe('signedVerifier', () => {
  it('runs the six stages with the generated schema check bound in', async () => {
    const { Registry, encodeBase64url, keyPairFromSeed, sign } = await import('@weft/codec')
    const { signedVerifier } = await import('../src/signed.js')
    const pair = keyPairFromSeed(new Uint8Array(32).fill(7))
    const registry = Registry.fromEvidence({
      organizationId: 'urn:weft:org:test',
      bindings: [
        {
          keyId: 'urn:weft:key:ada',
          principal: { type: 'human', id: 'urn:weft:human:ada' },
          algorithm: 'Ed25519',
          publicKey: encodeBase64url(pair.publicKey),
          validFrom: '2026-01-01T00:00:00Z',
          validityHistory: [],
        },
      ],
    })
    const { signature: _, ...unsigned } = command
    const signed = sign('command', unsigned, { keyId: 'urn:weft:key:ada', pair })
    const ok = signedVerifier.verify('command', JSON.stringify(signed), registry)
    expect(ok.ok).toBe(true)
    const schemaFault = signedVerifier.verify('command', JSON.stringify({ ...signed, kind: 'Bad' }), registry)
    expect(schemaFault.ok ? undefined : [schemaFault.stage, schemaFault.error.code]).toEqual(['schema', 'SCHEMA_VALIDATION_FAILED'])
    const tampered = signedVerifier.verify('command', JSON.stringify({ ...signed, correlationId: 'urn:weft:correlation:2' }), registry)
    expect(tampered.ok ? undefined : [tampered.stage, tampered.error.code]).toEqual(['signature', 'AUTH_INVALID_SIGNATURE'])
  })
})
