/**
 * Refusals in plain words: every §19 code the console can meet, as a sentence for the person, with
 * the code shown beside it. Unknown codes fall back to their catalog meaning.
 * @module
 */
import { ERROR_CODE_INFO, isErrorCode } from '@weft/codec'

/** Sentences for the codes a person meets most (§19). */
const SENTENCES: Readonly<Record<string, string>> = {
  AUTH_REQUIRED: 'You are not signed in. Sign in again.',
  AUTH_INVALID_SIGNATURE: 'The signature was not accepted: the key may be wrong, revoked or not yet valid, or the request was too old.',
  AUTH_FORBIDDEN: 'You are not allowed to do this in this Mission.',
  GROUP_NOT_FOUND: 'Not found.',
  MEMBERSHIP_REQUIRED: 'You are not a member of this Group.',
  MEMBERSHIP_STALE: 'Your Membership in this Group changed. Reload the Group and try again.',
  SCHEMA_VALIDATION_FAILED: 'The request was malformed; check the fields and try again.',
  INVALID_COMMAND: 'The request does not fit the Mission as it stands now.',
  INVALID_STATE_TRANSITION: 'The Mission or WorkItem is no longer in a state that allows this.',
  REVISION_CONFLICT: 'Someone changed this in the meantime. The page now shows the current state; check it and try again.',
  WORK_CONTRACT_INCOMPLETE: 'The Work Contract is missing required information.',
  APPROVAL_REQUIRED: 'An approval is needed first.',
  BUDGET_EXCEEDED: 'This would exceed the budget.',
  RATE_LIMITED: 'Too many requests right now; wait a moment and try again.',
  BACKPRESSURE: 'The server is busy; the view resumes on its own.',
  INTERNAL_ERROR: 'The server failed without applying the change. Try again.',
}

/** A refusal or failure as the UI shows it. */
export interface Refusal {
  /** The §19 code, or a local tag (`NETWORK`, `LOCAL`). */
  readonly code: string
  readonly sentence: string
}

/** The sentence for `code`: a specific one, else the catalog meaning, else a generic one. */
export function sentenceFor(code: string): string {
  const specific = SENTENCES[code]
  if (specific !== undefined) return specific
  if (isErrorCode(code)) return ERROR_CODE_INFO[code].meaning
  return 'The request failed.'
}

/** Turns anything thrown by the client or the API into a {@link Refusal}. */
export function refusalOf(error: unknown): Refusal {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined
  if (typeof code === 'string' && isErrorCode(code)) return { code, sentence: sentenceFor(code) }
  const name = error instanceof Error ? error.name : ''
  if (name === 'TransportUnavailableError' || name === 'TypeError') return { code: 'NETWORK', sentence: 'The server could not be reached. Nothing was changed; try again when the connection is back.' }
  if (name === 'UsageError') return { code: 'LOCAL', sentence: `The request could not be built: ${error instanceof Error ? error.message : String(error)}` }
  return { code: 'ERROR', sentence: error instanceof Error ? error.message : 'The request failed.' }
}
