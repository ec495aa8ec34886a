import { describe, expect, it } from 'vitest'
import { approveAll, promptDecider, requestChangesOnce, type SubmissionView } from './owner.js'

const view = (missionId: string, earlier: SubmissionView['earlierDecisions'] = []): SubmissionView => ({
  missionId,
  groupId: 'urn:g',
  title: 'T',
  missionRevision: 3,
  artifactHashes: [`sha256:${'a'.repeat(64)}`],
  workItems: { verified: 4 },
  acceptedEvidence: 8,
  earlierDecisions: earlier,
})

describe('deciders', () => {
  it('requests changes once in the named Mission, then defers', async () => {
    const decide = requestChangesOnce({ 'urn:m:1': { comments: 'Fix accents.', conditions: ['Accents rank.'] } }, approveAll('ok'))
    expect(await decide(view('urn:m:1'))).toEqual({ decision: 'changes_requested', comments: 'Fix accents.', conditions: ['Accents rank.'] })
    expect(await decide(view('urn:m:1', ['changes_requested']))).toEqual({ decision: 'approved', comments: 'ok' })
    expect(await decide(view('urn:m:2'))).toEqual({ decision: 'approved', comments: 'ok' })
  })

  it('prompts until it gets an answer it understands', async () => {
    const answers = ['maybe', 'c', '', 'y']
    const out: string[] = []
    const decide = promptDecider(async () => answers.shift() ?? 'y', (t) => out.push(t))
    expect(await decide(view('urn:m:1'))).toEqual({ decision: 'changes_requested', comments: 'Changes requested at the terminal.', conditions: ['Changes requested at the terminal.'] })
    expect(await decide(view('urn:m:1'))).toMatchObject({ decision: 'approved' })
    expect(out.join('')).toContain('WorkItems: 4 verified; accepted review Evidence: 8')
  })
})
