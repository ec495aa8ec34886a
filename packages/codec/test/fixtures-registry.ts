/**
 * Registry evidence for the Registry tests (`src/registry.test.ts`, `src/registry-revisions.test.ts`):
 * bindings of agents whose keys come from fixed seeds. It lives in `test/` so the published `src/`
 * and `dist/` hold no test code.
 */
import { keyPairFromSeed } from '../src/ed25519.js'
import type { RegistryBinding, RegistryEvidence } from '../src/registry.js'

/** The base64url public key of the key pair whose 32-byte seed is all `n`. */
export const keyOf = (n: number) => Buffer.from(keyPairFromSeed(new Uint8Array(32).fill(n)).publicKey).toString('base64url')

/** A valid binding of `urn:example:key:<n>` to `urn:example:agent:<n>` with {@link keyOf}(n), changed by `overrides`. */
export function binding(n: number, overrides: Partial<RegistryBinding> = {}): RegistryBinding {
  return {
    keyId: `urn:example:key:${n}`,
    principal: { type: 'agent', id: `urn:example:agent:${n}` },
    algorithm: 'Ed25519',
    publicKey: keyOf(n),
    validFrom: '2026-01-01T00:00:00Z',
    validityHistory: [],
    ...overrides,
  }
}

/** The evidence of the Organization `urn:example:org` declaring `bindings`. */
export function evidence(...bindings: RegistryBinding[]): RegistryEvidence {
  return { organizationId: 'urn:example:org', bindings }
}
