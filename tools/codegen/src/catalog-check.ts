/**
 * The completeness check the generator runs before emitting anything. The spec's own types demand
 * a payload schema per catalogued kind, but the generator loads the spec without type-checking it:
 * an incomplete entry would be emitted as is, and only the build of the generated packages would
 * fail, with pages of mapped-type errors far from the cause. Here each gap becomes one line that
 * names the kind and what it lacks.
 * @module
 */
import { COMMAND_CATALOG, CommandPayloads, EVENT_CATALOG, EventPayloads, type AggregateType, type CatalogScope, type CommandInfo, type EpochName, type EventInfo, type IssuerType } from '@weft/spec'

/** The parts of @weft/spec the emitters read per kind; the defaults of {@link catalogProblems}. */
export interface SpecCatalogs {
  /** The Command entries (`COMMAND_CATALOG`). */
  readonly commands: readonly CommandInfo[]
  /** The Event entries (`EVENT_CATALOG`). */
  readonly events: readonly EventInfo[]
  /** Payload schema per Command kind (`CommandPayloads`). */
  readonly commandPayloads: Readonly<Record<string, unknown>>
  /** Payload schema per Event kind (`EventPayloads`). */
  readonly eventPayloads: Readonly<Record<string, unknown>>
}

/** The catalogs of @weft/spec as loaded. */
export const SPEC_CATALOGS: SpecCatalogs = {
  commands: COMMAND_CATALOG,
  events: EVENT_CATALOG,
  commandPayloads: CommandPayloads,
  eventPayloads: EventPayloads,
}

// The closed vocabularies of `catalog/shared.ts` exist there as types only. Keyed records list them
// here: an object literal typed `Record<Union, true>` fails to compile when a member is added to or
// removed from the union, so these lists cannot fall behind the spec.
const ISSUER_TYPES = Object.keys({ agent: true, human: true, service: true } satisfies Record<IssuerType, true>)
const EPOCH_NAMES = Object.keys({ session: true, membership: true, coordinator: true } satisfies Record<EpochName, true>)
const SCOPES = Object.keys({ group: true, organization: true } satisfies Record<CatalogScope, true>)
const AGGREGATES = Object.keys({
  mission: true,
  membership: true,
  message: true,
  workItem: true,
  artifact: true,
  approval: true,
  policy: true,
  group: true,
  agent: true,
  session: true,
} satisfies Record<AggregateType, true>)

// Where the author fixes each gap, named in the messages.
const COMMAND_ENTRIES = 'COMMAND_CATALOG (spec/src/catalog/commands.ts)'
const EVENT_ENTRIES = 'EVENT_CATALOG (spec/src/catalog/events.ts)'
const COMMAND_SCHEMAS = 'CommandPayloads (spec/src/payloads/commands.ts)'
const EVENT_SCHEMAS = 'EventPayloads (spec/src/payloads/events.ts)'

/** Whether a value is a schema object at all (TypeBox schemas are plain objects). */
const isSchema = (value: unknown): boolean => typeof value === 'object' && value !== null && !Array.isArray(value)

const isText = (value: unknown): value is string => typeof value === 'string' && value.trim() !== ''

/** The entries of a list that are not among `allowed`, or `undefined` when the value is no list. */
function outside(value: unknown, allowed: readonly string[]): unknown[] | undefined {
  return Array.isArray(value) ? value.filter((v) => typeof v !== 'string' || !allowed.includes(v)) : undefined
}

/** The fields every entry of both catalogs has: summary, scope, aggregate, section. */
function commonProblems(what: string, entry: Readonly<Record<string, unknown>>, where: string): string[] {
  const problems: string[] = []
  if (!isText(entry['summary'])) problems.push(`${what} lacks a summary in ${where}`)
  if (!SCOPES.includes(entry['scope'] as string)) problems.push(`${what} lacks a scope (one of ${SCOPES.join(', ')}) in ${where}`)
  if (!AGGREGATES.includes(entry['aggregate'] as string)) problems.push(`${what} lacks an aggregate (one of ${AGGREGATES.join(', ')}) in ${where}`)
  if (typeof entry['section'] !== 'string' || !/^§\d+(?:\.\d+)*$/.test(entry['section'])) {
    problems.push(`${what} lacks a PROTOCOL.md section (like §10.2) in ${where}`)
  }
  return problems
}

function commandProblems(entry: Readonly<Record<string, unknown>>, spec: SpecCatalogs, eventKinds: ReadonlySet<string>): string[] {
  const what = `Command kind ${String(entry['kind'])}`
  const problems: string[] = []
  if (!isSchema(spec.commandPayloads[entry['kind'] as string])) problems.push(`${what} lacks a payload schema in ${COMMAND_SCHEMAS}`)
  const issuers = entry['issuerTypes']
  const badIssuers = outside(issuers, ISSUER_TYPES)
  if (!Array.isArray(issuers) || issuers.length === 0) problems.push(`${what} lacks an issuer list (issuerTypes: ${ISSUER_TYPES.join(', ')}) in ${COMMAND_ENTRIES}`)
  else if (badIssuers!.length > 0) problems.push(`${what} lists unknown issuer types ${badIssuers!.join(', ')} in ${COMMAND_ENTRIES}`)
  const epochs = entry['requiredEpochs'] as Readonly<Record<string, unknown>> | undefined
  for (const type of ['agent', 'human'] as const) {
    const list = typeof epochs === 'object' && epochs !== null ? epochs[type] : undefined
    const bad = outside(list, EPOCH_NAMES)
    if (bad === undefined) problems.push(`${what} lacks requiredEpochs.${type} (a list, empty when none) in ${COMMAND_ENTRIES}`)
    else if (bad.length > 0) problems.push(`${what} lists unknown epochs ${bad.join(', ')} in requiredEpochs.${type} in ${COMMAND_ENTRIES}`)
  }
  if (typeof entry['coordinatorOnly'] !== 'boolean') problems.push(`${what} lacks coordinatorOnly (true or false) in ${COMMAND_ENTRIES}`)
  const emits = entry['emits']
  if (!Array.isArray(emits) || emits.length === 0) problems.push(`${what} lacks emitted Events (emits) in ${COMMAND_ENTRIES}`)
  else {
    const unknown = emits.filter((kind) => !eventKinds.has(kind as string))
    if (unknown.length > 0) problems.push(`${what} emits ${unknown.join(', ')}, not in ${EVENT_ENTRIES}`)
  }
  return [...problems, ...commonProblems(what, entry, COMMAND_ENTRIES)]
}

function eventProblems(entry: Readonly<Record<string, unknown>>, spec: SpecCatalogs): string[] {
  const what = `Event kind ${String(entry['kind'])}`
  const problems: string[] = []
  if (!isSchema(spec.eventPayloads[entry['kind'] as string])) problems.push(`${what} lacks a payload schema in ${EVENT_SCHEMAS}`)
  return [...problems, ...commonProblems(what, entry, EVENT_ENTRIES)]
}

/** Kinds given twice, and entries with no kind at all. */
function kindProblems(family: 'Command' | 'Event', entries: readonly Readonly<Record<string, unknown>>[], where: string): string[] {
  const problems: string[] = []
  const seen = new Set<string>()
  entries.forEach((entry, index) => {
    const kind = entry['kind']
    if (!isText(kind)) problems.push(`${family} entry ${index + 1} of ${where} lacks a kind`)
    else if (seen.has(kind)) problems.push(`${family} kind ${kind} is listed twice in ${where}`)
    else seen.add(kind)
  })
  return problems
}

/**
 * Every gap in the catalogs, one line each, naming the kind and what it lacks (empty when the
 * catalogs are complete): per Command kind a payload schema, issuer types, required epochs, the
 * Coordinator-only flag, emitted Events (each catalogued), summary, scope, aggregate and section;
 * per Event kind a payload schema, summary, scope, aggregate and section; no kind twice; no
 * payload schema for a kind outside the catalog.
 * @example
 * ```ts
 * catalogProblems() // [] for the spec as published
 * ```
 */
export function catalogProblems(spec: SpecCatalogs = SPEC_CATALOGS): string[] {
  // Entries are read as plain records: the point is to catch what the spec's types would have.
  const commands = spec.commands as readonly unknown[] as readonly Readonly<Record<string, unknown>>[]
  const events = spec.events as readonly unknown[] as readonly Readonly<Record<string, unknown>>[]
  const eventKinds = new Set(events.map((e) => e['kind'] as string))
  const commandKinds = new Set(commands.map((c) => c['kind'] as string))
  return [
    ...kindProblems('Command', commands, COMMAND_ENTRIES),
    ...commands.filter((c) => isText(c['kind'])).flatMap((c) => commandProblems(c, spec, eventKinds)),
    ...Object.keys(spec.commandPayloads)
      .filter((kind) => !commandKinds.has(kind))
      .map((kind) => `${COMMAND_SCHEMAS} has a schema for ${kind}, which is not a Command kind of ${COMMAND_ENTRIES}`),
    ...kindProblems('Event', events, EVENT_ENTRIES),
    ...events.filter((e) => isText(e['kind'])).flatMap((e) => eventProblems(e, spec)),
    ...Object.keys(spec.eventPayloads)
      .filter((kind) => !eventKinds.has(kind))
      .map((kind) => `${EVENT_SCHEMAS} has a schema for ${kind}, which is not an Event kind of ${EVENT_ENTRIES}`),
  ]
}

/** Thrown by `generate` when {@link catalogProblems} finds gaps; `problems` holds one line per gap. */
export class IncompleteCatalogError extends Error {
  readonly problems: readonly string[]

  constructor(problems: readonly string[]) {
    super(`the spec catalogs are incomplete:\n${problems.join('\n')}`)
    this.name = 'IncompleteCatalogError'
    this.problems = problems
  }
}

/**
 * Throws {@link IncompleteCatalogError} when the catalogs have gaps.
 * @throws IncompleteCatalogError listing every gap.
 */
export function assertCompleteCatalog(spec: SpecCatalogs = SPEC_CATALOGS): void {
  const problems = catalogProblems(spec)
  if (problems.length > 0) throw new IncompleteCatalogError(problems)
}
