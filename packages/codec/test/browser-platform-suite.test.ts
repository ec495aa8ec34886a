/**
 * The codec's own test suites, run again with the browser platform module in place of the Node
 * one: `#platform` is mocked to `src/platform/browser.ts`, so every public function below runs on
 * `TextDecoder`, `@noble/hashes`, `@noble/curves` and `crypto.subtle` (web APIs Node also has)
 * instead of `node:crypto` and `node:buffer`. Every expectation of those suites (strict-JSON
 * offsets and messages, base64url strictness, the §6.4 point classification, the protocol's
 * cryptography vectors, signing) must hold unchanged.
 */
import { expect, it, vi } from 'vitest'
import { PLATFORM } from '#platform'

vi.mock('#platform', async () => await import('../src/platform/browser.js'))

it('runs on the browser platform module', () => {
  expect(PLATFORM).toBe('browser')
})

await import('../src/bytes.test.js')
await import('../src/json.test.js')
await import('../src/jcs.test.js')
await import('../src/ed25519.test.js')
await import('../src/sign-async.test.js')
await import('../src/signed.test.js')
await import('../src/registry.test.js')
await import('../src/registry-revisions.test.js')
await import('../src/admission.test.js')
