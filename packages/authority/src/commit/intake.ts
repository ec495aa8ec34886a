/**
 * `Authority.submit`'s intake of signed Commands: each is admitted and committed alone and in the
 * order submitted, at the Authority time of its submission; only the Ed25519 check of Commands
 * submitted together overlaps, on the libuv threadpool (§6.4 stage 6).
 * @module
 */
import type { Receipt } from '@weft/client'
import type { KeyResolver, SignedVerifier } from '@weft/codec'
import { decodeSigned, decodeSignedAsync, type Decoded } from '../ingress/decode.js'

/** Runs one signed Command received at `nowMs` to its receipt with `decode` as its ingress up to the signature; throws the caller's refusal. */
export type RunSigned = (bytes: string | Uint8Array, nowMs: number, decode: (input: unknown) => Decoded) => Receipt

/** What {@link createSignedIntake} decodes with. */
export interface IntakeOptions {
  readonly verifier: SignedVerifier
  readonly registry: KeyResolver
  readonly maxCommandBytes: number
  /** The Authority clock, epoch milliseconds. */
  readonly now: () => number
}

/** A signed Command submitted and not yet started. */
interface Intake {
  readonly bytes: string | Uint8Array
  /** The Authority clock when it was submitted: its time through the whole ingress. */
  readonly nowMs: number
  readonly resolve: (receipt: Receipt) => void
  readonly reject: (refusal: unknown) => void
}

/** `Authority.submit` over `run`: see the module. */
export function createSignedIntake(run: RunSigned, { verifier, registry, maxCommandBytes, now }: IntakeOptions): (bytes: string | Uint8Array) => Promise<Receipt> {
  // Signed Commands submitted in this turn of the event loop and not yet started, in order.
  let intake: Intake[] = []
  // Signed Commands whose Ed25519 check went to the threadpool and whose turn has not ended.
  let inFlight = 0
  // The turn of the last of them: each one's admission and commit wait for it.
  let turn: Promise<void> = Promise.resolve()
  const decodeNow = (bytes: unknown): Decoded => decodeSigned(bytes as string | Uint8Array, verifier, registry, maxCommandBytes)

  /**
   * `submit`: the Command joins the intake, which is drained once the caller's synchronous run
   * ends (a microtask), so the Commands submitted together are seen together (see {@link drain}).
   */
  function submitSigned(bytes: string | Uint8Array): Promise<Receipt> {
    return new Promise((resolve, reject) => {
      if (intake.length === 0) queueMicrotask(drain)
      intake.push({ bytes, nowMs: now(), resolve, reject })
    })
  }

  /**
   * Starts the Commands of the intake. Each is admitted and committed alone and in the order
   * submitted, at the Authority time of its submission, exactly as if it ran at once; what may
   * overlap is the Ed25519 check of its signature (§6.4 stage 6), which depends on nothing the
   * Authority holds. A Command submitted alone, with none in flight, runs at once on this thread:
   * the threadpool's round trip would only add its latency. Otherwise each one's size limit and
   * stages 1–5 run now, its equation goes to the libuv threadpool, and its turn comes when the
   * Command before it is done and its own check is back; when none was in flight, the first of the
   * batch runs at once on this thread while the threadpool checks the others.
   */
  function drain(): void {
    const batch = intake
    intake = []
    const alone = inFlight === 0
    for (let i = alone ? 1 : 0; i < batch.length; i++) schedule(batch[i]!)
    if (alone) settle(batch[0]!, decodeNow)
  }

  /** The Command's stages up to the equation now, the equation on the threadpool, the rest in its turn. */
  function schedule(command: Intake): void {
    inFlight++
    let verified: Promise<Decoded>
    try {
      verified = decodeSignedAsync(command.bytes, verifier, registry, maxCommandBytes)
    } catch (refusal) {
      verified = Promise.reject(refusal)
    }
    // Settled either way before its turn, so a refusal is not reported as unhandled while it waits.
    const outcome = verified.then(
      (decoded) => () => decoded,
      (refusal: unknown) => () => {
        throw refusal
      },
    )
    turn = turn
      .then(() => outcome)
      .then((decode) => {
        inFlight--
        settle(command, decode)
      })
  }

  /** Runs a signed Command to its receipt, or its refusal, for its caller. */
  function settle(command: Intake, decode: (input: unknown) => Decoded): void {
    try {
      command.resolve(run(command.bytes, command.nowMs, decode))
    } catch (refusal) {
      command.reject(refusal)
    }
  }

  return submitSigned
}
