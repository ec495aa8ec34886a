import { signingHash } from '@weft/codec'
import { describe, expect, it } from 'vitest'
import { cast, testClock, signed } from '@weft/testkit/fixtures'
import { decodeTrusted } from './decode.js'

describe('decodeTrusted', () => {
  it('knows the signing hash only once something read it, and then the RFC 8785 hash of the Command', () => {
    const command = JSON.parse(signed('ext.missionweaveprotocol.identity.session_open', { agentId: cast.worker1.actor.id }, cast.controlPlane, {}, testClock())) as object
    const decoded = decodeTrusted(command)
    expect(decoded.knownHash).toBeUndefined()
    expect(decoded.commandHash).toBe(signingHash(command))
    expect(decoded.knownHash).toBe(decoded.commandHash)
  })
})
