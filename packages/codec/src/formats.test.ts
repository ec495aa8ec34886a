import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { durationMs, isAbsoluteUri, isCanonicalBase64url, isProtocolTimestamp, isSha256 } from './formats.js'
import { UsageError } from './errors.js'

describe('isAbsoluteUri (§2 identifiers)', () => {
  it.each([
    'urn:uuid:0b6b8f3e-8b0a-4a53-9b8e-3c9c5e0b2d11',
    'https://example.org/a/b?c=d#e',
    'urn:',
    'mailto:someone@example.org',
    'https://user:pw@[2001:db8::1]:8443/x',
    'https://[v1.fe]/',
    'https://192.0.2.1:80',
    'tag:example.org,2026:weft/%C3%A9',
    'file:///etc/hosts',
    'a+b-c.d:x',
    'https://h/p?q/?#f/?',
    'https://[::]/',
    'https://[::ffff:192.0.2.1]/',
  ])('accepts %s', (s) => expect(isAbsoluteUri(s)).toBe(true))

  it.each([
    ['', 'empty'],
    ['urn:x\n', 'trailing line feed'],
    ['urn:x y', 'whitespace'],
    ['urn:x\u0000', 'control'],
    ['urn:é', 'IRI-only (non-ASCII)'],
    ['/relative/path', 'relative reference'],
    ['//host/path', 'network-path reference'],
    ['1urn:x', 'scheme starts with a digit'],
    ['urn', 'no scheme delimiter'],
    ['urn:%zz', 'bad percent escape'],
    ['urn:%a', 'truncated percent escape'],
    ['https://[2001:db8::1/', 'unclosed IP literal'],
    ['https://[1:2:3:4:5:6:7:8:9]/', 'too many IPv6 groups'],
    ['https://[1::2::3]/', 'two elisions'],
    ['https://host:8a/', 'non-digit port'],
    ['https://ho st/', 'space in host'],
    ['urn:x#a#b', 'second #'],
    ['urn:x[y]', 'brackets outside an IP literal'],
  ])('rejects %j (%s)', (s) => expect(isAbsoluteUri(s)).toBe(false))

  it('never accepts a string with a non-ASCII or control character', () => {
    fc.assert(
      fc.property(fc.string(), fc.oneof(fc.integer({ min: 0, max: 0x20 }), fc.integer({ min: 0x7f, max: 0xffff })), (tail, code) => {
        expect(isAbsoluteUri(`urn:${tail}${String.fromCharCode(code)}`)).toBe(false)
      }),
    )
  })
})

describe('isProtocolTimestamp (§2 timestamp profile)', () => {
  it.each(['2026-07-31T12:08:28Z', '2026-07-31t12:08:28z', '2024-02-29T00:00:00.123456789+08:00', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999-23:59', '2026-01-01T00:00:00+00:00'])(
    'accepts %s',
    (s) => expect(isProtocolTimestamp(s)).toBe(true),
  )
  it.each([
    ['0000-01-01T00:00:00Z', 'year 0000'],
    ['2023-02-29T00:00:00Z', 'not a leap year'],
    ['2026-04-31T00:00:00Z', 'April 31'],
    ['2026-12-31T23:59:60Z', 'leap second'],
    ['2026-01-01T00:00:00-00:00', 'unknown local offset'],
    ['2026-01-01T24:00:00Z', 'hour 24'],
    ['2026-01-01T00:00:00', 'no offset'],
    ['2026-01-01T00:00:00.Z', 'empty fraction'],
    ['2026-01-01 00:00:00Z', 'space separator'],
    ['2026-01-01T00:00:00+24:00', 'offset hour 24'],
    ['2026-01-01T00:00:00Z\n', 'trailing line feed'],
    ['26-01-01T00:00:00Z', 'two-digit year'],
  ])('rejects %j (%s)', (s) => expect(isProtocolTimestamp(s)).toBe(false))

  it('agrees with Date on every valid instant it accepts', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }), (d) => {
        expect(isProtocolTimestamp(d.toISOString())).toBe(true)
      }),
    )
  })
})

describe('isSha256 and isCanonicalBase64url', () => {
  it('accepts only lower-case sha256: hashes of 64 digits', () => {
    expect(isSha256(`sha256:${'a'.repeat(64)}`)).toBe(true)
    expect(isSha256(`sha256:${'A'.repeat(64)}`)).toBe(false)
    expect(isSha256(`sha256:${'a'.repeat(63)}`)).toBe(false)
    expect(isSha256(`sha512:${'a'.repeat(64)}`)).toBe(false)
  })

  it('accepts exactly what Buffer encodes as base64url, and rejects nonzero pad bits', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const text = Buffer.from(bytes).toString('base64url')
        expect(isCanonicalBase64url(text)).toBe(true)
      }),
    )
    expect(isCanonicalBase64url('AA')).toBe(true)
    expect(isCanonicalBase64url('AB')).toBe(false) // decodes to the same byte, nonzero pad bits
    expect(isCanonicalBase64url('AAA')).toBe(true)
    expect(isCanonicalBase64url('AAB')).toBe(false)
    expect(isCanonicalBase64url('A')).toBe(false)
    expect(isCanonicalBase64url('AA==')).toBe(false)
    expect(isCanonicalBase64url('A+/A')).toBe(false)
  })
})

describe('durationMs', () => {
  it('reads days, hours, minutes and fractional seconds', () => {
    expect(durationMs('PT5M')).toBe(300_000)
    expect(durationMs('P1DT2H')).toBe(93_600_000)
    expect(durationMs('PT0.5S')).toBe(500)
    expect(durationMs('P2D')).toBe(172_800_000)
  })
  it('refuses anything else', () => {
    for (const bad of ['P', 'PT', '5M', 'P1W', 'PT1.S', '']) expect(() => durationMs(bad)).toThrow(UsageError)
  })
})
