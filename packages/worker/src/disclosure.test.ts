import { UsageError } from '@weft/codec'
import type { Event, ScheduleEstimate } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { createDisclosureTracker, DEFAULT_DISCLOSURE_OPTIONS, disclosedEstimate, disclosureContent, disclosureOptions, materialChange, SCHEDULE_ESTIMATE_DATA_SCHEMA } from './disclosure.js'

const T0 = Date.parse('2026-07-15T00:00:00.000Z')
const MIN = 60_000
const SELF = 'urn:weft:test:agent:worker1'
const GROUP = 'urn:weft:test:group:one'
const ITEM = 'urn:weft:test:work:a'
const CONVERSATION = 'urn:weft:test:conversation:a'

function estimate(startMs: number, capacityStatus: ScheduleEstimate['capacityStatus'] = 'queued', nowMs = T0): ScheduleEstimate {
  const iso = (ms: number) => new Date(ms).toISOString()
  return { estimatedStart: iso(startMs), estimatedCompletion: iso(startMs + 20 * MIN), confidence: 0.6, capacityStatus, lastCalculatedAt: iso(nowMs) }
}

/** The Events a tracker needs: the WorkItem's Conversation and this Worker's acceptance with `accepted`. */
function history(accepted: ScheduleEstimate, atMs = T0): Event[] {
  const at = new Date(atMs).toISOString()
  const actor = { type: 'agent', id: SELF }
  return [
    { kind: 'work.authorized', occurredAt: at, actor, payload: { workItem: { workItemId: ITEM, conversationId: CONVERSATION } } },
    { kind: 'work.offer.accepted', occurredAt: at, actor, payload: { workItemId: ITEM, assigneeId: SELF, scheduleEstimate: accepted } },
  ] as unknown as Event[]
}

describe('materialChange (§11.2)', () => {
  const opts = DEFAULT_DISCLOSURE_OPTIONS

  it('needs a start move beyond the larger of 10 minutes and 25% of the time to start', () => {
    // 20 minutes to start: 25% is 5 minutes, so 10 minutes is the threshold.
    expect(materialChange(estimate(T0 + 20 * MIN), estimate(T0 + 30 * MIN), T0, opts)).toBeUndefined()
    expect(materialChange(estimate(T0 + 20 * MIN), estimate(T0 + 31 * MIN), T0, opts)).toBe('start_moved')
    expect(materialChange(estimate(T0 + 20 * MIN), estimate(T0 + 9 * MIN), T0, opts)).toBe('start_moved')
    // 120 minutes to start: 25% is 30 minutes.
    expect(materialChange(estimate(T0 + 120 * MIN), estimate(T0 + 145 * MIN), T0, opts)).toBeUndefined()
    expect(materialChange(estimate(T0 + 120 * MIN), estimate(T0 + 151 * MIN), T0, opts)).toBe('start_moved')
  })

  it('treats a capacity status change as material and a confidence change alone as not', () => {
    expect(materialChange(estimate(T0), estimate(T0, 'constrained'), T0, opts)).toBe('capacity_changed')
    expect(materialChange(estimate(T0), { ...estimate(T0), confidence: 0.1 }, T0, opts)).toBeUndefined()
    expect(materialChange(undefined, estimate(T0), T0, opts)).toBe('initial')
  })
})

describe('disclosureContent', () => {
  it('carries a text part and the structured estimate, and reads back', () => {
    const e = estimate(T0 + 40 * MIN)
    const content = disclosureContent(ITEM, e, 'start_moved')
    expect(content[0]).toMatchObject({ type: 'text' })
    expect(content[1]).toEqual({ type: 'data_ref', schema: SCHEDULE_ESTIMATE_DATA_SCHEMA, data: { type: 'schedule_estimate', workItemId: ITEM, scheduleEstimate: e } })
    expect(disclosedEstimate({ content })).toEqual({ type: 'schedule_estimate', workItemId: ITEM, scheduleEstimate: e })
    expect(disclosedEstimate({ content: [{ type: 'text', text: 'hello' }] })).toBeUndefined()
  })
})

describe('disclosureOptions', () => {
  it('refuses malformed thresholds', () => {
    expect(() => disclosureOptions({ relativeShift: 2 })).toThrow(UsageError)
    expect(() => disclosureOptions({ minIntervalMs: -1 })).toThrow(UsageError)
    expect(() => disclosureOptions({ maxPerGroupPerMinute: 0 })).toThrow(UsageError)
    expect(disclosureOptions({ minShiftMs: 1 }).minShiftMs).toBe(1)
  })
})

describe('createDisclosureTracker', () => {
  it('compares against the accepted estimate and waits out the interval after acceptance', () => {
    const t = createDisclosureTracker(SELF)
    t.observe(history(estimate(T0 + 20 * MIN)))
    const moved = estimate(T0 + 60 * MIN)
    expect(t.review(ITEM, GROUP, moved, T0 + MIN)).toBeUndefined()
    expect(t.review(ITEM, GROUP, estimate(T0 + 25 * MIN), T0 + 5 * MIN)).toBeUndefined()
    expect(t.review(ITEM, GROUP, moved, T0 + 5 * MIN)).toMatchObject({ conversationId: CONVERSATION, reason: 'start_moved' })
  })

  it('posts at most one revision per WorkItem per interval, compared with what was last posted', () => {
    const t = createDisclosureTracker(SELF)
    t.observe(history(estimate(T0 + 20 * MIN)))
    const first = estimate(T0 + 60 * MIN)
    t.posted(ITEM, GROUP, first, T0 + 5 * MIN)
    expect(t.review(ITEM, GROUP, estimate(T0 + 120 * MIN), T0 + 9 * MIN)).toBeUndefined()
    expect(t.review(ITEM, GROUP, estimate(T0 + 62 * MIN), T0 + 10 * MIN)).toBeUndefined()
    expect(t.review(ITEM, GROUP, estimate(T0 + 120 * MIN), T0 + 10 * MIN)?.reason).toBe('start_moved')
  })

  it('caps posts per Group per minute and holds a Group back after a rate refusal', () => {
    const t = createDisclosureTracker(SELF, { maxPerGroupPerMinute: 1, minIntervalMs: 0 })
    t.observe(history(estimate(T0)))
    t.posted('urn:weft:test:work:other', GROUP, estimate(T0), T0)
    expect(t.due(ITEM, GROUP, T0 + 30_000)).toBe(false)
    expect(t.due(ITEM, GROUP, T0 + MIN + 1)).toBe(true)
    t.refused(ITEM, GROUP, T0 + MIN + 1, 60_000)
    expect(t.due(ITEM, GROUP, T0 + MIN + 2)).toBe(false)
    expect(t.due(ITEM, GROUP, T0 + 2 * MIN + 2)).toBe(true)
  })

  it('discloses again after the WorkItem ran and was queued again, and learns its own posts from the log', () => {
    const t = createDisclosureTracker(SELF)
    const accepted = estimate(T0 + 20 * MIN)
    t.observe(history(accepted))
    t.observe([{ kind: 'work.started', occurredAt: new Date(T0).toISOString(), actor: { type: 'agent', id: SELF }, payload: { workItemId: ITEM } }] as unknown as Event[])
    expect(t.review(ITEM, GROUP, accepted, T0 + 6 * MIN)?.reason).toBe('requeued')
    const posted = { kind: 'message.posted', occurredAt: new Date(T0 + 6 * MIN).toISOString(), actor: { type: 'agent', id: SELF }, payload: { content: disclosureContent(ITEM, accepted, 'requeued') } }
    t.observe([posted] as unknown as Event[])
    expect(t.review(ITEM, GROUP, accepted, T0 + 12 * MIN)).toBeUndefined()
  })

  it('stays silent without a known Conversation and forgets WorkItems no longer held', () => {
    const t = createDisclosureTracker(SELF)
    expect(t.review('urn:weft:test:work:unknown', GROUP, estimate(T0), T0)).toBeUndefined()
    t.observe(history(estimate(T0 + 20 * MIN)))
    t.retain(new Set())
    // Forgotten: no baseline, no interval, so the next estimate is an initial disclosure.
    expect(t.review(ITEM, GROUP, estimate(T0 + 20 * MIN), T0 + MIN)?.reason).toBe('initial')
  })
})
