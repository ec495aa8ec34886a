// Strict JSON (stage 1) and JCS (stage 5) of @weft/codec against native JSON.parse, in one
// process and one run. Corpora: the signed-document vectors of the cryptography bundle (small,
// pretty-printed, a few non-ASCII characters) and a synthetic ~100 KB Command built from the
// golden one. Reads the built codec modules directly (`npx tsc -p packages/codec/tsconfig.build.json`).
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { bundleDir, throughput } from './measure.mjs'

const ROUNDS = 20 // parses per timed iteration of the small-document corpus, so timer overhead does not dominate

/** The golden Command with a payload of work items, about 100 KB once pretty-printed. */
function largeCommand(golden) {
  const items = []
  for (let i = 0; items.length === 0 || JSON.stringify({ ...golden, payload: { items } }, null, 2).length < 100_000; i++) {
    for (let k = 0; k < 20; k++, i++) {
      items.push({
        id: `urn:uuid:00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        title: i % 10 === 0 ? `Révision ${i} — contrôle qualité` : `Review section ${i}`,
        weight: i / 7,
        done: i % 2 === 0,
        tags: ['review', 'contract', `batch-${i % 5}`],
        note: 'A plain description of the work item, long enough to look like real text.',
      })
    }
  }
  return Buffer.from(JSON.stringify({ ...golden, payload: { items } }, null, 2))
}

async function corpus(docs, rounds, parseStrictJson, canonicalize) {
  const texts = docs.map((d) => d.toString('utf8'))
  const values = docs.map((d) => {
    const r = parseStrictJson(d)
    if (!r.ok) throw new Error(`strict parse rejects a benchmark document: ${r.message}`)
    if (!canonicalize(r.value).ok) throw new Error('canonicalize rejects a benchmark document')
    return r.value
  })
  const decoder = new TextDecoder('utf-8', { fatal: true })
  const bytes = docs.reduce((n, d) => n + d.length, 0)
  const r = await throughput(
    [
      [
        'strict',
        () => {
          for (let k = 0; k < rounds; k++) for (const d of docs) parseStrictJson(d)
        },
      ],
      [
        'native',
        () => {
          for (let k = 0; k < rounds; k++) for (const t of texts) JSON.parse(t)
        },
      ],
      [
        'nativeFromBytes',
        () => {
          for (let k = 0; k < rounds; k++) for (const d of docs) JSON.parse(decoder.decode(d))
        },
      ],
      [
        'jcs',
        () => {
          for (let k = 0; k < rounds; k++) for (const v of values) canonicalize(v)
        },
      ],
    ],
    { time: 500, warmupTime: 200 },
  )
  const mbps = (perSec) => +((perSec * rounds * bytes) / 1e6).toFixed(1)
  return {
    docs: docs.length,
    bytes,
    strictParseMBps: mbps(r.strict),
    jsonParseMBps: mbps(r.native),
    jsonParseFromBytesMBps: mbps(r.nativeFromBytes),
    jcsDocsPerSec: Math.round(r.jcs * rounds * docs.length),
    jcsMBps: mbps(r.jcs),
  }
}

/**
 * Measures strict parsing (bytes in, §6.4 stage 1) against `JSON.parse` of the already decoded
 * text, and JCS canonicalization of the parsed documents (stage 5).
 *
 * Top-level figures are over the signed-document vectors and the ~100 KB Command together
 * (parse: total bytes over total time; JCS: documents per second over the vectors); `corpora`
 * has each corpus alone. `jsonParseFromBytesMBps` is the fairer native baseline for bytes off
 * the wire (a fatal TextDecoder, then JSON.parse).
 */
export async function measure() {
  const { parseStrictJson } = await import('../packages/codec/dist/json.js')
  const { canonicalize } = await import('../packages/codec/dist/jcs.js')
  const bundle = await bundleDir()
  const dir = join(bundle, 'cryptography/vectors/signed-documents/valid')
  const vectors = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => readFileSync(join(dir, f)))
  const large = largeCommand(JSON.parse(readFileSync(join(dir, 'command.json'), 'utf8')))

  const small = await corpus(vectors, ROUNDS, parseStrictJson, canonicalize)
  const big = await corpus([large], 1, parseStrictJson, canonicalize)
  // Combined: time per pass over both corpora, from the per-corpus rates.
  const combined = (key) => {
    const seconds = small.bytes / (small[key] * 1e6) + big.bytes / (big[key] * 1e6)
    return +((small.bytes + big.bytes) / seconds / 1e6).toFixed(1)
  }
  const strictParseMBps = combined('strictParseMBps')
  const jsonParseMBps = combined('jsonParseMBps')
  return {
    strictParseMBps,
    jsonParseMBps,
    jcsDocsPerSec: small.jcsDocsPerSec,
    strictVsJsonParse: +(strictParseMBps / jsonParseMBps).toFixed(2),
    jsonParseFromBytesMBps: combined('jsonParseFromBytesMBps'),
    corpora: { vectors: small, command100k: big },
  }
}
