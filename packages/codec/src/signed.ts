/**
 * Signed Documents (§6.4): the nine verification profiles, six-stage verification that stops at
 * the first failing stage, signing, and the signing hash.
 *
 * ## How the schema check (stage 2) gets here
 *
 * Stage 2 needs the normative schemas, and those live in `@weft/validators`, which depends on
 * this package (`@weft/spec <- @weft/codec <- @weft/validators`). Importing the validators here
 * would turn that arrow into a cycle, so the schema check is an **injected dependency**: every
 * entry point takes a {@link SchemaCheck} (`validate(kind, value) => boolean`), and
 * `@weft/validators/signed` exports a ready one (`schemaCheckForKind`). The rest of verification (the
 * profile rules, key resolution, JCS, Ed25519) stays here, beside the primitives it uses, so there
 * is one implementation of §6.4 whatever the schema source.
 *
 * ```ts
 * import { createVerifier } from '@weft/codec'
 * import { schemaCheckForKind } from '@weft/validators/signed'
 * const verifier = createVerifier({ validate: schemaCheckForKind })
 * const result = verifier.verify('command', frameBytes, registry)
 * ```
 *
 * A lax injected check cannot weaken the profile: the parts of the envelope this module relies on
 * (a `signature` object with algorithm `Ed25519` and string members, the protected time in the
 * §2 timestamp profile, the expected-signer field) are re-checked here and classified at stage 2
 * as well.
 *
 * Failures are values, never exceptions: a {@link VerifyFailure} carries the first failing stage
 * and a stable reason (protected diagnostics, §6.4) plus a {@link ProtocolError} whose message is
 * one generic text per wire code, so the wire never tells which check failed.
 * @module
 */
import type { AdmissionDocumentKind } from '@weft/spec'
import { encodeBase64url, decodeBase64url, sha256Tagged } from './bytes.js'
import { checkSignatureEncoding, precheckSignatureEncoding, verifyEd25519, verifyEd25519Async, type AsyncEd25519KeyPair, type Ed25519KeyPair } from './ed25519.js'
import { ProtocolError, UsageError } from './errors.js'
import type { ErrorCode } from './gen/error-codes.js'
import { canonicalize, canonicalizeOrThrow, type JcsResult } from './jcs.js'
import { parseStrictJson, type JsonValue, type StrictJsonOptions } from './json.js'
import type { KeyResolver, ResolvedKey } from './registry.js'
import { parseTimestamp, withinInterval, type ProtocolTimestamp } from './timestamp.js'

/** The nine kinds of Signed Document of §6.4, named as in `first-admission-record.documentKind`. */
export type DocumentKind = AdmissionDocumentKind

/**
 * Every {@link DocumentKind}, in the order of the §6.4 profile table. Kept here as a runtime list
 * (importing @weft/spec at run time would load every TypeBox schema); the type is the spec's, and
 * the check below fails to compile if the two ever differ.
 */
export const DOCUMENT_KINDS = Object.freeze([
  'agent-card',
  'approval',
  'artifact',
  'command',
  'context-package',
  'event',
  'evidence',
  'extension-profile',
  'group-snapshot',
] as const satisfies readonly DocumentKind[])

type MissingKinds = Exclude<DocumentKind, (typeof DOCUMENT_KINDS)[number]>
const everyKindListed: [MissingKinds] extends [never] ? true : MissingKinds = true
void everyKindListed

/** Is `value` one of the nine {@link DocumentKind}s? */
export function isDocumentKind(value: unknown): value is DocumentKind {
  return typeof value === 'string' && (DOCUMENT_KINDS as readonly string[]).includes(value)
}

/**
 * The six cryptographic verification stages of §6.4, in order. `complete` is not a stage; it is
 * what a successful {@link verify} means.
 */
export type Stage = 'parse' | 'schema' | 'signature-envelope' | 'key-resolution' | 'canonicalization' | 'signature'

/** The stages in the order {@link verify} runs them (§6.4 numbered list). */
export const STAGES: readonly Stage[] = Object.freeze(['parse', 'schema', 'signature-envelope', 'key-resolution', 'canonicalization', 'signature'] as const)

/**
 * How a profile names its expected signer (§6.4 table):
 * - `principal-object`: the exact Principal object at `pointer` (`{ type, id }`);
 * - `agent-id`: the Agent whose ID is the string at `idPointer`;
 * - `service-principal`: any Organization service Principal (Agent Cards only; the issuer's
 *   authorization for `organizationId` is a later, separate check).
 */
export type ExpectedSignerRule = { readonly rule: 'principal-object'; readonly pointer: string } | { readonly rule: 'agent-id'; readonly idPointer: string } | { readonly rule: 'service-principal' }

/** One row of the §6.4 profile table. */
export interface SignedProfile {
  /** The document kind (also the profile ID of the cryptography bundle). */
  readonly kind: DocumentKind
  /** The normative schema file, e.g. `command.schema.json`. */
  readonly schemaFile: string
  /** JSON Pointer of the protected signed-time field, e.g. `/issuedAt`. */
  readonly protectedTimePointer: string
  /** Who must have signed. */
  readonly expectedSigner: ExpectedSignerRule
}

function profile(kind: DocumentKind, time: string, expectedSigner: ExpectedSignerRule): SignedProfile {
  return Object.freeze({ kind, schemaFile: `${kind}.schema.json`, protectedTimePointer: `/${time}`, expectedSigner: Object.freeze(expectedSigner) })
}

const principalAt = (field: string): ExpectedSignerRule => ({ rule: 'principal-object', pointer: `/${field}` })

/**
 * The Signed Document Verification Profile table of §6.4: per kind, the protected signed-time
 * field and the expected-signer rule.
 */
export const SIGNED_PROFILES: Readonly<Record<DocumentKind, SignedProfile>> = Object.freeze({
  'agent-card': profile('agent-card', 'issuedAt', { rule: 'service-principal' }),
  approval: profile('approval', 'occurredAt', principalAt('approver')),
  artifact: profile('artifact', 'createdAt', { rule: 'agent-id', idPointer: '/producer/agentId' }),
  command: profile('command', 'issuedAt', principalAt('actor')),
  'context-package': profile('context-package', 'generatedAt', principalAt('generatedBy')),
  event: profile('event', 'occurredAt', principalAt('acceptedBy')),
  evidence: profile('evidence', 'createdAt', principalAt('generatedBy')),
  'extension-profile': profile('extension-profile', 'approvedAt', principalAt('approvedBy')),
  'group-snapshot': profile('group-snapshot', 'createdAt', principalAt('createdBy')),
})

/** A Principal as the protocol's common actor shape (`{ type, id }`). */
export interface Principal {
  readonly type: 'agent' | 'human' | 'service'
  readonly id: string
}

/**
 * The signer a document names under its profile (§6.4): an exact Principal, or, for an Agent
 * Card, "any service Principal".
 */
export type ExpectedSigner = { readonly exact: Principal } | { readonly anyService: true }

/** The top-level signature envelope of a Signed Document (`common.schema.json#/$defs/signature`). */
export interface SignatureEnvelope {
  readonly algorithm: 'Ed25519'
  readonly keyId: string
  /** Byte-identical to the protected signed time (§6.4). */
  readonly createdAt: string
  /** Canonical unpadded base64url of the 64-byte Ed25519 signature. */
  readonly value: string
}

/**
 * The schema check of stage 2, injected because the validators depend on this package (see the
 * module comment). `kind` is a {@link DocumentKind}, or `first-admission-record` when the
 * admission layer validates a record. Must return `true` only for a value valid against the
 * complete normative schema of that kind, formats asserted (§2).
 */
export type SchemaCheck = (kind: DocumentKind | 'first-admission-record', value: JsonValue) => boolean

/** What {@link verify} needs besides the document and the key resolver. */
export interface VerifyOptions {
  /** The stage-2 schema check; `schemaCheckForKind` of `@weft/validators/signed` is the ready one. */
  readonly validate: SchemaCheck
  /** Limits of the stage-1 strict parser (defaults of `parseStrictJson`). */
  readonly json?: StrictJsonOptions
  /**
   * Evaluate the one expensive stage-3 rule, the prime-order test `[L]R = I` on the signature's
   * `R`, before key resolution (`true`) instead of lazily (default `false`). Results are the same
   * either way (see {@link verify}); `true` only guarantees that the resolver is never consulted
   * for a document whose `R` fails stage 3, at about a third more time per verification.
   */
  readonly strictStageOrder?: boolean
}

/** A Signed Document that passed all six stages (§6.4 "complete"). */
export interface Verified {
  readonly kind: DocumentKind
  /** The parsed document, signature included. */
  readonly document: { readonly [name: string]: JsonValue }
  /** The exact stage-5 JCS bytes the signature covers. */
  readonly signingBytes: Uint8Array
  /** `sha256:` + hex SHA-256 of {@link signingBytes} (§6.4 signing hash). */
  readonly signingHash: string
  /** The Registry key selected at stage 4; its `organizationId`, `keyId` and `principal` bind admission records. */
  readonly key: ResolvedKey
  /** The protected signed time, text kept as received. */
  readonly protectedTime: ProtocolTimestamp
  /** The received `signature.value` text. */
  readonly signatureValue: string
}

/**
 * A verification that stopped at `stage`. `reason` is a stable kebab-case diagnostic and `detail`
 * free text from the failing check; both are protected audit data (§6.4) and must not reach the
 * untrusted caller. `error` is what may: its code is the §6.4/§19 wire code of the stage and its
 * message the one generic text of that code.
 */
export interface VerifyFailure {
  readonly ok: false
  readonly stage: Stage
  readonly reason: string
  readonly detail?: string
  readonly error: ProtocolError
}

/** The result of {@link verify}. */
export type VerifyResult = { readonly ok: true; readonly verified: Verified } | VerifyFailure

/** The wire code of each stage (§6.4 last paragraphs, §19). */
export const STAGE_WIRE_CODES: Readonly<Record<Stage, ErrorCode>> = Object.freeze({
  parse: 'PROTOCOL_VIOLATION',
  schema: 'SCHEMA_VALIDATION_FAILED',
  'signature-envelope': 'AUTH_INVALID_SIGNATURE',
  'key-resolution': 'AUTH_INVALID_SIGNATURE',
  canonicalization: 'PROTOCOL_VIOLATION',
  signature: 'AUTH_INVALID_SIGNATURE',
})

/**
 * The one wire message per code used for signed-document failures. It deliberately says nothing
 * about which check failed (§6.4: a wire response MUST NOT reveal which key-resolution,
 * admission or cryptographic check failed).
 */
export const GENERIC_WIRE_MESSAGES: Readonly<Record<'PROTOCOL_VIOLATION' | 'SCHEMA_VALIDATION_FAILED' | 'AUTH_INVALID_SIGNATURE', string>> = Object.freeze({
  PROTOCOL_VIOLATION: 'The document is not acceptable protocol JSON.',
  SCHEMA_VALIDATION_FAILED: 'The document does not conform to its schema.',
  AUTH_INVALID_SIGNATURE: 'The signed document could not be verified.',
})

/**
 * The wire error for a failure with code `code`: the generic message, and the protected
 * diagnostic kept only as `cause` (never serialized by `toWire`).
 * @internal exported for the admission layer of this package.
 */
export function genericError(code: 'PROTOCOL_VIOLATION' | 'SCHEMA_VALIDATION_FAILED' | 'AUTH_INVALID_SIGNATURE', diagnostic: { stage: string; reason: string; detail?: string }): ProtocolError {
  return new ProtocolError(code, GENERIC_WIRE_MESSAGES[code], { cause: diagnostic })
}

function fail(stage: Stage, reason: string, detail?: string): VerifyFailure {
  const code = STAGE_WIRE_CODES[stage] as keyof typeof GENERIC_WIRE_MESSAGES
  const diagnostic = detail === undefined ? { stage, reason } : { stage, reason, detail }
  const error = genericError(code, diagnostic)
  return detail === undefined ? { ok: false, stage, reason, error } : { ok: false, stage, reason, detail, error }
}

type JsonObject = { readonly [name: string]: JsonValue }

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The value at an RFC 6901 pointer, own members only; `undefined` when absent. */
function at(document: unknown, pointer: string): unknown {
  let node: unknown = document
  for (const raw of pointer.slice(1).split('/')) {
    if (!isObject(node)) return undefined
    const name = raw.includes('~') ? raw.replace(/~1/g, '/').replace(/~0/g, '~') : raw
    if (!Object.hasOwn(node, name)) return undefined
    node = node[name]
  }
  return node
}

const PRINCIPAL_TYPES: ReadonlySet<string> = new Set(['agent', 'human', 'service'])

function asPrincipal(value: unknown): Principal | undefined {
  if (!isObject(value)) return undefined
  const { type, id } = value
  return typeof type === 'string' && PRINCIPAL_TYPES.has(type) && typeof id === 'string' ? { type: type as Principal['type'], id } : undefined
}

/**
 * The signer `document` names under the profile of `kind` (§6.4 table), or `undefined` when the
 * field is missing or malformed.
 */
export function expectedSignerOf(kind: DocumentKind, document: unknown): ExpectedSigner | undefined {
  const rule = SIGNED_PROFILES[kind].expectedSigner
  switch (rule.rule) {
    case 'service-principal':
      return { anyService: true }
    case 'agent-id': {
      const id = at(document, rule.idPointer)
      return typeof id === 'string' ? { exact: { type: 'agent', id } } : undefined
    }
    case 'principal-object': {
      const principal = asPrincipal(at(document, rule.pointer))
      return principal === undefined ? undefined : { exact: principal }
    }
  }
}

function profileOf(kind: DocumentKind): SignedProfile {
  if (!isDocumentKind(kind)) throw new UsageError(`unknown signed document kind ${JSON.stringify(kind)}; expected one of ${DOCUMENT_KINDS.join(', ')}`)
  return SIGNED_PROFILES[kind]
}

/** Shallow copy of `document` without exactly its top-level `signature` member (§6.4). */
function withoutSignature(document: JsonObject): JsonObject {
  if (!Object.hasOwn(document, 'signature')) return document
  const { signature: _omitted, ...rest } = document
  return rest
}

/**
 * The stage-5 signing input of a document: the RFC 8785 bytes of the object with exactly its
 * top-level `signature` member omitted (nested `signature` members stay covered, §6.4). A value
 * outside the I-JSON data model is a failed {@link JcsResult}.
 */
export function signingInput(document: object): JcsResult {
  return canonicalize(isObject(document) ? withoutSignature(document) : document)
}

/**
 * The §6.4 signing hash of a document: `sha256:` + lower-case hex SHA-256 of its
 * {@link signingInput}. Also the Admission Log key with the Organization ID.
 * @throws ProtocolError `PROTOCOL_VIOLATION` when the document cannot enter the JCS data model.
 */
export function signingHash(document: object): string {
  return sha256Tagged(canonicalizeOrThrow(isObject(document) ? withoutSignature(document) : document))
}

/** Exact equality of two Principals (type and identifier compared byte for byte, §2). */
export function samePrincipal(a: Principal, b: Principal): boolean {
  return a.type === b.type && a.id === b.id
}

/**
 * Runs the six stages of §6.4 in order on the received bytes and stops at the first failure:
 *
 * 1. `parse`: strict UTF-8 JSON (no BOM, no trailing data, no duplicate decoded member);
 * 2. `schema`: the injected normative schema check, then this module's own envelope re-check;
 * 3. `signature-envelope`: protected time in uppercase-`Z` UTC and byte-identical to
 *    `signature.createdAt`, expected-signer selection, canonical base64url of a 64-byte
 *    signature whose `R` is a canonical point with `[L]R = I` (see below) and `S < L`;
 * 4. `key-resolution`: the key through `resolver` (which validates the whole Organization's
 *    evidence), bound to the expected signer, valid at the protected time (half-open interval);
 * 5. `canonicalization`: JCS of the document without its top-level `signature`;
 * 6. `signature`: pure Ed25519 over those bytes.
 *
 * Stages 1 and 5 fail as `PROTOCOL_VIOLATION`, stage 2 as `SCHEMA_VALIDATION_FAILED`, stages 3,
 * 4 and 6 as `AUTH_INVALID_SIGNATURE`. No admission state is consulted (see `admission.ts`).
 *
 * The stage numbers are semantic, not function boundaries (§6.4). One stage-3 rule is evaluated
 * lazily unless {@link VerifyOptions.strictStageOrder} is set: whether `R` lies in the
 * prime-order subgroup (the byte-level rules on `R` and `S < L` still run in stage 3). Any later
 * failure first runs that test and reports stage 3 when it fails, so every rejection carries
 * the same stage and reason as strict order; and a signature the pure-Ed25519 equation accepts
 * under a prime-order key has a canonical prime-order `R` (see `ed25519.ts`), so acceptance
 * needs no separate test. This keeps verification near the cost of the equation itself.
 * @param kind - Which profile applies; an unknown kind is a {@link UsageError}.
 * @param input - The document exactly as received (bytes, or text already decoded).
 * @param resolver - The key-resolution seam (a `Registry` built from Organization evidence).
 * @param options - The injected schema check, parser limits and stage order.
 */
export function verify(kind: DocumentKind, input: Uint8Array | string, resolver: KeyResolver, options: VerifyOptions): VerifyResult {
  const prepared = prepare(kind, input, resolver, options)
  if (!prepared.ok) return prepared
  // Stage 6: pure Ed25519. Acceptance under the prime-order key implies the deferred R rules.
  let valid: boolean
  try {
    valid = verifyEd25519(prepared.key.publicKey, prepared.signingBytes, prepared.signatureBytes)
  } catch (cause) {
    return later(prepared, 'signature', 'ed25519-verifier-threw', String(cause))
  }
  return conclude(prepared, valid)
}

/**
 * {@link verify} with stage 6 on the libuv threadpool (by WebCrypto in a browser, see
 * `verifyEd25519Async`): stages 1–5 run before it returns (the
 * document is parsed, checked and its key resolved now, as {@link verify} would), and the Ed25519
 * equation runs on another thread while the caller goes on. Several verifications in flight use
 * several cores. Resolves to exactly what {@link verify} returns for the same input and resolver;
 * never rejects.
 */
export function verifyAsync(kind: DocumentKind, input: Uint8Array | string, resolver: KeyResolver, options: VerifyOptions): Promise<VerifyResult> {
  const prepared = prepare(kind, input, resolver, options)
  if (!prepared.ok) return Promise.resolve(prepared)
  let pending: Promise<boolean>
  try {
    pending = verifyEd25519Async(prepared.key.publicKey, prepared.signingBytes, prepared.signatureBytes)
  } catch (cause) {
    return Promise.resolve(later(prepared, 'signature', 'ed25519-verifier-threw', String(cause)))
  }
  return pending.then((valid) => conclude(prepared, valid))
}

/** A document that passed stages 1–5: what stage 6 checks, and what a pass reports. */
interface Prepared {
  readonly ok: true
  readonly kind: DocumentKind
  readonly document: JsonObject
  readonly signingBytes: Uint8Array
  readonly signatureBytes: Uint8Array
  readonly key: ResolvedKey
  readonly protectedTime: ProtocolTimestamp
  readonly signatureValue: string
  /** {@link VerifyOptions.strictStageOrder}: whether stage 3 already ran its subgroup test. */
  readonly strict: boolean
}

/** The part of a stage-3 failure check a later failure needs: the signature bytes and whether the full test already ran. */
type SignatureBytes = Pick<Prepared, 'signatureBytes' | 'strict'>

/** A failure after stage 3, reported only once the deferred stage-3 test has passed (see {@link verify}). */
function later(signature: SignatureBytes, stage: Stage, reason: string, detail?: string): VerifyFailure {
  if (!signature.strict) {
    const full = checkSignatureEncoding(signature.signatureBytes)
    if (!full.ok) return fail('signature-envelope', 'signature-encoding-invalid', full.reason)
  }
  return fail(stage, reason, detail)
}

/** Stage 6's outcome as the result of {@link verify}. */
function conclude(p: Prepared, valid: boolean): VerifyResult {
  if (!valid) return later(p, 'signature', 'signature-mismatch')
  const { kind, document, signingBytes, key, protectedTime, signatureValue } = p
  return { ok: true, verified: { kind, document, signingBytes, signingHash: sha256Tagged(signingBytes), key, protectedTime, signatureValue } }
}

/** Stages 1–5 of {@link verify}, stopping at the first failure. */
function prepare(kind: DocumentKind, input: Uint8Array | string, resolver: KeyResolver, options: VerifyOptions): Prepared | VerifyFailure {
  const profile = profileOf(kind)

  // Stage 1: exactly one strict JSON value.
  const parsed = parseStrictJson(input, options.json)
  if (!parsed.ok) return fail('parse', `json-${parsed.reason}`, parsed.message)
  const document = parsed.value

  // Stage 2: the normative schema (injected), then the envelope fields this module relies on.
  let schemaValid: boolean
  try {
    schemaValid = options.validate(kind, document) === true
  } catch (cause) {
    return fail('schema', 'schema-check-threw', String(cause))
  }
  if (!schemaValid) return fail('schema', 'schema-invalid')
  if (!isObject(document)) return fail('schema', 'not-an-object')
  const signature = Object.hasOwn(document, 'signature') ? document['signature'] : undefined
  if (!isObject(signature)) return fail('schema', 'signature-envelope-missing')
  const { algorithm, keyId, createdAt, value } = signature
  if (algorithm !== 'Ed25519') return fail('schema', 'unsupported-algorithm')
  if (typeof keyId !== 'string' || typeof createdAt !== 'string' || typeof value !== 'string') return fail('schema', 'signature-envelope-malformed')
  const timeText = at(document, profile.protectedTimePointer)
  if (typeof timeText !== 'string') return fail('schema', 'protected-time-missing')
  const protectedTime = parseTimestamp(timeText)
  // §6.4: a base-profile timestamp failure of a Schema-declared field is stage 2.
  if (protectedTime === undefined) return fail('schema', 'protected-time-outside-timestamp-profile')
  if (parseTimestamp(createdAt) === undefined) return fail('schema', 'created-at-outside-timestamp-profile')
  const signer = expectedSignerOf(kind, document)
  if (signer === undefined) return fail('schema', 'expected-signer-field-malformed')

  // Stage 3: the profile's binding of the (unsigned) envelope to the protected content.
  if (!protectedTime.utcZ) return fail('signature-envelope', 'protected-time-not-utc-z')
  if (createdAt !== timeText) return fail('signature-envelope', 'created-at-mismatch')
  const signatureBytes = decodeBase64url(value)
  if (signatureBytes === undefined) return fail('signature-envelope', 'signature-not-canonical-base64url')
  if (signatureBytes.length !== 64) return fail('signature-envelope', 'signature-wrong-length', `${signatureBytes.length} bytes`)
  const strict = options.strictStageOrder === true
  const encoding = strict ? checkSignatureEncoding(signatureBytes) : precheckSignatureEncoding(signatureBytes)
  if (!encoding.ok) return fail('signature-envelope', 'signature-encoding-invalid', encoding.reason)
  const sig: SignatureBytes = { signatureBytes, strict }

  // Stage 4: the pinned key under the expected signer, valid at the protected time.
  let resolution: ReturnType<KeyResolver['resolve']>
  try {
    resolution = resolver.resolve(keyId)
  } catch (cause) {
    return later(sig, 'key-resolution', 'resolver-threw', String(cause))
  }
  if (!resolution.ok) return later(sig, 'key-resolution', 'key-unresolved', resolution.reason)
  const key = resolution.key
  if (key.keyId !== keyId) return later(sig, 'key-resolution', 'resolved-other-key-id')
  if ('exact' in signer) {
    if (!samePrincipal(key.principal, signer.exact)) return later(sig, 'key-resolution', 'key-bound-to-other-principal')
  } else if (key.principal.type !== 'service') {
    return later(sig, 'key-resolution', 'agent-card-signer-not-service')
  }
  if (!withinInterval(protectedTime, key)) return later(sig, 'key-resolution', 'key-not-valid-at-protected-time')

  // Stage 5: exactly the top-level signature omitted, then RFC 8785.
  const jcs = canonicalize(withoutSignature(document))
  if (!jcs.ok) return later(sig, 'canonicalization', `jcs-${jcs.reason}`, jcs.path)
  return { ok: true, kind, document, signingBytes: jcs.bytes, signatureBytes, key, protectedTime, signatureValue: value, strict }
}

/**
 * {@link verify}, returning the verified document or throwing its {@link ProtocolError}
 * (generic wire message; the stage and reason are on `error.cause`).
 * @throws ProtocolError on any failing stage.
 */
export function verifyOrThrow(kind: DocumentKind, input: Uint8Array | string, resolver: KeyResolver, options: VerifyOptions): Verified {
  const result = verify(kind, input, resolver, options)
  if (!result.ok) throw result.error
  return result.verified
}

/** {@link verify} with its options bound once; see {@link createVerifier}. */
export interface SignedVerifier {
  /** {@link verify} with the bound options. */
  verify(kind: DocumentKind, input: Uint8Array | string, resolver: KeyResolver): VerifyResult
  /** {@link verifyOrThrow} with the bound options. */
  verifyOrThrow(kind: DocumentKind, input: Uint8Array | string, resolver: KeyResolver): Verified
  /** {@link verifyAsync} with the bound options: stages 1–5 now, the Ed25519 equation on the threadpool. */
  verifyAsync(kind: DocumentKind, input: Uint8Array | string, resolver: KeyResolver): Promise<VerifyResult>
  /** The bound options (the admission layer reuses the schema check for records). */
  readonly options: VerifyOptions
}

/**
 * Binds the injected schema check (and parser limits) once.
 * @example
 * ```ts
 * const verifier = createVerifier({ validate: schemaCheckForKind }) // from @weft/validators/signed
 * const result = verifier.verify('event', bytes, Registry.fromEvidence(evidence))
 * if (!result.ok) reply(result.error.toWire(now)), audit(result.stage, result.reason)
 * ```
 */
export function createVerifier(options: VerifyOptions): SignedVerifier {
  if (typeof options?.validate !== 'function') throw new UsageError('createVerifier needs a validate(kind, value) schema check (e.g. schemaCheckForKind of @weft/validators)')
  const bound = Object.freeze({ ...options })
  return Object.freeze({
    options: bound,
    verify: (kind: DocumentKind, input: Uint8Array | string, resolver: KeyResolver) => verify(kind, input, resolver, bound),
    verifyOrThrow: (kind: DocumentKind, input: Uint8Array | string, resolver: KeyResolver) => verifyOrThrow(kind, input, resolver, bound),
    verifyAsync: (kind: DocumentKind, input: Uint8Array | string, resolver: KeyResolver) => verifyAsync(kind, input, resolver, bound),
  })
}

/** A signing key: the Registry key ID and the key pair it binds. */
export interface SigningKey {
  readonly keyId: string
  readonly pair: Ed25519KeyPair
}

/** A signing key whose pair signs asynchronously (WebCrypto, a token, a remote signer); see {@link signAsync}. */
export interface AsyncSigningKey {
  readonly keyId: string
  readonly pair: AsyncEd25519KeyPair
}

/**
 * Signs `document` under the profile of `kind` (§6.4): `signature.createdAt` is the protected
 * signed time copied byte for byte, the signature covers the JCS form of the document without
 * its top-level `signature` (an existing one is replaced), and the envelope is appended last.
 *
 * Signing does not check the schema or the Registry; verify the result to prove both.
 * @throws UsageError when `kind` is unknown, the protected time is missing, outside the §2
 * profile, or not uppercase-`Z` UTC (such a signature could never verify).
 * @throws ProtocolError `PROTOCOL_VIOLATION` when the document cannot enter the JCS data model.
 * @example
 * ```ts
 * const signed = sign('command', { ...command, issuedAt: '2026-07-15T00:00:00Z' }, { keyId, pair: keyPairFromSeed(seed) })
 * ```
 */
export function sign<T extends object>(kind: DocumentKind, document: T, key: SigningKey): Omit<T, 'signature'> & { signature: SignatureEnvelope } {
  const { unsigned, time, bytes } = prepareSigning(kind, document, 'sign')
  return withSignature(unsigned as Omit<T, 'signature'>, key.keyId, time, key.pair.sign(bytes))
}

/**
 * {@link sign} with a key that signs asynchronously: a WebCrypto `CryptoKey` that never leaves the
 * browser's key store (see `webCryptoKeyPair`), a hardware token, a remote signer. Same document,
 * same checks, same bytes signed; a synchronous {@link SigningKey} works too.
 * @throws UsageError and ProtocolError as {@link sign} does, synchronously, before anything is signed.
 * @example
 * ```ts
 * const pair = await webCryptoKeyPair(seed) // non-extractable
 * const signed = await signAsync('command', command, { keyId, pair })
 * ```
 */
export function signAsync<T extends object>(kind: DocumentKind, document: T, key: SigningKey | AsyncSigningKey): Promise<Omit<T, 'signature'> & { signature: SignatureEnvelope }> {
  const { unsigned, time, bytes } = prepareSigning(kind, document, 'signAsync')
  return Promise.resolve(key.pair.sign(bytes)).then((value) => withSignature(unsigned as Omit<T, 'signature'>, key.keyId, time, value))
}

/** The checks shared by {@link sign} and {@link signAsync}, and the JCS bytes they sign. */
function prepareSigning(kind: DocumentKind, document: object, caller: string): { unsigned: object; time: string; bytes: Uint8Array } {
  const profile = profileOf(kind)
  if (!isObject(document)) throw new UsageError(`${caller}: the document must be a JSON object`)
  const time = at(document, profile.protectedTimePointer)
  if (typeof time !== 'string') throw new UsageError(`${caller}: ${kind} has no protected signed time at ${profile.protectedTimePointer}`)
  const parsed = parseTimestamp(time)
  if (parsed === undefined || !parsed.utcZ) {
    throw new UsageError(`${caller}: ${profile.protectedTimePointer} must be an RFC 3339 UTC timestamp ending in uppercase Z (§6.4), got ${JSON.stringify(time)}`)
  }
  const unsigned = withoutSignature(document)
  return { unsigned, time, bytes: canonicalizeOrThrow(unsigned) }
}

function withSignature<U extends object>(unsigned: U, keyId: string, time: string, signatureBytes: Uint8Array): U & { signature: SignatureEnvelope } {
  const signature: SignatureEnvelope = { algorithm: 'Ed25519', keyId, createdAt: time, value: encodeBase64url(signatureBytes) }
  return { ...unsigned, signature }
}
