/**
 * Lost answers (§19): a slot's owner Commands whose answer the link lost. The Authority may or may
 * not have applied such a Command, so it is never rebuilt: it is sent again unchanged (same Action
 * ID, so an applied one is answered with its first receipt) before anything that depends on it,
 * and what each outcome means for the slot is carried out then.
 * @module
 */
import { ProtocolError } from '@weft/codec'
import type { BuiltCommand, Receipt } from '@weft/client'
import { isTransportUnavailable } from './offline.js'
import type { SlotHost } from './slot-host.js'

/**
 * An owner Command whose answer the link lost: the Authority may or may not have applied it. It is
 * kept to be sent again unchanged on reconnection (§19); `applied` and `notApplied` carry out what
 * each outcome means for the slot.
 */
export interface Unanswered {
  readonly built: BuiltCommand
  readonly applied: (receipt: Receipt) => void
  readonly notApplied?: () => void | Promise<void>
}

/** The Commands of one slot whose answers were lost, in the order sent. */
export interface LostAnswers {
  /**
   * §19: sends again, unchanged, a Command whose answer was lost. The Authority answers a repeated
   * Action ID with its first receipt, and idempotency is checked before every stage whose outcome
   * could have changed since, so any other refusal means it never applied it; all but freshness,
   * which comes first: past the window the retry is refused as `AUTH_INVALID_SIGNATURE` either way,
   * and the Worker's log tells, the receipt rebuilt from the Events the Command caused.
   * @returns the receipt when the Command was applied, now or before; `undefined` when it was not
   * @throws the transport's error when the answer is lost again
   */
  retried(built: BuiltCommand): Promise<Receipt | undefined>
  /** Sends `built` and, when the link loses the answer, keeps it with `outcome` before throwing the transport's error. */
  sendKept(built: BuiltCommand, outcome: Omit<Unanswered, 'built'>): Promise<Receipt>
  /** §19: every kept Command again, in the order sent; each outcome is carried out. */
  settle(): Promise<void>
}

/** The lost answers of a slot working in `groupId`. */
export function createLostAnswers(host: Pick<SlotHost, 'actor' | 'store' | 'submit'>, groupId: string): LostAnswers {
  // Checkpoints, renewals and usage records sent whose answer the link lost, in the order sent: each
  // is retried unchanged on reconnection, never rebuilt, so none is applied twice (§19).
  const unanswered: Unanswered[] = []

  /** The receipt of `built` as this Worker's log knows it: the Events it caused; `undefined` when the log holds none. */
  function receiptFromLog(built: BuiltCommand): Receipt | undefined {
    const { actionId, kind } = built.command
    const events = host.store.events(groupId).filter((e) => e.cause.type === 'command' && e.cause.id === actionId)
    const first = events[0]
    if (first === undefined) return undefined
    return { actionId, actor: host.actor, kind, groupId, commandHash: first.commandHash ?? '', events, acceptedAt: first.occurredAt, duplicate: true }
  }

  async function retried(built: BuiltCommand): Promise<Receipt | undefined> {
    try {
      return await host.submit(built)
    } catch (error) {
      if (isTransportUnavailable(error)) throw error
      return ProtocolError.from(error).code === 'AUTH_INVALID_SIGNATURE' ? receiptFromLog(built) : undefined
    }
  }

  return {
    retried,
    async sendKept(built, outcome) {
      try {
        return await host.submit(built)
      } catch (error) {
        if (isTransportUnavailable(error)) unanswered.push({ built, ...outcome })
        throw error
      }
    },
    async settle() {
      while (unanswered.length > 0) {
        const { built, applied, notApplied } = unanswered[0]!
        const receipt = await retried(built)
        unanswered.shift()
        if (receipt !== undefined) applied(receipt)
        else await notApplied?.()
      }
    },
  }
}
