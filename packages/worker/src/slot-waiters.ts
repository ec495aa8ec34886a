/**
 * The executor calls of one slot that wait for the Group service to come back (§11.5: while
 * offline, whatever needs a currently valid lease waits for reconciliation). Reconciliation lets
 * them all go on; a lost lease or the end of the run fails them all with its reason.
 * @module
 */

/** The waiting calls of one slot. */
export interface Waiters {
  /** Waits until {@link Waiters.release} or {@link Waiters.fail}. */
  wait(): Promise<void>
  /** Lets every waiting call go on (the slot reconciled and holds a lease). */
  release(): void
  /** Fails every waiting call with `error` (the lease is lost, or the run ended). */
  fail(error: unknown): void
}

/** No call waiting yet. */
export function createWaiters(): Waiters {
  let waiting: { resolve: () => void; reject: (error: unknown) => void }[] = []
  const settle = (each: (w: (typeof waiting)[number]) => void): void => {
    const all = waiting
    waiting = []
    for (const w of all) each(w)
  }
  return {
    wait() {
      const promise = new Promise<void>((resolve, reject) => void waiting.push({ resolve, reject }))
      // A waiter may be abandoned when its executor stops; its rejection must not surface as unhandled.
      promise.catch(() => {})
      return promise
    },
    release: () => settle((w) => w.resolve()),
    fail: (error) => settle((w) => w.reject(error)),
  }
}
