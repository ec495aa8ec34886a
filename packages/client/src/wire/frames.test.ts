import { canonicalizeOrThrow, ERROR_CODES, ProtocolError, type ErrorCode, type ProtocolErrorOptions } from '@weft/codec'
import { validators } from '@weft/validators'
import { describe, expect, it } from 'vitest'
import { errorFrame, errorOfFrame, frameIdSource, helloTranscriptBytes, HELLO_TRANSCRIPT_CONTEXT, isWireId, parseReceiptFrameId, readFrame, receiptFrameId } from './frames.js'

const ping = { protocolVersion: '0.1', frameId: 'urn:weft:test:frame:1', frameType: 'PING', nonce: 'bm9uY2U', sentAt: '2026-07-15T00:00:00Z' }

function refusal(data: string, maxBytes = 4096): ProtocolError {
  const reading = readFrame(data, maxBytes)
  if (reading.ok) return expect.fail(`accepted ${data}`)
  return reading.error
}

describe('readFrame (§17.1, §17.4)', () => {
  it('accepts a valid frame as it is', () => {
    expect(readFrame(JSON.stringify(ping), 4096)).toEqual({ ok: true, frame: ping })
    expect(readFrame(new TextEncoder().encode(JSON.stringify(ping)), 4096).ok).toBe(true)
  })

  it('refuses in the order of §17.4: size, strict JSON, frame type, version, numbers, schema', () => {
    const text = JSON.stringify(ping)
    expect(refusal(text, 10).details).toMatchObject({ reason: 'too-large' })
    // A duplicate member is refused before anything looks at the (otherwise valid) frame.
    expect(refusal(`{"nonce":"eA",${text.slice(1)}`).details).toMatchObject({ reason: 'duplicate-member' })
    expect(refusal('{"frameType":"PING"').details).toMatchObject({ reason: 'syntax' })
    expect(refusal('[1]').details).toMatchObject({ reason: 'not-an-object' })
    const unknown = refusal(JSON.stringify({ ...ping, frameType: 'STREAM' }))
    expect([unknown.code, unknown.relatedFrameId, unknown.details?.['reason']]).toEqual(['PROTOCOL_VIOLATION', ping.frameId, 'unknown-frame-type'])
    expect(refusal(JSON.stringify({ ...ping, protocolVersion: '0.2' })).code).toBe('UNSUPPORTED_VERSION')
    expect(
      refusal(
        JSON.stringify({
          protocolVersion: '0.1',
          frameId: 'urn:x:1',
          frameType: 'HELLO',
          phase: 'client_init',
          agentId: 'urn:x:a',
          keyId: 'urn:x:k',
          clientNonce: 'bm9uY2U',
          supportedVersions: ['0.2'],
        }),
      ).code,
    ).toBe('UNSUPPORTED_VERSION')
    expect(refusal(text.replace('"sentAt"', '"x":1e400,"sentAt"')).details).toMatchObject({ reason: 'non-finite-number', path: '/x' })
    const schema = refusal(JSON.stringify({ ...ping, nonce: 'not base64url!' }))
    expect([schema.code, schema.relatedFrameId]).toEqual(['SCHEMA_VALIDATION_FAILED', ping.frameId])
  })

  it('names the related frame only when its frame ID is a usable id', () => {
    expect(refusal(JSON.stringify({ ...ping, frameId: 'not a uri', frameType: 'X' })).relatedFrameId).toBeUndefined()
    expect([isWireId('urn:a:b'), isWireId('a b'), isWireId(`urn:${'x'.repeat(600)}`), isWireId(7)]).toEqual([true, false, false, false])
  })
})

describe('helloTranscriptBytes (§6.3)', () => {
  const transcript = { agentId: 'urn:x:agent', keyId: 'urn:x:key', selectedVersion: '0.1', clientNonce: 'Y2xpZW50', serverNonce: 'c2VydmVy', challenge: 'Y2hhbGxlbmdl' }

  it('is the JCS form of the transcript under its own context, whatever the member order', () => {
    const reversed = Object.fromEntries(Object.entries(transcript).reverse()) as typeof transcript
    expect(helloTranscriptBytes(reversed)).toEqual(helloTranscriptBytes(transcript))
    expect(new TextDecoder().decode(helloTranscriptBytes(transcript))).toBe(new TextDecoder().decode(canonicalizeOrThrow({ ...transcript, context: HELLO_TRANSCRIPT_CONTEXT })))
  })

  it('changes with every member, so a signature answers one challenge only', () => {
    const base = new TextDecoder().decode(helloTranscriptBytes(transcript))
    for (const key of Object.keys(transcript) as (keyof typeof transcript)[]) {
      expect(new TextDecoder().decode(helloTranscriptBytes({ ...transcript, [key]: `${transcript[key]}x` }))).not.toBe(base)
    }
  })
})

describe('receipt frame IDs', () => {
  it('round-trip and are valid ids', () => {
    const part = { serial: '42', index: 1, count: 3, duplicate: true }
    const id = receiptFrameId(part)
    expect([id, isWireId(id)]).toEqual(['urn:weft:receipt:duplicate:2-of-3:42', true])
    expect(parseReceiptFrameId(id)).toEqual(part)
  })

  it('are not confused with other frame IDs', () => {
    for (const id of ['urn:weft:frame:abc:1', 'urn:weft:receipt:accepted:3-of-2:1', 'urn:weft:receipt:accepted:0-of-2:1', 'urn:weft:receipt:maybe:1-of-1:1', 'urn:weft:receipt:accepted:1-of-1:']) {
      expect([id, parseReceiptFrameId(id)]).toEqual([id, undefined])
    }
  })
})

/**
 * The members error.schema.json defines for particular codes (§15.3, §16, §17.3, §20), as Weft
 * fills them; every other code carries only the members all codes share.
 */
const CODE_MEMBERS: Partial<Record<ErrorCode, ProtocolErrorOptions>> = {
  REVISION_CONFLICT: { expectedRevision: 3, currentRevision: 5 },
  RATE_LIMITED: { retryAfterMs: 1500 },
  BACKPRESSURE: { retryAfterMs: 250 },
  CURSOR_TOO_OLD: { snapshotArtifactHash: `sha256:${'a'.repeat(64)}` },
}

describe('ERROR frames (§19)', () => {
  it('carry code, retry safety, relations and retry guidance, and read back as the same ProtocolError', () => {
    const error = new ProtocolError('BACKPRESSURE', 'Slow down.', { details: { retryAfterMs: 250, afterSequence: 9 } })
    const frame = errorFrame(error, 'urn:weft:frame:x:1', '2026-07-15T00:00:00.000Z', { groupId: 'urn:x:group', relatedFrameId: 'not a uri', fatal: true })
    expect(frame.error).toEqual({
      code: 'BACKPRESSURE',
      message: 'Slow down.',
      retryable: true,
      occurredAt: '2026-07-15T00:00:00.000Z',
      fatal: true,
      groupId: 'urn:x:group',
      retryAfterMs: 250,
      details: { retryAfterMs: 250, afterSequence: 9 },
    })
    expect(readFrame(JSON.stringify(frame), 4096).ok).toBe(true)
    const back = errorOfFrame(frame)
    expect([back.code, back.retryable, back.groupId, back.fatal, back.retryAfterMs, back.details]).toEqual(['BACKPRESSURE', true, 'urn:x:group', true, 250, { retryAfterMs: 250, afterSequence: 9 }])
  })

  for (const code of ERROR_CODES) {
    const members = CODE_MEMBERS[code] ?? {}
    it(`[error ${code}] carries ${Object.keys(members).join(', ') || 'the shared members'} on the wire, validates against error.schema.json and reads back`, () => {
      const error = new ProtocolError(code, `refused: ${code}`, { ...members, relatedActionId: 'urn:x:action', details: { note: 1 } })
      const frame = errorFrame(error, 'urn:weft:frame:x:2', '2026-07-15T00:00:00.000Z', { relatedFrameId: 'urn:x:frame', groupId: 'urn:x:group' })
      expect(validators.websocketFrame.errors(frame)).toEqual([])
      expect(validators.error.errors(frame.error)).toEqual([])
      expect(frame.error).toMatchObject({ code, relatedFrameId: 'urn:x:frame', relatedActionId: 'urn:x:action', groupId: 'urn:x:group', ...members })
      const back = errorOfFrame(readFrame(JSON.stringify(frame), 4096).ok ? frame : expect.fail('the frame does not read'))
      expect(back).toMatchObject({ code, retryable: error.retryable, relatedFrameId: 'urn:x:frame', relatedActionId: 'urn:x:action', groupId: 'urn:x:group', details: { note: 1 }, ...members })
    })
  }
})

describe('frameIdSource', () => {
  it('mints distinct valid ids per source', () => {
    let n = 0
    const random = (size: number) => new Uint8Array(size).fill(++n)
    const a = frameIdSource(random)
    const b = frameIdSource(random)
    const ids = [a(), a(), b()]
    expect(new Set(ids).size).toBe(3)
    expect(ids.every(isWireId)).toBe(true)
  })
})
