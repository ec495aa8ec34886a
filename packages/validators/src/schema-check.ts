/**
 * The ready stage-2 schema check for `@weft/codec`'s signed-document verification (§6.4).
 *
 * `@weft/codec` cannot import this package (the arrow is `@weft/codec <- @weft/validators`), so
 * its `verify`, `createVerifier`, `admitFirst` and `replayHistorical` take the schema check as an
 * injected `validate(kind, value)`. This module is that function, built on the generated
 * validators: each of the nine Signed Document kinds maps to the schema of the same name, and
 * `first-admission-record` to the record schema used by the admission layer.
 * @module
 */
import { DOCUMENT_KINDS } from '@weft/codec'
import { documentValidators } from './gen/documents.js'

/**
 * The names {@link schemaCheckForKind} knows: the nine Signed Document kinds of §6.4 and the
 * First-Admission Record.
 */
export const SCHEMA_CHECK_KINDS: readonly string[] = Object.freeze([...DOCUMENT_KINDS, 'first-admission-record'])

// Straight from the generated functions (not through index.ts, which re-exports this module).
const byFile = new Map<string, (value: unknown) => boolean>(Object.values(documentValidators).map((g) => [g.file, g.check]))
const checks = new Map<string, (value: unknown) => boolean>()
for (const kind of SCHEMA_CHECK_KINDS) {
  const check = byFile.get(`${kind}.schema.json`)
  if (check === undefined) throw new Error(`@weft/validators: no generated validator for ${kind}.schema.json`)
  checks.set(kind, check)
}

/**
 * Whether `value` is valid against the complete normative schema of `kind` (formats asserted,
 * §2). An unknown kind is never valid, so a mistyped name fails closed.
 * @example
 * ```ts
 * import { createVerifier } from '@weft/codec'
 * import { schemaCheckForKind } from '@weft/validators'
 * const verifier = createVerifier({ validate: schemaCheckForKind })
 * ```
 */
export function schemaCheckForKind(kind: string, value: unknown): boolean {
  const check = checks.get(kind)
  return check?.(value) ?? false
}
