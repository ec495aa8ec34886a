import type { HelloClientInitFrame } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import type { AdmittedHuman } from './human-sessions.js'
import { INITIAL_LIFECYCLE, initOf, sessionOf, transition, type ConnectionLifecycle, type LifecycleInput } from './lifecycle.js'

const init: HelloClientInitFrame = {
  protocolVersion: '0.1',
  frameId: 'urn:test:frame:1',
  frameType: 'HELLO',
  phase: 'client_init',
  agentId: 'agent-1',
  keyId: 'key-1',
  clientNonce: 'Y2xpZW50LW5vbmNl',
  supportedVersions: ['0.1'],
}

const human: AdmittedHuman = { ok: true, principal: { type: 'human', id: 'ada' }, keyId: 'key-ada', sessionId: 'console-1', expiresAtMs: 9_000 }

const inputs = {
  clientInit: { on: 'client-init', init, serverNonce: 'server-nonce', challenge: 'challenge' },
  verified: { on: 'response-verified' },
  opened: { on: 'session-opened', sessionEpoch: 7, expiresAtMs: 5_000 },
  admitted: { on: 'human-admitted', human },
  ended: { on: 'ended' },
} satisfies Record<string, LifecycleInput>

const challenged = transition(INITIAL_LIFECYCLE, inputs.clientInit)
const opening = transition(challenged, inputs.verified)
const agentOpen = transition(opening, inputs.opened)
const humanOpen = transition(INITIAL_LIFECYCLE, inputs.admitted)

/** Every phase the machine reaches, with one value of each. */
const phases: Record<ConnectionLifecycle['phase'], ConnectionLifecycle> = {
  'awaiting-init': INITIAL_LIFECYCLE,
  'awaiting-response': challenged,
  opening,
  open: agentOpen,
  closed: transition(agentOpen, inputs.ended),
}

describe('the connection lifecycle', () => {
  it('walks an Agent through the handshake: client_init, a verified response, the opened Session Epoch (§6.3)', () => {
    expect(challenged).toEqual({ phase: 'awaiting-response', init, serverNonce: 'server-nonce', challenge: 'challenge' })
    expect(opening).toEqual({ phase: 'opening', init })
    expect(agentOpen).toEqual({ phase: 'open', init, session: { kind: 'agent', actor: { type: 'agent', id: 'agent-1' }, sessionEpoch: 7, expiresAtMs: 5_000 } })
  })

  it('opens an admitted person at once, without a handshake or a Session Epoch (§5, §6.3)', () => {
    expect(humanOpen).toEqual({ phase: 'open', init: undefined, session: { kind: 'human', actor: { type: 'human', id: 'ada' }, keyId: 'key-ada', sessionId: 'console-1', expiresAtMs: 9_000 } })
  })

  it('ends from every phase but closed, keeping what the connection had reached', () => {
    expect(transition(INITIAL_LIFECYCLE, inputs.ended)).toEqual({ phase: 'closed', session: undefined, init: undefined })
    expect(transition(challenged, inputs.ended)).toEqual({ phase: 'closed', session: undefined, init })
    expect(transition(opening, inputs.ended)).toEqual({ phase: 'closed', session: undefined, init })
    const closedAgent = transition(agentOpen, inputs.ended)
    expect(closedAgent).toEqual({ phase: 'closed', session: sessionOf(agentOpen), init })
    expect(transition(humanOpen, inputs.ended)).toEqual({ phase: 'closed', session: sessionOf(humanOpen), init: undefined })
  })

  it('ignores every input that does not apply to the phase: the same object comes back', () => {
    const legal = new Set([
      'awaiting-init client-init',
      'awaiting-init human-admitted',
      'awaiting-response response-verified',
      'opening session-opened',
      'awaiting-init ended',
      'awaiting-response ended',
      'opening ended',
      'open ended',
    ])
    let ignored = 0
    for (const [phase, state] of Object.entries(phases)) {
      for (const input of Object.values(inputs)) {
        const next = transition(state, input)
        if (legal.has(`${phase} ${input.on}`)) expect(next, `${phase} ${input.on}`).not.toBe(state)
        else {
          expect(next, `${phase} ${input.on}`).toBe(state)
          ignored++
        }
      }
    }
    // 5 phases × 5 inputs, 8 of them transitions.
    expect(ignored).toBe(17)
  })

  it('does not take a session the Authority opened after the connection ended', () => {
    const closed = transition(opening, inputs.ended)
    expect(transition(closed, inputs.opened)).toBe(closed)
    expect(closed.phase).toBe('closed')
  })

  it('names the client_init and the session from when they exist, also after the close', () => {
    expect(initOf(INITIAL_LIFECYCLE)).toBeUndefined()
    expect(initOf(challenged)).toBe(init)
    expect(sessionOf(opening)).toBeUndefined()
    expect(sessionOf(agentOpen)?.kind).toBe('agent')
    expect(sessionOf(phases.closed)).toBe(sessionOf(agentOpen))
    expect(initOf(phases.closed)).toBe(init)
    expect(initOf(humanOpen)).toBeUndefined()
  })
})
