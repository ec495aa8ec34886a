// Ed25519 verification benchmark for @weft/codec (§6.4 stage 6): how close strict verification
// stays to bare node:crypto. Signatures are made with the bundle's test seeds over the signing
// bytes of the accepted vectors, so the messages are real JCS signing inputs.
//
//   warm: verifyEd25519 with a VerifiedPublicKey imported once (the Registry's case)
//   cold: importPublicKey (strict point checks, subgroup test, KeyObject) + verifyEd25519 each time
//   bare: crypto.verify(null, message, keyObject, signature) with a prebuilt KeyObject
//
// `measure()` prints nothing; the caller formats the result.
import { createPublicKey, verify } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { bundleDir, throughput } from './measure.mjs'

const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex')

/** One (key, message, signature) sample per accepted signed-document evaluation of the manifest. */
async function samples(codec) {
  const dir = await bundleDir()
  const manifest = JSON.parse(readFileSync(join(dir, 'cryptography/manifest.json'), 'utf8'))
  const out = []
  for (const c of manifest.cases) {
    for (const e of c.evaluations) {
      if (e.expect?.stage !== 'complete' || !e.signingKey) continue
      const { seed } = JSON.parse(readFileSync(join(dir, e.signingKey), 'utf8'))
      const pair = codec.keyPairFromSeed(Buffer.from(seed, 'base64url'))
      const message = readFileSync(join(dir, e.expect.verified.signingBytes))
      const signature = pair.sign(message)
      const publicKey = pair.publicKey
      const verified = codec.importPublicKey(publicKey)
      if (!codec.isVerifiedPublicKey(verified)) throw new Error(`fixture key rejected: ${verified.reason}`)
      const keyObject = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' })
      out.push({ publicKey, verified, keyObject, message, signature })
    }
  }
  if (out.length === 0) throw new Error('no accepted evaluations in the manifest')
  return out
}

/**
 * Verifications per second, warm, cold and bare (see the file comment).
 * @returns {Promise<{ warmVerifiesPerSec: number, coldVerifiesPerSec: number, bareNodeVerifiesPerSec: number }>}
 */
export async function measure() {
  const codec = await import('../packages/codec/dist/ed25519.js')
  const all = await samples(codec)
  const n = all.length
  let i = 0
  let failures = 0
  const next = () => all[i++ % n]

  const rate = await throughput(
    [
      [
        'warm',
        () => {
          const s = next()
          if (!codec.verifyEd25519(s.verified, s.message, s.signature)) failures++
        },
      ],
      [
        'cold',
        () => {
          const s = next()
          const key = codec.importPublicKey(s.publicKey)
          if (!codec.isVerifiedPublicKey(key) || !codec.verifyEd25519(key, s.message, s.signature)) failures++
        },
      ],
      [
        'bare',
        () => {
          const s = next()
          if (!verify(null, s.message, s.keyObject, s.signature)) failures++
        },
      ],
    ],
    { time: 500, warmupTime: 150 },
  )
  if (failures) throw new Error(`${failures} verifications failed during the benchmark`)
  return { warmVerifiesPerSec: rate.warm, coldVerifiesPerSec: rate.cold, bareNodeVerifiesPerSec: rate.bare }
}
