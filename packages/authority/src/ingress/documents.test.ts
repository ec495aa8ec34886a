import { describe, expect, it } from 'vitest'
import type { Command } from '@weft/spec'
import { checkedWithPayload } from './documents.js'

describe('checkedWithPayload', () => {
  const evidence = { evidenceId: 'urn:weft:test:evidence:1' }
  const submit = { kind: 'work.submit', payload: { workItemId: 'urn:weft:test:work:1', evidence: [evidence] } } as unknown as Command
  const publish = { kind: 'artifact.publish', payload: { artifact: { artifactId: 'urn:weft:test:artifact:1' } } } as unknown as Command

  it('knows the documents a payload schema checked with their own schema, by identity', () => {
    expect(checkedWithPayload(submit, 'evidence', evidence)).toBe(true)
    expect(checkedWithPayload(publish, 'artifact', (publish.payload as { artifact: object }).artifact)).toBe(true)
    for (const kind of ['approval', 'agent-card', 'context-package', 'group-snapshot']) {
      const member = {
        approval: 'mission.approve',
        'agent-card': 'ext.missionweaveprotocol.registry.agent_card_register',
        'context-package': 'mission.assign_coordinator',
        'group-snapshot': 'ext.missionweaveprotocol.core.group_archive',
      }[kind]!
      const name = { approval: 'approval', 'agent-card': 'card', 'context-package': 'contextPackage', 'group-snapshot': 'snapshot' }[kind]!
      const document = {}
      expect(checkedWithPayload({ kind: member, payload: { [name]: document } } as unknown as Command, kind, document), kind).toBe(true)
    }
  })

  it('checks anything else: a copy, another document kind, a member of another schema, a kind without documents', () => {
    expect(checkedWithPayload(submit, 'evidence', { ...evidence })).toBe(false)
    expect(checkedWithPayload(submit, 'artifact', evidence)).toBe(false)
    expect(checkedWithPayload(publish, 'evidence', (publish.payload as { artifact: object }).artifact)).toBe(false)
    expect(checkedWithPayload({ kind: 'mission.cancel', payload: { reason: evidence } } as unknown as Command, 'evidence', evidence)).toBe(false)
  })
})
