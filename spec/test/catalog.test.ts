/**
 * The catalogs and payload schemas against the normative bundle: kind lists, Coordinator-only and
 * Organization-scoped sets, envelope epoch rules, the error enum, the §15.1/§15.2 kind lists of
 * PROTOCOL.md, payload coverage, and that every payload `$ref` resolves inside the bundle.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { bundleForTests, readBundleJson } from '../src/bundle.js'
import { describe, expect, expectTypeOf, it } from 'vitest'
import {
  COMMAND_CATALOG,
  COMMAND_KINDS,
  CORE_COMMAND_KINDS,
  CORE_EVENT_KINDS,
  ERROR_CATALOG,
  ERROR_CODES,
  EVENT_CATALOG,
  EVENT_KINDS,
  REFERENCE_EXTENSION_COMMAND_KINDS,
  REFERENCE_EXTENSION_EVENT_KINDS,
  commandInfo,
  errorInfo,
  eventInfo,
  isCommandKind,
  type CommandKind,
  type EventKind,
} from '../src/catalog/index.js'
import type { WorkContract } from '../src/documents/work-contract.js'
import { CommandPayloads, EventPayloads, type CommandPayload, type EventPayload } from '../src/payloads/index.js'

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type JsonObject = { [key: string]: Json }

interface EnumSchema {
  enum: string[]
}
interface KindRule {
  anyOf: [unknown, { pattern: string; maxLength: number }]
}
interface CommandSchema {
  $defs: { coreCommandKind: EnumSchema; organizationScopedKind: EnumSchema; coordinatorOnlyKind: EnumSchema }
  properties: { kind: KindRule }
  allOf: JsonObject[]
}
interface EventSchema {
  properties: { kind: { anyOf: [EnumSchema, { pattern: string; maxLength: number }] } }
  allOf: [{ if: { properties: { kind: EnumSchema } } }]
}

const dir = bundleForTests()

/** The whitespace-separated words of the first fenced block after a heading of PROTOCOL.md. */
function fencedWordsAfter(protocol: string, heading: string): string[] {
  const start = protocol.indexOf(`\n${heading}`)
  expect(start, `heading ${heading}`).toBeGreaterThan(-1)
  const open = protocol.indexOf('```', start)
  const bodyStart = protocol.indexOf('\n', open) + 1
  const close = protocol.indexOf('```', bodyStart)
  return protocol.slice(bodyStart, close).split(/\s+/).filter(Boolean)
}

/** Plain JSON of a TypeBox schema (drops TypeBox's symbol keys). */
function json(schema: unknown): Json {
  return JSON.parse(JSON.stringify(schema)) as Json
}

/** Visits every object node of a JSON value. */
function walk(node: Json, visit: (node: JsonObject, path: string) => void, path = '#'): void {
  if (Array.isArray(node)) node.forEach((child, i) => walk(child, visit, `${path}/${i}`))
  else if (node !== null && typeof node === 'object') {
    visit(node, path)
    for (const [key, child] of Object.entries(node)) walk(child, visit, `${path}/${key}`)
  }
}

/** Resolves `file.schema.json#/json/pointer` against the bundle's schemas; undefined when absent. */
function resolveRef(bundleDir: string, target: string): Json | undefined {
  const [file = '', pointer = ''] = target.split('#')
  if (file === '') return undefined // payload schemas have no local definitions
  let node: Json
  try {
    node = JSON.parse(readFileSync(join(bundleDir, 'schemas', file), 'utf8')) as Json
  } catch {
    return undefined
  }
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~')
    if (node === null || typeof node !== 'object') return undefined
    const next: Json | undefined = Array.isArray(node) ? node[Number(key)] : node[key]
    if (next === undefined) return undefined
    node = next
  }
  return node
}

const commandKinds: readonly string[] = COMMAND_KINDS
const eventKinds: readonly string[] = EVENT_KINDS

describe('catalogs on their own', () => {
  it('have no duplicate kinds or codes', () => {
    expect(new Set(commandKinds).size).toBe(commandKinds.length)
    expect(new Set(eventKinds).size).toBe(eventKinds.length)
    expect(new Set<string>(ERROR_CODES).size).toBe(ERROR_CODES.length)
  })

  it('hold 32 core and 6 reference Commands, 36 core and 4 reference Events, 27 errors', () => {
    expect(CORE_COMMAND_KINDS).toHaveLength(32)
    expect(REFERENCE_EXTENSION_COMMAND_KINDS).toHaveLength(6)
    expect(COMMAND_CATALOG).toHaveLength(38)
    expect(CORE_EVENT_KINDS).toHaveLength(36)
    expect(REFERENCE_EXTENSION_EVENT_KINDS).toHaveLength(4)
    expect(EVENT_CATALOG).toHaveLength(40)
    expect(ERROR_CATALOG).toHaveLength(27)
    expect(commandKinds).toEqual([...CORE_COMMAND_KINDS, ...REFERENCE_EXTENSION_COMMAND_KINDS])
    expect(eventKinds).toEqual([...CORE_EVENT_KINDS, ...REFERENCE_EXTENSION_EVENT_KINDS])
  })

  it('emit only catalogued Event kinds, and every Event kind is emitted by some Command', () => {
    const emitted = new Set<string>()
    for (const command of COMMAND_CATALOG) {
      for (const kind of command.emits) {
        expect(eventKinds, `${command.kind} emits ${kind}`).toContain(kind)
        emitted.add(kind)
      }
      expect(command.emits.length, command.kind).toBeGreaterThan(0)
    }
    expect([...emitted].sort()).toEqual([...eventKinds].sort())
  })

  it('give services no epochs, list epochs only for permitted issuers, and never both Coordinator-only and non-Agent', () => {
    for (const command of COMMAND_CATALOG) {
      const { agent, human } = command.requiredEpochs
      if (!(command.issuerTypes as readonly string[]).includes('agent')) expect(agent, command.kind).toEqual([])
      if (!(command.issuerTypes as readonly string[]).includes('human')) expect(human, command.kind).toEqual([])
      if (command.coordinatorOnly) expect(command.issuerTypes, command.kind).toEqual(['agent'])
      expect((human as readonly string[]).includes('session'), `${command.kind}: humans hold no Session (§6.3)`).toBe(false)
      expect((human as readonly string[]).includes('coordinator'), command.kind).toBe(false)
    }
  })

  it('keep Group-scoped and Organization-scoped Events apart', () => {
    const organization = EVENT_CATALOG.filter((event) => event.scope === 'organization').map((event) => event.kind)
    expect(organization).toEqual(['ext.missionweaveprotocol.registry.agent_card_registered', 'ext.missionweaveprotocol.identity.session_opened'])
  })

  it('mark exactly the §15.3 compare-and-set Commands', () => {
    const cas = COMMAND_CATALOG.filter((command) => 'requiresExpectedRevision' in command).map((command) => command.kind)
    expect(cas).toEqual([
      'mission.renew_coordinator',
      'mission.approve',
      'mission.request_changes',
      'membership.change',
      'membership.end',
      'work.accept_offer',
      'approval.grant_execution',
      'ext.missionweaveprotocol.core.work_execution_lease_renew',
    ])
  })

  it('call only transient receiver conditions retryable (§19)', () => {
    const retryable = ERROR_CATALOG.filter((error) => error.retryable).map((error) => error.code)
    expect(retryable).toEqual(['RATE_LIMITED', 'BACKPRESSURE', 'INTERNAL_ERROR'])
  })

  it('look entries up by kind or code', () => {
    expect(commandInfo('work.accept_result').requiredEpochs.agent).toEqual(['session', 'membership', 'coordinator'])
    expect(commandInfo('mission.pause')).toBeUndefined()
    expect(eventInfo('work.offer.accepted').aggregate).toBe('workItem')
    expect(eventInfo('ext.example.unknown.thing')).toBeUndefined()
    expect(errorInfo('BACKPRESSURE').retryable).toBe(true)
    expect(errorInfo('NOT_A_CODE')).toBeUndefined()
    expect(isCommandKind('work.start')).toBe(true)
    expect(isCommandKind('work.started')).toBe(false)
  })
})

describe('payload schemas', () => {
  it('exist for every catalogued kind and for nothing else', () => {
    expect(Object.keys(CommandPayloads)).toEqual(commandKinds)
    expect(Object.keys(EventPayloads)).toEqual(eventKinds)
  })

  it('close every object they declare (additionalProperties: false)', () => {
    for (const [kind, schema] of [...Object.entries(CommandPayloads), ...Object.entries(EventPayloads)]) {
      const root = json(schema) as JsonObject
      expect(root['type'] === 'object' || typeof root['$ref'] === 'string', kind).toBe(true)
      walk(root, (node, path) => {
        if (node['type'] === 'object') expect(node['additionalProperties'], `${kind} ${path}`).toBe(false)
      })
    }
  })

  it('type payloads precisely', () => {
    expectTypeOf<CommandPayload<'work.start'>>().toEqualTypeOf<{
      workItemId: string
      ownershipEpoch: number
      executionLeaseSeconds: number
    }>()
    expectTypeOf<CommandPayload<'work.propose'>['contract']>().toEqualTypeOf<WorkContract>()
    expectTypeOf<EventPayload<'ext.missionweaveprotocol.identity.session_opened'>>().toEqualTypeOf<{
      agentId: string
      sessionEpoch: number
    }>()
    expectTypeOf<EventPayload<'message.posted'>['authority']>().toEqualTypeOf<false>()
    expectTypeOf<keyof typeof CommandPayloads>().toEqualTypeOf<CommandKind>()
    expectTypeOf<keyof typeof EventPayloads>().toEqualTypeOf<EventKind>()
  })
})

describe.skipIf(!dir)('catalogs against the normative bundle', () => {
  const bundle = dir ?? ''
  const commandSchema = (): CommandSchema => readBundleJson<CommandSchema>(bundle, 'schemas/command.schema.json')
  const eventSchema = (): EventSchema => readBundleJson<EventSchema>(bundle, 'schemas/event.schema.json')
  const protocol = (): string => readFileSync(join(bundle, 'spec', 'PROTOCOL.md'), 'utf8')

  it('list the core Command kinds of the coreCommandKind enum, in order', () => {
    expect(CORE_COMMAND_KINDS).toEqual(commandSchema().$defs.coreCommandKind.enum)
  })

  it('list every core Command kind of the §15.1 block', () => {
    expect([...CORE_COMMAND_KINDS].sort()).toEqual(fencedWordsAfter(protocol(), '### 15.1').sort())
  })

  it('mark exactly the coordinatorOnlyKind enum as Coordinator-only', () => {
    const coordinatorOnly = COMMAND_CATALOG.filter((command) => command.coordinatorOnly).map((command) => command.kind)
    expect(coordinatorOnly).toEqual(commandSchema().$defs.coordinatorOnlyKind.enum)
  })

  it('scope exactly the organizationScopedKind enum to the Organization', () => {
    const organization = COMMAND_CATALOG.filter((command) => command.scope === 'organization').map((command) => command.kind)
    expect(organization).toEqual(commandSchema().$defs.organizationScopedKind.enum)
    for (const kind of organization) {
      expect(commandInfo(kind).issuerTypes, kind).toEqual(['service'])
    }
  })

  it('ask of Agents and humans exactly the epochs the envelope rules require', () => {
    const schema = commandSchema()
    // Kinds whose Agent issuer must carry the Coordinator Epoch: the coordinatorOnlyKind enum plus
    // every `if` that pairs an Agent actor with one kind const and requires coordinatorEpoch.
    const agentNeedsCoordinator = new Set(schema.$defs.coordinatorOnlyKind.enum)
    // Kinds whose human issuer carries no Membership Epoch: the `not enum` of the human rule.
    let humanExempt: string[] = []
    for (const rule of schema.allOf) {
      const text = JSON.stringify(rule)
      const kindConst = /"kind":\{"const":"([^"]+)"\}/.exec(text)?.[1]
      if (text.includes('"type":{"const":"agent"}') && kindConst && text.includes('"required":["coordinatorEpoch"]')) {
        agentNeedsCoordinator.add(kindConst)
      }
      const exempt = /"type":\{"const":"human"\}.*"kind":\{"not":\{"enum":(\[[^\]]*\])\}\}/.exec(text)?.[1]
      if (exempt) humanExempt = JSON.parse(exempt) as string[]
    }
    expect(agentNeedsCoordinator.has('mission.terminate')).toBe(true)
    expect(humanExempt).toEqual(['mission.create', 'mission.create_follow_up'])

    for (const command of COMMAND_CATALOG) {
      const issuers = command.issuerTypes as readonly string[]
      if (issuers.includes('agent')) {
        const expected = ['session', 'membership', ...(agentNeedsCoordinator.has(command.kind) ? ['coordinator'] : [])]
        expect(command.requiredEpochs.agent, command.kind).toEqual(expected)
      }
      if (issuers.includes('human')) {
        expect(command.requiredEpochs.human, command.kind).toEqual(humanExempt.includes(command.kind) ? [] : ['membership'])
      }
    }
    // Actor constraints of the envelope: human-only creation, Agent-or-service termination.
    expect(commandInfo('mission.create').issuerTypes).toEqual(['human'])
    expect(commandInfo('mission.create_follow_up').issuerTypes).toEqual(['human'])
    for (const issuer of commandInfo('mission.terminate').issuerTypes) expect(['agent', 'service']).toContain(issuer)
  })

  it('spell every Command kind as the envelope kind rule allows', () => {
    const schema = commandSchema()
    const core = schema.$defs.coreCommandKind.enum
    const extension = schema.properties.kind.anyOf[1]
    for (const kind of commandKinds) {
      if (kind.startsWith('ext.')) {
        expect(kind, kind).toMatch(new RegExp(extension.pattern))
        expect(kind.length, kind).toBeLessThanOrEqual(extension.maxLength)
      } else {
        expect(core, kind).toContain(kind)
      }
    }
  })

  it('list the core Event kinds of the event kind enum, in order, and every kind of the §15.2 block', () => {
    const schema = eventSchema()
    expect(CORE_EVENT_KINDS).toEqual(schema.properties.kind.anyOf[0].enum)
    const listed = fencedWordsAfter(protocol(), '### 15.2')
    expect(listed).toHaveLength(36)
    for (const kind of listed) expect(eventKinds, kind).toContain(kind)
  })

  it('scope exactly the Organization-scoped Event kinds of the envelope rule to the Organization', () => {
    const organization = EVENT_CATALOG.filter((event) => event.scope === 'organization').map((event) => event.kind)
    expect(organization).toEqual(eventSchema().allOf[0].if.properties.kind.enum)
  })

  it('spell every Event kind as the envelope kind rules allow', () => {
    const [core, extension] = eventSchema().properties.kind.anyOf
    const command = commandSchema().properties.kind.anyOf[1]
    for (const kind of eventKinds) {
      if (kind.startsWith('ext.')) {
        for (const rule of [extension, command]) {
          expect(kind, kind).toMatch(new RegExp(rule.pattern))
          expect(kind.length, kind).toBeLessThanOrEqual(rule.maxLength)
        }
      } else {
        expect(core.enum, kind).toContain(kind)
      }
    }
  })

  it('list the error codes of error.schema.json, in order', () => {
    const schema = readBundleJson<{ properties: { code: EnumSchema } }>(bundle, 'schemas/error.schema.json')
    expect(ERROR_CODES).toEqual(schema.properties.code.enum)
  })

  it('resolve every payload $ref inside the bundle, and embed only closed documents', () => {
    for (const [kind, schema] of [...Object.entries(CommandPayloads), ...Object.entries(EventPayloads)]) {
      const root = json(schema) as JsonObject
      walk(root, (node, path) => {
        const target = node['$ref']
        if (typeof target !== 'string') return
        const resolved = resolveRef(bundle, target)
        expect(resolved, `${kind} ${path} -> ${target}`).toBeDefined()
        if (!target.includes('#')) {
          expect((resolved as JsonObject)['additionalProperties'], `${kind} embeds ${target}`).toBe(false)
        }
      })
    }
  })

  it('name every member a valid conformance vector puts in a payload, except the listed divergences', () => {
    // Envelope vectors carry sample payloads; they are not complete, but their member names should
    // be ours. Listed divergences are deliberate; the test fails when one disappears.
    const divergences: Record<string, string[]> = {
      // The Group being created is the envelope's `groupId` (§15.1); Weft does not repeat it.
      'valid/human-mission-create-command.json': ['groupId'],
    }
    const vectorDir = join(bundle, 'conformance', 'vectors')
    const payloads: Record<string, unknown> = { ...CommandPayloads, ...EventPayloads }
    const vectors = ['command.json', 'event.json', 'human-mission-create-command.json', 'service-session-open-command.json', 'organization-session-opened-event.json']
    for (const name of vectors) {
      const vector = JSON.parse(readFileSync(join(vectorDir, 'valid', name), 'utf8')) as { kind: string; payload: JsonObject }
      const schema = json(payloads[vector.kind]) as JsonObject
      expect(schema, `${name}: ${vector.kind}`).toBeTruthy()
      let properties = schema['properties'] as JsonObject | undefined
      if (properties === undefined && typeof schema['$ref'] === 'string') {
        properties = (resolveRef(bundle, schema['$ref']) as JsonObject)['properties'] as JsonObject
      }
      const unknown = Object.keys(vector.payload).filter((key) => !(key in (properties ?? {})))
      expect(unknown, name).toEqual(divergences[`valid/${name}`] ?? [])
    }
  })
})

describe('the catalogs at run time', () => {
  it('are frozen to the last member, so the Authority, client and Worker read facts no caller can alter', () => {
    expect(Object.isFrozen(COMMAND_CATALOG)).toBe(true)
    expect(Object.isFrozen(EVENT_CATALOG)).toBe(true)
    const offer = commandInfo('work.offer')
    expect(Object.isFrozen(offer)).toBe(true)
    expect(Object.isFrozen(offer.emits)).toBe(true)
    expect(Object.isFrozen(offer.requiredEpochs.agent)).toBe(true)
    expect(() => (offer.emits as unknown as string[]).push('work.started')).toThrow(TypeError)
    expect(() => {
      ;(eventInfo('work.started') as { aggregate: string }).aggregate = 'mission'
    }).toThrow(TypeError)
    expect(eventInfo('work.started').aggregate).toBe('workItem')
  })
})
