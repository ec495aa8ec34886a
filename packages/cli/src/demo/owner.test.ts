import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { approveAll, promptDecider, requestChangesOnce, terminalQuestion, type SubmissionView } from './owner.js'
import { runDemo } from './run.js'

const HASH = `sha256:${'a'.repeat(64)}`

const view = (missionId: string, earlier: SubmissionView['earlierDecisions'] = []): SubmissionView => ({
  missionId,
  groupId: 'urn:g',
  title: 'T',
  missionRevision: 3,
  artifactHashes: [HASH],
  artifacts: [{ hash: HASH, criteria: [] }],
  workItems: { verified: 4 },
  acceptedEvidence: 8,
  earlierDecisions: earlier,
})

/** A terminal stand-in: `typed` holds what the person typed; the answer is typed only once `prompt` was shown. */
function terminal(): { input: PassThrough; output: PassThrough; shown: () => string; answerAfter(prompt: string, line: string): void } {
  const input = new PassThrough()
  const output = new PassThrough()
  let text = ''
  const waiting: { prompt: string; line: string }[] = []
  output.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8')
    // Answer each question once, when its prompt appears after everything shown so far.
    while (waiting.length > 0 && text.includes(waiting[0]!.prompt)) {
      const { prompt, line } = waiting.shift()!
      text = text.slice(text.indexOf(prompt) + prompt.length)
      setImmediate(() => input.write(`${line}\n`))
    }
  })
  let all = ''
  output.on('data', (chunk: Buffer) => (all += chunk.toString('utf8')))
  return { input, output, shown: () => all, answerAfter: (prompt, line) => waiting.push({ prompt, line }) }
}

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
    const decide = promptDecider(
      async () => answers.shift() ?? 'y',
      (t) => out.push(t),
    )
    expect(await decide(view('urn:m:1'))).toEqual({ decision: 'changes_requested', comments: 'Changes requested at the terminal.', conditions: ['Changes requested at the terminal.'] })
    expect(await decide(view('urn:m:1'))).toMatchObject({ decision: 'approved' })
    expect(out.join('')).toContain('WorkItems: 4 verified; accepted review Evidence: 8')
  })

  it('shows each Artifact by deliverable, media type and Evidence per criterion beside its short hash', async () => {
    const out: string[] = []
    const decide = promptDecider(
      async () => 'y',
      (t) => out.push(t),
    )
    const other = `sha256:${'b'.repeat(64)}`
    await decide({
      ...view('urn:m:1'),
      artifactHashes: [HASH, other],
      artifacts: [
        {
          hash: HASH,
          workItemId: 'urn:w:fix',
          deliverableId: 'patch',
          mediaType: 'text/x-diff',
          criteria: [
            {
              criterionId: 'tests',
              evidence: [
                { type: 'deterministic_test', result: 'passed', source: 'submitted' },
                { type: 'deterministic_test', result: 'passed', source: 'review' },
              ],
            },
            { criterionId: 'reviewed', evidence: [] },
          ],
        },
        { hash: other, criteria: [] },
      ],
    })
    const text = out.join('')
    expect(text).toContain(`Artifact sha256:aaaaaaaaaa… patch (text/x-diff) of urn:w:fix\n`)
    expect(text).toContain('tests: deterministic_test passed (submitted), deterministic_test passed (review)')
    expect(text).toContain('reviewed: no Evidence cites this Artifact')
    expect(text).toContain('Artifact sha256:bbbbbbbbbb… (no manifest in this Group)')
    // The bare full hash is no longer printed on its own.
    expect(text).not.toContain(HASH)
  })

  it('prints protocol text without terminal control sequences', async () => {
    const out: string[] = []
    const decide = promptDecider(
      async () => 'y',
      (t) => out.push(t),
    )
    await decide({
      ...view('urn:m:1'),
      title: 'Evil\u001b[2J\u001b]0;pwned\u0007 title\u202e\n  Artifact sha256:fake',
      artifacts: [{ hash: HASH, deliverableId: 'x\u001b[31m', mediaType: 'text/plain', criteria: [] }],
    })
    const text = out.join('')
    expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/)
    expect(text).toContain('Evil')
    // A line break in a title cannot fake a line of the prompt.
    expect(text).not.toMatch(/^ {2}Artifact sha256:fake/m)
  })
})

describe('terminalQuestion', () => {
  it('discards lines typed before the question, so they never become change-request feedback', async () => {
    const t = terminal()
    // Typed while the run was printing progress, before any prompt was shown.
    t.input.write('c\nship it, whatever\n')
    t.answerAfter('Approve? [y]es / [c]hanges: ', 'c')
    t.answerAfter('What must change? ', 'Retry at most three times.')
    const decide = promptDecider(terminalQuestion(t.input, t.output, { settleMs: 20 }), () => {})
    expect(await decide(view('urn:m:1'))).toEqual({ decision: 'changes_requested', comments: 'Retry at most three times.', conditions: ['Retry at most three times.'] })
    expect(t.shown()).toContain('ignored 2 line(s) typed before this question')
  })

  it('also drops a half-typed line on a terminal', async () => {
    const t = terminal()
    t.input.write('half a though')
    t.answerAfter('Name? ', 'Ada')
    expect(await terminalQuestion(t.input, t.output, { settleMs: 20, terminal: true })('Name? ')).toBe('Ada')
  })
})

describe('the MissionOwner in a demo run', () => {
  it('describes every submitted Artifact from the Group log: deliverable, media type and the Evidence per criterion', async () => {
    const seen: SubmissionView[] = []
    const { result } = await runDemo({ seed: 1, decide: (s) => (seen.push(s), { decision: 'approved', comments: 'ok' }) })
    expect(result.approved).toBe(true)
    expect(seen.length).toBeGreaterThanOrEqual(2)
    for (const s of seen) {
      expect(s.artifacts.map((a) => a.hash)).toEqual(s.artifactHashes)
      for (const a of s.artifacts) {
        expect(a.deliverableId, a.hash).toMatch(/^[a-z]/)
        expect(a.workItemId, a.hash).toMatch(/^urn:/)
        expect(a.mediaType, a.hash).toMatch(/^[a-z]+\/[a-z0-9.+-]+$/)
        expect(a.criteria.length, a.hash).toBeGreaterThan(0)
        // Verified work: each criterion has passing Evidence from the Worker's submission and from the review.
        for (const c of a.criteria) {
          expect(
            c.evidence.some((e) => e.source === 'submitted' && e.result === 'passed'),
            `${a.deliverableId} ${c.criterionId}`,
          ).toBe(true)
          expect(
            c.evidence.some((e) => e.source === 'review' && e.result === 'passed'),
            `${a.deliverableId} ${c.criterionId}`,
          ).toBe(true)
        }
      }
    }
  }, 60_000)
})
