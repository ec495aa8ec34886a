import { describe, expect, it } from 'vitest'
import { agentCard, cast } from '@weft/testkit/fixtures'
import { cardCapabilityFor, compareSemver } from './work-contract.js'

describe('capability versions (§6.1, §10.3)', () => {
  it('orders Semantic Versions, pre-releases below their release', () => {
    const sorted = ['1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-alpha.beta', '1.0.0-beta', '1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-rc.1', '1.0.0', '1.2.0', '1.10.0', '2.0.0']
    const shuffled = [...sorted].reverse()
    expect(shuffled.sort(compareSemver)).toEqual(sorted)
    expect(compareSemver('1.0.0+build.1', '1.0.0')).toBe(0)
  })

  it('matches a card capability of the same major version at or above the need', () => {
    const card = agentCard(cast.worker1)
    expect(cardCapabilityFor(card, { id: 'weft.test.implementation', version: '1.0.0' })).toEqual({ id: 'weft.test.implementation', version: '1.0.0' })
    expect(cardCapabilityFor(card, { id: 'weft.test.implementation', version: '0.9.0' })).toBeUndefined()
    expect(cardCapabilityFor(card, { id: 'weft.test.implementation', version: '1.0.1' })).toBeUndefined()
    expect(cardCapabilityFor(card, { id: 'weft.test.other', version: '1.0.0' })).toBeUndefined()
  })
})
