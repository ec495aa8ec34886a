import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { bundleForTests } from '@weft/spec/bundle'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { sha256Tagged } from './bytes.js'
import { ProtocolError } from './errors.js'
import { MAX_JCS_DEPTH, canonicalize, canonicalizeOrThrow, type JcsResult } from './jcs.js'
import { parseStrictJson, type JsonValue } from './json.js'

const text = (result: JcsResult): string => {
  if (!result.ok) throw new Error(`expected canonical bytes, got ${result.reason} at ${JSON.stringify(result.path)}`)
  return Buffer.from(result.bytes).toString('utf8')
}
const jcs = (value: unknown) => text(canonicalize(value))

/** A number from the hex spelling of its IEEE 754 bits, as RFC 8785 Appendix B lists them. */
function fromBits(hex: string): number {
  const view = new DataView(new ArrayBuffer(8))
  view.setBigUint64(0, BigInt(`0x${hex}`))
  return view.getFloat64(0)
}

/**
 * Reference canonicalizer for the property tests: sorted names, `join`, and JSON.stringify for
 * the leaves. (A sorted copy of the object would not do: integer-like names enumerate first.)
 */
function reference(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>
    return `{${Object.keys(record)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${reference(record[k])}`)
      .join(',')}}`
  }
  return JSON.stringify(value)
}

describe('canonicalize: numbers (RFC 8785 §3.2.2.3)', () => {
  it.each([
    ['0000000000000000', '0'],
    ['8000000000000000', '0'],
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ])('bits %s serialize as %s', (bits, expected) => {
    expect(jcs(fromBits(bits))).toBe(expected)
  })

  it.each([
    [1e21, '1e+21'],
    [1e20, '100000000000000000000'],
    [1e-7, '1e-7'],
    [0.000001, '0.000001'],
    // biome-ignore lint/correctness/noPrecisionLoss: RFC 8785's own example: the literal rounds to the double it prints
    [333333333.33333329, '333333333.3333333'],
    [-0, '0'],
    [5e-324, '5e-324'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
    [4.5, '4.5'],
    [2e-3, '0.002'],
    [1e-27, '1e-27'],
    [1e30, '1e+30'],
    [9007199254740991, '9007199254740991'],
    [-1.5e-9, '-1.5e-9'],
    [0.1 + 0.2, '0.30000000000000004'],
  ])('%d serializes as %s', (n, expected) => {
    expect(jcs(n)).toBe(expected)
  })

  it('parses every finite double back from its canonical form unchanged', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (n) => {
        const back = JSON.parse(jcs(n)) as number
        expect(back === n).toBe(true) // -0 and 0 are the same JSON number
      }),
    )
  })
})

describe('canonicalize: strings (RFC 8785 §3.2.2.2)', () => {
  it('escapes only the quote, the backslash and the controls, with lower-case hex', () => {
    const controls = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('')
    expect(jcs(controls)).toBe(
      '"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f' +
        '\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f"',
    )
    expect(jcs('"\\/')).toBe('"\\"\\\\/"')
    expect(jcs('\u007f\u0080\u2028\u2029\ufeff€😀')).toBe('"\u007f\u0080\u2028\u2029\ufeff€😀"')
  })

  it('emits non-ASCII characters as UTF-8', () => {
    const result = canonicalize('é😀')
    expect(result.ok && [...result.bytes]).toEqual([0x22, 0xc3, 0xa9, 0xf0, 0x9f, 0x98, 0x80, 0x22])
  })

  it('matches the RFC 8785 §3.2.2 example string', () => {
    expect(jcs('\u20ac$\u000F\u000aA\'\u0042\u0022\u005c\\"/')).toBe('"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"')
  })
})

describe('canonicalize: structure (RFC 8785 §3.2.3)', () => {
  it('sorts members by UTF-16 code units, as in the RFC 8785 example', () => {
    const value = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    }
    const order = Object.keys(JSON.parse(jcs(value)) as object)
    expect(jcs(value)).toBe(`{${['\r', '1', '\u0080', '\u00f6', '\u20ac', '\ud83d\ude00', '\ufb33'].map((k) => `${JSON.stringify(k)}:${JSON.stringify(value[k as keyof typeof value])}`).join(',')}}`)
    expect(order).toHaveLength(7)
  })

  it('sorts integer-like names as strings, not numbers', () => {
    expect(jcs({ 2: 'b', 10: 'a', b: 1, a: { z: [], y: {} } })).toBe('{"10":"a","2":"b","a":{"y":{},"z":[]},"b":1}')
  })

  it('writes no whitespace and keeps array order', () => {
    expect(jcs({ list: [3, 1, 2, null, true, false, 'x', [], {}] })).toBe('{"list":[3,1,2,null,true,false,"x",[],{}]}')
  })

  it('serializes an own "__proto__" member as data', () => {
    const value = JSON.parse('{"b":1,"__proto__":{"x":1}}') as unknown
    expect(jcs(value)).toBe('{"__proto__":{"x":1},"b":1}')
    expect(jcs(Object.assign(Object.create(null) as object, { z: 1, a: 2 }))).toBe('{"a":2,"z":1}')
  })

  it('equals a sort-and-join reference for any JSON value, whatever the member order', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(jcs(v)).toBe(reference(v))
        // member order of the input carries no meaning
        const reversed = JSON.parse(JSON.stringify(v), (_key, x: unknown) =>
          x !== null && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).reverse()) : x,
        ) as unknown
        expect(jcs(reversed)).toBe(jcs(v))
      }),
    )
  })

  it('is a fixed point: canonicalize(parse(canonicalize(x))) is canonicalize(x)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const first = canonicalize(v)
        if (!first.ok) throw new Error('rejected a JSON value')
        const reparsed = parseStrictJson(first.bytes)
        if (!reparsed.ok) throw new Error(`canonical bytes are not strict JSON: ${reparsed.message}`)
        expect(canonicalize(reparsed.value)).toEqual(first)
      }),
    )
  })
})

describe('canonicalize: data model (§2, I-JSON)', () => {
  it.each([
    [NaN, 'non-finite-number', ''],
    [{ a: [1, Infinity] }, 'non-finite-number', '/a/1'],
    [{ x: { y: -Infinity } }, 'non-finite-number', '/x/y'],
    ['\ud800', 'lone-surrogate', ''],
    [['ok', 'a\udc00b'], 'lone-surrogate', '/1'],
    [{ 'a/b': { '~k': '\ud83d' } }, 'lone-surrogate', '/a~1b/~0k'],
    [{ ok: 1, '\ud800': 1 }, 'lone-surrogate', '/\ud800'],
    [undefined, 'unsupported-value', ''],
    [{ a: undefined }, 'unsupported-value', '/a'],
    [[1, () => 1], 'unsupported-value', '/1'],
    [{ n: 10n }, 'unsupported-value', '/n'],
    [{ s: Symbol('s') }, 'unsupported-value', '/s'],
    [{ d: new Date(0) }, 'unsupported-value', '/d'],
    [{ m: new Map() }, 'unsupported-value', '/m'],
    [{ b: new Uint8Array(2) }, 'unsupported-value', '/b'],
    [{ n: Object(1) as unknown }, 'unsupported-value', '/n'],
    [
      {
        c: new (class Point {
          x = 1
        })(),
      },
      'unsupported-value',
      '/c',
    ],
    // biome-ignore lint/suspicious/noSparseArray: a hole is what JCS must refuse
    [[1, , 3], 'unsupported-value', '/1'],
  ])('rejects %o: %s at %j', (value, reason, path) => {
    expect(canonicalize(value)).toEqual({ ok: false, reason, path })
  })

  it('reports the first failure in canonical order', () => {
    expect(canonicalize({ b: NaN, a: '\ud800' })).toEqual({ ok: false, reason: 'lone-surrogate', path: '/a' })
    expect(canonicalize({ b: [1, { c: undefined, a: Infinity }] })).toEqual({ ok: false, reason: 'non-finite-number', path: '/b/1/a' })
  })

  it('rejects a cycle at the reference that closes it', () => {
    const a: Record<string, unknown> = { x: 1 }
    a['self'] = { back: a }
    expect(canonicalize(a)).toEqual({ ok: false, reason: 'unsupported-value', path: '/self/back' })
    // a shared (acyclic) reference is fine
    const shared = { k: 1 }
    expect(jcs({ a: shared, b: shared })).toBe('{"a":{"k":1},"b":{"k":1}}')
  })

  it(`serializes nesting up to ${MAX_JCS_DEPTH} levels and fails closed beyond`, () => {
    const nest = (n: number): unknown => {
      let v: unknown = 0
      for (let i = 0; i < n; i++) v = [v]
      return v
    }
    expect(jcs(nest(MAX_JCS_DEPTH))).toBe('['.repeat(MAX_JCS_DEPTH) + '0' + ']'.repeat(MAX_JCS_DEPTH))
    expect(canonicalize(nest(MAX_JCS_DEPTH + 1))).toEqual({ ok: false, reason: 'unsupported-value', path: '/0'.repeat(MAX_JCS_DEPTH) })
  })

  it('canonicalizeOrThrow throws PROTOCOL_VIOLATION with the reason and path', () => {
    expect(Buffer.from(canonicalizeOrThrow({ b: 1, a: 2 })).toString()).toBe('{"a":2,"b":1}')
    let thrown: unknown
    try {
      canonicalizeOrThrow({ data: { large: Infinity } })
    } catch (e) {
      thrown = e
    }
    expect(thrown).toBeInstanceOf(ProtocolError)
    const error = thrown as ProtocolError
    expect(error.code).toBe('PROTOCOL_VIOLATION')
    expect(error.details).toEqual({ reason: 'non-finite-number', path: '/data/large' })
    expect(error.message).toContain('/data/large')
  })
})

// --- the cryptography bundle ------------------------------------------------------------------

interface Evaluation {
  input?: string
  expectedJcs?: string
  sha256?: string
  document?: string
  fault?: { id: string } | null
  expect?: { stage: string; verified?: { signingBytes: string; signingHash: string; signedDocumentHash: string } }
}
interface Manifest {
  cases: { id: string; kind: string; evaluations: Evaluation[] }[]
  artifacts: { path: string; byteLength: number; sha256: string }[]
  artifactDigest: string
}

const dir = bundleForTests()

describe.skipIf(!dir)('cryptography bundle: canonicalization and stage-1 vectors', () => {
  const bundle = dir!
  const read = (path: string) => new Uint8Array(readFileSync(join(bundle, path)))
  const manifest = JSON.parse(readFileSync(join(bundle, 'cryptography/manifest.json'), 'utf8')) as Manifest
  const parsed = (path: string): JsonValue => {
    const result = parseStrictJson(read(path))
    if (!result.ok) throw new Error(`${path}: ${result.reason} at ${result.offset}`)
    return result.value
  }
  const evaluations = (filter: (id: string, kind: string) => boolean) => manifest.cases.filter((c) => filter(c.id, c.kind)).flatMap((c) => c.evaluations.map((e) => ({ caseId: c.id, ...e })))

  const canonicalization = evaluations((_, kind) => kind === 'canonicalization')
  it.each(canonicalization.map((e) => [e.input!, e]))('%s canonicalizes to its .jcs bytes and hash', (_, e) => {
    const result = canonicalize(parsed(e.input!))
    if (!result.ok) throw new Error(`rejected: ${result.reason} at ${result.path}`)
    expect(Buffer.from(result.bytes).equals(Buffer.from(read(e.expectedJcs!)))).toBe(true)
    expect(sha256Tagged(result.bytes)).toBe(e.sha256)
  })

  const complete = evaluations(() => true).filter((e) => e.expect?.stage === 'complete')
  it.each(complete.map((e) => [e.document!, e]))('%s: signing bytes are the JCS of the document without its top-level signature', (_, e) => {
    const { signature, ...unsigned } = parsed(e.document!) as Record<string, JsonValue>
    expect(signature).toBeDefined()
    const signing = canonicalizeOrThrow(unsigned)
    expect(Buffer.from(signing).equals(Buffer.from(read(e.expect!.verified!.signingBytes)))).toBe(true)
    expect(sha256Tagged(signing)).toBe(e.expect!.verified!.signingHash)
    expect(sha256Tagged(canonicalizeOrThrow(parsed(e.document!)))).toBe(e.expect!.verified!.signedDocumentHash)
  })

  const dataModel = evaluations((id) => id === 'reject.canonicalization.data-model-matrix')
  const dataModelReason: Record<string, string> = {
    'number-outside-finite-binary64': 'non-finite-number',
    'unpaired-unicode-surrogate': 'lone-surrogate',
  }
  it.each(dataModel.map((e) => [e.fault!.id, e]))('%s parses at stage 1 and fails stage 5', (faultId, e) => {
    const result = canonicalize(parsed(e.document!))
    expect(result.ok).toBe(false)
    expect(!result.ok && result.reason).toBe(dataModelReason[faultId])
  })

  const parseRejects = evaluations((id) => id.startsWith('reject.parse.'))
  const golden = evaluations((id) => id === 'accept.command.golden')[0]!.document!
  const parseFailure: Record<string, (bytes: Uint8Array) => { reason: string; offset: number }> = {
    'invalid-utf8': (bytes) => ({ reason: 'invalid-utf8', offset: bytes.findIndex((b) => b >= 0x80 && b < 0xc0) }),
    'trailing-data': () => ({ reason: 'trailing-data', offset: read(golden).length }),
    'utf8-bom': () => ({ reason: 'byte-order-mark', offset: 0 }),
    'duplicate-decoded-member': (bytes) => ({ reason: 'duplicate-member', offset: Buffer.from(bytes).indexOf('"pay\\u006coad"') }),
  }
  it.each(parseRejects.map((e) => [e.fault!.id, e]))('%s fails stage 1 with its reason and offset', (faultId, e) => {
    const bytes = read(e.document!)
    const result = parseStrictJson(bytes)
    expect(result.ok).toBe(false)
    expect(result.ok || { reason: result.reason, offset: result.offset }).toEqual(parseFailure[faultId]!(bytes))
  })

  it('covers every stage-1 and stage-5 reject of the manifest', () => {
    expect(canonicalization.length).toBeGreaterThan(0)
    expect(dataModel.map((e) => e.fault!.id).sort()).toEqual(Object.keys(dataModelReason).sort())
    expect(parseRejects.map((e) => e.fault!.id).sort()).toEqual(Object.keys(parseFailure).sort())
  })

  it('reproduces the manifest artifactDigest (JCS of the manifest without it)', () => {
    const { artifactDigest, ...rest } = parsed('cryptography/manifest.json') as Record<string, JsonValue>
    expect(sha256Tagged(canonicalizeOrThrow(rest))).toBe(artifactDigest)
    for (const artifact of manifest.artifacts) {
      const bytes = read(artifact.path)
      expect(bytes.length).toBe(artifact.byteLength)
      expect(sha256Tagged(bytes)).toBe(artifact.sha256)
    }
  })
})
