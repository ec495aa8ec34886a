/**
 * Ingress steps 1–3 (ARCHITECTURE): a Command's text or bytes within the size limit, then the six
 * §6.4 stages (strict parse, schema, signature) on the signed path, or the Command schema alone on
 * the trusted in-process path. The result, a {@link Decoded}, carries the Command and its §6.4
 * signing hash; the admission checks (`./checks.ts`) take it from there.
 * @module
 */
import { createVerifier, GENERIC_WIRE_MESSAGES, signingHash, type KeyResolver, type SignedVerifier, type VerifyResult } from '@weft/codec'
import type { Command } from '@weft/spec'
import { validators } from '@weft/validators'
import { schemaCheckForKind } from '@weft/validators/signed'
import { refuse } from './refusal.js'

/** A Command that passed the signature stages (or the trusted path) with its §6.4 signing hash (which the trusted path computes on first read). */
export interface Decoded {
  readonly command: Command
  readonly commandHash: string
  /** The signing hash if it is known already; reading it never computes it. */
  readonly knownHash: string | undefined
}

/** A §6.4 verifier whose strict parser admits Commands up to `maxCommandBytes`. */
export function commandVerifier(maxCommandBytes: number): SignedVerifier {
  return createVerifier({ validate: schemaCheckForKind, json: { maxBytes: maxCommandBytes } })
}

/**
 * Ingress steps 1–4 for received bytes: the size limit (`PROTOCOL_VIOLATION`), then all six stages
 * of §6.4 (strict parse, Command schema, signature envelope, key resolution, JCS, Ed25519), each
 * failing with its stage's wire code and the one generic message of that code.
 */
export function decodeSigned(input: string | Uint8Array, verifier: SignedVerifier, registry: KeyResolver, maxCommandBytes: number): Decoded {
  checkSize(input, maxCommandBytes)
  return decodedOf(verifier.verify('command', input, registry))
}

/**
 * {@link decodeSigned} with the Ed25519 equation on the libuv threadpool: the size limit and §6.4
 * stages 1–5 run before it returns, stage 6 on another thread (see `verifyAsync` of @weft/codec).
 * Resolves to the same Decoded, or rejects with the same `ProtocolError`, as {@link decodeSigned}.
 * @throws ProtocolError when the size limit or a stage before the signature refuses the input.
 */
export function decodeSignedAsync(input: string | Uint8Array, verifier: SignedVerifier, registry: KeyResolver, maxCommandBytes: number): Promise<Decoded> {
  checkSize(input, maxCommandBytes)
  return verifier.verifyAsync('command', input, registry).then(decodedOf)
}

/** Ingress step 1: text or bytes within the size limit, else `PROTOCOL_VIOLATION`. */
function checkSize(input: unknown, maxCommandBytes: number): asserts input is string | Uint8Array {
  if (typeof input !== 'string' && !(input instanceof Uint8Array)) refuse('PROTOCOL_VIOLATION', GENERIC_WIRE_MESSAGES.PROTOCOL_VIOLATION, 'size', 'not-text-or-bytes')
  // A UTF-16 code unit takes one to three UTF-8 bytes, so only a text in between needs a count: a
  // text longer than the limit is refused without one (counting megabytes is a refusal's main cost).
  if (typeof input === 'string' && input.length > maxCommandBytes)
    refuse('PROTOCOL_VIOLATION', 'The Command exceeds the size limit.', 'size', 'command-too-large', { detail: `at least ${input.length} bytes` })
  const size = typeof input !== 'string' ? input.byteLength : input.length * 3 <= maxCommandBytes ? 0 : Buffer.byteLength(input, 'utf8')
  if (size > maxCommandBytes) refuse('PROTOCOL_VIOLATION', 'The Command exceeds the size limit.', 'size', 'command-too-large', { detail: `${size} bytes` })
}

/** A verified Command with its signing hash, or the codec's error (generic wire message, stage diagnostic as cause). */
function decodedOf(result: VerifyResult): Decoded {
  if (!result.ok) throw result.error
  const commandHash = result.verified.signingHash
  return { command: result.verified.document as unknown as Command, commandHash, knownHash: commandHash }
}

/**
 * The trusted path's steps 2–3: no bytes, so no size limit or strict parse, and no signature stages;
 * the Command schema still applies. The §6.4 signing hash is computed on first read of
 * `commandHash` and kept: the caller promises not to change the Command, so the hash read later is
 * the full RFC 8785 hash of exactly the Command accepted. Idempotency reads it only when the
 * (actor, Action ID) pair was seen before; otherwise the first reader is an Event's signing (or
 * whoever reads a `commandHash` member first, with deferred Event signatures).
 */
export function decodeTrusted(command: unknown): Decoded {
  if (!validators.command.check(command)) {
    refuse('SCHEMA_VALIDATION_FAILED', GENERIC_WIRE_MESSAGES.SCHEMA_VALIDATION_FAILED, 'schema', 'schema-invalid', {
      details: { issues: validators.command.errors(command, { maxErrors: 8 }) },
    })
  }
  return new TrustedCommand(command)
}

/** A trusted Command whose signing hash is computed on the first read of `commandHash` (see {@link decodeTrusted}). */
class TrustedCommand implements Decoded {
  readonly command: Command
  #hash: string | undefined

  constructor(command: Command) {
    this.command = command
  }

  get commandHash(): string {
    return (this.#hash ??= signingHash(this.command))
  }

  get knownHash(): string | undefined {
    return this.#hash
  }
}
