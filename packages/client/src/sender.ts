/**
 * The seam between the generated Command builders (`gen/builders.ts`) and whatever carries a
 * signed Command to a Group Authority: the in-process transport of `@weft/authority`
 * (`authority.connect()`), or the WebSocket binding of §17.
 * @module
 */
import type { Actor, CommandKind, CommandPayload, Event } from '@weft/spec'

/** Envelope members a caller may set per Command; everything else the client fills (§15.1). */
export interface CommandOptions {
  /** The Group; defaults to the client's default Group. Organization-scoped kinds take none. */
  readonly groupId?: string
  /** §15.3 optimistic concurrency: the aggregate revision the Command expects. */
  readonly expectedRevision?: number
  /** Defaults to a new ID per Command; set it to tie a Command to earlier work (§15.1). */
  readonly correlationId?: string
  readonly causedByEventId?: string
  readonly conversationId?: string
  readonly workItemId?: string
  /** §20: the one-shot Cooperation Override Grant this Command uses. */
  readonly cooperationOverrideGrantId?: string
  /** Reuse an Action ID only to retry the same signed content (§19); defaults to a new one. */
  readonly actionId?: string
  /** Defaults to the client clock. */
  readonly issuedAt?: string
  /** Extension data (§18), carried as given. */
  readonly extensions?: Readonly<Record<string, unknown>>
  /**
   * This Command's Session Epoch (§6.3) instead of the client's; the client's epochs stay as they
   * are. Only where the envelope carries one (an Agent's Group-scoped Command).
   */
  readonly sessionEpoch?: number
  /** This Command's Membership Epoch (§8) instead of the client's; only where the envelope carries one. */
  readonly membershipEpoch?: number
  /**
   * This Command's Coordinator Epoch (§7.2) instead of the client's: the Agent acts under the
   * Coordinator lease at that epoch. Only an Agent's Group-scoped Command carries one.
   */
  readonly coordinatorEpoch?: number
}

/**
 * What a Group Authority answers to an accepted Command: the Events its transaction appended, in
 * order. A retry of the same signed Command (same actor and Action ID, byte-equivalent content)
 * answers the original receipt with `duplicate: true` and appends nothing (§15.1).
 */
export interface Receipt {
  readonly actionId: string
  readonly actor: Actor
  readonly kind: CommandKind
  /** The Command's Group; absent for Organization-scoped kinds. */
  readonly groupId?: string
  /** The §6.4 signing hash of the accepted Command. */
  readonly commandHash: string
  /** The signed Events of the transaction (Group Events have contiguous sequences). */
  readonly events: readonly Event[]
  /** When the Authority accepted the Command. */
  readonly acceptedAt: string
  /** `true` when this answers a retry of an already accepted Command. */
  readonly duplicate: boolean
}

/**
 * Carries one signed Command to an Authority. Resolves to the {@link Receipt}; rejects with a
 * `ProtocolError` (from `@weft/codec`) carrying the §19 code when the Command is refused.
 */
export interface Transport {
  /**
   * @param command - The signed Command document.
   * @param bytes - Its exact UTF-8 JSON text, as signed; the Authority parses and verifies these.
   */
  submit(command: Readonly<Record<string, unknown>>, bytes: string): Promise<Receipt>
}

/** Builds, signs and sends one Command; the generated builders call this. */
export interface CommandSender {
  send<K extends CommandKind>(kind: K, payload: CommandPayload<K>, options?: CommandOptions): Promise<Receipt>
}
