/**
 * Protocol coverage, measured rather than hoped (STYLE §12): every Command kind, Event kind,
 * transition row and §19 error code of the `@weft/spec` catalogs must be claimed by a test of this
 * package, or be listed in {@link EXEMPT} with the reason no test can claim it yet.
 *
 * How claims are found:
 *
 * 1. Literal titles. Every `*.test.ts` under `src/` and `test/` is read as text; the first string
 *    argument of each `it(` / `test(` call (also `.concurrent` / `.sequential`; skipped and todo
 *    tests claim nothing) is a title, and these tags in it are claims:
 *    `[command <kind>]`, `[event <kind>]`, `[error <CODE>]`, `[row <from> --<event>--> <to>]`
 *    (with ` [<guard>]` inside the brackets for a guarded row) and
 *    `[refused <from> --<event>--> <to>]`. Only the literal text of a title counts: a tag built
 *    with `${…}` is not seen.
 * 2. Generated titles. The row tests generate their titles with `rowTag` / `refusedTag` of
 *    `world.ts` from `WORK_ITEM_ROW_CASES` and `MISSION_ROW_CASES`; those lists are imported here
 *    and their claims (`claimsOf`) count when the test file that iterates them exists and hands
 *    the list to `rowTests`. `rowTests` turns a row without a plan into a failing test, so a
 *    claimed row is a row whose test ran.
 *
 * A claim means the test performs the kind, appends the Event or asserts the code it names. The
 * test fails listing what is unclaimed, what is both exempted and claimed (so the table stays
 * honest), and any tag that names nothing in the catalogs.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { COMMAND_KINDS, ERROR_CODES, EVENT_KINDS } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { claimsOf, MISSION_ROW_CASES, UNPERFORMABLE_ROWS, WORK_ITEM_ROW_CASES, type RowCase } from '@weft/testkit/world'

const PACKAGE = fileURLToPath(new URL('..', import.meta.url))

/**
 * What no test can claim yet, and why. Rows no client-driven test can perform come from
 * `UNPERFORMABLE_ROWS` of `world.ts`, where the row tests read them too.
 */
const EXEMPT: Readonly<Record<string, string>> = {
  ...UNPERFORMABLE_ROWS,
}

/** The generated row tests: which file hands which list to `rowTests`. */
const GENERATED: readonly { readonly file: string; readonly list: string; readonly cases: readonly RowCase[] }[] = [
  { file: 'test/rows-work-item.test.ts', list: 'WORK_ITEM_ROW_CASES', cases: WORK_ITEM_ROW_CASES },
  { file: 'test/rows-mission.test.ts', list: 'MISSION_ROW_CASES', cases: MISSION_ROW_CASES },
]

/** Everything a test must claim: the catalogs, every row, and a refusal of every Command-driven row. */
function catalog(): string[] {
  const rows = [...WORK_ITEM_ROW_CASES, ...MISSION_ROW_CASES].flatMap((c) => [c.tag, ...(c.refusal === undefined ? [] : [c.refusal])])
  return [...COMMAND_KINDS.map((k) => `[command ${k}]`), ...EVENT_KINDS.map((k) => `[event ${k}]`), ...ERROR_CODES.map((c) => `[error ${c}]`), ...rows]
}

/** The `*.test.ts` files of the package, relative to it, with their text. */
function testSources(): { readonly file: string; readonly text: string }[] {
  return ['src', 'test']
    .flatMap((dir) => readdirSync(join(PACKAGE, dir), { recursive: true, encoding: 'utf8' }).map((f) => join(PACKAGE, dir, f)))
    .filter((path) => path.endsWith('.test.ts'))
    .map((path) => ({ file: relative(PACKAGE, path).split('\\').join('/'), text: readFileSync(path, 'utf8') }))
}

const TITLE = /\b(?:it|test)(?:\.(?:concurrent|sequential))?\(\s*(['"`])((?:\\.|(?!\1)[^\\])*)\1/g
const KIND_TAG = /\[(?:command|event|error) [^\s[\]]+\]/g
const ROW_TAG = /\[(?:row|refused) (?:[^[\]]|\[[^[\]]*\])*\]/g

/** The test titles in a source text. */
function titlesIn(text: string): string[] {
  return [...text.matchAll(TITLE)].map((m) => m[2]!)
}

/** The claim tags in a title. */
function tagsIn(title: string): string[] {
  return [...(title.match(KIND_TAG) ?? []), ...(title.match(ROW_TAG) ?? [])]
}

/** Every claim of the package's tests, with the files that make it. */
function claims(): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>()
  const add = (tag: string, file: string) => (found.get(tag) ?? found.set(tag, new Set()).get(tag)!).add(file)
  const sources = testSources()
  for (const { file, text } of sources) for (const title of titlesIn(text)) for (const tag of tagsIn(title)) add(tag, file)
  for (const g of GENERATED) {
    const source = sources.find((s) => s.file === g.file)
    if (source?.text.includes(`rowTests(${g.list},`)) for (const tag of claimsOf(g.cases)) add(tag, g.file)
  }
  return found
}

describe('protocol coverage (STYLE §12)', () => {
  const found = claims()
  const all = catalog()

  it('finds a title and its tags the way the test files write them', () => {
    const source =
      "it('does it [command work.start] [row offered --work.accept_offer--> queued [offerValid]]', f)\n  test(\n    \"[error WORK_LEASE_EXPIRED] x\", f)\nit.skip('[event work.started]', f)"
    expect(titlesIn(source).flatMap(tagsIn)).toEqual(['[command work.start]', '[row offered --work.accept_offer--> queued [offerValid]]', '[error WORK_LEASE_EXPIRED]'])
  })

  it('has every Command kind, Event kind, transition row and error code claimed by a test, or exempted with a reason', () => {
    expect(all.filter((item) => !found.has(item) && EXEMPT[item] === undefined)).toEqual([])
  })

  it('claims no exempted item (an exemption is removed once a test claims it)', () => {
    expect(
      Object.keys(EXEMPT)
        .filter((item) => found.has(item))
        .map((item) => [item, [...found.get(item)!]]),
    ).toEqual([])
  })

  it('exempts only catalog items, each with a reason', () => {
    expect(Object.entries(EXEMPT).filter(([item, reason]) => !all.includes(item) || reason.trim().length < 20)).toEqual([])
  })

  it('has no claim naming something outside the catalogs', () => {
    expect([...found.keys()].filter((tag) => !all.includes(tag)).map((tag) => [tag, [...found.get(tag)!]])).toEqual([])
  })
})
