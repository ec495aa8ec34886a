/**
 * The proof a durable store's log passes before an Authority folds it and serves it (§6.4, §15.2,
 * §16): every Event is the one the Authority accepted, at its place in its Group's order, and
 * nothing acknowledged is missing. A log that fails is never folded: an edited Message would be
 * served as fact, a `membership.changed` swapped for an outsider would let the outsider read and
 * write the Group, and new Events would be signed on top of the forgery.
 *
 * **The chain.** The Event envelope carries no link to the Event before it (§15.2 and
 * `event.schema.json`: no previous-event hash, and `additionalProperties: false`), so the stores keep
 * one beside the log: per Group, `chain(n) = sha256(chain(n-1) "\n" text(n))` over the exact JSON
 * text of each Event as stored, starting from {@link LOG_CHAIN_FORMAT}; the Organization-scoped
 * Events (no Group, §15.2) form one more chain in acceptance order. A store writes each Event's link
 * with its row ({@link chainLink}) and reports its current heads ({@link LogHead}); the Authority's
 * state checkpoint signs the heads at its position, and the SQLite store also remembers the heads it
 * acknowledged outside its WAL.
 *
 * **What is checked, and where.** The rows arrive in acceptance order. Up to the position of a
 * verified state checkpoint (the *anchor*), each row is checked by its chain only: the hash of its
 * text must continue its chain and, where the store kept it, equal the stored link, and at the
 * anchor every head must be the one the checkpoint signed. Because the Authority computed those
 * links from the very text it signed and then signed the heads, this proves the prefix as firmly as
 * its signatures would, at the cost of a SHA-256 per Event. After the anchor (or from the start,
 * without one), each Event passes the six §6.4 stages as an `event` document under the Registry's
 * key, is accepted by this Authority (`acceptedBy`), sits at its row's Group and sequence, continues
 * its Group without a gap (§15.2), and is not a redaction tombstone (`../delivery/redaction.ts`: tombstones are
 * served, never stored; the stored log keeps the original). Last, every head the store remembers as
 * acknowledged must be reached with the same chain.
 *
 * A failure throws a {@link LogProofError} naming the Group (or the Organization log), the sequence
 * and the check, in one line.
 * @module
 */
import { createHash } from 'node:crypto'
import { createVerifier, type KeyResolver } from '@weft/codec'
import type { Event } from '@weft/spec'
import { schemaCheckForKind } from '@weft/validators/signed'
import { checkpointRefusal } from './checkpoint.js'
import type { ActorRef } from '../model.js'
import { REDACTION_EXTENSION } from '../delivery/redaction.js'
import type { AuthorityStore } from './store.js'
import type { LogHead } from './log-head.js'

export type { LogHead } from './log-head.js'

/** The chain profile: the value before a chain's first Event, so a chain hash never reads as any other hash. */
export const LOG_CHAIN_FORMAT = 'weft-log-chain/1'

/**
 * The chain hash after an Event whose stored JSON text is `text`, following `previous` (the chain
 * through the Event before it, or {@link LOG_CHAIN_FORMAT} for the first): `sha256:` and the
 * lowercase hex SHA-256 of `previous`, a newline and `text`, in UTF-8.
 */
export function chainLink(previous: string, text: string): string {
  return `sha256:${createHash('sha256').update(previous).update('\n').update(text).digest('hex')}`
}

/** One stored Event as a store reads it back for the proof, in acceptance order. */
export interface LogRow {
  /** The Event's exact JSON text as stored: what was signed, and what the chain hashes. */
  readonly text: string
  /**
   * The Group the store files the row under (`null`: the Organization log); `undefined` when the
   * store files rows by their text alone. Required up to the anchor, where the text is not parsed.
   */
  readonly groupId?: string | null
  /** The Group sequence the store files the row under, with the same reading as {@link groupId}. */
  readonly sequence?: number | null
  /** The chain link the store wrote with the row; `undefined` or `null` when it keeps none. */
  readonly chain?: string | null
}

/** A verified point of the log: the Events up to `position` are proved by their chains, which must end at `heads`. */
export interface LogAnchor {
  /** How many Events of the log, in acceptance order, the anchor covers. */
  readonly position: number
  /** Every chain's head at `position`. */
  readonly heads: readonly LogHead[]
}

/** Options of {@link createLogProver} and {@link proveLog}. */
export interface LogProofOptions {
  /** Resolves the Authority's Event key (§6.4 stage 4), e.g. the Organization's `Registry`. */
  readonly registry: KeyResolver
  /** The Authority whose accepted Events the log holds: each must name it as `acceptedBy` and carry its signature. */
  readonly authority: ActorRef
  /** A verified point to prove the Events before it by their chains ({@link checkpointAnchor}); without it every signature is checked. */
  readonly anchor?: LogAnchor
  /** Heads the store acknowledged and remembers outside the log (the SQLite head file): each must be reached, with the same chain. */
  readonly remembered?: readonly LogHead[]
}

/** What a proof established. */
export interface LogProofSummary {
  /** The Events read. */
  readonly events: number
  /** The Groups among them. */
  readonly groups: number
  /** The Events whose signature was checked (those after the anchor). */
  readonly signatures: number
  /** The position of the anchor the earlier Events were proved from (0: none). */
  readonly anchoredAt: number
  /** Every chain's head at the end, Organization log first, then Groups in ID order. */
  readonly heads: readonly LogHead[]
}

/** Takes a log's rows one at a time, in acceptance order; see {@link createLogProver}. */
export interface LogProver {
  /** Checks the next row. @throws LogProofError at the first failing check. */
  add(row: LogRow): void
  /** Checks the end of the log against the anchor and the remembered heads. @throws LogProofError. */
  finish(): LogProofSummary
}

/** Marks a {@link LogProofError} across copies of this package (a store and the CLI may load different ones). */
const brand = Symbol.for('@weft/LogProofError')

/** Where a {@link LogProofError} is: an Event of a Group (or, with `groupId: null`, of the Organization log), or the store as a whole. */
export type LogProofPlace = { readonly groupId: string | null; readonly sequence: number } | { readonly subject: string }

/**
 * A log that failed its proof: tampered with or damaged. `message` is one line naming the Group
 * (or the Organization log), the sequence and the check, e.g.
 * `the log of group urn:… fails its proof at sequence 17: signature does not verify`, or what
 * failed as a whole (`the state checkpoint fails its proof: …`).
 */
export class LogProofError extends Error {
  /** The Group whose log failed; absent for the Organization log or the store as a whole. */
  readonly groupId: string | undefined
  /** The Group sequence (for the Organization log, the Event's number) where it failed; absent for the store as a whole. */
  readonly sequence: number | undefined
  /** The check that failed, in words. */
  readonly check: string

  constructor(place: LogProofPlace, check: string, options?: ErrorOptions) {
    const subject =
      'subject' in place
        ? `${place.subject} fails its proof`
        : place.groupId === null
          ? `the Organization log fails its proof at Event ${place.sequence}`
          : `the log of group ${place.groupId} fails its proof at sequence ${place.sequence}`
    super(`${subject}: ${check}`, options)
    this.name = 'LogProofError'
    Object.defineProperty(this, brand, { value: true })
    this.groupId = 'subject' in place || place.groupId === null ? undefined : place.groupId
    this.sequence = 'subject' in place ? undefined : place.sequence
    this.check = check
  }

  /** True for any LogProofError, including one made by another copy of this package. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true
  }
}

/** The Events' own schema and signature check (§6.4), as any recipient runs it. */
const eventVerifier = createVerifier({ validate: schemaCheckForKind })

/** The §6.4 verification outcome a failed Event gets, in the proof's words. */
function stageWords(stage: string, reason: string): string {
  if (stage === 'signature') return 'signature does not verify'
  if (stage === 'parse') return `the stored text is not a JSON document (${reason})`
  return `§6.4 ${stage} fails (${reason})`
}

/** The chain key of a scope: the Group ID, or `''` for the Organization log (a Group ID is an absolute URI, never empty). */
const ORGANIZATION = ''

interface Chain {
  sequence: number
  chain: string
}

/**
 * Proves a log row by row (see the module notes): create it with the Authority's identity and
 * Registry, an anchor where there is one and the remembered heads, {@link LogProver.add} every
 * stored Event in acceptance order, then {@link LogProver.finish}.
 * @example
 * ```ts
 * const prover = createLogProver({ registry, authority, anchor: checkpointAnchor(store, registry, authority) })
 * for (const row of rows) prover.add(row) // { text, groupId, sequence, chain } as stored
 * const { events, signatures } = prover.finish()
 * ```
 */
export function createLogProver(options: LogProofOptions): LogProver {
  const { registry, authority, anchor } = options
  const anchorAt = anchor?.position ?? 0
  const chains = new Map<string, Chain>()
  const remembered = new Map<string, LogHead>()
  for (const head of options.remembered ?? []) remembered.set(head.groupId ?? ORGANIZATION, head)
  const organizationIds = new Set<string>()
  let position = 0
  let signatures = 0

  const fail = (scope: string, sequence: number, check: string): never => {
    throw new LogProofError({ groupId: scope === ORGANIZATION ? null : scope, sequence }, check)
  }

  /** The scope and sequence a verified Event places itself at, checked against the row's filing. */
  const placeOf = (row: LogRow, text: string): { scope: string; sequence: number } => {
    const filed = row.groupId === undefined ? undefined : (row.groupId ?? ORGANIZATION)
    const expectedAt = (scope: string): number => (chains.get(scope)?.sequence ?? 0) + 1
    const result = eventVerifier.verify('event', text, registry)
    if (!result.ok) {
      const scope = filed ?? ORGANIZATION
      return fail(scope, typeof row.sequence === 'number' ? row.sequence : expectedAt(scope), stageWords(result.stage, result.reason))
    }
    signatures++
    const event = result.verified.document as unknown as Event
    const scope = event.groupId ?? ORGANIZATION
    const sequence = event.groupId === undefined ? expectedAt(ORGANIZATION) : (event.sequence as number)
    if (filed !== undefined && (filed !== scope || (scope !== ORGANIZATION && row.sequence !== sequence))) {
      fail(
        filed,
        typeof row.sequence === 'number' ? row.sequence : expectedAt(filed),
        `the row holds Event ${event.eventId} of ${scope === ORGANIZATION ? 'the Organization log' : `group ${scope} at sequence ${sequence}`}`,
      )
    }
    // §6.4: an Event's expected signer is its `acceptedBy`, which must be this Authority.
    if (event.acceptedBy.type !== authority.type || event.acceptedBy.id !== authority.id) fail(scope, sequence, `the Event was accepted by ${event.acceptedBy.id}, not by this Authority`)
    if (event.extensions?.[REDACTION_EXTENSION] !== undefined) fail(scope, sequence, 'a redaction tombstone stands where the accepted Event belongs')
    if (scope === ORGANIZATION) {
      if (organizationIds.has(event.eventId)) fail(scope, sequence, `Event ${event.eventId} is stored twice`)
      organizationIds.add(event.eventId)
    }
    return { scope, sequence }
  }

  return {
    add(row) {
      position++
      const text = row.text
      let scope: string
      let sequence: number
      if (position <= anchorAt) {
        if (row.groupId === undefined) throw new Error('log proof: a row up to the anchor must say which Group the store files it under')
        scope = row.groupId ?? ORGANIZATION
        sequence = scope === ORGANIZATION ? (chains.get(scope)?.sequence ?? 0) + 1 : (row.sequence as number)
      } else {
        ;({ scope, sequence } = placeOf(row, text))
      }
      const previous = chains.get(scope)
      const head = previous?.sequence ?? 0
      // §15.2: one contiguous sequence per Group, in acceptance order.
      if (sequence !== head + 1)
        fail(scope, head + 1, sequence > head + 1 ? `the Event is missing (the next one stored is sequence ${sequence})` : `sequence ${sequence} is stored again after ${head}`)
      const chain = chainLink(previous?.chain ?? LOG_CHAIN_FORMAT, text)
      if (row.chain !== undefined && row.chain !== null && row.chain !== chain) fail(scope, sequence, "the Event's text does not match its stored chain hash: it was changed after it was stored")
      if (previous === undefined) chains.set(scope, { sequence, chain })
      else {
        previous.sequence = sequence
        previous.chain = chain
      }
      // The signed anchor first: what it proves does not rest on a file beside the log.
      if (position === anchorAt) checkAnchor()
      const acknowledged = remembered.get(scope)
      if (acknowledged?.sequence === sequence && acknowledged.chain !== chain) fail(scope, sequence, 'the Event is not the one acknowledged (the head file remembers another chain hash)')
    },
    finish() {
      if (position < anchorAt) checkAnchor()
      // Groups first (their subscribers hold the lost Events), then the Organization log.
      for (const [scope, head] of [...remembered].sort(([a], [b]) => (a === ORGANIZATION ? 1 : b === ORGANIZATION ? -1 : 0))) {
        const reached = chains.get(scope)?.sequence ?? 0
        if (reached < head.sequence) fail(scope, reached + 1, `the Event is missing: the head file remembers sequence ${head.sequence} as acknowledged`)
      }
      const heads = [...chains].map(([scope, { sequence, chain }]) => (scope === ORGANIZATION ? { sequence, chain } : { groupId: scope, sequence, chain }))
      heads.sort((a, b) => (a.groupId === undefined ? -1 : b.groupId === undefined ? 1 : a.groupId < b.groupId ? -1 : 1))
      return { events: position, groups: heads.filter((h) => h.groupId !== undefined).length, signatures, anchoredAt: anchorAt, heads }
    },
  }

  /** At the anchor's position: every chain at the head the checkpoint signed, and no other chain. */
  function checkAnchor(): void {
    const signed = new Map((anchor?.heads ?? []).map((h) => [h.groupId ?? ORGANIZATION, h]))
    for (const [scope, head] of signed) {
      const reached = chains.get(scope)
      const at = reached?.sequence ?? 0
      if (at < head.sequence) fail(scope, at + 1, `the Event is missing: the state checkpoint signed the log through ${scope === ORGANIZATION ? 'Event' : 'sequence'} ${head.sequence}`)
      if (at > head.sequence || reached?.chain !== head.chain) fail(scope, at, 'the chain does not reach the head the state checkpoint signed')
    }
    for (const [scope, reached] of chains) if (!signed.has(scope)) fail(scope, reached.sequence, 'the state checkpoint signed no Event of this log')
  }
}

/** {@link createLogProver} over every row of `rows`. @throws LogProofError at the first failing check. */
export function proveLog(rows: Iterable<LogRow>, options: LogProofOptions): LogProofSummary {
  const prover = createLogProver(options)
  for (const row of rows) prover.add(row)
  return prover.finish()
}

/**
 * The verified point a store's state checkpoint offers the proof: its position and the chain heads
 * its manifest signs (`logHeads`). `undefined` when the store keeps no checkpoint, the checkpoint
 * signs no heads (one saved by a store that keeps no chain, or by an earlier build), or its key was
 * revoked since (then every signature is checked instead).
 * @throws LogProofError when the stored checkpoint is not authentic (signature, key binding, image hash): the store was tampered with.
 */
export function checkpointAnchor(store: Pick<AuthorityStore, 'checkpoint'>, registry: KeyResolver, authority: ActorRef): LogAnchor | undefined {
  const checkpoint = store.checkpoint?.()
  if (checkpoint === undefined) return undefined
  const refusal = checkpointRefusal(checkpoint, registry, authority)
  if (refusal !== undefined) throw new LogProofError({ subject: 'the state checkpoint' }, refusal)
  const { manifest } = checkpoint
  // A key revoked since vouches for nothing about when it signed (as for the restore, `checkpoint.ts`).
  const signer = registry.resolve(manifest.signature.keyId)
  if (!signer.ok || signer.key.revokedAt !== undefined || manifest.logHeads === undefined) return undefined
  return { position: manifest.position, heads: manifest.logHeads }
}
