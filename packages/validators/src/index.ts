/**
 * @weft/validators: ahead-of-time validators for every MissionWeaveProtocol 0.1 document. Importing
 * this package compiles no schema: the validator code was generated from @weft/spec by
 * `weft-codegen` and is committed under `src/gen/`. Payload validators live in the subpath
 * `@weft/validators/payloads` and the signed-document helpers in `@weft/validators/signed`, so
 * code that only validates documents never loads them.
 *
 * @example
 * ```ts
 * import { validators, ProtocolError } from '@weft/validators'
 *
 * if (validators.workItem.check(value)) value.state // typed as WorkItem
 * const issues = validators.command.errors(value, { maxErrors: 5 })
 * const command = validators.command.parseText(frameText) // throws ProtocolError
 * ```
 * @packageDocumentation
 */
import { documentValidators } from './gen/documents.js'
import { createDocumentValidator, resolveLimits, type DocumentValidator, type GeneratedPair, type ValidationLimits } from './validator.js'

type GuardOf<F> = F extends (v: unknown) => v is infer T ? T : never
type Generated = typeof documentValidators

/**
 * One validator per normative schema file of §21, keyed by document name (`workItem`, `command`,
 * ...). `common` is the definitions-only `common.schema.json`: its root accepts every JSON value,
 * so `validators.common.check` is always true and narrows to `unknown`; its primitives are
 * validated through the documents that reference them.
 */
export type DocumentValidators = { readonly [K in keyof Generated]: DocumentValidator<GuardOf<Generated[K]['check']>> }

/** A full set of document validators sharing one set of limits. */
export interface ValidatorSet {
  /** Document validators keyed by document name. */
  readonly documents: DocumentValidators
  /** The document validator of a normative schema file name (`work-item.schema.json`). */
  forFile(file: string): DocumentValidator<unknown> | undefined
  /** The document validator of a schema `$id`. */
  forSchemaId(id: string): DocumentValidator<unknown> | undefined
}

/**
 * Builds a {@link ValidatorSet} whose validators default to `limits` (bad limits throw a
 * `UsageError`). The generated code is shared; only the wrappers are new.
 */
export function createValidators(limits?: ValidationLimits): ValidatorSet {
  const defaults = resolveLimits(limits)
  const documents = {} as Record<string, DocumentValidator<unknown>>
  for (const [name, g] of Object.entries(documentValidators)) {
    documents[name] = createDocumentValidator(g.name, g.file, g.schemaId, g as GeneratedPair<unknown>, defaults)
  }
  const all = Object.values(documents)
  const byFile = new Map(all.map((v) => [v.file, v]))
  const byId = new Map(all.map((v) => [v.schemaId, v]))
  return {
    documents: documents as unknown as DocumentValidators,
    forFile: (file) => byFile.get(file),
    forSchemaId: (id) => byId.get(id),
  }
}

const defaultSet = createValidators()

/** Document validators with the default limits, keyed by document name. */
export const validators: DocumentValidators = defaultSet.documents
/** The default document validator of a normative schema file name. */
export const validatorForFile: (file: string) => DocumentValidator<unknown> | undefined = defaultSet.forFile
/** The default document validator of a schema `$id`. */
export const validatorForSchemaId: (id: string) => DocumentValidator<unknown> | undefined = defaultSet.forSchemaId

export { DEFAULT_LIMITS } from './validator.js'
export type { DocumentValidator, ValidationLimits, Validator } from './validator.js'
export type { ValidationIssue } from './runtime.js'
export { ProtocolError, UsageError } from '@weft/codec/errors'
export { isAbsoluteUri, isProtocolTimestamp, isSha256, isCanonicalBase64url } from '@weft/codec/formats'
export type { ErrorCode } from '@weft/codec'

// Library-author surface: wrapping generated functions, for code generated elsewhere.
export { createValidator, createDocumentValidator, resolveLimits } from './validator.js'
export type { GeneratedPair } from './validator.js'
export { Collector } from './runtime.js'
