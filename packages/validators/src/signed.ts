/**
 * `@weft/validators/signed`: signed-document verification (§6.4) with the generated schema check
 * bound in. `@weft/codec` cannot import this package (the arrow is `codec <- validators`), so its
 * verifier takes the stage-2 check as an injected function; this entry point supplies it.
 *
 * @example
 * ```ts
 * import { Registry } from '@weft/codec'
 * import { signedVerifier } from '@weft/validators/signed'
 *
 * const result = signedVerifier.verify('command', frameBytes, Registry.fromEvidence(evidence))
 * if (!result.ok) console.log(result.error.code, result.stage) // wire code; the stage stays in audit
 * ```
 * @module
 */
import { createVerifier, type SignedVerifier } from '@weft/codec'
import { schemaCheckForKind } from './schema-check.js'

export { schemaCheckForKind, SCHEMA_CHECK_KINDS } from './schema-check.js'

/** Verification in all six §6.4 stages with the generated schema check as stage 2. */
export const signedVerifier: SignedVerifier = createVerifier({ validate: schemaCheckForKind })
