/**
 * What the console's pages show, end to end in Chromium against a real server (the world of
 * `browser-world.ts`), on a Group of Ada's made from Node whose every string a person reads is HTML.
 * What it proves:
 *
 * - Visibility (§8, §17.2): a person who is not a member sees neither another's Group nor its
 *   existence: opening it by ID renders exactly what a never-existing Group ID renders.
 * - Protocol text is text: HTML in a Mission title, an objective, a WorkItem goal and a Message
 *   body renders literally, creates no element and runs nothing (§9: Messages are conversation).
 * - Accessibility of the human interface (§5): axe-core finds no violation of its label and name
 *   rules, nor of any other rule it runs by default (colour contrast included), on the
 *   sign-in screen, the signed-in screen, each tab of an open Mission and the New Mission form.
 */
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { AxeResults, Result as AxeResult } from 'axe-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { ada, authority, clientOf, clock, consolePage, coordinator, eve, freshContext, keyPaths, signIn, useBrowserWorld, workContract } from './browser-world.js'

/** The few page globals the evaluated functions touch (the test's TypeScript has no DOM library). */
interface PageElement {
  readonly textContent: string | null
}
declare const document: {
  querySelectorAll(selector: string): ArrayLike<PageElement>
  addEventListener(type: string, listener: (event: { violatedDirective: string; blockedURI: string }) => void): void
}
declare const window: Record<string, unknown>
declare const axe: { run(context: unknown, options: unknown): Promise<AxeResults> }

/** Ada's Group made from Node: every protocol string in it is HTML that must stay text. */
const GROUP_X = 'urn:weft:console-browser:group:x'
const XSS_TITLE = '<img src=x onerror="window.__xss=1">'
const XSS_OBJECTIVE = '<img src=x onerror="window.__xss=4"> Ship it.'
const XSS_BODY = '<script>window.__xss=2</script><b>bold</b>'
const XSS_GOAL = '<img src=x onerror="window.__xss=3">Build'

/**
 * axe-core's rules about labels and names (WCAG 1.1.1, 1.3.1, 2.4.2, 3.1.1, 4.1.2): each must run
 * on every screen checked (so a renamed rule cannot pass unseen). Every other rule axe runs by
 * default must report nothing as well.
 */
const NAME_RULES = [
  'label',
  'button-name',
  'link-name',
  'select-name',
  'input-button-name',
  'image-alt',
  'svg-img-alt',
  'role-img-alt',
  'aria-command-name',
  'aria-dialog-name',
  'aria-input-field-name',
  'aria-meter-name',
  'aria-progressbar-name',
  'aria-toggle-field-name',
  'aria-tooltip-name',
  'aria-treeitem-name',
  'document-title',
  'html-has-lang',
  'label-content-name-mismatch',
]

useBrowserWorld()

beforeAll(async () => {
  // Ada's Group X, made from Node: HTML in every string a person reads, a WorkItem and a Message.
  const deadline = new Date(clock.now() + 30 * 86_400_000).toISOString()
  await clientOf(ada).missionCreate(
    {
      missionId: 'urn:weft:console-browser:mission:x',
      title: XSS_TITLE,
      objective: XSS_OBJECTIVE,
      definitionOfDone: [{ criterionId: 'shipped', description: 'It ships.', evidenceRequired: ['human_review'] }],
      deadline,
      budget: { currency: 'USD', financialLimit: 100, modelTokenLimit: 100_000, toolCallLimit: 1000 },
      approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
      coordinatorAgentId: coordinator.actor.id,
      coordinatorLeaseSeconds: 86_400,
    },
    { groupId: GROUP_X },
  )
  await clientOf(coordinator).workAuthorize(
    {
      workItemId: 'urn:weft:console-browser:work:build',
      contract: workContract(XSS_GOAL),
    },
    { groupId: GROUP_X },
  )
  const conversationId = authority.group(GROUP_X)!.group.mainConversationId
  await clientOf(ada).messagePost({ messageId: 'urn:weft:console-browser:message:1', conversationId, content: [{ type: 'text', text: XSS_BODY }] }, { groupId: GROUP_X })
})

describe('the console in a browser', () => {
  it("shows a non-member neither another person's Group nor its existence (§8, §17.2)", async () => {
    expect(authority.group(GROUP_X)?.mission?.missionOwner).toEqual(ada.actor)
    const context = await freshContext()
    /** Eve signs in on a new page and opens `groupId` by hand; resolves to what the page then shows and the frames it got. */
    const openAsEve = async (groupId: string): Promise<{ body: string; main: string; frames: string[] }> => {
      const { page, errors } = await consolePage(context)
      const frames: string[] = []
      page.on('websocket', (ws) => ws.on('framereceived', ({ payload }) => void frames.push(String(payload))))
      await signIn(page, keyPaths.eve, eve)
      expect(await page.getByTestId('group-item').count()).toBe(0)
      expect(await page.getByTestId('group-list').textContent()).toBe('No Missions visible to you yet.')
      await page.getByTestId('open-group-id').fill(groupId)
      await page.getByTestId('open-group-id').press('Enter')
      await page.getByTestId('group-not-found').waitFor()
      // Let anything else the server would send arrive.
      await page.waitForTimeout(300)
      // biome-ignore lint/performance/useDomNodeTextContent: the text as rendered (innerText) is what a person sees
      const shown = { body: await page.locator('body').innerText(), main: await page.locator('.main').innerHTML(), frames: frames.map((f) => f.split(groupId).join('GROUP')) }
      expect(shown.body).not.toContain(XSS_TITLE)
      expect(errors).toEqual([])
      await page.close()
      return shown
    }
    const hidden = await openAsEve(GROUP_X)
    const absent = await openAsEve(`urn:uuid:${randomUUID()}`)
    expect(hidden.main).toContain('This Group does not exist or is not visible to you.')
    expect(hidden.body).toBe(absent.body)
    expect(hidden.main).toBe(absent.main)
    // What the server told each page differs in nothing but the ID asked for (and frame times).
    const normalized = (frames: string[]): string[] => frames.map((f) => f.replace(/"(occurredAt|sentAt|nonce)":"[^"]*"/g, '"$1":"T"').replace(/urn:weft:frame:[^":]*/g, 'FRAME'))
    expect(normalized(hidden.frames)).toEqual(normalized(absent.frames))
    expect(hidden.frames.join('\n')).toContain('GROUP_NOT_FOUND')
    expect(hidden.frames.join('\n')).not.toContain('urn:weft:console-browser:mission:x')
  })

  it('renders HTML in protocol text as text: no element made, nothing run (§9, §13)', async () => {
    const context = await freshContext()
    await context.addInitScript(() => {
      const violations: string[] = []
      window['__csp'] = violations
      document.addEventListener('securitypolicyviolation', (e) => void violations.push(`${e.violatedDirective} ${e.blockedURI}`))
    })
    const { page, errors } = await consolePage(context)
    const dialogs: string[] = []
    page.on('dialog', (d) => {
      dialogs.push(d.message())
      void d.dismiss()
    })
    /** Nothing of the protocol text became markup or ran, on the screen shown now. */
    const inert = async (screen: string): Promise<void> => {
      const dom = await page.evaluate(() => ({
        xss: window['__xss'],
        images: document.querySelectorAll('img').length,
        bold: document.querySelectorAll('b').length,
        scripts: Array.from(document.querySelectorAll('script')).map((s) => s.textContent ?? ''),
        csp: window['__csp'],
      }))
      expect(dom, screen).toEqual({ xss: undefined, images: 0, bold: 0, scripts: [''], csp: [] })
    }
    await signIn(page, keyPaths.ada, ada)
    const entry = page.locator(`[data-testid="group-item"][data-group-id="${GROUP_X}"]`)
    await entry.waitFor()
    expect(await entry.locator('.group-title').textContent()).toBe(XSS_TITLE)
    await entry.click()
    await page.getByTestId('mission-title').filter({ hasText: XSS_TITLE }).waitFor()
    expect(await page.getByTestId('mission-title').textContent()).toBe(XSS_TITLE)
    await page.locator('.prose', { hasText: XSS_OBJECTIVE }).waitFor()
    expect(await page.locator('.tabpanel .prose').first().textContent()).toBe(XSS_OBJECTIVE)
    await inert('overview')

    await page.getByTestId('tab-messages').click()
    const message = page.getByTestId('message').first()
    await message.waitFor()
    expect(await page.getByTestId('message').count()).toBe(1)
    expect(await message.locator('.message-body').textContent()).toBe(XSS_BODY)
    await inert('messages')

    await page.getByTestId('tab-work').click()
    await page.getByTestId('work-node').first().waitFor()
    expect(await page.getByTestId('work-node').first().getAttribute('aria-label')).toBe(`WorkItem ${XSS_GOAL.slice(0, 29)}…, open`)
    expect(await page.getByTestId('work-node').first().locator('title').textContent()).toBe(XSS_GOAL)
    await page.getByTestId('work-node').first().click()
    expect(await page.getByTestId('work-detail').locator('.prose').textContent()).toBe(XSS_GOAL)
    await inert('work')

    await page.getByTestId('tab-events').click()
    await page.getByTestId('event-row').first().waitFor()
    await inert('events')
    expect(dialogs).toEqual([])
    expect(errors).toEqual([])
  })

  it("passes axe-core's label and name rules on sign-in, every Mission tab and the New Mission form", async () => {
    const source = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
    const context = await freshContext()
    const { page } = await consolePage(context)
    const findings: string[] = []
    const check = async (screen: string): Promise<void> => {
      // The CSP forbids inline scripts; evaluation over the DevTools protocol is not subject to it.
      if ((await page.evaluate(() => typeof window['axe'])) !== 'object') await page.evaluate(source)
      const results = await page.evaluate(async () => axe.run(document, { resultTypes: ['violations'] }))
      const ran = new Set([...results.passes, ...results.violations, ...results.incomplete, ...results.inapplicable].map((r) => r.id))
      expect(
        NAME_RULES.filter((rule) => !ran.has(rule)),
        `${screen}: rules that did not run`,
      ).toEqual([])
      for (const v of results.violations as AxeResult[]) {
        const nodes = v.nodes
        if (nodes.length > 0) findings.push(`${screen}: ${v.id} (${v.impact ?? ''}) ${v.help}\n${nodes.map((n) => `    ${n.target.join(' ')}: ${n.html}\n      ${n.failureSummary ?? ''}`).join('\n')}`)
      }
    }
    await check('sign-in')
    await signIn(page, keyPaths.ada, ada)
    await check('signed in')
    await page.locator(`[data-testid="group-item"][data-group-id="${GROUP_X}"]`).click()
    await page.getByTestId('mission-title').filter({ hasText: XSS_TITLE }).waitFor()
    for (const tab of ['overview', 'work', 'leases', 'budget', 'messages', 'artifacts', 'events', 'approval', 'intervene']) {
      await page.getByTestId(`tab-${tab}`).click()
      expect(await page.getByTestId(`tab-${tab}`).getAttribute('aria-selected')).toBe('true')
      if (tab === 'work') {
        await page.getByTestId('work-node').first().click()
        await page.getByTestId('work-detail').locator('.prose').waitFor()
      }
      if (tab === 'messages') await page.getByTestId('message').first().waitFor()
      if (tab === 'events') await page.getByTestId('event-row').first().waitFor()
      await check(`Mission tab ${tab}`)
    }
    await page.getByTestId('new-mission').click()
    await page.getByTestId('mission-form').waitFor()
    await check('New Mission form')
    expect(findings, `axe-core violations:\n${findings.join('\n')}`).toEqual([])
  })
})
