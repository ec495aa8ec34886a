import { isAbsoluteUri } from '@weft/codec'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { PROTOCOL_FORMATS } from './validators.js'

// The check path skips patterns that `uri` claims to decide. These properties are the proof.
const uriChars = "ABCXYZabcxyz0189-._~:/?#[]@!$&'()*+,;=%"
const noise = ' \n\t\u0000é😀"<>\\^`{|}'
const arbitraryUriLike = fc
  .tuple(fc.constantFrom('', 'a:', 'urn:', 'https://', 'x+y.z-1:', '1a:', ':'), fc.string({ unit: fc.constantFrom(...(uriChars + noise).split('')), maxLength: 40 }))
  .map(([prefix, rest]) => prefix + rest)

describe('format implications used by the generated check path', () => {
  const { patterns, excludes } = PROTOCOL_FORMATS.uri.implies
  it('every absolute URI matches the implied patterns', () => {
    fc.assert(
      fc.property(fc.oneof(arbitraryUriLike, fc.webUrl(), fc.string()), (s) => {
        if (!isAbsoluteUri(s)) return
        for (const p of patterns) expect(new RegExp(p, 'u').test(s)).toBe(true)
      }),
      { numRuns: 20_000 },
    )
  })

  it('no absolute URI matches an excluded pattern', () => {
    fc.assert(
      fc.property(fc.oneof(arbitraryUriLike, fc.webUrl(), fc.string()), (s) => {
        if (!isAbsoluteUri(s)) return
        for (const p of excludes) expect(new RegExp(p, 'u').test(s)).toBe(false)
      }),
      { numRuns: 20_000 },
    )
  })

  it('the generator samples enough valid URIs for the properties to mean something', () => {
    const samples = fc.sample(arbitraryUriLike, { numRuns: 2000, seed: 7 })
    expect(samples.filter(isAbsoluteUri).length).toBeGreaterThan(200)
  })
})
