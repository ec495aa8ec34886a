/**
 * First admission and historical replay of Signed Documents (§6.4, "First-Admission Records" to
 * "Event self-anchoring"): the Admission Log adapter seam with typed outcomes, an in-memory log,
 * and the two orchestrations on top of unchanged six-stage verification.
 *
 * Admission is a separate semantic layer: every path first runs {@link verify} to completion and
 * never changes its signing bytes, signing hash or key. Every failure after that is reported with
 * the protected stage `admission`, a stable reason, and on the wire only `AUTH_INVALID_SIGNATURE`
 * with the generic message (§6.4: the wire must not reveal which admission check failed).
 *
 * The adapter's typed result is the only source of trust: there is no "trusted" or
 * "authenticated" boolean a caller could pass instead (§6.4).
 * @module
 */
import { ProtocolError, UsageError } from './errors.js'
import { canonicalize } from './jcs.js'
import { parseStrictJson, type JsonValue } from './json.js'
import type { KeyResolver, ResolvedKey } from './registry.js'
import { genericError, isDocumentKind, samePrincipal, verify, type DocumentKind, type Principal, type Stage, type Verified, type VerifyOptions } from './signed.js'
import { parseTimestamp, withinInterval, type ProtocolTimestamp } from './timestamp.js'

/** A service Principal: the only kind that may accept a document into the Admission Log (§6.4). */
export interface ServicePrincipal {
  readonly type: 'service'
  readonly id: string
}

/**
 * A First-Admission Record (§6.4, `first-admission-record.schema.json`): authoritative append
 * metadata outside the signed document. Not signed, and never trusted on its own bytes.
 */
export interface FirstAdmissionRecord {
  readonly protocolVersion: '0.1'
  readonly admissionRecordId: string
  readonly organizationId: string
  readonly documentKind: DocumentKind
  readonly signingHash: string
  readonly keyId: string
  readonly principal: Principal
  /** Lexical spelling retained; compared as an exact instant, need not end in uppercase `Z`. */
  readonly trustedAcceptedAt: string
  readonly acceptedBy: ServicePrincipal
}

/**
 * What an Admission Log lookup of `(organizationId, signingHash)` can return (§6.4). Only
 * `found` and `absent` (an *authoritative* absence) are usable; everything else fails closed.
 * `record` is the stored record exactly as the log holds it, to be strictly parsed and validated
 * by the caller; `authenticatedService` is the accepting service the log authenticated.
 */
export type LookupOutcome =
  | { readonly status: 'found'; readonly record: Uint8Array | string; readonly authenticatedService: Principal }
  | { readonly status: 'absent' }
  | { readonly status: 'unavailable' }
  | { readonly status: 'indeterminate' }
  | { readonly status: 'unauthenticated' }
  | { readonly status: 'integrity-failed' }

/**
 * What the atomic append-or-return-existing operation can return (§6.4): the record now under
 * the key, newly `committed` or concurrently `existing`, with the authenticated service; or a
 * typed failure. A `conflict` is a record under the same key with another kind, key ID or
 * Principal (or an `admissionRecordId` already used under another key); it is never repaired.
 */
export type AppendOutcome =
  | { readonly status: 'committed'; readonly record: Uint8Array | string; readonly authenticatedService: Principal }
  | { readonly status: 'existing'; readonly record: Uint8Array | string; readonly authenticatedService: Principal }
  | { readonly status: 'conflict' }
  | { readonly status: 'unavailable' }
  | { readonly status: 'indeterminate' }
  | { readonly status: 'unauthenticated' }
  | { readonly status: 'integrity-failed' }
  | { readonly status: 'failed-commit' }

/**
 * The Admission Log seam (§6.4). A deployment adapter authenticates the accepting service,
 * restricts writes to Organization-authorized services and preserves append-only integrity; it
 * asserts all of that by returning a successful typed outcome, and reports anything else as the
 * matching failure. Methods may be synchronous or return promises.
 */
export interface AdmissionLog {
  /** Authoritative lookup of the logical key `(organizationId, signingHash)`. */
  lookup(organizationId: string, signingHash: string): LookupOutcome | PromiseLike<LookupOutcome>
  /** One atomic append-or-return-existing for the candidate's logical key. */
  appendOrReturnExisting(candidate: FirstAdmissionRecord): AppendOutcome | PromiseLike<AppendOutcome>
}

/**
 * Organization-assigned trusted acceptance context for a candidate record, obtained only after an
 * authoritative absence (§6.4). `trustedAcceptedAt` is text and is checked here (timestamp
 * profile, key interval) before any append.
 */
export interface TrustedAcceptance {
  readonly admissionRecordId: string
  readonly trustedAcceptedAt: string
  readonly acceptedBy: Principal
}

/**
 * Stable reasons of admission failures (protected diagnostics, §6.4). The names follow the
 * Admission conformance bundle's vocabulary.
 */
export type AdmissionReason =
  | 'record-missing'
  | 'record-binding-mismatch'
  | 'trusted-time-outside-key-interval'
  | 'malformed-trusted-time'
  | 'record-conflict'
  | 'record-schema-invalid'
  | 'log-authentication-failed'
  | 'append-integrity-not-established'
  | 'log-unavailable'
  | 'log-indeterminate'
  | 'commit-failed'
  | 'event-self-anchoring'
  | 'trusted-context-unavailable'

/** How the accepted record was obtained. */
export type AdmissionSource = 'found' | 'committed' | 'existing'

/** A successful first admission or historical replay. */
export interface Admitted {
  readonly ok: true
  /** The unchanged six-stage result. */
  readonly verified: Verified
  /** The validated record returned by the log (never the local candidate). */
  readonly record: FirstAdmissionRecord
  /** The record exactly as the log returned it. */
  readonly recordBytes: Uint8Array | string
  /** Its trusted acceptance instant. */
  readonly trustedAcceptedAt: ProtocolTimestamp
  /** The service the log authenticated, equal to `record.acceptedBy`. */
  readonly authenticatedService: ServicePrincipal
  readonly source: AdmissionSource
}

/** A failure after six-stage completion: stage `admission`, wire `AUTH_INVALID_SIGNATURE`. */
export interface AdmissionFailure {
  readonly ok: false
  readonly stage: 'admission'
  readonly reason: AdmissionReason
  readonly detail?: string
  readonly error: ProtocolError
  /** The six-stage result the failure happened after. */
  readonly verified: Verified
}

/** A failure of the six cryptographic stages themselves (admission was not reached). */
export interface CryptographicFailure {
  readonly ok: false
  readonly stage: Stage
  readonly reason: string
  readonly detail?: string
  readonly error: ProtocolError
}

/** The result of {@link admitFirst} and {@link replayHistorical}. */
export type AdmissionResult = Admitted | AdmissionFailure | CryptographicFailure

/** What {@link admitFirst} needs besides the document and the Registry. */
export interface FirstAdmissionOptions extends VerifyOptions {
  /** The Organization's Admission Log. */
  readonly log: AdmissionLog
  /**
   * Issues trusted acceptance context. Called at most once, and only after the log reported an
   * authoritative absence; a throw or rejection fails closed (`trusted-context-unavailable`).
   */
  readonly trustedContext: () => TrustedAcceptance | PromiseLike<TrustedAcceptance>
}

/** What {@link replayHistorical} needs: lookup only; replay never appends nor issues trusted context. */
export interface HistoricalReplayOptions extends VerifyOptions {
  readonly log: Pick<AdmissionLog, 'lookup'>
}

function admissionFailure(verified: Verified, reason: AdmissionReason, detail?: string): AdmissionFailure {
  const diagnostic = detail === undefined ? { stage: 'admission', reason } : { stage: 'admission', reason, detail }
  const error = genericError('AUTH_INVALID_SIGNATURE', diagnostic)
  return detail === undefined ? { ok: false, stage: 'admission', reason, error, verified } : { ok: false, stage: 'admission', reason, detail, error, verified }
}

function isObject(value: unknown): value is { readonly [name: string]: unknown } {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function asPrincipal(value: unknown): Principal | undefined {
  if (!isObject(value)) return undefined
  const { type, id } = value
  return (type === 'agent' || type === 'human' || type === 'service') && typeof id === 'string' ? { type, id } : undefined
}

function describe(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause)
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/**
 * Is `value` the signed Event itself, presented as its own anchor (§6.4 Event self-anchoring)?
 * True when it carries a top-level `signature` (a Signed Document, not a record), or when its
 * content without that member is exactly the Event's signing input.
 */
function isEventSelfAnchor(value: JsonValue, verified: Verified): boolean {
  if (!isObject(value)) return false
  if (Object.hasOwn(value, 'signature')) return true
  const jcs = canonicalize(value)
  return jcs.ok && sameBytes(jcs.bytes, verified.signingBytes)
}

type RecordCheck =
  | { readonly ok: true; readonly record: FirstAdmissionRecord; readonly trustedAcceptedAt: ProtocolTimestamp; readonly service: ServicePrincipal }
  | { readonly ok: false; readonly reason: AdmissionReason; readonly detail?: string }

/**
 * Validates a record the log returned against the six-stage evidence (§6.4 "Record validation"):
 * strict parse, Event self-anchoring, the normative schema, exact bindings, `acceptedBy` equal
 * to the authenticated service, and the trusted instant inside the key's interval.
 */
function checkRecord(bytes: Uint8Array | string, authenticated: Principal, verified: Verified, options: VerifyOptions): RecordCheck {
  const parsed = parseStrictJson(bytes, options.json)
  if (!parsed.ok) return { ok: false, reason: 'record-schema-invalid', detail: `not strict JSON: ${parsed.reason}` }
  const value = parsed.value
  // Checked before the schema so the diagnostic names the actual misuse: an Event is never its own anchor.
  if (verified.kind === 'event' && isEventSelfAnchor(value, verified)) return { ok: false, reason: 'event-self-anchoring' }
  let schemaValid: boolean
  try {
    schemaValid = options.validate('first-admission-record', value) === true
  } catch (cause) {
    return { ok: false, reason: 'record-schema-invalid', detail: `schema check threw: ${describe(cause)}` }
  }
  if (!schemaValid) return { ok: false, reason: 'record-schema-invalid' }
  // Re-check the members relied upon below, whatever the injected schema check accepted.
  if (!isObject(value) || Object.hasOwn(value, 'signature')) return { ok: false, reason: 'record-schema-invalid', detail: 'not a record object' }
  const { protocolVersion, admissionRecordId, organizationId, documentKind, signingHash, keyId, trustedAcceptedAt } = value
  const principal = asPrincipal(value['principal'])
  const acceptedBy = asPrincipal(value['acceptedBy'])
  if (
    protocolVersion !== '0.1' ||
    typeof admissionRecordId !== 'string' ||
    typeof organizationId !== 'string' ||
    !isDocumentKind(documentKind) ||
    typeof signingHash !== 'string' ||
    typeof keyId !== 'string' ||
    principal === undefined ||
    typeof trustedAcceptedAt !== 'string' ||
    acceptedBy === undefined ||
    acceptedBy.type !== 'service'
  ) {
    return { ok: false, reason: 'record-schema-invalid', detail: 'required member missing or malformed' }
  }
  const key = verified.key
  const mismatched = [
    organizationId !== key.organizationId ? 'organizationId' : undefined,
    documentKind !== verified.kind ? 'documentKind' : undefined,
    signingHash !== verified.signingHash ? 'signingHash' : undefined,
    keyId !== key.keyId ? 'keyId' : undefined,
    !samePrincipal(principal, key.principal) ? 'principal' : undefined,
  ].filter((x) => x !== undefined)
  if (mismatched.length > 0) return { ok: false, reason: 'record-binding-mismatch', detail: mismatched.join(', ') }
  if (authenticated.type !== 'service') return { ok: false, reason: 'log-authentication-failed', detail: 'the log authenticated a non-service Principal' }
  if (!samePrincipal(acceptedBy, authenticated)) return { ok: false, reason: 'record-binding-mismatch', detail: 'acceptedBy differs from the authenticated service' }
  const instant = parseTimestamp(trustedAcceptedAt)
  if (instant === undefined) return { ok: false, reason: 'malformed-trusted-time' }
  if (!withinInterval(instant, key)) return { ok: false, reason: 'trusted-time-outside-key-interval' }
  const record: FirstAdmissionRecord = {
    protocolVersion,
    admissionRecordId,
    organizationId,
    documentKind,
    signingHash,
    keyId,
    principal,
    trustedAcceptedAt,
    acceptedBy: { type: 'service', id: acceptedBy.id },
  }
  return { ok: true, record, trustedAcceptedAt: instant, service: { type: 'service', id: authenticated.id } }
}

const LOOKUP_FAILURES: Readonly<Record<Exclude<LookupOutcome['status'], 'found' | 'absent'>, AdmissionReason>> = {
  unavailable: 'log-unavailable',
  indeterminate: 'log-indeterminate',
  unauthenticated: 'log-authentication-failed',
  'integrity-failed': 'append-integrity-not-established',
}

const APPEND_FAILURES: Readonly<Record<Exclude<AppendOutcome['status'], 'committed' | 'existing'>, AdmissionReason>> = {
  conflict: 'record-conflict',
  unavailable: 'log-unavailable',
  indeterminate: 'log-indeterminate',
  unauthenticated: 'log-authentication-failed',
  'integrity-failed': 'append-integrity-not-established',
  'failed-commit': 'commit-failed',
}

function accepted(verified: Verified, bytes: Uint8Array | string, authenticated: Principal, source: AdmissionSource, options: VerifyOptions): Admitted | AdmissionFailure {
  const check = checkRecord(bytes, authenticated, verified, options)
  if (!check.ok) return admissionFailure(verified, check.reason, check.detail)
  return { ok: true, verified, record: check.record, recordBytes: bytes, trustedAcceptedAt: check.trustedAcceptedAt, authenticatedService: check.service, source }
}

/** Runs the lookup and turns a thrown error or an unknown status into a fail-closed outcome. */
async function lookup(log: Pick<AdmissionLog, 'lookup'>, key: ResolvedKey, signingHash: string): Promise<LookupOutcome | { readonly status: 'threw'; readonly detail: string }> {
  try {
    return await log.lookup(key.organizationId, signingHash)
  } catch (cause) {
    return { status: 'threw', detail: describe(cause) }
  }
}

/** Shared found/failed handling of a lookup; `undefined` means authoritative absence. */
function afterLookup(outcome: LookupOutcome | { readonly status: 'threw'; readonly detail: string }, verified: Verified, options: VerifyOptions): Admitted | AdmissionFailure | undefined {
  switch (outcome.status) {
    case 'found':
      if (asPrincipal(outcome.authenticatedService) === undefined) return admissionFailure(verified, 'log-authentication-failed', 'no authenticated service')
      return accepted(verified, outcome.record, outcome.authenticatedService, 'found', options)
    case 'absent':
      return undefined
    case 'threw':
      return admissionFailure(verified, 'log-unavailable', `lookup threw: ${outcome.detail}`)
    default: {
      const reason = (LOOKUP_FAILURES as Record<string, AdmissionReason | undefined>)[outcome.status]
      // An unknown status is a broken adapter: it cannot establish anything, so fail closed.
      return admissionFailure(verified, reason ?? 'log-indeterminate', reason === undefined ? `unknown lookup status ${String(outcome.status)}` : undefined)
    }
  }
}

/**
 * First admission of a newly presented Signed Document (§6.4):
 *
 * 1. the six cryptographic stages, with Registry evidence current for a new decision;
 * 2. lookup of `(organizationId, signingHash)`; a found record is validated and is an idempotent
 *    success (no append);
 * 3. only on authoritative absence: trusted acceptance context is obtained, its
 *    `trustedAcceptedAt` checked against the §2 profile and the key interval, and a candidate
 *    record prepared (preparing it admits nothing);
 * 4. append-or-return-existing; the record it returns, committed or concurrently existing, is
 *    validated in full. Validating only the candidate is not admission.
 *
 * Any failure after stage 6 is stage `admission` with wire code `AUTH_INVALID_SIGNATURE`.
 * Command freshness and signer authorization are separate, later checks.
 */
export async function admitFirst(kind: DocumentKind, input: Uint8Array | string, resolver: KeyResolver, options: FirstAdmissionOptions): Promise<AdmissionResult> {
  if (typeof options?.trustedContext !== 'function' || typeof options.log?.appendOrReturnExisting !== 'function') {
    throw new UsageError('admitFirst needs a log with lookup and appendOrReturnExisting, and a trustedContext() provider')
  }
  const result = verify(kind, input, resolver, options)
  if (!result.ok) return result
  const verified = result.verified
  const key = verified.key

  const found = afterLookup(await lookup(options.log, key, verified.signingHash), verified, options)
  if (found !== undefined) return found

  let context: TrustedAcceptance
  try {
    context = await options.trustedContext()
  } catch (cause) {
    return admissionFailure(verified, 'trusted-context-unavailable', describe(cause))
  }
  if (!isObject(context) || typeof context.trustedAcceptedAt !== 'string') return admissionFailure(verified, 'malformed-trusted-time')
  const instant = parseTimestamp(context.trustedAcceptedAt)
  if (instant === undefined) return admissionFailure(verified, 'malformed-trusted-time')
  // §6.4: a new document is not admitted because its signer backdated the protected time; the
  // trusted instant must itself fall in the key's half-open interval.
  if (!withinInterval(instant, key)) return admissionFailure(verified, 'trusted-time-outside-key-interval')
  const acceptedBy = asPrincipal(context.acceptedBy)
  if (acceptedBy === undefined || acceptedBy.type !== 'service' || typeof context.admissionRecordId !== 'string') {
    return admissionFailure(verified, 'record-schema-invalid', 'trusted context does not make a valid candidate')
  }
  const candidate: FirstAdmissionRecord = {
    protocolVersion: '0.1',
    admissionRecordId: context.admissionRecordId,
    organizationId: key.organizationId,
    documentKind: verified.kind,
    signingHash: verified.signingHash,
    keyId: key.keyId,
    principal: { type: key.principal.type, id: key.principal.id },
    trustedAcceptedAt: context.trustedAcceptedAt,
    acceptedBy: { type: 'service', id: acceptedBy.id },
  }
  let candidateValid: boolean
  try {
    candidateValid = options.validate('first-admission-record', candidate as unknown as JsonValue) === true
  } catch (cause) {
    return admissionFailure(verified, 'record-schema-invalid', `schema check threw: ${describe(cause)}`)
  }
  if (!candidateValid) return admissionFailure(verified, 'record-schema-invalid', 'candidate record')

  let appended: AppendOutcome
  try {
    appended = await options.log.appendOrReturnExisting(candidate)
  } catch (cause) {
    // Whether the append happened is unknown.
    return admissionFailure(verified, 'log-indeterminate', `append threw: ${describe(cause)}`)
  }
  switch (appended.status) {
    case 'committed':
    case 'existing':
      if (asPrincipal(appended.authenticatedService) === undefined) return admissionFailure(verified, 'log-authentication-failed', 'no authenticated service')
      return accepted(verified, appended.record, appended.authenticatedService, appended.status, options)
    default: {
      const reason = (APPEND_FAILURES as Record<string, AdmissionReason | undefined>)[appended.status]
      return admissionFailure(verified, reason ?? 'log-indeterminate', reason === undefined ? `unknown append status ${String(appended.status)}` : undefined)
    }
  }
}

/**
 * Historical replay of an already admitted Signed Document (§6.4): the six stages again, with
 * authoritative historical Registry evidence carrying the complete retained validity history,
 * then a required, validated First-Admission Record. Replay never issues trusted context, never
 * appends, and a missing record is a failure (`record-missing`), not a new admission.
 *
 * A later expiry or revocation does not by itself invalidate the document: what counts is that
 * both the protected time (stage 4) and `trustedAcceptedAt` lie in the key's interval.
 */
export async function replayHistorical(kind: DocumentKind, input: Uint8Array | string, resolver: KeyResolver, options: HistoricalReplayOptions): Promise<AdmissionResult> {
  if (typeof options?.log?.lookup !== 'function') throw new UsageError('replayHistorical needs a log with lookup')
  const result = verify(kind, input, resolver, options)
  if (!result.ok) return result
  const verified = result.verified
  const found = afterLookup(await lookup(options.log, verified.key, verified.signingHash), verified, options)
  return found ?? admissionFailure(verified, 'record-missing')
}

/** Options of {@link InMemoryAdmissionLog}. */
export interface InMemoryAdmissionLogOptions {
  /** The service this log client is authenticated as; the only `acceptedBy` it writes. */
  readonly service: ServicePrincipal
  /** Organizations this service may write for; any when omitted. */
  readonly organizationIds?: readonly string[]
}

function logKey(organizationId: string, signingHash: string): string {
  // Neither part may contain a line feed (absolute URI, sha256 form), so the join is unambiguous.
  return `${organizationId}\n${signingHash}`
}

/**
 * An in-process {@link AdmissionLog} for tests and single-process tools: records keyed by
 * `(organizationId, signingHash)`, one atomic append-or-return-existing (the method does all its
 * work synchronously, so no other call interleaves), at most one record per key, and each
 * `admissionRecordId` under one key only. Records are stored as their JCS bytes and returned as
 * stored, so callers validate the stored record, not their candidate.
 */
export class InMemoryAdmissionLog implements AdmissionLog {
  readonly #service: ServicePrincipal
  readonly #organizations: ReadonlySet<string> | undefined
  readonly #records = new Map<string, { readonly bytes: Uint8Array; readonly record: FirstAdmissionRecord }>()
  readonly #recordIds = new Map<string, string>()

  constructor(options: InMemoryAdmissionLogOptions) {
    if (options?.service?.type !== 'service' || typeof options.service.id !== 'string') throw new UsageError('InMemoryAdmissionLog needs a service Principal')
    this.#service = { type: 'service', id: options.service.id }
    this.#organizations = options.organizationIds === undefined ? undefined : new Set(options.organizationIds)
  }

  /** Number of records held. */
  get size(): number {
    return this.#records.size
  }

  /** {@inheritDoc AdmissionLog.lookup} */
  lookup(organizationId: string, signingHash: string): LookupOutcome {
    const entry = this.#records.get(logKey(organizationId, signingHash))
    return entry === undefined ? { status: 'absent' } : { status: 'found', record: entry.bytes.slice(), authenticatedService: this.#service }
  }

  /** {@inheritDoc AdmissionLog.appendOrReturnExisting} */
  appendOrReturnExisting(candidate: FirstAdmissionRecord): AppendOutcome {
    if (!samePrincipal(candidate.acceptedBy, this.#service)) return { status: 'unauthenticated' }
    if (this.#organizations !== undefined && !this.#organizations.has(candidate.organizationId)) return { status: 'unauthenticated' }
    const key = logKey(candidate.organizationId, candidate.signingHash)
    const existing = this.#records.get(key)
    if (existing !== undefined) {
      const same = existing.record.documentKind === candidate.documentKind && existing.record.keyId === candidate.keyId && samePrincipal(existing.record.principal, candidate.principal)
      return same ? { status: 'existing', record: existing.bytes.slice(), authenticatedService: this.#service } : { status: 'conflict' }
    }
    const owner = this.#recordIds.get(candidate.admissionRecordId)
    if (owner !== undefined && owner !== key) return { status: 'conflict' }
    const record: FirstAdmissionRecord = {
      protocolVersion: '0.1',
      admissionRecordId: candidate.admissionRecordId,
      organizationId: candidate.organizationId,
      documentKind: candidate.documentKind,
      signingHash: candidate.signingHash,
      keyId: candidate.keyId,
      principal: { type: candidate.principal.type, id: candidate.principal.id },
      trustedAcceptedAt: candidate.trustedAcceptedAt,
      acceptedBy: { type: 'service', id: candidate.acceptedBy.id },
    }
    const bytes = canonicalize(record)
    if (!bytes.ok) return { status: 'failed-commit' }
    this.#records.set(key, { bytes: bytes.bytes, record })
    this.#recordIds.set(record.admissionRecordId, key)
    return { status: 'committed', record: bytes.bytes.slice(), authenticatedService: this.#service }
  }
}
