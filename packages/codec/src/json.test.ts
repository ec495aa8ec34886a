import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ProtocolError, UsageError } from './errors.js'
import { DEFAULT_MAX_JSON_BYTES, DEFAULT_MAX_JSON_DEPTH, parseStrictJson, parseStrictJsonOrThrow, type StrictJsonResult } from './json.js'

const utf8 = (text: string) => new Uint8Array(Buffer.from(text, 'utf8'))
const bytesOf = (...parts: (string | number[])[]) => new Uint8Array(parts.flatMap((p) => (typeof p === 'string' ? [...Buffer.from(p, 'utf8')] : p)))

/** Parses as bytes and as text, requires both to agree, and returns the result. */
function parse(text: string, options?: { maxBytes?: number; maxDepth?: number }): StrictJsonResult {
  const fromBytes = parseStrictJson(utf8(text), options)
  const fromText = parseStrictJson(text, options)
  expect(fromText).toEqual(fromBytes)
  return fromBytes
}

function failure(result: StrictJsonResult) {
  if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result.value)}`)
  return { reason: result.reason, offset: result.offset }
}

function value(result: StrictJsonResult) {
  if (!result.ok) throw new Error(`expected a value, got ${result.reason} at ${result.offset}: ${result.message}`)
  return result.value
}

/**
 * An independent duplicate-name oracle for text that JSON.parse accepts: a regex tokenizer and a
 * stack of name sets (no shared code with json.ts).
 */
function hasDuplicateName(text: string): boolean {
  const tokens = text.match(/"(?:[^"\\]|\\.)*"|[{}[\],:]|[^\s{}[\],:"]+/g) ?? []
  const stack: (Set<string> | null)[] = []
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!
    if (t === '{') stack.push(new Set())
    else if (t === '[') stack.push(null)
    else if (t === '}' || t === ']') stack.pop()
    else if (t.startsWith('"') && tokens[i + 1] === ':') {
      const names = stack[stack.length - 1]!
      const name = JSON.parse(t) as string
      if (names.has(name)) return true
      names.add(name)
    }
  }
  return false
}

describe('parseStrictJson: values (§6.4 stage 1)', () => {
  it('agrees with JSON.parse on any serialized JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(undefined, 2), (v, indent) => {
        const text = JSON.stringify(v, null, indent)
        expect(value(parse(text))).toEqual(JSON.parse(text))
      }),
    )
  })

  it('agrees with JSON.parse when the exact validator decides', () => {
    // A string starting with ":" looks like a member name to the fast count, so these inputs
    // always take the slow path; it must accept them all the same.
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = JSON.stringify([v, ':', { '\\":': '": ' }])
        expect(value(parse(text))).toEqual(JSON.parse(text))
      }),
    )
  })

  it('keeps a number outside binary64 as ±Infinity and -0 as -0, for stage 5 to judge', () => {
    expect(value(parse('[1e400, -1e400, -0, 0.0, 1E2]'))).toEqual([Infinity, -Infinity, -0, 0, 100])
    expect(Object.is(value(parse('-0')) as number, -0)).toBe(true)
  })

  it('keeps escaped lone surrogates as lone code units, for stage 5 to judge', () => {
    expect(value(parse('"\\ud800"'))).toBe('\ud800')
    expect(value(parse('{"\\udc00x": "\\ud83d"}'))).toEqual({ '\udc00x': '\ud83d' })
    expect(value(parse('"\\ud83d\\ude00"'))).toBe('😀')
  })

  it('decodes raw UTF-8 and escapes alike', () => {
    expect(value(parse('{"é": "東京 🚀", "a\\u00e9": "\\u6771"}'))).toEqual({ é: '東京 🚀', aé: '東' })
  })

  it('keeps "__proto__" as an ordinary own member', () => {
    const v = value(parse('{"__proto__": {"polluted": true}, "a": 1}')) as Record<string, unknown>
    expect(Object.keys(v)).toEqual(['__proto__', 'a'])
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype)
    expect((v as { polluted?: unknown }).polluted).toBeUndefined()
    expect(Object.getOwnPropertyDescriptor(v, '__proto__')?.value).toEqual({ polluted: true })
  })

  it('accepts whitespace around the value and scalars at the top level', () => {
    expect(value(parse(' \t\r\n{"a" : [ 1 , 2 ] }\n\n'))).toEqual({ a: [1, 2] })
    expect(value(parse('"x"'))).toBe('x')
    expect(value(parse('null'))).toBe(null)
    expect(value(parse('12'))).toBe(12)
  })

  it('parses a large document with scattered non-ASCII text exactly', () => {
    // ~100 KB: the size band where the parser rewrites non-ASCII text as escapes first.
    const items = Array.from({ length: 1300 }, (_, i) => ({ i, title: i % 7 ? `item ${i}` : `élément ${i} — 東京 😀`, w: i / 3 }))
    const text = JSON.stringify({ items }, null, 1)
    expect(text.length).toBeGreaterThan(70_000)
    expect(text.length).toBeLessThan(110_000)
    expect(value(parse(text))).toEqual(JSON.parse(text))
  })
})

describe('parseStrictJson: duplicate member names (§17.4)', () => {
  it.each([
    ['{"a":1,"a":2}', 7],
    ['{"a":1,"\\u0061":2}', 7],
    ['{"\\u0061":1,"a":2}', 12],
    ['{"é":1,"\\u00e9":2}', 8],
    ['{"😀":1,"\\ud83d\\ude00":2}', 10],
    ['{"\\ud800":1,"\\uD800":2}', 12],
    ['{"__proto__":1,"__proto__":2}', 15],
    ['{"__proto__":1,"\\u005f_proto__":2}', 15],
    ['{"x":{"é":{"b":1,"c":2,"b":3}}}', 24],
    ['[{"a":1},{"b":1,"b":2}]', 16],
    ['{"a":1, "b":2, "a":{}}', 15],
  ])('rejects %s at byte %i', (text, offset) => {
    expect(failure(parse(text))).toEqual({ reason: 'duplicate-member', offset })
  })

  it('allows equal names in different objects and equal values', () => {
    expect(value(parse('{"a":{"a":{"a":1}},"b":[{"a":1},{"a":1}]}'))).toEqual({ a: { a: { a: 1 } }, b: [{ a: 1 }, { a: 1 }] })
    expect(value(parse('{"a":"a","b":"a"}'))).toEqual({ a: 'a', b: 'a' })
  })

  it('finds a duplicate added anywhere in a random document', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { minKeys: 1, maxKeys: 6 }), fc.nat(), fc.boolean(), (object, pick, escapeName) => {
        const keys = Object.keys(object)
        const name = keys[pick % keys.length]!
        // Spell the repeated name differently where possible: every character as \uXXXX.
        const units = Array.from({ length: name.length }, (_, i) => `\\u${name.charCodeAt(i).toString(16).padStart(4, '0')}`)
        const spelled = escapeName ? `"${units.join('')}"` : JSON.stringify(name)
        const inner = JSON.stringify(object)
        const text = `{"wrapper":${inner.slice(0, -1)},${spelled}:null}}`
        const offset = Buffer.byteLength(`{"wrapper":${inner.slice(0, -1)},`)
        expect(failure(parse(text))).toEqual({ reason: 'duplicate-member', offset })
      }),
    )
  })
})

describe('parseStrictJson: byte-level failures', () => {
  it('rejects a byte-order mark at byte 0', () => {
    expect(failure(parseStrictJson(bytesOf([0xef, 0xbb, 0xbf], '{}')))).toEqual({ reason: 'byte-order-mark', offset: 0 })
    expect(failure(parseStrictJson('\ufeff{}'))).toEqual({ reason: 'byte-order-mark', offset: 0 })
    // U+FEFF elsewhere is an ordinary character inside a string, and a syntax error outside one
    expect(value(parse('"\ufeff"'))).toBe('\ufeff')
    expect(failure(parse('{} \ufeff'))).toEqual({ reason: 'trailing-data', offset: 3 })
  })

  it.each([
    [bytesOf('"a', [0x80], '"'), 2, 'lone continuation byte'],
    [bytesOf('"é', [0xc3], '"'), 3, 'truncated two-byte sequence'],
    [bytesOf('"', [0xe2, 0x82], '"'), 1, 'truncated three-byte sequence'],
    [bytesOf('"', [0xc0, 0xaf], '"'), 1, 'overlong'],
    [bytesOf('"', [0xe0, 0x80, 0xaf], '"'), 1, 'overlong three-byte'],
    [bytesOf('"', [0xed, 0xa0, 0x80], '"'), 1, 'UTF-8 encoded surrogate'],
    [bytesOf('"', [0xf4, 0x90, 0x80, 0x80], '"'), 1, 'above U+10FFFF'],
    [bytesOf('"', [0xf5, 0x80, 0x80, 0x80], '"'), 1, 'invalid lead byte'],
    [bytesOf('"', [0xff], '"'), 1, '0xFF'],
    [bytesOf('[1,', [0xe2, 0x28, 0xa1], ']'), 3, 'continuation replaced by ASCII'],
    [bytesOf('{"a":1}', [0xf0, 0x9f, 0x98]), 7, 'truncated at the end of input'],
  ])('rejects invalid UTF-8 at the first bad sequence (%#: %s)', (bytes, offset) => {
    expect(failure(parseStrictJson(bytes))).toEqual({ reason: 'invalid-utf8', offset })
  })

  it('reports invalid UTF-8 exactly where a strict decoder first fails', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 24 }),
        fc.uint8Array({ minLength: 1, maxLength: 6 }).map((b) => b.map((x) => x | 0x80)),
        (head, tail) => {
          const bytes = new Uint8Array([...head, ...tail])
          const fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
          let valid = true
          try {
            fatal.decode(bytes)
          } catch {
            valid = false
          }
          const result = parseStrictJson(bytes)
          if (valid) {
            if (!result.ok) expect(result.reason).not.toBe('invalid-utf8')
            return
          }
          const { reason, offset } = failure(result)
          if (reason === 'byte-order-mark') return
          expect(reason).toBe('invalid-utf8')
          expect(() => fatal.decode(bytes.subarray(0, offset))).not.toThrow()
          expect(offset).toBeLessThan(bytes.length)
        },
      ),
    )
  })

  it('rejects text with a raw unpaired surrogate as having no UTF-8 form', () => {
    expect(failure(parseStrictJson('"é\ud800"'))).toEqual({ reason: 'invalid-utf8', offset: 3 })
  })
})

describe('parseStrictJson: syntax and trailing data', () => {
  it.each([
    ['', 0, 'syntax'],
    ['   ', 3, 'syntax'],
    ['{', 1, 'syntax'],
    ['{"a"}', 4, 'syntax'],
    ['{"a":}', 5, 'syntax'],
    ['{"a":1,}', 7, 'syntax'],
    ['[1,]', 3, 'syntax'],
    ['[1 2]', 3, 'syntax'],
    ['{a:1}', 1, 'syntax'],
    ["{'a':1}", 1, 'syntax'],
    ['01', 1, 'syntax'],
    ['-', 1, 'syntax'],
    ['1.', 2, 'syntax'],
    ['1e', 2, 'syntax'],
    ['.5', 0, 'syntax'],
    ['+1', 0, 'syntax'],
    ['NaN', 0, 'syntax'],
    ['tru', 0, 'syntax'],
    ['"abc', 4, 'syntax'],
    ['"a\\x"', 2, 'syntax'],
    ['"\\u12g4"', 5, 'syntax'],
    ['"tab\there"', 4, 'syntax'],
    ['["é", x]', 7, 'syntax'],
    ['"\\é"', 1, 'syntax'],
    ['{} x', 3, 'trailing-data'],
    ['{}\n{}\n', 3, 'trailing-data'],
    ['1 2', 2, 'trailing-data'],
    ['"é" é', 5, 'trailing-data'],
    ['null,', 4, 'trailing-data'],
    ['[]]', 2, 'trailing-data'],
  ])('%j fails at byte %i (%s)', (text, offset, reason) => {
    expect(failure(parse(text))).toEqual({ reason, offset })
  })

  it('rejects an invalid escape after a raw non-ASCII character in a large document', () => {
    // In the size band where non-ASCII text is rewritten as escapes first, "\é" must stay invalid
    // rather than becoming the valid "\\u00e9".
    const filler = 'x'.repeat(80_000)
    const text = `["${filler}", "é\\é"]`
    expect(failure(parse(text))).toEqual({ reason: 'syntax', offset: Buffer.byteLength(`["${filler}", "é`) })
  })

  it('accepts exactly what JSON.parse accepts, less duplicates, on mutated documents', () => {
    const alphabet = [...'{}[],:"\\ \n0123456789-+.eEtrufalsn', 'é', '\u2028', '\u0001']
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), fc.array(fc.tuple(fc.nat(), fc.nat(), fc.constantFrom(...alphabet)), { maxLength: 3 }), (v, edits) => {
        let text = JSON.stringify(v) ?? 'null'
        for (const [at, len, insert] of edits) {
          const i = at % (text.length + 1)
          text = text.slice(0, i) + insert + text.slice(i + (len % 2))
        }
        let native: { ok: true; value: unknown } | { ok: false } = { ok: false }
        try {
          native = { ok: true, value: JSON.parse(text) }
        } catch {
          // stays { ok: false }
        }
        const result = parse(text)
        if (native.ok && !hasDuplicateName(text)) {
          expect(value(result)).toEqual(native.value)
        } else {
          const { reason, offset } = failure(result)
          // a duplicate before the syntax error is the earlier failure
          expect(reason).toMatch(native.ok ? /^duplicate-member$/ : /^(syntax|trailing-data|duplicate-member)$/)
          expect(offset).toBeGreaterThanOrEqual(0)
          expect(offset).toBeLessThanOrEqual(Buffer.byteLength(text))
        }
      }),
      { numRuns: 500 },
    )
  })
})

describe('parseStrictJson: limits', () => {
  it('rejects input over maxBytes, counting UTF-8 bytes, before anything else', () => {
    expect(failure(parse('[1,2,3,4,5]', { maxBytes: 10 }))).toEqual({ reason: 'too-large', offset: 10 })
    expect(value(parse('[1,2,3,45]', { maxBytes: 10 }))).toEqual([1, 2, 3, 45])
    // five characters, ten bytes
    expect(failure(parse('"éééé"', { maxBytes: 9 }))).toEqual({ reason: 'too-large', offset: 9 })
    expect(value(parse('"éééé"', { maxBytes: 10 }))).toBe('éééé')
    expect(failure(parseStrictJson(bytesOf([0xef, 0xbb, 0xbf], '{}'), { maxBytes: 4 }))).toEqual({ reason: 'too-large', offset: 4 })
    const result = parseStrictJson('x'.repeat(11), { maxBytes: 10 })
    expect(result.ok || result.message).toBe('input is larger than the limit of 10 bytes')
  })

  it('defaults to 1 MiB', () => {
    expect(DEFAULT_MAX_JSON_BYTES).toBe(1048576)
    const fits = `"${'a'.repeat(DEFAULT_MAX_JSON_BYTES - 2)}"`
    expect(parseStrictJson(fits).ok).toBe(true)
    expect(failure(parseStrictJson(utf8(fits + ' ')))).toEqual({ reason: 'too-large', offset: DEFAULT_MAX_JSON_BYTES })
  })

  it('rejects nesting over maxDepth at the bracket that goes too deep', () => {
    expect(value(parse('[[[]]]', { maxDepth: 3 }))).toEqual([[[]]])
    expect(failure(parse('[[[[]]]]', { maxDepth: 3 }))).toEqual({ reason: 'too-deep', offset: 3 })
    expect(failure(parse('{"é":{"b":{"c":{}}}}', { maxDepth: 3 }))).toEqual({ reason: 'too-deep', offset: 16 })
    expect(failure(parse('[]', { maxDepth: 0 }))).toEqual({ reason: 'too-deep', offset: 0 })
    expect(value(parse('"scalar"', { maxDepth: 0 }))).toBe('scalar')
    const result = parseStrictJson('[[[[]]]]', { maxDepth: 3 })
    expect(result.ok || result.message).toBe('nesting deeper than 3 levels at byte 3')
  })

  it('defaults to 256 levels', () => {
    expect(DEFAULT_MAX_JSON_DEPTH).toBe(256)
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n)
    expect(parseStrictJson(deep(256)).ok).toBe(true)
    expect(failure(parseStrictJson(deep(257)))).toEqual({ reason: 'too-deep', offset: 256 })
    // far deeper than any call stack: still a clean result
    expect(failure(parseStrictJson(deep(400_000)))).toEqual({ reason: 'too-deep', offset: 256 })
    expect(parseStrictJson(deep(200_000), { maxDepth: 1_000_000 }).ok).toBe(true)
  })

  it('reports the earliest failure in text order', () => {
    expect(failure(parse('[[[[{"a":1,"a":2}]]]]', { maxDepth: 3 }))).toEqual({ reason: 'too-deep', offset: 3 })
    expect(failure(parse('[{"a":1,"a":2},[[[]]]]', { maxDepth: 3 }))).toEqual({ reason: 'duplicate-member', offset: 8 })
    expect(failure(parse('[{"a":1,"a":2} x', { maxDepth: 3 }))).toEqual({ reason: 'duplicate-member', offset: 8 })
  })

  it('refuses bad options and inputs as local misuse', () => {
    expect(() => parseStrictJson('1', { maxBytes: -1 })).toThrow(UsageError)
    expect(() => parseStrictJson('1', { maxDepth: 1.5 })).toThrow(UsageError)
    expect(() => parseStrictJson(42 as unknown as string)).toThrow(UsageError)
  })
})

describe('parseStrictJsonOrThrow', () => {
  it('returns the value, or throws PROTOCOL_VIOLATION with the reason and offset', () => {
    expect(parseStrictJsonOrThrow('{"a":[1]}')).toEqual({ a: [1] })
    let thrown: unknown
    try {
      parseStrictJsonOrThrow('{"a":1,"\\u0061":2}')
    } catch (e) {
      thrown = e
    }
    expect(thrown).toBeInstanceOf(ProtocolError)
    const error = thrown as ProtocolError
    expect(error.code).toBe('PROTOCOL_VIOLATION')
    expect(error.details).toEqual({ reason: 'duplicate-member', offset: 7 })
    expect(error.message).toBe('duplicate member name "a" at byte 7')
  })
})
