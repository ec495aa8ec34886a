// Codec benchmark: signed-document verification (§6.4, all six stages) against bare node:crypto
// Ed25519 over the same bytes, plus strict JSON and JCS against native JSON, in one process and
// one run.
//
//   warm        verify() with one Registry built from registry-valid.json (key checks cached)
//   strict      the same with strictStageOrder: the subgroup test on R before key resolution
//   cold        Registry.fromEvidence(registry-valid.json) for every document, then verify()
//   ceiling     crypto.verify(null, signingBytes, keyObject, signature), KeyObjects prebuilt
//
// The corpus is the 11 accepted signed-document vectors of the cryptography bundle, all verified
// against the full registry-valid.json fixture (7 bindings) with the generated schema check of
// @weft/validators. Codec modules are read from packages/codec/dist/ (like the helpers
// codec-json.mjs and codec-ed25519.mjs), so the suite does not depend on what index.ts exports.
import { createPublicKey, verify as nodeVerify } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { bundleDir, throughput } from './measure.mjs'
import { fmt, table } from './table.mjs'

const here = import.meta.dirname
const codecDist = (file) => import(join(here, '..', 'packages', 'codec', 'dist', file))

/** The accepted signed-document evaluations: kind, bytes, and what the ceiling needs. */
function corpus(bundle, manifest) {
  const docs = []
  for (const c of manifest.cases) {
    for (const e of c.evaluations) {
      if (e.expect?.stage !== 'complete' || e.document === undefined) continue
      const bytes = readFileSync(join(bundle, e.document))
      const document = JSON.parse(bytes.toString('utf8'))
      const signature = Buffer.from(document.signature.value, 'base64url')
      const signingBytes = readFileSync(join(bundle, e.expect.verified.signingBytes))
      docs.push({ kind: e.profileId, name: e.document.split('/').pop(), bytes, signature, signingBytes, keyId: e.expect.verified.keyId })
    }
  }
  return docs
}

export async function run({ log }) {
  const bundle = await bundleDir()
  const { verify } = await codecDist('signed.js')
  const { Registry } = await codecDist('registry.js')
  const { schemaCheckForKind } = await import('@weft/validators/signed')
  const manifest = JSON.parse(readFileSync(join(bundle, 'cryptography/manifest.json'), 'utf8'))
  const evidenceText = readFileSync(join(bundle, 'cryptography/keys/registry-valid.json'), 'utf8')
  const evidence = JSON.parse(evidenceText)
  const registry = Registry.fromEvidence(evidence)
  const docs = corpus(bundle, manifest)
  if (docs.length !== 11) throw new Error(`expected the 11 accepted signed-document vectors, found ${docs.length}`)

  const options = { validate: schemaCheckForKind }
  const strictOptions = { validate: schemaCheckForKind, strictStageOrder: true }
  for (const d of docs) {
    const result = verify(d.kind, d.bytes, registry, options)
    if (!result.ok) throw new Error(`${d.name} does not verify against registry-valid.json: ${result.stage}/${result.reason}`)
    if (!Buffer.from(result.verified.signingBytes).equals(d.signingBytes)) throw new Error(`${d.name}: signing bytes differ from the vector`)
    d.keyObject = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: evidence.bindings.find((b) => b.keyId === d.keyId).publicKey }, format: 'jwk' })
    if (!nodeVerify(null, d.signingBytes, d.keyObject, d.signature)) throw new Error(`${d.name}: node:crypto rejects the vector`)
  }
  const n = docs.length
  let failures = 0

  log('codec: signed-document verification, 11 vectors, registry-valid.json')
  const r = await throughput(
    [
      [
        'warm',
        () => {
          for (const d of docs) if (!verify(d.kind, d.bytes, registry, options).ok) failures++
        },
      ],
      [
        'strict',
        () => {
          for (const d of docs) if (!verify(d.kind, d.bytes, registry, strictOptions).ok) failures++
        },
      ],
      [
        'cold',
        () => {
          for (const d of docs) if (!verify(d.kind, d.bytes, Registry.fromEvidence(evidence), options).ok) failures++
        },
      ],
      [
        'ceiling',
        () => {
          for (const d of docs) if (!nodeVerify(null, d.signingBytes, d.keyObject, d.signature)) failures++
        },
      ],
    ],
    { time: 600, warmupTime: 200, log },
  )
  if (failures) throw new Error(`${failures} verifications failed during the benchmark`)
  const perSec = (name) => r[name] * n
  const warmRatio = r.warm / r.ceiling
  const strictRatio = r.strict / r.ceiling
  const coldRatio = r.cold / r.ceiling

  log('codec: strict JSON and JCS (bench/codec-json.mjs)')
  const json = await (await import('./codec-json.mjs')).measure()
  log('codec: Ed25519 primitive (bench/codec-ed25519.mjs)')
  const ed = await (await import('./codec-ed25519.mjs')).measure()
  const parseRatio = json.strictParseMBps / json.jsonParseMBps

  const missed = []
  if (warmRatio < 0.5) missed.push(`warm verification ${(100 * warmRatio).toFixed(0)}% of bare node:crypto < 50%`)
  if (parseRatio < 1 / 3) missed.push(`strict parse ${parseRatio.toFixed(2)}x JSON.parse < 1/3`)

  const pct = (x) => `${(100 * x).toFixed(0)}%`
  const rows = [
    ['verify, warm key cache (docs/s)', fmt(perSec('warm')), fmt(perSec('ceiling')), pct(warmRatio), '>= 50%'],
    ['verify, warm, strictStageOrder (docs/s)', fmt(perSec('strict')), fmt(perSec('ceiling')), pct(strictRatio), ''],
    ['verify, cold key cache (docs/s)', fmt(perSec('cold')), fmt(perSec('ceiling')), pct(coldRatio), ''],
    ['bare node:crypto verify, ceiling (docs/s)', fmt(perSec('ceiling')), '', '', ''],
    ['strict parse vs JSON.parse (MB/s)', json.strictParseMBps.toFixed(1), json.jsonParseMBps.toFixed(1), `${parseRatio.toFixed(2)}x`, '>= 0.33x'],
    ['JCS (docs/s)', fmt(json.jcsDocsPerSec), '', '', ''],
    ['Ed25519 primitive, warm key (verifies/s)', fmt(ed.warmVerifiesPerSec), fmt(ed.bareNodeVerifiesPerSec), pct(ed.warmVerifiesPerSec / ed.bareNodeVerifiesPerSec), ''],
    ['Ed25519 primitive, cold key (verifies/s)', fmt(ed.coldVerifiesPerSec), fmt(ed.bareNodeVerifiesPerSec), pct(ed.coldVerifiesPerSec / ed.bareNodeVerifiesPerSec), ''],
  ]
  const summary = {
    documents: n,
    registry: 'cryptography/keys/registry-valid.json',
    verifyWarmPerSec: Math.round(perSec('warm')),
    verifyWarmStrictOrderPerSec: Math.round(perSec('strict')),
    verifyColdPerSec: Math.round(perSec('cold')),
    bareNodeVerifyPerSec: Math.round(perSec('ceiling')),
    warmVsBare: +warmRatio.toFixed(3),
    strictOrderVsBare: +strictRatio.toFixed(3),
    coldVsBare: +coldRatio.toFixed(3),
    strictParseMBps: json.strictParseMBps,
    jsonParseMBps: json.jsonParseMBps,
    strictParseVsJsonParse: +parseRatio.toFixed(3),
    jcsDocsPerSec: json.jcsDocsPerSec,
    ed25519: ed,
    targetsMet: missed.length === 0,
    missed,
  }
  const header = ['codec', 'weft', 'baseline', 'ratio', 'target']
  return { table: table(header, rows), summary, missed }
}
