import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { decodeBase64url, encodeBase64url, loneSurrogateIndex, sha256, sha256Tagged, utf8Encode } from './bytes.js'
import { UsageError } from './errors.js'
import { isCanonicalBase64url, isSha256 } from './formats.js'

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

describe('encodeBase64url / decodeBase64url (§2)', () => {
  it('round-trips any bytes, and the encoding is canonical', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const text = encodeBase64url(bytes)
        expect(isCanonicalBase64url(text)).toBe(true)
        expect(text).not.toMatch(/[=+/]/)
        expect(decodeBase64url(text)).toEqual(bytes)
      }),
    )
  })

  it('encodes a view of a larger buffer by its own bytes only', () => {
    const backing = new Uint8Array([9, 1, 2, 3, 9])
    expect(encodeBase64url(backing.subarray(1, 4))).toBe('AQID')
    expect(encodeBase64url(new Uint8Array(0))).toBe('')
  })

  it('decodes RFC 4648 test vectors', () => {
    const cases: [string, string][] = [
      ['', ''],
      ['Zg', 'f'],
      ['Zm8', 'fo'],
      ['Zm9v', 'foo'],
      ['Zm9vYg', 'foob'],
      ['Zm9vYmE', 'fooba'],
      ['Zm9vYmFy', 'foobar'],
    ]
    for (const [text, plain] of cases) expect(Buffer.from(decodeBase64url(text)!).toString('latin1')).toBe(plain)
    expect(decodeBase64url('-_8')).toEqual(new Uint8Array([0xfb, 0xff]))
  })

  it.each([
    ['AQI=', 'padding'],
    ['AQ==', 'padding'],
    ['A', 'length 4n+1'],
    ['AQIDB', 'length 4n+1'],
    ['AQJ', 'nonzero unused pad bits (16-bit tail)'],
    ['AR', 'nonzero unused pad bits (8-bit tail)'],
    ['+/8', 'standard alphabet'],
    ['AQ I', 'space'],
    ['AQI\n', 'line feed'],
    ['AQ\u00e9', 'non-ASCII'],
  ])('rejects %j (%s)', (text) => {
    expect(decodeBase64url(text)).toBeUndefined()
  })

  it('rejects every noncanonical spelling of the same bytes', () => {
    // Changing only unused pad bits of the last character leaves a lenient decoder's output
    // unchanged; §2 requires the strict decoder to reject it anyway.
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 40 }).filter((b) => b.length % 3 !== 0),
        fc.integer({ min: 1, max: 15 }),
        (bytes, noise) => {
          const text = encodeBase64url(bytes)
          const last = B64URL.indexOf(text[text.length - 1]!)
          const unused = bytes.length % 3 === 1 ? 0x0f : 0x03
          const spoiled = text.slice(0, -1) + B64URL[last | (noise & unused)]!
          fc.pre(spoiled !== text)
          expect(new Uint8Array(Buffer.from(spoiled, 'base64url'))).toEqual(bytes)
          expect(decodeBase64url(spoiled)).toBeUndefined()
        },
      ),
    )
  })

  it('returns a Uint8Array that owns exactly its bytes', () => {
    // Node pools small Buffers; a view into the pool would expose other data through `.buffer`.
    const bytes = decodeBase64url('AQID')!
    expect(bytes.byteOffset).toBe(0)
    expect(bytes.buffer.byteLength).toBe(3)
  })
})

describe('sha256 / sha256Tagged (§2)', () => {
  it('matches the FIPS 180-2 examples', () => {
    expect(sha256Tagged(new Uint8Array(0))).toBe('sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
    expect(sha256Tagged(utf8Encode('abc'))).toBe('sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
    expect(Buffer.from(sha256(utf8Encode('abc'))).toString('hex')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  })

  it('produces the protocol hash form, agreeing with the raw digest', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
        const tagged = sha256Tagged(bytes)
        expect(isSha256(tagged)).toBe(true)
        const raw = sha256(bytes)
        expect(raw.length).toBe(32)
        expect(raw.buffer.byteLength).toBe(32)
        expect(tagged).toBe('sha256:' + Buffer.from(raw).toString('hex'))
      }),
    )
  })
})

describe('utf8Encode', () => {
  it('encodes well-formed text like Buffer does', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        expect(utf8Encode(text)).toEqual(new Uint8Array(Buffer.from(text, 'utf8')))
      }),
    )
    expect(utf8Encode('é😀')).toEqual(new Uint8Array([0xc3, 0xa9, 0xf0, 0x9f, 0x98, 0x80]))
  })

  it('refuses text with an unpaired surrogate instead of substituting U+FFFD', () => {
    expect(() => utf8Encode('a\ud800')).toThrow(UsageError)
    expect(() => utf8Encode('\udc00b')).toThrow(/index 0/)
  })
})

describe('loneSurrogateIndex', () => {
  it.each([
    ['', -1],
    ['abc', -1],
    ['😀', -1],
    ['\ud800', 0],
    ['a\udc00', 1],
    ['😀\ud83d', 2],
    ['\ude00\ud83d', 0],
    ['x\ud83d\ud83d\ude00', 1],
  ])('%j -> %i', (text, index) => {
    expect(loneSurrogateIndex(text)).toBe(index)
  })
})
