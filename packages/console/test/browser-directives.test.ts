/**
 * Directives and intervention from the console, end to end in Chromium against a real server (the
 * world of `browser-world.ts`). What it proves (§7.1, §9, §10.2): Ada posts a Message, cancels a
 * WorkItem, cancels a Mission after a confirm step and creates a follow-up of an approved Mission,
 * each from the page; each is her signed Command whose Event the Authority holds and the page then
 * shows. A directive the Authority refuses (a cancel on a view held stale) shows its §19 code and a
 * plain sentence; a person is offered no terminate, which §7.1 gives to the Coordinator or policy.
 */
import { randomBytes } from 'node:crypto'
import { TEST_CAPABILITY } from '@weft/authority/testing'
import { sha256Tagged, sign, utf8Encode } from '@weft/codec'
import type { Approval, Artifact, Event, Evidence } from '@weft/spec'
import { PATCH_SCHEMA } from '@weft/testkit/work-contract'
import type { Page, WebSocketRoute } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { CONSOLE_PATHS, type ConsoleGroup } from '../src/shared/sign-in.js'
import {
  ada,
  appUrl,
  authority,
  base,
  clientOf,
  clock,
  consolePage,
  coordinator,
  freshContext,
  keyPaths,
  nodeSignIn,
  org,
  signIn,
  until,
  useBrowserWorld,
  VALID_FROM,
  worker,
  workContract,
} from './browser-world.js'

useBrowserWorld()

describe('directives and intervention from the browser, each a signed Command whose Event the Authority holds (§7.1, §9, §10.2, §19)', () => {
  const tag = (): string => randomBytes(4).toString('hex')
  const now = (): string => new Date(clock.now()).toISOString()
  const selection = {
    requiredCapabilities: [TEST_CAPABILITY],
    verifiedMatches: [TEST_CAPABILITY],
    authorizationEligible: true,
    availabilityEstimate: VALID_FROM,
    expectedCost: 1,
    reliabilityEvidence: [],
    policyRulesApplied: ['weft.test.first-fit'],
  }

  /** Ada's fresh Mission made from Node, coordinated by `coordinator`, with `work` authorized as open WorkItems (goal → ID). */
  async function missionOfAda(title: string, work: readonly string[] = []): Promise<{ groupId: string; missionId: string; workItemIds: Record<string, string> }> {
    const id = tag()
    const groupId = `urn:weft:console-browser:group:${id}`
    const missionId = `urn:weft:console-browser:mission:${id}`
    await clientOf(ada).missionCreate(
      {
        missionId,
        title,
        objective: `${title}, then stop.`,
        definitionOfDone: [{ criterionId: 'done', description: 'It is done.', evidenceRequired: ['deterministic_test'] }],
        deadline: new Date(clock.now() + 30 * 86_400_000).toISOString(),
        budget: { currency: 'USD', financialLimit: 100, modelTokenLimit: 100_000, toolCallLimit: 1000 },
        approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
        coordinatorAgentId: coordinator.actor.id,
        coordinatorLeaseSeconds: 86_400,
      },
      { groupId },
    )
    // The Agents' Session Epochs are current (§6.3): a HELLO over the WebSocket opens a session their clients here would not know of.
    for (const agent of [coordinator, worker]) clientOf(agent).observe(authority.organizationEvents())
    const workItemIds: Record<string, string> = {}
    for (const goal of work) {
      workItemIds[goal] = `urn:weft:console-browser:work:${tag()}`
      await clientOf(coordinator).workAuthorize({ workItemId: workItemIds[goal]!, contract: workContract(goal) }, { groupId })
    }
    return { groupId, missionId, workItemIds }
  }

  /**
   * Brings a fresh Mission of Ada's to `approved` through real Commands (§7.3): the worker does the
   * one WorkItem, the Coordinator accepts it and submits the Mission, Ada approves exactly that
   * revision and Artifact set.
   */
  async function approvedMissionOfAda(title: string): Promise<{ groupId: string; missionId: string }> {
    const goal = 'Do the work'
    const { groupId, missionId, workItemIds } = await missionOfAda(title, [goal])
    const workItemId = workItemIds[goal]!
    const [owner, coord, work] = [clientOf(ada).withGroup(groupId), clientOf(coordinator).withGroup(groupId), clientOf(worker).withGroup(groupId)]
    await coord.membershipChange({ membershipId: `${groupId}:membership:worker`, member: worker.actor, role: 'worker', state: 'active', scopes: ['group:read'] })
    await coord.workOffer({ workItemId, candidateAgentIds: [worker.actor.id], selectionBasis: selection, offerExpiresInSeconds: 600 })
    const accepted = await work.workAcceptOffer({ workItemId, ownershipLeaseSeconds: 3600 })
    const ownershipEpoch = (accepted.events[0]!.payload as { ownershipEpoch: number }).ownershipEpoch
    const started = await work.workStart({ workItemId, ownershipEpoch, executionLeaseSeconds: 600 })
    const executionLeaseId = (started.events.find((e) => e.kind === 'work.started')!.payload as { executionLease: { leaseId: string } }).executionLease.leaseId
    const content = `diff --git a/${tag()} b/done`
    const contentHash = sha256Tagged(utf8Encode(content))
    const artifact = sign(
      'artifact',
      {
        artifactId: `urn:weft:console-browser:artifact:${tag()}`,
        contentHash,
        uri: 'urn:weft:console-browser:blob:patch',
        sizeBytes: utf8Encode(content).byteLength,
        mediaType: 'text/x-diff',
        schemaUri: PATCH_SCHEMA,
        producer: { agentId: worker.actor.id, agentCardVersion: 1, capabilities: [TEST_CAPABILITY] },
        missionId,
        groupId,
        workItemId,
        sourceArtifactHashes: [],
        toolVersions: [],
        modelVersions: [],
        classification: 'internal',
        createdAt: now(),
      },
      worker.signingKey,
    ) as unknown as Artifact
    await work.artifactPublish({ artifact, ownershipEpoch, executionLeaseId })
    const evidenceBy = (who: typeof worker): Evidence =>
      sign(
        'evidence',
        {
          evidenceId: `urn:weft:console-browser:evidence:${tag()}`,
          missionId,
          groupId,
          workItemId,
          type: 'deterministic_test',
          subject: { type: 'work_item', id: workItemId },
          criterionIds: ['tests-pass'],
          method: 'Ran the test suite.',
          result: 'passed',
          artifactHashes: [contentHash],
          generatedBy: who.actor,
          createdAt: now(),
        },
        who.signingKey,
      ) as unknown as Evidence
    await work.workSubmit({ workItemId, ownershipEpoch, executionLeaseId, artifactIds: [artifact.artifactId], evidence: [evidenceBy(worker)] })
    await coord.workAcceptResult({ workItemId, evidence: [evidenceBy(coordinator)] })
    await coord.missionSubmitForApproval({ artifactHashes: [contentHash] })
    const submission = authority.group(groupId)!.submission!
    const approval = sign(
      'approval',
      {
        approvalId: `urn:weft:console-browser:approval:${tag()}`,
        kind: 'mission_final',
        decision: 'approved',
        missionId,
        groupId,
        missionRevision: submission.missionRevision,
        artifactHashes: [...submission.artifactHashes],
        acceptancePolicyVersion: '1.0.0',
        approver: ada.actor,
        comments: 'Good.',
        conditions: [],
        occurredAt: now(),
      },
      ada.signingKey,
    ) as unknown as Approval
    await owner.missionApprove({ approval })
    expect(authority.group(groupId)?.mission?.state).toBe('approved')
    return { groupId, missionId }
  }

  /** Ada's page, signed in, with Group `groupId` (made before sign-in) open at `title`. */
  async function adaOn(groupId: string, title: string, page?: Page): Promise<{ page: Page; errors: string[] }> {
    const opened = page === undefined ? await consolePage(await freshContext()) : { page, errors: [] as string[] }
    if (page !== undefined) page.on('pageerror', (e) => opened.errors.push(e.message))
    await signIn(opened.page, keyPaths.ada, ada)
    await opened.page.locator(`[data-testid="group-item"][data-group-id="${groupId}"]`).click()
    await opened.page.getByTestId('mission-title').filter({ hasText: title }).waitFor()
    // Live: the feed has replayed the Group up to the Authority's head.
    await opened.page
      .getByTestId('event-count')
      .filter({ hasText: new RegExp(`^${authority.events(groupId).length}$`) })
      .waitFor()
    return opened
  }

  /** The Events of `groupId` after its first `from`. */
  const eventsAfter = (groupId: string, from: number): Event[] => authority.events(groupId).slice(from)

  it('posts a Message, cancels a WorkItem and, after a confirm step, cancels the Mission: each Ada’s Command, its Event on the Authority and on the page', async () => {
    const title = `Intervene ${tag()}`
    const [cancelled, spare] = ['Cancel me from the browser', 'Left to the Mission’s cancellation']
    const { groupId, workItemIds } = await missionOfAda(title, [cancelled, spare])
    const { page, errors } = await adaOn(groupId, title)

    // 1. A Message (§9): message.posted, its author Ada, its text what she typed; the page lists it.
    const body = `Status please, ${tag()}.`
    let from = authority.events(groupId).length
    await page.getByTestId('tab-messages').click()
    expect(await page.getByTestId('message').count()).toBe(0)
    await page.getByTestId('post-text').fill(body)
    await page.getByTestId('post-submit').click()
    await until('message.posted on the Authority', () => eventsAfter(groupId, from).some((e) => e.kind === 'message.posted'))
    const posted = eventsAfter(groupId, from).filter((e) => e.kind === 'message.posted')
    expect(posted).toHaveLength(1)
    expect(posted[0]).toMatchObject({
      actor: ada.actor,
      cause: { type: 'command' },
      payload: { kind: 'message', author: ada.actor, groupId, conversationId: authority.group(groupId)!.group.mainConversationId, content: [{ type: 'text', text: body }], authority: false },
    })
    await page.getByTestId('message').filter({ hasText: body }).waitFor()
    expect(await page.getByTestId('message').count()).toBe(1)
    expect(await page.getByTestId('message').locator('.message-body').textContent()).toBe(body)
    expect(await page.getByTestId('message').locator('.author').textContent()).toBe(ada.actor.id)
    expect(await page.getByTestId('post-text').inputValue()).toBe('')
    expect(await page.locator('.tabpanel .refusal').count()).toBe(0)
    expect(await page.getByRole('status').filter({ hasText: 'Message posted.' }).count()).toBe(1)

    // 2. A WorkItem cancelled from its detail (§10.2): work.cancelled by Ada with her reason; the other stays open.
    from = authority.events(groupId).length
    await page.getByTestId('tab-work').click()
    const node = page.locator('[data-testid="work-node"]', { hasText: cancelled })
    expect(await node.getAttribute('data-state')).toBe('open')
    await node.click()
    await page.getByTestId('work-detail').locator('.prose', { hasText: cancelled }).waitFor()
    expect(await page.getByTestId('cancel-work').isDisabled()).toBe(true)
    await page.getByTestId('cancel-work-reason').fill('Not needed any more.')
    await page.getByTestId('cancel-work').click()
    await until('work.cancelled on the Authority', () => eventsAfter(groupId, from).some((e) => e.kind === 'work.cancelled'))
    expect(eventsAfter(groupId, from).map((e) => [e.kind, e.actor.id, e.workItemId])).toEqual([['work.cancelled', ada.actor.id, workItemIds[cancelled]]])
    expect(eventsAfter(groupId, from)[0]!.payload).toEqual({ workItemId: workItemIds[cancelled], reason: 'Not needed any more.' })
    expect(authority.group(groupId)!.workItems.get(workItemIds[cancelled]!)!.doc.state).toBe('cancelled')
    expect(authority.group(groupId)!.workItems.get(workItemIds[spare]!)!.doc.state).toBe('open')
    await page.locator('[data-testid="work-node"][data-state="cancelled"]', { hasText: cancelled }).waitFor()
    expect(await page.getByTestId('work-detail').locator('.badge').textContent()).toBe('cancelled')
    expect(await page.getByTestId('work-detail').textContent()).toContain('Not needed any more.')
    // A cancelled WorkItem offers no cancel any more.
    expect(await page.getByTestId('cancel-work').count()).toBe(0)
    expect(await page.locator('[data-testid="work-node"]', { hasText: spare }).getAttribute('data-state')).toBe('open')

    // 3. The Mission cancelled (§7.1): nothing is signed before the confirm step; then mission.cancelled
    // by Ada with her reason, and the open WorkItem cancelled with it by the Authority.
    from = authority.events(groupId).length
    await page.getByTestId('tab-intervene').click()
    expect(await page.getByTestId('cancel-mission').isDisabled()).toBe(true)
    await page.getByTestId('stop-reason').fill('The release was called off.')
    await page.getByTestId('cancel-mission').click()
    await page.getByTestId('confirm-stop').waitFor()
    expect(await page.getByTestId('confirm-stop').textContent()).toBe('Yes, cancel')
    await page.waitForTimeout(200)
    expect(eventsAfter(groupId, from)).toEqual([])
    await page.getByTestId('confirm-stop').click()
    await until('mission.cancelled on the Authority', () => eventsAfter(groupId, from).some((e) => e.kind === 'mission.cancelled'))
    expect(eventsAfter(groupId, from).map((e) => [e.kind, e.actor.id, e.workItemId ?? null])).toEqual([
      ['mission.cancelled', ada.actor.id, null],
      ['work.cancelled', org.authorityService.actor.id, workItemIds[spare]],
    ])
    expect(eventsAfter(groupId, from)[0]).toMatchObject({ cause: { type: 'command' }, payload: { reason: 'The release was called off.' } })
    expect(authority.group(groupId)!.mission!.state).toBe('cancelled')
    await page
      .getByTestId('mission-state')
      .filter({ hasText: /^cancelled$/ })
      .waitFor()
    expect(await page.getByRole('status').filter({ hasText: 'The Mission was cancelled.' }).count()).toBe(1)
    expect(await page.locator('.tabpanel').textContent()).toContain('The Mission is cancelled: it cannot be stopped any more.')
    expect(await page.getByTestId('cancel-mission').count()).toBe(0)
    expect(await page.getByTestId('stop-refusal').count()).toBe(0)
    expect(await page.locator(`[data-testid="group-item"][data-group-id="${groupId}"] .badge`).textContent()).toBe('cancelled')
    expect(await page.getByTestId('event-count').textContent()).toBe(String(authority.events(groupId).length))
    expect(errors).toEqual([])
  })

  it('creates a follow-up of an approved Mission from the browser: a new Group whose Mission names the original (§7.1 followUpToMissionId)', async () => {
    const title = `Approved ${tag()}`
    const original = await approvedMissionOfAda(title)
    const originalHead = authority.events(original.groupId).length
    const { page, errors } = await adaOn(original.groupId, title)
    await page
      .getByTestId('mission-state')
      .filter({ hasText: /^approved$/ })
      .waitFor()
    await page.getByTestId('tab-intervene').click()
    // An approved Mission cannot be stopped, only followed up.
    expect(await page.getByTestId('cancel-mission').count()).toBe(0)
    await page.getByTestId('follow-up').click()
    await page.getByTestId('mission-form').waitFor()
    expect(await page.locator('#mission-form-title').textContent()).toBe('Follow-up Mission')
    expect(await page.getByTestId('m-title').inputValue()).toBe(`Follow-up: ${title}`)
    const followTitle = `Follow-up: ${title}`
    const reason = `A defect was found, ${tag()}.`
    await page.getByTestId('m-reason').fill(reason)
    await page.getByTestId('m-objective').fill('Fix the defect.')
    await page.getByTestId('m-done').fill('fixed: The defect is fixed.')
    await page.getByTestId('m-coordinator').fill(coordinator.actor.id)
    const listedBefore = await page.getByTestId('group-item').evaluateAll((items) => items.map((i) => (i as unknown as { getAttribute(name: string): string | null }).getAttribute('data-group-id')))
    expect(listedBefore).toContain(original.groupId)
    await page.getByTestId('mission-submit').click()
    const current = page.locator('[data-testid="group-item"][aria-current="page"]')
    await current.filter({ hasText: followTitle }).waitFor()
    await page.getByTestId('mission-title').filter({ hasText: followTitle }).waitFor()
    const groupId = (await current.getAttribute('data-group-id'))!
    expect(groupId).not.toBe(original.groupId)
    expect(listedBefore).not.toContain(groupId)
    expect(authority.group(groupId)).toBeDefined()
    expect(await page.getByTestId('mission-refusal').count()).toBe(0)

    // On the Authority: the new Group's first Event is mission.follow_up.created, Ada's, linked to the original.
    const created = authority.events(groupId)[0]!
    expect(created).toMatchObject({ kind: 'mission.follow_up.created', groupId, sequence: 1, actor: ada.actor, cause: { type: 'command' } })
    expect(created.payload).toMatchObject({ reason, mission: { followUpToMissionId: original.missionId, missionOwner: ada.actor, objective: 'Fix the defect.', state: 'active' } })
    expect(authority.group(groupId)?.mission).toMatchObject({ followUpToMissionId: original.missionId, state: 'active', missionOwner: ada.actor })
    expect(authority.group(groupId)?.mission?.missionId).not.toBe(original.missionId)
    // The original stays approved and untouched.
    expect(authority.group(original.groupId)?.mission?.state).toBe('approved')
    expect(authority.events(original.groupId)).toHaveLength(originalHead)
    // In Ada's list (the page's, and what the server lists for her).
    expect(await page.locator(`[data-testid="group-item"][data-group-id="${groupId}"]`).count()).toBe(1)
    await page
      .getByTestId('mission-state')
      .filter({ hasText: /^active$/ })
      .waitFor()
    const { token } = await nodeSignIn(ada)
    const listed = (await (await fetch(`${base}${CONSOLE_PATHS.groups}`, { headers: { authorization: `Bearer ${token}` } })).json()) as { groups: ConsoleGroup[] }
    const listedIds = listed.groups.map((g) => g.groupId)
    expect(listed.groups.find((g) => g.groupId === groupId)).toMatchObject({ missionState: 'active', title: followTitle })
    expect(listedIds).toContain(groupId)
    expect(listedIds).toContain(original.groupId)
    expect(errors).toEqual([])
  })

  it('shows a refused directive as its §19 code and a plain sentence: cancels on a stale view (INVALID_STATE_TRANSITION); offers a person no terminate (§7.1)', async () => {
    const title = `Refusals ${tag()}`
    const goal = 'Some work'
    const { groupId, workItemIds } = await missionOfAda(title, [goal])
    // The page's WebSocket through a route that can hold this Group's EVENT frames back: a view gone stale.
    const context = await freshContext()
    const held: string[] = []
    let holding = false
    let route: WebSocketRoute | undefined
    const page = await context.newPage()
    await page.routeWebSocket(
      (url) => url.pathname === CONSOLE_PATHS.socket,
      (ws) => {
        route = ws
        const server = ws.connectToServer()
        server.onMessage((frame) => {
          if (holding && typeof frame === 'string' && frame.includes('"frameType":"EVENT"') && frame.includes(groupId)) held.push(frame)
          else ws.send(frame)
        })
      },
    )
    await page.goto(appUrl)
    await page.getByTestId('key-file').waitFor()
    const { errors } = await adaOn(groupId, title, page)

    // §7.1 and the Command schema give mission.terminate to the Coordinator or Organization policy only:
    // the console offers a person no Terminate that could never be accepted.
    await page.getByTestId('tab-intervene').click()
    await page.getByTestId('cancel-mission').waitFor()
    expect(await page.getByTestId('terminate-mission').count()).toBe(0)
    expect(await page.getByRole('button', { name: /terminate/i }).count()).toBe(0)

    // Ada cancels the Mission elsewhere (from Node) while this page's view is held back...
    holding = true
    const from = authority.events(groupId).length
    await clientOf(ada).withGroup(groupId).missionCancel({ reason: 'Cancelled elsewhere.' })
    expect(authority.group(groupId)!.mission!.state).toBe('cancelled')
    expect(authority.group(groupId)!.workItems.get(workItemIds[goal]!)!.doc.state).toBe('cancelled')
    const head = authority.events(groupId).length
    await until('the held frames of the cancellation', () => held.length === head - from)
    // ...so the page still offers a cancel, which the Authority refuses for the Mission's state.
    expect(await page.getByTestId('mission-state').textContent()).toBe('active')
    await page.getByTestId('stop-reason').fill('Stop it.')
    await page.getByTestId('cancel-mission').click()
    await page.getByTestId('confirm-stop').click()
    const note = page.getByTestId('stop-refusal')
    await note.waitFor()
    expect(await note.getAttribute('role')).toBe('alert')
    expect(await note.locator('code').textContent()).toBe('INVALID_STATE_TRANSITION')
    expect(await note.textContent()).toBe('INVALID_STATE_TRANSITION The Mission or WorkItem is no longer in a state that allows this.')
    // The confirm step stays, so the person sees what was refused; nothing reached the log.
    expect(await page.getByTestId('confirm-stop').isVisible()).toBe(true)
    expect(await page.getByRole('status').filter({ hasText: 'The Mission was cancelled.' }).count()).toBe(0)

    // The same for the WorkItem, cancelled with its Mission: its stale detail still offers a cancel.
    await page.getByTestId('tab-work').click()
    await page.locator('[data-testid="work-node"][data-state="open"]', { hasText: goal }).click()
    await page.getByTestId('cancel-work-reason').fill('Not needed.')
    await page.getByTestId('cancel-work').click()
    const workNote = page.getByTestId('cancel-work-refusal')
    await workNote.waitFor()
    expect(await workNote.textContent()).toBe('INVALID_STATE_TRANSITION The Mission or WorkItem is no longer in a state that allows this.')
    expect(authority.events(groupId)).toHaveLength(head)
    expect(eventsAfter(groupId, from).map((e) => [e.kind, e.actor.id])).toEqual([
      ['mission.cancelled', ada.actor.id],
      ['work.cancelled', org.authorityService.actor.id],
    ])
    expect(eventsAfter(groupId, from)[0]!.payload).toEqual({ reason: 'Cancelled elsewhere.' })

    // Once the held Events arrive the page shows the Mission and its WorkItem as they are.
    holding = false
    for (const frame of held.splice(0)) route!.send(frame)
    await page.locator('[data-testid="work-node"][data-state="cancelled"]', { hasText: goal }).waitFor()
    expect(await page.getByTestId('cancel-work').count()).toBe(0)
    await page
      .getByTestId('mission-state')
      .filter({ hasText: /^cancelled$/ })
      .waitFor()
    await page.getByTestId('tab-intervene').click()
    expect(await page.locator('.tabpanel').textContent()).toContain('The Mission is cancelled: it cannot be stopped any more.')
    expect(await page.getByTestId('event-count').textContent()).toBe(String(head))
    expect(errors).toEqual([])
  })
})
