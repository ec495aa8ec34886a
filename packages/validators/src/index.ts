/**
 * @weft/validators: ahead-of-time validators for every MissionWeaveProtocol 0.1 document and every
 * Command and Event payload. Importing this package compiles no schema: the validator code was
 * generated from @weft/spec by `weft-codegen` and is committed under `src/gen/`.
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
import type { CommandKind, CommandPayload, EventKind, EventPayload } from '@weft/spec'
import { documentValidators } from './gen/documents.js'
import { commandPayloadValidators, eventPayloadValidators } from './gen/payloads.js'
import {
  createDocumentValidator,
  createValidator,
  resolveLimits,
  type DocumentValidator,
  type GeneratedPair,
  type ValidationLimits,
  type Validator,
} from './validator.js'

type GuardOf<F> = F extends (v: unknown) => v is infer T ? T : never
type Generated = typeof documentValidators

/** One validator per normative document, keyed by document name (`workItem`, `command`, ...). */
export type DocumentValidators = { readonly [K in keyof Generated]: DocumentValidator<GuardOf<Generated[K]['check']>> }

/** One validator per Command kind, for the Command's `payload`. */
export type CommandPayloadValidators = { readonly [K in CommandKind]: Validator<CommandPayload<K>> }

/** One validator per Event kind, for the Event's `payload`. */
export type EventPayloadValidators = { readonly [K in EventKind]: Validator<EventPayload<K>> }

/** A full set of validators sharing one set of limits. */
export interface ValidatorSet {
  /** Document validators keyed by document name. */
  readonly documents: DocumentValidators
  /** Command payload validators keyed by Command kind. */
  readonly commandPayloads: CommandPayloadValidators
  /** Event payload validators keyed by Event kind. */
  readonly eventPayloads: EventPayloadValidators
  /** The document validator of a normative schema file name (`work-item.schema.json`). */
  forFile(file: string): DocumentValidator<unknown> | undefined
  /** The document validator of a schema `$id`. */
  forSchemaId(id: string): DocumentValidator<unknown> | undefined
}

function mapValues<T extends object, R>(table: T, fn: (key: keyof T & string, value: T[keyof T]) => R): Record<keyof T & string, R> {
  const out = {} as Record<keyof T & string, R>
  for (const key of Object.keys(table) as (keyof T & string)[]) out[key] = fn(key, table[key])
  return out
}

/**
 * Builds a {@link ValidatorSet} whose validators default to `limits` (bad limits throw a
 * `UsageError`). The generated code is shared; only the wrappers are new.
 */
export function createValidators(limits?: ValidationLimits): ValidatorSet {
  const defaults = resolveLimits(limits)
  const documents = mapValues(documentValidators, (_, g) => createDocumentValidator(g.name, g.file, g.schemaId, g as GeneratedPair<unknown>, defaults)) as unknown as DocumentValidators
  const commandPayloads = mapValues(commandPayloadValidators, (kind, g) => createValidator(kind, g as GeneratedPair<unknown>, defaults)) as unknown as CommandPayloadValidators
  const eventPayloads = mapValues(eventPayloadValidators, (kind, g) => createValidator(kind, g as GeneratedPair<unknown>, defaults)) as unknown as EventPayloadValidators
  const all = Object.values(documents) as DocumentValidator<unknown>[]
  const byFile = new Map(all.map((v) => [v.file, v]))
  const byId = new Map(all.map((v) => [v.schemaId, v]))
  return {
    documents,
    commandPayloads,
    eventPayloads,
    forFile: (file) => byFile.get(file),
    forSchemaId: (id) => byId.get(id),
  }
}

const defaultSet = createValidators()

/** Document validators with the default limits, keyed by document name. */
export const validators: DocumentValidators = defaultSet.documents
/** Command payload validators with the default limits. */
export const commandPayloads: CommandPayloadValidators = defaultSet.commandPayloads
/** Event payload validators with the default limits. */
export const eventPayloads: EventPayloadValidators = defaultSet.eventPayloads
/** The default document validator of a normative schema file name. */
export const validatorForFile: (file: string) => DocumentValidator<unknown> | undefined = defaultSet.forFile
/** The default document validator of a schema `$id`. */
export const validatorForSchemaId: (id: string) => DocumentValidator<unknown> | undefined = defaultSet.forSchemaId

export { DEFAULT_LIMITS } from './validator.js'
export type { DocumentValidator, ValidationLimits, Validator } from './validator.js'
export type { ValidationIssue } from './runtime.js'
export { ProtocolError, UsageError, isAbsoluteUri, isProtocolTimestamp, isSha256, isCanonicalBase64url } from '@weft/codec'
export type { ErrorCode } from '@weft/codec'

// Library-author surface: wrapping generated functions, for code generated elsewhere.
export { createValidator, createDocumentValidator, resolveLimits } from './validator.js'
export type { GeneratedPair } from './validator.js'
export { Collector } from './runtime.js'
