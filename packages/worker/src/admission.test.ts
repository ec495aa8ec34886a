import { UsageError } from '@weft/codec'
import { OFFER_DECLINE_REASONS, type WorkContract } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { admissionLimits, decideAdmission, estimateSchedule, versionSatisfies, type Abilities, type CapacityFacts, type OfferFacts, type ResourceNeeds } from './admission.js'

const NOW = Date.parse('2026-07-15T00:00:00.000Z')
const CAP = { id: 'weft.test.implementation', version: '1.2.0' }

/** What admission reads of a Work Contract (§10.1), with `overrides`; the rest does not matter here. */
function contract(overrides: Partial<WorkContract> = {}): WorkContract {
  const base = { requiredCapabilities: [CAP], deadline: '2026-07-16T00:00:00Z', budget: { currency: 'USD', financialLimit: 10, modelTokenLimit: 10000 }, sideEffectRisk: 'reversible' }
  return { ...base, ...overrides } as unknown as WorkContract
}

function offer(overrides: Partial<WorkContract> = {}, dependencies: OfferFacts['dependencies'] = []): OfferFacts {
  return { workItemId: 'urn:weft:test:work:a', groupId: 'urn:weft:test:group:one', contract: contract(overrides), dependencies }
}

function abilities(options: { executors?: readonly string[]; needs?: ResourceNeeds; member?: boolean } = {}): Abilities {
  const executors = new Set(options.executors ?? [CAP.id])
  return { hasExecutor: (id) => executors.has(id), needsOf: () => options.needs, member: () => options.member ?? true }
}

const idle: CapacityFacts = { nowMs: NOW, slots: 2, active: 0, held: 0, ahead: 0 }

describe('decideAdmission (§10.3)', () => {
  it('accepts with a §11.2 disclosure that starts now when a slot is free', () => {
    const d = decideAdmission(offer(), idle, admissionLimits(), abilities())
    expect(d).toEqual({
      accept: true,
      scheduleEstimate: {
        estimatedStart: '2026-07-15T00:00:00.000Z',
        estimatedCompletion: '2026-07-15T00:01:00.000Z',
        confidence: 0.9,
        capacityStatus: 'available',
        lastCalculatedAt: '2026-07-15T00:00:00.000Z',
      },
    })
  })

  const cases: readonly [string, () => ReturnType<typeof decideAdmission>, (typeof OFFER_DECLINE_REASONS)[number]][] = [
    ['no executor for the capability', () => decideAdmission(offer(), idle, admissionLimits(), abilities({ executors: [] })), 'capability'],
    ['an incompatible declared version', () => decideAdmission(offer(), idle, admissionLimits({ capabilities: [{ id: CAP.id, version: '2.0.0' }] }), abilities()), 'capability'],
    ['no Membership to sign with', () => decideAdmission(offer(), idle, admissionLimits(), abilities({ member: false })), 'authorization'],
    ['a risk above the authorization', () => decideAdmission(offer({ sideEffectRisk: 'destructive' }), idle, admissionLimits({ maxSideEffectRisk: 'external' }), abilities()), 'authorization'],
    ['the authorize hook', () => decideAdmission(offer(), idle, admissionLimits({ authorize: () => 'restricted data' }), abilities()), 'authorization'],
    ['a failed dependency', () => decideAdmission(offer({}, [{ workItemId: 'urn:weft:test:work:dep', state: 'failed' }]), idle, admissionLimits(), abilities()), 'dependency'],
    ['an unknown dependency', () => decideAdmission(offer({}, [{ workItemId: 'urn:weft:test:work:dep', state: undefined }]), idle, admissionLimits(), abilities()), 'dependency'],
    ['a need above the budget', () => decideAdmission(offer(), idle, admissionLimits(), abilities({ needs: { modelTokenLimit: 20000 } })), 'budget'],
    ['a full queue', () => decideAdmission(offer(), { ...idle, held: 5 }, admissionLimits({ maxQueued: 5 }), abilities()), 'capacity'],
    ['an infeasible deadline', () => decideAdmission(offer({ deadline: '2026-07-15T00:00:30Z' }), idle, admissionLimits(), abilities()), 'deadline'],
  ]
  for (const [name, decide, reason] of cases) {
    it(`declines with ${reason}: ${name}`, () => {
      const d = decide()
      expect(d.accept).toBe(false)
      if (!d.accept) {
        expect(d.reason).toBe(reason)
        expect(OFFER_DECLINE_REASONS).toContain(d.reason)
        expect(d.detail.length).toBeGreaterThan(0)
      }
    })
  }

  it('accepts a pending dependency (it will be queued until verified) and a need within budget', () => {
    const d = decideAdmission(offer({}, [{ workItemId: 'urn:weft:test:work:dep', state: 'active' }]), idle, admissionLimits(), abilities({ needs: { modelTokenLimit: 10000 } }))
    expect(d.accept).toBe(true)
  })

  it('counts the queue against the deadline: the same offer becomes infeasible behind enough work', () => {
    const limits = admissionLimits({ expectedDurationMs: 3_600_000 })
    const c = { deadline: '2026-07-15T05:00:00Z' }
    expect(decideAdmission(offer(c), { ...idle, ahead: 3 }, limits, abilities()).accept).toBe(true)
    expect(decideAdmission(offer(c), { ...idle, active: 2, ahead: 8 }, limits, abilities())).toMatchObject({ accept: false, reason: 'deadline' })
  })
})

describe('estimateSchedule (§11.2)', () => {
  it('never moves the start earlier or raises confidence as more work is ahead', () => {
    const limits = admissionLimits({ maxQueued: 1000 })
    let previous = -Infinity
    let confidence = Infinity
    for (const ahead of [0, 1, 2, 3, 5, 8, 13]) {
      const e = estimateSchedule({ ...idle, active: 2, ahead }, limits, 60_000)
      const start = Date.parse(e.estimatedStart)
      expect(start).toBeGreaterThanOrEqual(previous)
      expect(e.confidence).toBeLessThanOrEqual(confidence)
      expect(Date.parse(e.estimatedCompletion) - start).toBe(60_000)
      expect(e.capacityStatus).toBe('queued')
      previous = start
      confidence = e.confidence
    }
    // Thirteen items ahead on two busy slots: seven waves of one minute.
    expect(previous - NOW).toBe(7 * 60_000)
  })

  it('reports constrained capacity near the queue bound', () => {
    expect(estimateSchedule({ ...idle, held: 8 }, admissionLimits({ maxQueued: 10 }), 1000).capacityStatus).toBe('constrained')
  })
})

describe('limits and versions', () => {
  it('refuses bad limits as local misuse', () => {
    expect(() => admissionLimits({ maxQueued: 0 })).toThrow(UsageError)
    expect(() => admissionLimits({ expectedDurationMs: -1 })).toThrow(UsageError)
    expect(() => admissionLimits({ maxSideEffectRisk: 'lethal' as never })).toThrow(UsageError)
  })

  it('compares capability versions by major, then minor and patch', () => {
    expect(versionSatisfies('1.2.0', '1.0.0')).toBe(true)
    expect(versionSatisfies('1.2.3', '1.2.3')).toBe(true)
    expect(versionSatisfies('1.1.9', '1.2.0')).toBe(false)
    expect(versionSatisfies('2.0.0', '1.0.0')).toBe(false)
  })
})
