/**
 * Small pieces shared by the screens: refusal notes (§19 code plus a plain sentence), a hook for
 * signed actions, and text helpers. Protocol text is only ever rendered as JSX text.
 * @module
 */
import { useState } from 'preact/hooks'
import { refusalOf, type Refusal } from '../errors.js'

/** A refusal shown as its §19 code and a plain sentence, announced to screen readers. */
export function RefusalNote({ refusal, testId = 'refusal' }: { readonly refusal: Refusal | undefined; readonly testId?: string }) {
  if (refusal === undefined) return null
  return (
    <p class="refusal" role="alert" data-testid={testId}>
      <code class="code">{refusal.code}</code> {refusal.sentence}
    </p>
  )
}

/** What a signed action came to: its refusal (§19 code and sentence) or its done note. */
export function ActionOutcome({ action, testId }: { readonly action: ActionState; readonly testId?: string }) {
  return (
    <>
      <RefusalNote refusal={action.refusal} {...(testId === undefined ? {} : { testId: `${testId}-refusal` })} />
      {action.done === undefined ? null : (
        <p class="ok" role="status" {...(testId === undefined ? {} : { 'data-testid': `${testId}-done` })}>
          {action.done}
        </p>
      )}
    </>
  )
}

/** The state of one signed action: busy, done (with a note) or refused. */
export interface ActionState {
  readonly busy: boolean
  readonly refusal: Refusal | undefined
  readonly done: string | undefined
  run(work: () => Promise<string | undefined>, onRefused?: (refusal: Refusal) => void): Promise<boolean>
  reset(): void
}

/** Runs one action at a time and keeps its outcome for display. */
export function useAction(): ActionState {
  const [busy, setBusy] = useState(false)
  const [refusal, setRefusal] = useState<Refusal | undefined>(undefined)
  const [done, setDone] = useState<string | undefined>(undefined)
  return {
    busy,
    refusal,
    done,
    async run(work, onRefused) {
      if (busy) return false
      setBusy(true)
      setRefusal(undefined)
      setDone(undefined)
      try {
        setDone(await work())
        return true
      } catch (error) {
        const r = refusalOf(error)
        setRefusal(r)
        onRefused?.(r)
        return false
      } finally {
        setBusy(false)
      }
    },
    reset() {
      setRefusal(undefined)
      setDone(undefined)
    },
  }
}

/** A full content hash, selectable, never shortened where a decision depends on it. */
export function Hash({ value }: { readonly value: string }) {
  return <code class="hash">{value}</code>
}

/** `2026-07-15 10:31:02` from a protocol timestamp, in UTC (the Authority's zone of record). */
export function formatTime(timestamp: string | undefined): string {
  if (timestamp === undefined) return '—'
  const ms = Date.parse(timestamp)
  if (Number.isNaN(ms)) return timestamp
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 19)
}

/** The last segment of a URN-ish ID, for compact labels (the full ID stays in a title or beside it). */
export function shortId(id: string | undefined): string {
  if (id === undefined) return '—'
  const parts = id.split(':')
  const last = parts.at(-1) ?? id
  return last.length > 24 ? `${last.slice(0, 8)}…${last.slice(-6)}` : last
}

/** A state badge with a colour class per state (§7.1, §10.2). */
export function StateBadge({ state, testId }: { readonly state: string | undefined; readonly testId?: string }) {
  const s = state ?? 'unknown'
  return (
    <span class={`badge state-${s.replace(/[^a-z_]/g, '')}`} data-testid={testId}>
      {s.replace(/_/g, ' ')}
    </span>
  )
}
