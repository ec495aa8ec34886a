/**
 * The error catalog: every core error code of §19, in normative order, with its meaning in our own
 * words, whether an unchanged retry is safe, and the section that defines the condition.
 *
 * `retryable` answers one question: may the sender resend the very same Command (same Action ID,
 * same signed bytes) and expect it to possibly succeed without changing anything first? §19 says an
 * unchanged retry keeps the Action ID and signed content, and that fencing, collision and signature
 * failures need a corrected or new Command. Only three codes describe a transient condition of the
 * receiver rather than a fault of the Command or of the sender's view of state: `RATE_LIMITED`,
 * `BACKPRESSURE` and `INTERNAL_ERROR`. The value is the default for the code; an authority may still
 * send `retryable: false` for a specific instance (see `RATE_LIMITED`).
 * @module
 */
import { ERROR_CODES, type ErrorCode } from '../documents/error.js'
import type { AssertTrue, Same, SectionRef } from './shared.js'

/** One entry of {@link ERROR_CATALOG}. */
export interface ErrorInfo {
  /** The wire code (`error.schema.json`). */
  readonly code: string
  /** What the code means, in Weft's words. */
  readonly meaning: string
  /** Whether resending the unchanged Command (same Action ID and signed bytes) is safe and may succeed (§19). */
  readonly retryable: boolean
  /** Where the condition is defined; every code is also listed in §19. */
  readonly section: SectionRef
}

/** Every core error code of MissionWeaveProtocol 0.1, in the order of §19 and `error.schema.json`. */
export const ERROR_CATALOG = [
  {
    code: 'UNSUPPORTED_VERSION',
    meaning: 'The peers share no protocol version both of them can speak.',
    // Resending cannot change what either side supports; a new handshake with other versions is needed.
    retryable: false,
    section: '§21',
  },
  {
    code: 'AUTH_REQUIRED',
    meaning: 'The request arrived before the connection or actor was authenticated.',
    // The sender must first complete the §6.3 handshake; resending on the same unauthenticated channel fails again.
    retryable: false,
    section: '§6.3',
  },
  {
    code: 'AUTH_INVALID_SIGNATURE',
    meaning: 'Verification of a signed document failed: signature, key binding or validity, admission, or Command freshness; the exact cause is withheld.',
    // §19: never retried unchanged; the cause (envelope, key or admission state) must be corrected first,
    // and an expired freshness window needs a new Command with a new Action ID.
    retryable: false,
    section: '§6.4',
  },
  {
    code: 'AUTH_STALE_SESSION',
    meaning: 'The Session Epoch on the Command is older than the Agent’s current one.',
    // §19: a fencing error needs the current epoch and a new, newly signed Command with a new Action ID.
    retryable: false,
    section: '§6.3',
  },
  {
    code: 'AUTH_STALE_COORDINATOR',
    meaning: 'The Coordinator Epoch on the Command is not the Mission’s current one.',
    // §19: fencing; the old Coordinator's Command can never become valid again.
    retryable: false,
    section: '§7.2',
  },
  {
    code: 'AUTH_FORBIDDEN',
    meaning: 'The authenticated actor has no role, delegation or policy eligibility for this request.',
    // Authority does not appear by resending; a role, grant or policy change must happen first.
    retryable: false,
    section: '§6.4',
  },
  {
    code: 'GROUP_NOT_FOUND',
    meaning: 'No such Group exists, or its existence is not disclosed to this actor.',
    // Deterministic for the same Group ID and actor.
    retryable: false,
    section: '§17.2',
  },
  {
    code: 'MEMBERSHIP_REQUIRED',
    meaning: 'The actor holds no Membership that covers this Group or request.',
    // A Membership must be granted first, and the Command must then carry its epoch: a new Command.
    retryable: false,
    section: '§8',
  },
  {
    code: 'MEMBERSHIP_STALE',
    meaning: 'The Membership Epoch on the Command is revoked or older than the current one.',
    // §19: fencing; needs the current epoch and a new, newly signed Command.
    retryable: false,
    section: '§8',
  },
  {
    code: 'SCHEMA_VALIDATION_FAILED',
    meaning: 'The object does not match its normative schema, lacks a required envelope member, or names an unsupported algorithm.',
    // The same bytes fail the same schema every time.
    retryable: false,
    section: '§6.4',
  },
  {
    code: 'INVALID_COMMAND',
    meaning: 'The Command is well formed but its content makes no sense for the protocol.',
    // A semantic fault of the content itself; only a different Command can fix it.
    retryable: false,
    section: '§15.1',
  },
  {
    code: 'INVALID_STATE_TRANSITION',
    meaning: 'The target aggregate’s current state does not allow this transition.',
    // The sender's view of the aggregate is wrong; it must re-read state and decide anew rather than resend.
    retryable: false,
    section: '§10.2',
  },
  {
    code: 'REVISION_CONFLICT',
    meaning: 'The expected aggregate revision differs from the current one.',
    // `expectedRevision` is signed content, so a retry against the new revision is a new Command (§15.3).
    retryable: false,
    section: '§15.3',
  },
  {
    code: 'ACTION_ID_COLLISION',
    meaning: 'The actor already used this Action ID for different signed content.',
    // §19: requires a new Command with a new Action ID.
    retryable: false,
    section: '§15.1',
  },
  {
    code: 'UNKNOWN_CRITICAL_EXTENSION',
    meaning: 'A critical Extension Profile the transition depends on cannot be interpreted by the receiver.',
    // The receiver's supported profiles do not change because the same bytes arrive again.
    retryable: false,
    section: '§18',
  },
  {
    code: 'WORK_CONTRACT_INCOMPLETE',
    meaning: 'The Work Contract lacks information the protocol requires.',
    // The contract is part of the signed payload; completing it makes a new Command.
    retryable: false,
    section: '§10.1',
  },
  {
    code: 'WORK_OFFER_EXPIRED',
    meaning: 'The offer being accepted has expired, was withdrawn or was replaced.',
    // An expired offer never becomes valid again; only a new offer and a new acceptance help.
    retryable: false,
    section: '§10.3',
  },
  {
    code: 'WORK_ALREADY_OWNED',
    meaning: 'Another candidate already won exclusive ownership of the WorkItem.',
    // First valid acceptance wins atomically (§10.3); the loser's acceptance can never win later.
    retryable: false,
    section: '§10.3',
  },
  {
    code: 'WORK_LEASE_EXPIRED',
    meaning: 'A lease the Command depends on (ownership, execution or blocked) is no longer valid.',
    // The Command names the dead lease; a fresh lease means a new Command.
    retryable: false,
    section: '§11.3',
  },
  {
    code: 'WORK_STALE_OWNERSHIP',
    meaning: 'The Ownership Epoch or Execution Lease ID on the Command is not the current one.',
    // §19: fencing; a stale owner's result must never complete the WorkItem (§4, §11.5).
    retryable: false,
    section: '§11.5',
  },
  {
    code: 'APPROVAL_REQUIRED',
    meaning: 'A policy or approval gate for this transition has not been satisfied yet.',
    // The gate is satisfied by a separate transition (e.g. `approval.grant_execution`), not by resending;
    // the sender waits for that fact and then issues its Command.
    retryable: false,
    section: '§12',
  },
  {
    code: 'BUDGET_EXCEEDED',
    meaning: 'Accepting the transition would exceed a hard Mission, WorkItem or grant budget.',
    // §12: exhaustion needs explicit escalation; an unchanged charge overflows again.
    retryable: false,
    section: '§12',
  },
  {
    code: 'RATE_LIMITED',
    meaning: 'An Organization rate or recursion limit has been reached for this actor or Group.',
    // A rate window passes by itself, so the same Command may succeed after `retryAfterMs`. A recursion or
    // cooperation threshold instead needs a Cooperation Override Grant cited in the envelope, which is a
    // new Command (§20); an authority reports `retryable: false` for that case.
    retryable: true,
    section: '§20',
  },
  {
    code: 'BACKPRESSURE',
    meaning: 'The receiver cannot take more traffic for now; the sender should slow down and resend later.',
    // Transient flow control (§17.3); nothing was accepted, and idempotency by Action ID makes a resend safe.
    retryable: true,
    section: '§17.3',
  },
  {
    code: 'CURSOR_TOO_OLD',
    meaning: 'The requested replay position is no longer in the online log; restore from the referenced snapshot.',
    // The log will not grow back; the client must restore a snapshot and resubscribe from its sequence (§16).
    retryable: false,
    section: '§16',
  },
  {
    code: 'PROTOCOL_VIOLATION',
    meaning: 'The peer broke framing, JSON or canonical-encoding rules, or a core invariant.',
    // The same bytes break the same rule again.
    retryable: false,
    section: '§17.4',
  },
  {
    code: 'INTERNAL_ERROR',
    meaning: 'The authority failed on its own side and accepted nothing.',
    // Nothing was appended, and the (actor, Action ID) receipt makes a resend of the same bytes idempotent (§15.1).
    retryable: true,
    section: '§19',
  },
] as const satisfies readonly ErrorInfo[]

/**
 * Every core error code in normative order, and their union. Re-exported from the error document
 * module (`documents/error.ts`) so that both modules name one binding; the assertion below pins
 * the catalog to exactly that list and order.
 */
export { ERROR_CODES, type ErrorCode }

/** The catalog entry of one error code. */
export type ErrorEntry<C extends ErrorCode = ErrorCode> = Extract<(typeof ERROR_CATALOG)[number], { readonly code: C }>

type CodesOf<T extends readonly { readonly code: string }[]> = {
  readonly [I in keyof T]: T[I] extends { readonly code: infer C } ? C : never
}

// Compile-time: the catalog lists every code once, in normative order.
// biome-ignore lint/correctness/noUnusedVariables: a compile-time assertion; tsc fails the build when it does not hold
type ErrorsInOrder = AssertTrue<Same<CodesOf<typeof ERROR_CATALOG>, typeof ERROR_CODES>>

const errorsByCode: ReadonlyMap<string, ErrorEntry> = new Map(ERROR_CATALOG.map((entry) => [entry.code, entry]))

/** Whether a string is a core error code. */
export function isErrorCode(value: string): value is ErrorCode {
  return errorsByCode.has(value)
}

/**
 * The catalog entry of an error code.
 * @example
 * ```ts
 * errorInfo('BACKPRESSURE').retryable // true
 * errorInfo('NOT_A_CODE') // undefined
 * ```
 */
export function errorInfo<C extends ErrorCode>(code: C): ErrorEntry<C>
export function errorInfo(code: string): ErrorInfo | undefined
export function errorInfo(code: string): ErrorInfo | undefined {
  return errorsByCode.get(code)
}
