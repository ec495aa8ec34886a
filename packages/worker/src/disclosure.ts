/**
 * Schedule re-disclosure (§11.2): after the estimate sent with `work.accept_offer`, a Worker tells
 * the Group when the schedule of a WorkItem it owns and still queues changes materially. Core has
 * no Command for a revised estimate of queued work, so the revision is a `message.post` in the
 * WorkItem's own Conversation (§9): a short text part plus a `data_ref` part carrying
 * `{ type: 'schedule_estimate', workItemId, scheduleEstimate }` in the shape `work.accept_offer`
 * uses. Active work reports its revised estimate with its progress instead (§11.4, `ctx.progress`).
 *
 * The tracker learns what was disclosed from the Group log itself (acceptances and its own posts),
 * so a restarted Worker compares against what the Group last heard, not against nothing. Posts are
 * rate-limited per WorkItem and per Group on the injected clock, well inside the §20 Message rate.
 * @module
 */
import { UsageError } from '@weft/codec'
import { type Event, isEventOf, type Message, type MessageContentPart, type ScheduleEstimate } from '@weft/spec'

/** Thresholds and rate limits of re-disclosure; every member has a default ({@link DEFAULT_DISCLOSURE_OPTIONS}). */
export interface DisclosureOptions {
  /** The smallest move of the estimated start that is material, in ms. */
  readonly minShiftMs: number
  /** The share of the remaining time to the previously disclosed start that is material (0 to 1). */
  readonly relativeShift: number
  /** At most one revised estimate per WorkItem per this many ms of the Worker clock. */
  readonly minIntervalMs: number
  /** At most this many revised estimates per Group per minute (§20: the Message rate is per actor and Group). */
  readonly maxPerGroupPerMinute: number
}

/** Material: a start moved by more than 10 minutes or 25% of the time to start, whichever is larger; at most one post per WorkItem per 5 minutes and 4 per Group per minute. */
export const DEFAULT_DISCLOSURE_OPTIONS: DisclosureOptions = Object.freeze({
  minShiftMs: 10 * 60_000,
  relativeShift: 0.25,
  minIntervalMs: 5 * 60_000,
  maxPerGroupPerMinute: 4,
})

/** The schema URI the `data_ref` part names: a Weft disclosure record around a §11.2 ScheduleEstimate. */
export const SCHEDULE_ESTIMATE_DATA_SCHEMA = 'urn:weft:schema:schedule-estimate-disclosure:0.1'

/** Why an estimate is disclosed again. */
export type DisclosureReason = 'initial' | 'start_moved' | 'capacity_changed' | 'requeued'

/** The structured data of a disclosure Message. */
export interface ScheduleEstimateData {
  readonly type: 'schedule_estimate'
  readonly workItemId: string
  readonly scheduleEstimate: ScheduleEstimate
}

const MINUTE_MS = 60_000

/**
 * Checks `options` and fills defaults.
 * @throws UsageError on a negative or non-finite duration, a share outside 0 to 1, or a per-minute cap that is not a positive integer.
 */
export function disclosureOptions(options: Partial<DisclosureOptions> = {}): DisclosureOptions {
  const merged: DisclosureOptions = { ...DEFAULT_DISCLOSURE_OPTIONS, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) }
  for (const name of ['minShiftMs', 'minIntervalMs'] as const) {
    if (!(Number.isFinite(merged[name]) && merged[name] >= 0)) throw new UsageError(`disclosure.${name} must be a non-negative number of milliseconds, got ${String(merged[name])}`)
  }
  if (!(Number.isFinite(merged.relativeShift) && merged.relativeShift >= 0 && merged.relativeShift <= 1))
    throw new UsageError(`disclosure.relativeShift must be between 0 and 1, got ${String(merged.relativeShift)}`)
  if (!Number.isSafeInteger(merged.maxPerGroupPerMinute) || merged.maxPerGroupPerMinute < 1)
    throw new UsageError(`disclosure.maxPerGroupPerMinute must be a positive integer, got ${String(merged.maxPerGroupPerMinute)}`)
  return merged
}

/**
 * Whether `next` differs materially from the `previous` disclosure at `nowMs` (§11.2): the capacity
 * status changed, or the start moved by more than the larger of `minShiftMs` and `relativeShift`
 * of the time that was left to the previous start. Confidence alone is never material.
 */
export function materialChange(previous: ScheduleEstimate | undefined, next: ScheduleEstimate, nowMs: number, options: DisclosureOptions): DisclosureReason | undefined {
  if (previous === undefined) return 'initial'
  if (previous.capacityStatus !== next.capacityStatus) return 'capacity_changed'
  const before = Date.parse(previous.estimatedStart)
  const threshold = Math.max(options.minShiftMs, options.relativeShift * Math.max(0, before - nowMs))
  return Math.abs(Date.parse(next.estimatedStart) - before) > threshold ? 'start_moved' : undefined
}

const REASON_TEXT: Readonly<Record<DisclosureReason, string>> = {
  initial: 'Schedule estimate',
  start_moved: 'Revised schedule estimate: the estimated start moved',
  capacity_changed: 'Revised schedule estimate: capacity status changed',
  requeued: 'Revised schedule estimate: the work is queued again',
}

/**
 * The content of a disclosure Message: a short text and the structured estimate. §11.2: only this
 * WorkItem's ID, times, confidence and capacity status; nothing of other Groups, and no position.
 */
export function disclosureContent(workItemId: string, estimate: ScheduleEstimate, reason: DisclosureReason): MessageContentPart[] {
  const data: ScheduleEstimateData = { type: 'schedule_estimate', workItemId, scheduleEstimate: estimate }
  const text = `${REASON_TEXT[reason]}. Start ${estimate.estimatedStart}, completion ${estimate.estimatedCompletion}, confidence ${estimate.confidence}, capacity ${estimate.capacityStatus}.`
  return [
    { type: 'text', text },
    { type: 'data_ref', schema: SCHEDULE_ESTIMATE_DATA_SCHEMA, data },
  ]
}

/** The disclosure a Message carries, if it is one. */
export function disclosedEstimate(message: Pick<Message, 'content'>): ScheduleEstimateData | undefined {
  for (const part of message.content) {
    if (part.type !== 'data_ref' || part.schema !== SCHEDULE_ESTIMATE_DATA_SCHEMA) continue
    const data = part.data as Partial<ScheduleEstimateData> | null
    if (data?.type === 'schedule_estimate' && typeof data.workItemId === 'string' && data.scheduleEstimate !== undefined) return data as ScheduleEstimateData
  }
  return undefined
}

interface Entry {
  /** What the Group last heard, `undefined` when the acceptance carried none. */
  published: ScheduleEstimate | undefined
  /** When it was disclosed or last attempted: the per-WorkItem interval runs from here. */
  lastMs: number
  /** The WorkItem ran since its last disclosure: queued again, it is disclosed anew. */
  ran: boolean
}

/** A decision to post, from {@link DisclosureTracker.review}. */
export interface DisclosurePlan {
  readonly conversationId: string
  readonly reason: DisclosureReason
  readonly content: MessageContentPart[]
}

/** Remembers what each owned WorkItem's Group was told and decides when to tell it again. */
export interface DisclosureTracker {
  /** Folds accepted Events: Conversations of WorkItems, acceptances and this Worker's own disclosures and starts. */
  observe(events: readonly Event[]): void
  /** Whether WorkItem `workItemId` of `groupId` may be disclosed at `nowMs`; cheap, so an estimate is computed only when it may be used. */
  due(workItemId: string, groupId: string, nowMs: number): boolean
  /** What to post for `estimate`, or `undefined` when the change is not material, not due, or the Conversation is unknown. */
  review(workItemId: string, groupId: string, estimate: ScheduleEstimate, nowMs: number): DisclosurePlan | undefined
  /** A post was accepted: `estimate` is what the Group now knows. */
  posted(workItemId: string, groupId: string, estimate: ScheduleEstimate, nowMs: number): void
  /** A post was refused: wait a full interval before this WorkItem tries again, and `holdGroupMs` before its Group does. */
  refused(workItemId: string, groupId: string, nowMs: number, holdGroupMs?: number): void
  /** Drops WorkItems this Worker no longer holds. */
  retain(held: ReadonlySet<string>): void
}

/**
 * Creates the re-disclosure tracker of Worker `self` (§11.2).
 * @throws UsageError on malformed options (see {@link disclosureOptions}).
 * @example
 * ```ts
 * const tracker = createDisclosureTracker(workerId, { minIntervalMs: 60_000 })
 * tracker.observe(events)
 * const plan = tracker.review(id, groupId, estimate, now)
 * if (plan) await client.messagePost({ messageId, conversationId: plan.conversationId, content: plan.content }, { groupId })
 * ```
 */
export function createDisclosureTracker(self: string, options: Partial<DisclosureOptions> = {}): DisclosureTracker {
  const opts = disclosureOptions(options)
  const conversations = new Map<string, string>()
  const entries = new Map<string, Entry>()
  /** Post times per Group in the last minute, and a hold after a refusal. */
  const recent = new Map<string, number[]>()
  const heldUntil = new Map<string, number>()

  function record(workItemId: string, published: ScheduleEstimate | undefined, atMs: number): void {
    entries.set(workItemId, { published, lastMs: atMs, ran: false })
  }

  function groupRoom(groupId: string, nowMs: number): boolean {
    if ((heldUntil.get(groupId) ?? -Infinity) > nowMs) return false
    const times = (recent.get(groupId) ?? []).filter((t) => t > nowMs - MINUTE_MS)
    recent.set(groupId, times)
    return times.length < opts.maxPerGroupPerMinute
  }

  function due(workItemId: string, groupId: string, nowMs: number): boolean {
    const entry = entries.get(workItemId)
    if (entry !== undefined && nowMs - entry.lastMs < opts.minIntervalMs) return false
    return conversations.has(workItemId) && groupRoom(groupId, nowMs)
  }

  return {
    observe(events) {
      for (const event of events) {
        if (isEventOf(event, 'work.authorized')) {
          const doc = event.payload.workItem
          conversations.set(doc.workItemId, doc.conversationId)
        } else if (isEventOf(event, 'work.offer.accepted')) {
          const p = event.payload
          if (p.assigneeId === self) record(p.workItemId, p.scheduleEstimate, Date.parse(event.occurredAt))
        } else if (isEventOf(event, 'work.started') && event.actor.id === self) {
          const entry = entries.get(event.payload.workItemId)
          if (entry !== undefined) entry.ran = true
        } else if (isEventOf(event, 'message.posted') && event.actor.id === self) {
          const data = disclosedEstimate(event.payload)
          if (data !== undefined && entries.has(data.workItemId)) record(data.workItemId, data.scheduleEstimate, Date.parse(event.occurredAt))
        }
      }
    },
    due,
    review(workItemId, groupId, estimate, nowMs) {
      if (!due(workItemId, groupId, nowMs)) return undefined
      const entry = entries.get(workItemId)
      const reason = entry?.ran === true ? 'requeued' : materialChange(entry?.published, estimate, nowMs, opts)
      if (reason === undefined) return undefined
      return { conversationId: conversations.get(workItemId)!, reason, content: disclosureContent(workItemId, estimate, reason) }
    },
    posted(workItemId, groupId, estimate, nowMs) {
      record(workItemId, estimate, nowMs)
      const times = recent.get(groupId)
      if (times === undefined) recent.set(groupId, [nowMs])
      else times.push(nowMs)
    },
    refused(workItemId, groupId, nowMs, holdGroupMs = 0) {
      const entry = entries.get(workItemId)
      if (entry === undefined) record(workItemId, undefined, nowMs)
      else entry.lastMs = nowMs
      if (holdGroupMs > 0) heldUntil.set(groupId, nowMs + holdGroupMs)
    },
    retain(held) {
      for (const id of entries.keys()) if (!held.has(id)) entries.delete(id)
    },
  }
}
