// Signed Commands submitted together: their signatures are checked on the threadpool, while each
// one's admission and commit still run alone, in submission order, at the time it was submitted.
import { describe, expect, it } from 'vitest'
import { agentCard, cast, GROUP, testClock, type TestClock, signed } from '@weft/testkit/fixtures'
import { AGENTS, bootstrapCommands, inGroup, testAuthority, workerMembership } from '../../test/fixtures-pipeline.js'
import type { Authority } from './pipeline.js'

/** What a caller and an auditor can see of a run: each outcome, the audit record, the log and the state. */
async function outcomes(authority: Authority, pending: Promise<unknown>[]): Promise<unknown> {
  const settled = await Promise.allSettled(pending)
  return {
    outcomes: settled.map((s) => (s.status === 'fulfilled' ? JSON.stringify(s.value) : `${(s.reason as { code: string }).code}: ${(s.reason as Error).message}`)),
    audit: authority.audit(),
    log: JSON.stringify([...authority.organizationEvents(), ...authority.events(GROUP)]),
    state: authority.state,
  }
}

/** The bootstrap and a first Membership as Command texts, with `broken` ones spliced in (refused, or accepted only in order). */
function commandsOn(clock: TestClock): string[] {
  const good = bootstrapCommands(clock)
  const renew = good.at(-1)!
  const broken = [
    // Stage 6: the content changed under the signature.
    renew.replace('"leaseSeconds":600', '"leaseSeconds":601'),
    // Stage 1: not JSON.
    `${renew}}`,
    // Past the signature: the same Action ID again, a duplicate of an accepted Command.
    renew,
    // An embedded document changed under its own signature, in a validly signed Command: the
    // handler refuses it at the card's stage 6 (checked ahead on the threadpool when in flight).
    signed('ext.missionweaveprotocol.registry.agent_card_register', { card: { ...agentCard(cast.worker3, 2), displayName: 'forged' } }, cast.controlPlane, {}, clock),
    // Accepted only after mission.create: out of order, the Group would not exist yet.
    signed('membership.change', workerMembership(cast.worker2), cast.coordinator, inGroup(cast.coordinator), clock),
  ]
  // The refusals sit among the accepted Commands, a stage-6 one before the Command it imitates.
  return [...good.slice(0, 4), broken[0]!, ...good.slice(4, -1), broken[1]!, broken[3]!, renew, broken[2]!, broken[4]!, ...good.slice(-1)]
}

describe('signed Commands submitted together', () => {
  it('give every caller and auditor exactly what submitting them one at a time gives', async () => {
    const clock = testClock()
    const commands = commandsOn(clock)
    const oneByOne = testAuthority(clock)
    const sequential: Promise<unknown>[] = []
    for (const bytes of commands) {
      const receipt = oneByOne.submit(bytes)
      sequential.push(receipt)
      await receipt.catch(() => undefined)
    }
    const together = testAuthority(clock)
    const expected = await outcomes(oneByOne, sequential)
    const actual = await outcomes(
      together,
      commands.map((bytes) => together.submit(bytes)),
    )
    expect(actual).toEqual(expected)
    // The mix really has refusals at several stages, a duplicate and acceptances.
    const { outcomes: results, audit } = expected as { outcomes: string[]; audit: { stage: string }[] }
    expect(results.filter((r) => r.startsWith('{')).length).toBe(commands.length - 3)
    expect(results.some((r) => r.includes('"duplicate":true'))).toBe(true)
    expect(audit.map((a) => a.stage)).toEqual(['signature', 'parse', 'agent-card:signature'])
  })

  it('in waves while others are still being checked, commit in submission order', async () => {
    const clock = testClock()
    const commands = commandsOn(clock)
    const reference = testAuthority(clock)
    for (const bytes of commands) await reference.submit(bytes).catch(() => undefined)
    const authority = testAuthority(clock)
    const pending: Promise<unknown>[] = []
    // Three at a time, the next wave before the last one's receipts are back.
    for (let i = 0; i < commands.length; i += 3) {
      pending.push(...commands.slice(i, i + 3).map((bytes) => authority.submit(bytes)))
      if (i % 2 === 0) await Promise.resolve()
    }
    await Promise.allSettled(pending)
    expect(JSON.stringify(authority.events(GROUP))).toBe(JSON.stringify(reference.events(GROUP)))
    expect(authority.state).toEqual(reference.state)
    expect(authority.replayState()).toEqual(authority.state)
  })

  it('each run at the Authority time it was submitted at, not when its turn came', async () => {
    const clock = testClock()
    const [card, session] = [
      signed('ext.missionweaveprotocol.registry.agent_card_register', { card: agentCard(cast.worker1) }, cast.controlPlane, {}, clock),
      signed('ext.missionweaveprotocol.identity.session_open', { agentId: cast.worker1.actor.id }, cast.controlPlane, {}, clock),
    ]
    const authority = testAuthority(clock)
    const submittedAt = new Date(clock.nowMs).toISOString()
    // Alone (run at once on this thread) and together (checked on the threadpool).
    const alone = authority.submit(card)
    clock.advance(60)
    expect((await alone).acceptedAt).toBe(submittedAt)
    const later = new Date(clock.nowMs).toISOString()
    const together = [authority.submit(session), authority.submit(card)] as const
    clock.advance(60)
    const [opened, retried] = await Promise.all(together)
    expect(opened.acceptedAt).toBe(later)
    expect(retried).toMatchObject({ duplicate: true, acceptedAt: submittedAt })
  })

  it('leave the state untouched until their turn: submitTrusted runs at once, ahead of them', async () => {
    const clock = testClock()
    const authority = testAuthority(clock)
    const cards = AGENTS.map((who) => signed('ext.missionweaveprotocol.registry.agent_card_register', { card: agentCard(who) }, cast.controlPlane, {}, clock))
    const pending = cards.slice(1).map((bytes) => authority.submit(bytes))
    expect(authority.organizationEvents()).toHaveLength(0)
    const first = authority.submitTrusted(JSON.parse(cards[0]!) as object)
    const rest = await Promise.all(pending)
    expect([first, ...rest].map((r) => r.events[0]!.eventId)).toEqual(authority.organizationEvents().map((e) => e.eventId))
  })
})
