/**
 * Time and randomness, the two effects every Weft actor has injected besides its store or
 * transport (ARCHITECTURE, "Time, randomness, stores"): the {@link Clock} and {@link RandomSource}
 * shapes, their system defaults, and what is made from them: RFC 3339 UTC times (§2, §6.4) and
 * `urn:uuid:` identifiers (§15.1). Tests and simulators pass a virtual clock and a seeded source,
 * so a run is reproducible Event for Event.
 *
 * Browser-safe: randomness comes from WebCrypto's `globalThis.crypto.getRandomValues`, which Node
 * (>= 20) and every current browser have; nothing here imports a `node:` module. The cached fast
 * paths live in `time-fast.ts` beside a plain reference, and the tests prove the two equal.
 * @module
 */
import { UsageError } from './errors.js'
import { formatCached, knownTimestampMsCached, parseCached, urnUuidCached } from './time-fast.js'

/**
 * A source of the current instant, in epoch milliseconds. An object rather than a bare function,
 * so a virtual clock (with timers of its own) is a `Clock` as it is.
 * @example
 * ```ts
 * let nowMs = Date.parse('2026-07-15T08:00:00Z')
 * const clock: Clock = { now: () => nowMs } // step it by assigning nowMs
 * ```
 */
export interface Clock {
  /** Epoch milliseconds, like `Date.now()`. */
  now(): number
}

/** The wall clock, `Date.now()`: the default {@link Clock} of every factory that takes one. */
export const systemClock: Clock = { now: () => Date.now() }

/**
 * A source of random bytes: returns `size` fresh bytes, the caller's to keep. Inject a seeded one
 * for reproducible tests; the default is {@link systemRandom}.
 */
export type RandomSource = (size: number) => Uint8Array

/** `getRandomValues` fills at most 65536 bytes per call (WebCrypto's quota). */
const QUOTA = 65_536
/** How many bytes {@link systemRandom} draws from the platform at a time. */
const POOL_BYTES = 4096
let pool: Uint8Array = new Uint8Array(0)
let pooled = 0

/** The platform's `getRandomValues`, or a UsageError naming what is missing. */
function webCrypto(): { getRandomValues<T extends ArrayBufferView>(array: T): T } {
  const crypto = (globalThis as { crypto?: { getRandomValues?: <T extends ArrayBufferView>(array: T) => T } }).crypto
  if (typeof crypto?.getRandomValues !== 'function') throw new UsageError('systemRandom: globalThis.crypto.getRandomValues is not available; pass a random source')
  return crypto as { getRandomValues<T extends ArrayBufferView>(array: T): T }
}

/** Fills `bytes` from the platform CSPRNG, a quota at a time. */
function fillRandom(bytes: Uint8Array): Uint8Array {
  const crypto = webCrypto()
  for (let at = 0; at < bytes.length; at += QUOTA) crypto.getRandomValues(bytes.subarray(at, Math.min(bytes.length, at + QUOTA)))
  return bytes
}

/**
 * The default {@link RandomSource}: the platform CSPRNG through WebCrypto, the same function in
 * Node and in browsers. IDs and nonces must be unpredictable (§6.3 challenges, §15.1 Action IDs),
 * hence no `Math.random` fallback. Small requests are served from a pool refilled 4096 bytes at a
 * time: one call into the platform costs microseconds, more than the rest of minting an ID, and
 * the Authority mints one or more IDs per Command. Each caller gets its own copy; the pool itself
 * is never handed out, and no byte is handed out twice.
 * @throws UsageError when the platform has no WebCrypto (on the first call, which fills the pool).
 */
export const systemRandom: RandomSource = (size) => {
  if (size > POOL_BYTES / 8) return fillRandom(new Uint8Array(size))
  if (pooled + size > pool.length) {
    pool = fillRandom(new Uint8Array(POOL_BYTES))
    pooled = 0
  }
  const bytes = pool.slice(pooled, pooled + size)
  pooled += size
  return bytes
}

/**
 * The instant `ms` as RFC 3339 UTC text with millisecond precision and the uppercase `Z`
 * (`2026-07-15T08:00:00.000Z`), the only form a signed time may take (§6.4). Exactly
 * `new Date(ms).toISOString()`, cached per UTC day.
 * @throws UsageError when `ms` is not a finite number (a broken clock); RangeError, as `Date`
 * does, for a finite instant outside its range.
 */
export function timestampOf(ms: number): string {
  if (!Number.isFinite(ms)) throw new UsageError(`clock returned ${String(ms)}, expected milliseconds since the epoch`)
  return formatCached(ms)
}

/**
 * Exactly `Date.parse(text)`, for any text: epoch milliseconds, or `NaN`. A text in the
 * `toISOString` form (or that form without the fraction) on one of the last few UTC days read is
 * taken from its digits, without the date parser; the Authority compares several instants per
 * Command (expiries, deadlines, rate windows, `issuedAt`).
 */
export function parseInstant(text: string): number {
  return parseCached(text)
}

export { isoTimeOfDay, timestampMs } from './time-fast.js'

/**
 * The epoch milliseconds of a text known to be a §2 timestamp (a schema checked it, or
 * {@link timestampOf} wrote it), every fraction digit past the millisecond kept as a fraction:
 * exactly `timestampMs(text)`, which reads any text. The `toISOString` form is read from its
 * digits on one of the last few UTC days read (see {@link parseInstant}); the Authority reads one
 * per Command (`issuedAt`) and more for lease checks. Other texts may read as `Date.parse` reads them.
 * @example
 * ```ts
 * knownTimestampMs('2026-07-15T08:00:00.250Z') // 1784102400250
 * ```
 */
export function knownTimestampMs(text: string): number {
  return knownTimestampMsCached(text)
}

/** The 16 bytes of a UUID from `random`. */
function uuidBytes(random: RandomSource): Uint8Array {
  const bytes = random(16)
  if (bytes.length < 16) throw new UsageError(`random source returned ${bytes.length} bytes, a UUID needs 16`)
  return bytes
}

/**
 * A new random (RFC 9562 version 4) UUID as a `urn:uuid:` URI, the form of every ID Weft mints.
 * The same bytes give the same text as {@link uuidSource}.
 * @throws UsageError when `random` returns fewer than 16 bytes.
 * @example
 * ```ts
 * newUrnUuid(systemRandom) // 'urn:uuid:3b241101-e2bb-4255-8caf-4136c566a962'
 * ```
 */
export function newUrnUuid(random: RandomSource): string {
  return urnUuidCached(uuidBytes(random))
}

/**
 * A generator of `urn:uuid:` identifiers (RFC 9562 version 4) drawn from `random`, each call
 * {@link newUrnUuid} of it. Event IDs and every other ID the Authority mints come from one, so a
 * seeded source yields the same IDs.
 * @throws UsageError (from the generator) when `random` returns fewer than 16 bytes.
 */
export function uuidSource(random: RandomSource): () => string {
  return () => urnUuidCached(uuidBytes(random))
}
