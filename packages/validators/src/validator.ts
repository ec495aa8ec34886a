/**
 * The validator object users call, built around the generated check and collect functions.
 * @module
 */
import { ProtocolError, UsageError } from '@weft/codec/errors'
import { parseStrictJson } from '@weft/codec/json'
import { COLLECTOR_FULL, Collector, type ValidationIssue } from './runtime.js'

/** Bounds that keep hostile input cheap to reject. */
export interface ValidationLimits {
  /** At most this many issues are collected by `errors()` and carried by `parse()` (default 20). */
  readonly maxErrors?: number
  /** Text or bytes longer than this (UTF-8 bytes) are refused before parsing (default 1 MiB). */
  readonly maxBytes?: number
}

/** The limits used when none are given. */
export const DEFAULT_LIMITS: Required<ValidationLimits> = { maxErrors: 20, maxBytes: 1024 * 1024 }

/** Validates one kind of value: a normative document, a Command payload or an Event payload. */
export interface Validator<T> {
  /** Document name (`workItem`) or payload kind (`work.offer`). */
  readonly name: string
  /** Whether `value` is valid. The fast path: stops at the first failure, allocates nothing. */
  check(value: unknown): value is T
  /** The issues of `value` (empty when valid), at most `maxErrors` of them. */
  errors(value: unknown, limits?: Pick<ValidationLimits, 'maxErrors'>): ValidationIssue[]
  /**
   * Returns `value` typed when valid; otherwise throws a {@link ProtocolError} with code
   * `SCHEMA_VALIDATION_FAILED` whose `details.issues` holds the bounded issue list and
   * `details.truncated` tells whether the walk stopped at `maxErrors`.
   */
  parse(value: unknown, limits?: Pick<ValidationLimits, 'maxErrors'>): T
  /**
   * Parses JSON text or UTF-8 bytes strictly (§17.4: one value, no byte-order mark, no trailing
   * data, no duplicate member names), then validates. Input over `maxBytes` or not strict JSON is a
   * `PROTOCOL_VIOLATION` with `details.reason` and `details.offset`; a schema failure is
   * `SCHEMA_VALIDATION_FAILED`.
   */
  parseText(text: string | Uint8Array, limits?: ValidationLimits): T
}

/** A {@link Validator} of a normative document, with the schema it implements. */
export interface DocumentValidator<T> extends Validator<T> {
  /** The normative file name, e.g. `work-item.schema.json`. */
  readonly file: string
  /** The schema `$id`. */
  readonly schemaId: string
}

/** Generated functions behind a validator. */
export interface GeneratedPair<T> {
  readonly check: (v: unknown) => v is T
  readonly collect: (v: unknown, p: string, x: Collector) => void
}

function positiveInteger(value: number | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < 1) throw new UsageError(`${name} must be a positive safe integer, got ${String(value)}`)
  return value
}

/** Resolves and checks limits; bad options are a {@link UsageError}, never a protocol error. */
export function resolveLimits(limits: ValidationLimits | undefined, defaults: Required<ValidationLimits> = DEFAULT_LIMITS): Required<ValidationLimits> {
  return {
    maxErrors: positiveInteger(limits?.maxErrors, 'maxErrors', defaults.maxErrors),
    maxBytes: positiveInteger(limits?.maxBytes, 'maxBytes', defaults.maxBytes),
  }
}

function collectIssues<T>(pair: GeneratedPair<T>, value: unknown, maxErrors: number): ValidationIssue[] {
  const collector = new Collector(maxErrors)
  try {
    pair.collect(value, '', collector)
  } catch (e) {
    if (e !== COLLECTOR_FULL) throw e
  }
  return collector.issues
}

function describe(issue: ValidationIssue): string {
  return `${issue.path === '' ? '(root)' : issue.path} ${issue.message}`
}

/** Builds a {@link Validator} around generated functions. */
export function createValidator<T>(name: string, pair: GeneratedPair<T>, defaults: Required<ValidationLimits> = DEFAULT_LIMITS): Validator<T> {
  const check = pair.check
  const errors = (value: unknown, limits?: Pick<ValidationLimits, 'maxErrors'>): ValidationIssue[] => {
    const { maxErrors } = resolveLimits(limits, defaults)
    if (check(value)) return []
    return collectIssues(pair, value, maxErrors)
  }
  const parse = (value: unknown, limits?: Pick<ValidationLimits, 'maxErrors'>): T => {
    if (check(value)) return value
    const { maxErrors } = resolveLimits(limits, defaults)
    const issues = collectIssues(pair, value, maxErrors)
    // A full list means the walk stopped at the bound: say so, so nobody reads it as complete.
    const truncated = issues.length >= maxErrors
    const shown = issues.slice(0, 3).map(describe).join('; ')
    const more = issues.length > 3 ? `; and ${issues.length - 3} more` : ''
    const stop = truncated ? ` (stopped after ${maxErrors} issues)` : ''
    throw new ProtocolError('SCHEMA_VALIDATION_FAILED', `${name} does not conform to its schema: ${shown}${more}${stop}`, {
      details: { issues: issues.map((i) => ({ ...i })), truncated },
    })
  }
  return {
    name,
    check,
    errors,
    parse,
    parseText(text, limits) {
      const { maxBytes, maxErrors } = resolveLimits(limits, defaults)
      // §17.4: strict parsing (one UTF-8 value, no BOM, no trailing data, no duplicate member
      // names after unescaping) before schema validation; oversized input is refused unread.
      const parsed = parseStrictJson(text, { maxBytes })
      if (!parsed.ok) {
        throw new ProtocolError('PROTOCOL_VIOLATION', `${name}: ${parsed.message}`, { details: { reason: parsed.reason, offset: parsed.offset } })
      }
      const value: unknown = parsed.value
      return parse(value, { maxErrors })
    },
  }
}

/** Builds a {@link DocumentValidator}. */
export function createDocumentValidator<T>(name: string, file: string, schemaId: string, pair: GeneratedPair<T>, defaults: Required<ValidationLimits> = DEFAULT_LIMITS): DocumentValidator<T> {
  return { ...createValidator(name, pair, defaults), file, schemaId }
}
