import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { COMMAND_CATALOG, COMMAND_KINDS, type CommandInfo } from '@weft/spec'
import { GENERATED_DIRS, builderName, builderNames, generate, preamble } from '../src/index.js'

const root = join(import.meta.dirname, '..', '..', '..')
const version = (pkg: string): string => (JSON.parse(readFileSync(join(root, pkg, 'package.json'), 'utf8')) as { version: string }).version
const options = { codegenVersion: version('tools/codegen'), specVersion: version('spec') }
const OUT = 'packages/client/src/gen'
const byPath = new Map(generate(options).map((o) => [o.path, o.content]))
const builders = byPath.get(`${OUT}/builders.ts`) ?? ''
const all = builders.split('\n')
const methods = all.map((l, i) => ({ l, i })).filter(({ l }) => /^ {2}[a-z]\w*\(payload: /.test(l))

interface Generated {
  COMMAND_BUILDER_NAMES: Record<string, string>
  bindBuilders(sender: { send(kind: string, payload: unknown, options?: unknown): Promise<unknown> }): Record<string, (payload: unknown, options?: unknown) => Promise<unknown>>
}

// builders.ts imports only types, so it runs from a scratch folder.
const scratch = mkdtempSync(join(tmpdir(), 'weft-client-gen-'))
writeFileSync(join(scratch, 'builders.ts'), builders)
afterAll(() => rmSync(scratch, { recursive: true, force: true }))
const load = async (): Promise<Generated> => (await import(pathToFileURL(join(scratch, 'builders.ts')).href)) as Generated

describe('client emitter (in memory)', () => {
  it('owns packages/client/src/gen and writes builders.ts and index.ts with the preamble', () => {
    expect(GENERATED_DIRS).toContain(OUT)
    const files = [...byPath.keys()].filter((p) => p.startsWith(`${OUT}/`)).map((p) => basename(p))
    expect(files.sort()).toEqual(['builders.ts', 'index.ts'])
    for (const file of files) expect(byPath.get(`${OUT}/${file}`)!.split('\n')[0]).toBe(preamble(options))
    expect(byPath.get(`${OUT}/index.ts`)).toContain("export { COMMAND_BUILDER_NAMES, bindBuilders, type CommandBuilders } from './builders.js'")
  })

  it('names builders by camelCase of the kind without the reference extension prefix', () => {
    expect(builderName('mission.create')).toBe('missionCreate')
    expect(builderName('work.accept_offer')).toBe('workAcceptOffer')
    expect(builderName('ext.missionweaveprotocol.core.work_dependency_add')).toBe('coreWorkDependencyAdd')
    expect(builderName('ext.missionweaveprotocol.identity.session_open')).toBe('identitySessionOpen')
    expect(builderName('ext.missionweaveprotocol.registry.agent_card_register')).toBe('registryAgentCardRegister')
  })

  it('refuses two kinds that would share a builder name', () => {
    expect(() => builderNames(['work.accept_offer', 'work.accept.offer'])).toThrow(/workAcceptOffer/)
  })

  it('declares one method per catalog kind, in catalog order, with unique names that spell the kind', () => {
    const parsed = methods.map(({ l }) => /^ {2}(\w+)\(payload: CommandPayload<'([^']+)'>, options\?: CommandOptions\): Promise<Receipt>$/.exec(l)?.slice(1))
    expect(parsed.map((m) => m?.[1])).toEqual([...COMMAND_KINDS])
    const names = parsed.map((m) => m?.[0] ?? '')
    expect(new Set(names).size).toBe(COMMAND_KINDS.length)
    for (const [n, kind] of COMMAND_KINDS.entries()) {
      // The name is the kind's words run together, nothing added or lost.
      expect(names[n]!.toLowerCase()).toBe(kind.replace(/^ext\.missionweaveprotocol\./, '').replace(/[._]/g, ''))
      expect(names[n]).toMatch(/^[a-z][A-Za-z0-9]*$/)
    }
  })

  it('documents each method with the catalog summary, issuers, epochs, emits, @throws and section', () => {
    for (const [n, entry] of (COMMAND_CATALOG as readonly CommandInfo[]).entries()) {
      const at = methods[n]!.i
      let start = at - 1
      while (!all[start]!.trim().startsWith('/**')) start--
      const doc = all.slice(start, at).join('\n')
      expect(doc).toContain(entry.summary)
      expect(doc).toContain(`Issuer types: ${entry.issuerTypes.join(', ')}`)
      if (entry.issuerTypes.includes('agent')) expect(doc).toContain(`an Agent carries ${entry.requiredEpochs.agent.join(', ') || 'none'}`)
      for (const kind of entry.emits) expect(doc).toContain(`\`${kind}\``)
      expect(doc).toContain('@throws ProtocolError')
      expect(doc).toContain(`@see PROTOCOL.md ${entry.section}`)
    }
  })

  it('maps every kind to its method in COMMAND_BUILDER_NAMES', async () => {
    const { COMMAND_BUILDER_NAMES } = await load()
    expect(COMMAND_BUILDER_NAMES).toEqual(Object.fromEntries(COMMAND_KINDS.map((k) => [k, builderName(k)])))
    expect(Object.isFrozen(COMMAND_BUILDER_NAMES)).toBe(true)
  })

  it('binds each method to sender.send with its own kind, payload and options', async () => {
    const { COMMAND_BUILDER_NAMES, bindBuilders } = await load()
    const sent: unknown[][] = []
    const bound = bindBuilders({ send: (...args) => (sent.push(args), Promise.resolve(args[0])) })
    expect(Object.keys(bound).sort()).toEqual(Object.values(COMMAND_BUILDER_NAMES).sort())
    for (const kind of COMMAND_KINDS) {
      const payload = { probe: kind }
      const opts = { groupId: `group-${kind}` }
      await expect(bound[COMMAND_BUILDER_NAMES[kind]!]!(payload, opts)).resolves.toBe(kind)
      expect(sent.at(-1)).toEqual([kind, payload, opts])
    }
    expect(sent).toHaveLength(COMMAND_KINDS.length)
  })
})
