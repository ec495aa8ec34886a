import { describe, expect, it } from 'vitest'
import { createVirtualClock, seededRandom } from './clock.js'

describe('createVirtualClock', () => {
  it('resolves sleepers in due order only when moved, and never moves back', async () => {
    const clock = createVirtualClock(1_000)
    const woke: string[] = []
    void clock.sleep(50).then(() => woke.push('late'))
    void clock.sleep(10).then(() => woke.push('early'))
    expect(clock.nextDueMs()).toBe(1_010)
    expect(clock.advanceTo(1_020)).toBe(1)
    await Promise.resolve()
    expect(woke).toEqual(['early'])
    expect(clock.advanceTo(500)).toBe(0)
    expect(clock.now()).toBe(1_020)
    clock.advanceTo(2_000)
    await Promise.resolve()
    expect(woke).toEqual(['early', 'late'])
    expect(clock.nextDueMs()).toBeUndefined()
  })
})

describe('seededRandom', () => {
  it('repeats per seed and stream, and differs across them', () => {
    const a = seededRandom(1, 'x')(40)
    expect(seededRandom(1, 'x')(40)).toEqual(a)
    expect(seededRandom(2, 'x')(40)).not.toEqual(a)
    expect(seededRandom(1, 'y')(40)).not.toEqual(a)
    // Draws continue the stream rather than restarting it.
    const r = seededRandom(1, 'x')
    expect([...r(16), ...r(24)]).toEqual([...a])
  })
})
