/**
 * Runs a {@link Corpus} through one copy of the public @weft/codec API and records every outcome
 * as plain JSON, keyed per vector. Portable on purpose (no Node built-ins, no `Buffer`): the same
 * function runs in vitest against the Node and the browser platform module (`platform.test.ts`)
 * and, bundled by esbuild, in Chromium (`browser.test.ts`). Comparing the records vector by
 * vector is how the tests prove that both platforms answer every §6.4 question identically.
 */
import type * as Codec from '../src/index.js'

/** Everything a corpus run needs, bytes as lower-case hex (JSON cannot carry bytes). */
export interface Corpus {
  /** Signed-document evaluations of the protocol's cryptography bundle, all six stages (§6.4). */
  readonly evaluations: readonly { readonly id: string; readonly kind: Codec.DocumentKind; readonly document: string; readonly registry: string }[]
  /** 32-byte (or wrongly sized) public-key encodings for the stage-4 rules. */
  readonly publicKeys: readonly { readonly id: string; readonly key: string }[]
  /** Signature encodings for the stage-3 rules. */
  readonly signatures: readonly { readonly id: string; readonly signature: string }[]
  /** (key, message, signature) triples for the stage-6 equation. */
  readonly verifications: readonly { readonly id: string; readonly key: string; readonly message: string; readonly signature: string }[]
  /** RFC 8032 seeds and messages to sign with them. */
  readonly seeds: readonly { readonly id: string; readonly seed: string; readonly messages: readonly string[] }[]
  /** Inputs for the strict-JSON parser (§6.4 stage 1). */
  readonly json: readonly { readonly id: string; readonly bytes: string }[]
  /** Texts for the base64url decoder (§2). */
  readonly base64url: readonly string[]
}

/** One outcome per vector id; values are plain JSON. */
export type Outcomes = Record<string, unknown>

/** Bytes from lower-case hex (no Buffer: this module also runs in the page). */
export function fromHex(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2)
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16)
  return out
}

/** Lower-case hex of bytes. */
export function toHex(bytes: Uint8Array): string {
  let out = ''
  for (const b of bytes) out += b.toString(16).padStart(2, '0')
  return out
}

function check(result: { readonly ok: boolean; readonly reason?: string }): string {
  return result.ok ? 'ok' : String(result.reason)
}

/** A compact, comparable record of a signed-document verification. */
function verification(result: Codec.VerifyResult): unknown {
  if (!result.ok) return { stage: result.stage, reason: result.reason, code: result.error.code, message: result.error.message }
  const v = result.verified
  return { stage: 'complete', signingHash: v.signingHash, signingBytes: toHex(v.signingBytes), keyId: v.key.keyId, principal: v.key.principal, protectedTime: v.protectedTime.text }
}

/**
 * Runs every vector of `corpus` through `codec`. Signed documents are verified with a permissive
 * schema check (the codec cannot see the normative schemas; both platforms get the same one), so
 * a schema-stage vector goes on to the later stages: still the same input on both sides.
 */
export async function runCorpus(codec: typeof Codec, corpus: Corpus): Promise<Outcomes> {
  const out: Outcomes = {}
  const options = { validate: () => true }
  const registries = new Map<string, Codec.Registry>()
  for (const e of corpus.evaluations) {
    let registry = registries.get(e.registry)
    if (registry === undefined) {
      registry = codec.Registry.fromEvidence(JSON.parse(new TextDecoder().decode(fromHex(e.registry))))
      registries.set(e.registry, registry)
    }
    const bytes = fromHex(e.document)
    out[`verify ${e.id}`] = verification(codec.verify(e.kind, bytes, registry, options))
    out[`verify strict order ${e.id}`] = verification(codec.verify(e.kind, bytes, registry, { ...options, strictStageOrder: true }))
    out[`verifyAsync ${e.id}`] = verification(await codec.verifyAsync(e.kind, bytes, registry, options))
  }
  for (const k of corpus.publicKeys) {
    const bytes = fromHex(k.key)
    const imported = codec.importPublicKey(bytes)
    out[`public key ${k.id}`] = { check: check(codec.checkPublicKeyEncoding(bytes)), imported: codec.isVerifiedPublicKey(imported) ? toHex(imported.bytes) : check(imported) }
  }
  for (const s of corpus.signatures) {
    const bytes = fromHex(s.signature)
    out[`signature ${s.id}`] = { check: check(codec.checkSignatureEncoding(bytes)), precheck: check(codec.precheckSignatureEncoding(bytes)) }
  }
  for (const v of corpus.verifications) {
    const key = codec.importPublicKey(fromHex(v.key))
    if (!codec.isVerifiedPublicKey(key)) {
      out[`equation ${v.id}`] = { key: check(key) }
      continue
    }
    const message = fromHex(v.message)
    const signature = fromHex(v.signature)
    out[`equation ${v.id}`] = { sync: codec.verifyEd25519(key, message, signature), async: await codec.verifyEd25519Async(key, message, signature) }
  }
  for (const s of corpus.seeds) {
    const seed = fromHex(s.seed)
    const pair = codec.keyPairFromSeed(seed)
    const web = await codec.webCryptoKeyPair(seed, pair.publicKey)
    const signatures = []
    for (const m of s.messages) {
      const message = fromHex(m)
      const signature = pair.sign(message)
      const webSignature = await web.sign(message)
      signatures.push({ sync: toHex(signature), web: toHex(webSignature) })
    }
    out[`seed ${s.id}`] = { publicKey: toHex(pair.publicKey), webPublicKey: toHex(web.publicKey), signatures }
    // The whole signing path of §6.4 (JCS, envelope, signature) through both key kinds.
    const document = { kind: 'probe', issuedAt: '2026-07-15T00:00:00Z', note: 'é \u{1f600}' }
    out[`sign ${s.id}`] = {
      sign: codec.sign('command', document, { keyId: 'urn:weft:test:key', pair }),
      signAsync: await codec.signAsync('command', document, { keyId: 'urn:weft:test:key', pair: web }),
    }
  }
  for (const j of corpus.json) {
    const bytes = fromHex(j.bytes)
    const parsed = codec.parseStrictJson(bytes)
    // The value itself can be huge; its JCS hash stands for it (and exercises SHA-256 too).
    const canonical = parsed.ok ? codec.canonicalize(parsed.value) : undefined
    out[`json ${j.id}`] = parsed.ok ? { ok: true, jcs: canonical!.ok ? codec.sha256Tagged(canonical!.bytes) : check(canonical!) } : parsed
    out[`sha256 ${j.id}`] = { tagged: codec.sha256Tagged(bytes), raw: toHex(codec.sha256(bytes)), base64url: codec.encodeBase64url(bytes.subarray(0, 301)) }
  }
  for (const [i, text] of corpus.base64url.entries()) {
    const decoded = codec.decodeBase64url(text)
    out[`base64url ${i} ${JSON.stringify(text)}`] = decoded === undefined ? null : toHex(decoded)
  }
  return out
}
