/**
 * Emits `packages/authority/src/gen/`: the `CommandHandlers` and `EventReducers` interfaces (one
 * member per catalogued kind, so a kind added to the spec fails to compile until it is handled),
 * their exhaustive dispatch switches, the per-kind rules of the catalogs as literal data, and the
 * two transition tables of `@weft/spec/machines` flattened into lookups by (state, event).
 * @module
 */
import { COMMAND_CATALOG, EVENT_CATALOG, type CommandInfo, type EventInfo } from '@weft/spec'
import { MISSION_TRANSITIONS, WORK_ITEM_TRANSITIONS, type AnyTransitionRow } from '@weft/spec/machines'
import { GeneratedFile } from '../generated-file.js'
import type { EmitContext, GeneratedOutput } from './context.js'

const OUT = 'packages/authority/src/gen'

/** A TSDoc block of `lines` (blank strings become empty ` *` lines), indented by `pad`. */
export function docBlock(lines: readonly string[], pad = ''): string {
  if (lines.length === 1) return `${pad}/** ${lines[0]} */`
  return [`${pad}/**`, ...lines.map((l) => (l ? `${pad} * ${l}` : `${pad} *`)), `${pad} */`].join('\n')
}

/** A list as it reads in a TSDoc line: comma-separated, or `none`. */
const listOrNone = (values: readonly string[], item = (v: string): string => v): string => (values.length ? values.map(item).join(', ') : 'none')

/**
 * The facts of one Command catalog entry as TSDoc list items, shared by the authority's handler
 * interface and the client's builders: who may issue it, which epochs each issuer carries (§15.1),
 * the Coordinator-only rule (§7.2), the Events it may append and the compare-and-set rule (§15.3).
 */
export function commandFacts(entry: CommandInfo): string[] {
  const epochs = (['agent', 'human'] as const)
    .filter((type) => entry.issuerTypes.includes(type))
    .map((type) => `${type === 'agent' ? 'an Agent' : 'a human'} carries ${listOrNone(entry.requiredEpochs[type])}`)
  if (entry.issuerTypes.includes('service')) epochs.push('a service carries none')
  const lines = [
    `- Issuer types: ${entry.issuerTypes.join(', ')}${entry.coordinatorOnly ? '; reserved to the current Coordinator (§7.2)' : ''}.`,
    `- Required epochs (§15.1): ${epochs.join('; ')}.`,
    `- Scope: ${entry.scope}; aggregate: ${entry.aggregate}; may emit ${listOrNone(entry.emits, (kind) => `\`${kind}\``)}.`,
  ]
  if (entry.requiresExpectedRevision) {
    lines.push('- Compare-and-set (§15.3): the aggregate revision is checked even when `expectedRevision` is omitted.')
  }
  return lines
}

/** `'kind'`: a kind as a quoted property key or case label (kinds hold no quotes). */
export const quoted = (kind: string): string => `'${kind}'`

/** An object literal with one `"key": JSON` line per entry: diffs of the generated tables stay one line per kind. */
export function jsonLines(entries: readonly (readonly [string, unknown])[]): string {
  return `{\n${entries.map(([key, value]) => `  ${JSON.stringify(key)}: ${JSON.stringify(value)}`).join(',\n')}\n}`
}

/** A module with one interface member per catalogued kind and an exhaustive dispatch over it. */
interface KindTableModule {
  readonly name: string
  readonly imports: readonly (readonly [from: string, names: readonly string[]])[]
  /** Declarations placed before the interface. */
  readonly prelude: readonly string[]
  readonly interfaceName: string
  readonly interfaceDoc: readonly string[]
  /** `HandlerFor` or `ReducerFor`. */
  readonly memberType: string
  readonly members: readonly { readonly kind: string; readonly doc: readonly string[] }[]
  readonly dispatch: {
    readonly name: string
    readonly table: string
    /** The parameter the `switch` discriminates on `kind`. */
    readonly subject: string
    readonly parameters: readonly { name: string; type: string }[]
    readonly returnType: string
    /** What the fallback throws and how it names the missing entry. */
    readonly code: string
    readonly missing: string
    readonly doc: readonly string[]
  }
}

function kindTableFile(ctx: EmitContext, m: KindTableModule): GeneratedOutput {
  const file = new GeneratedFile(`${OUT}/${m.name}`, ctx.preamble)
  file.importNamed('@weft/codec/errors', ['ProtocolError'])
  for (const [from, names] of m.imports) file.importNamed(from, names, true)
  for (const declaration of m.prelude) file.statements(declaration)
  const members = m.members.map(({ kind, doc }) => `${docBlock(doc, '  ')}\n  readonly ${quoted(kind)}: ${m.memberType}<${quoted(kind)}>`)
  file.statements([docBlock(m.interfaceDoc), `export interface ${m.interfaceName} {`, ...members, '}'].join('\n'))
  const d = m.dispatch
  const args = d.parameters
    .filter((p) => p.name !== d.table)
    .map((p) => p.name)
    .join(', ')
  file.fn({
    name: d.name,
    exported: true,
    parameters: d.parameters,
    returnType: d.returnType,
    body: [
      `switch (${d.subject}.kind) {`,
      ...m.members.map(({ kind }) => `case ${quoted(kind)}: return ${d.table}[${quoted(kind)}](${args})`),
      'default: {',
      '// Unreachable for a value typed by the catalog (the kind enums of §15); kept for untyped callers.',
      `const unhandled: never = ${d.subject}`,
      `throw new ProtocolError('${d.code}', \`no ${d.missing} \${String((unhandled as { readonly kind?: unknown }).kind)}\`)`,
      '}',
      '}',
    ].join('\n'),
    doc: d.doc.join('\n'),
  })
  return { path: file.path, content: file.print() }
}

function handlersFile(ctx: EmitContext): GeneratedOutput {
  return kindTableFile(ctx, {
    name: 'handlers.ts',
    imports: [['../commit/handler.js', ['AnyCommand', 'AnyEventDraft', 'HandlerContext', 'HandlerFor']]],
    prelude: [],
    interfaceName: 'CommandHandlers',
    interfaceDoc: [
      'The handler of every Command kind of the @weft/spec COMMAND_CATALOG (§15.1), in catalog order.',
      'The authority types its handler table with this interface, so a Command kind added to the spec',
      'does not compile until it is handled. Each handler is pure: it returns Event drafts or throws a',
      '`ProtocolError` (see `HandlerFor` in `../commit/handler.ts`).',
    ],
    memberType: 'HandlerFor',
    members: COMMAND_CATALOG.map((entry) => ({
      kind: entry.kind,
      doc: [`\`${entry.kind}\` (COMMAND_CATALOG): ${entry.summary}`, '', ...commandFacts(entry), `@see PROTOCOL.md ${entry.section}`],
    })),
    dispatch: {
      name: 'dispatchCommand',
      table: 'handlers',
      subject: 'command',
      parameters: [
        { name: 'handlers', type: 'CommandHandlers' },
        { name: 'command', type: 'AnyCommand' },
        { name: 'ctx', type: 'HandlerContext' },
      ],
      returnType: 'readonly AnyEventDraft[]',
      code: 'INVALID_COMMAND',
      missing: 'handler for Command kind',
      doc: [
        'Runs the handler of `command.kind` from `handlers` (one `case` per COMMAND_CATALOG kind, §15.1).',
        '@throws ProtocolError `INVALID_COMMAND` for a kind outside the catalog; whatever the handler throws.',
      ],
    },
  })
}

function reducersFile(ctx: EmitContext): GeneratedOutput {
  return kindTableFile(ctx, {
    name: 'reducers.ts',
    imports: [
      ['@weft/spec', ['EventKind']],
      ['../commit/handler.js', ['EventOf', 'ReducerFor']],
      ['../model.js', ['AuthorityState']],
    ],
    prelude: [`${docBlock(['Any catalogued Event (EVENT_CATALOG of @weft/spec, §15.2), discriminated by `kind`.'])}\nexport type AnyEvent = { [K in EventKind]: EventOf<K> }[EventKind]`],
    interfaceName: 'EventReducers',
    interfaceDoc: [
      'The reducer of every Event kind of the @weft/spec EVENT_CATALOG (§15.2), in catalog order.',
      'Live acceptance and replay run the same reducers, so state = fold(log); an Event kind added to',
      'the spec does not compile until it has a reducer.',
    ],
    memberType: 'ReducerFor',
    members: EVENT_CATALOG.map((entry: EventInfo) => ({
      kind: entry.kind,
      doc: [`\`${entry.kind}\` (EVENT_CATALOG): ${entry.summary}`, '', `Scope: ${entry.scope}; aggregate: ${entry.aggregate}.`, `@see PROTOCOL.md ${entry.section}`],
    })),
    dispatch: {
      name: 'applyEvent',
      table: 'reducers',
      subject: 'event',
      parameters: [
        { name: 'reducers', type: 'EventReducers' },
        { name: 'state', type: 'AuthorityState' },
        { name: 'event', type: 'AnyEvent' },
      ],
      returnType: 'void',
      code: 'PROTOCOL_VIOLATION',
      missing: 'reducer for Event kind',
      doc: ['Advances `state` by one Event with the reducer of `event.kind` (one `case` per EVENT_CATALOG kind, §15.2).', '@throws ProtocolError `PROTOCOL_VIOLATION` for a kind outside the catalog.'],
    },
  })
}

/** `export const NAME: TYPE = deepFreeze<TYPE>({ ... })` with TSDoc, one JSON line per entry. */
function frozenTable(doc: readonly string[], name: string, type: string, entries: readonly (readonly [string, unknown])[]): string {
  return `${docBlock(doc)}\nexport const ${name}: ${type} = deepFreeze<${type}>(${jsonLines(entries)})`
}

/** The lookup key of a (from, event) pair. */
export const lookupKey = (from: string, event: string): string => `${from}|${event}`

/**
 * Flattens a transition table: for each (from, event) pair, in the order the pair first appears,
 * its targets with guarded rows first, then unguarded ones, as `statesFromRows` orders them.
 */
export function transitionLookup(rows: readonly AnyTransitionRow[]): [string, unknown[]][] {
  const grouped = new Map<string, AnyTransitionRow[]>()
  for (const row of rows) {
    const key = lookupKey(row.from, row.event)
    grouped.set(key, [...(grouped.get(key) ?? []), row])
  }
  return [...grouped].map(([key, group]) => {
    const ordered = [...group.filter((r) => r.guard !== undefined), ...group.filter((r) => r.guard === undefined)]
    return [key, ordered.map((r) => ({ to: r.to, ...(r.guard === undefined ? {} : { guard: r.guard }), emits: r.emits, section: r.section }))]
  })
}

/** For each event, the distinct states (or `none`) it has a row from, in table order. */
export function statesWithEvent(rows: readonly AnyTransitionRow[]): [string, string[]][] {
  const byEvent = new Map<string, string[]>()
  for (const row of rows) {
    const states = byEvent.get(row.event) ?? []
    if (!states.includes(row.from)) states.push(row.from)
    byEvent.set(row.event, states)
  }
  return [...byEvent]
}

function transitionsFile(ctx: EmitContext): GeneratedOutput {
  const file = new GeneratedFile(`${OUT}/transitions.ts`, ctx.preamble)
  file.importNamed('@weft/spec', ['EventKind'], true)
  // The tables are frozen with everything in them, so no caller can alter the machines of the spec at run time.
  file.importNamed('@weft/codec', ['deepFreeze'])
  file.statements(
    `${docBlock(['One row of a machine table of @weft/spec/machines, minus its (from, event) key.'])}
export interface TransitionTarget {
  /** The state after the transition (\`none\` only where nothing is created). */
  readonly to: string
  /** The guard that must hold; absent on the unguarded fallback row. */
  readonly guard?: string
  /** The Event kinds the transition may append, in order. */
  readonly emits: readonly EventKind[]
  /** The PROTOCOL.md section defining the row. */
  readonly section: string
}`,
  )
  file.statements(
    `${docBlock([
      'A flattened transition table keyed `${from}|${event}` (from is a state or `none`; event a Command kind',
      'or a `timer.` / `system.` event); guarded targets come first, the unguarded fallback last.',
    ])}\nexport type TransitionLookup = { readonly [fromAndEvent: string]: readonly TransitionTarget[] }`,
  )
  file.statements(`${docBlock(['For each machine event, the states (or `none`) from which the table has a row.'])}\nexport type StatesWithEvent = { readonly [event: string]: readonly string[] }`)
  const machines = [
    { prefix: 'WORK_ITEM', source: 'WORK_ITEM_TRANSITIONS', section: '§10.2, §11.3–§11.5, §14', rows: WORK_ITEM_TRANSITIONS },
    { prefix: 'MISSION', source: 'MISSION_TRANSITIONS', section: '§7.1, §7.2, §14', rows: MISSION_TRANSITIONS },
  ]
  for (const m of machines) {
    file.statements(
      frozenTable([`The rows of ${m.source} of @weft/spec/machines (${m.section}), flattened by (from, event).`], `${m.prefix}_TRANSITION_LOOKUP`, 'TransitionLookup', transitionLookup(m.rows)),
    )
    file.statements(
      frozenTable([`The states each event of ${m.source} (${m.section}) has a row from, for error messages.`], `${m.prefix}_STATES_WITH_EVENT`, 'StatesWithEvent', statesWithEvent(m.rows)),
    )
  }
  file.fn({
    name: 'transitionTargets',
    exported: true,
    parameters: [
      { name: 'table', type: 'TransitionLookup' },
      { name: 'from', type: 'string' },
      { name: 'event', type: 'string' },
    ],
    returnType: 'readonly TransitionTarget[]',
    body: 'return table[`${from}|${event}`] ?? []',
    doc: [
      'The targets of `event` from state `from` in a flattened table, guarded ones first; `[]` when the',
      'machine has no row, which the authority answers with `INVALID_STATE_TRANSITION` (§10.2, §7.1).',
      '@example',
      '```ts',
      "transitionTargets(WORK_ITEM_TRANSITION_LOOKUP, 'blocked', 'work.unblock').map((t) => t.to) // ['queued', 'open']",
      '```',
    ].join('\n'),
  })
  return { path: file.path, content: file.print() }
}

function indexFile(ctx: EmitContext): GeneratedOutput {
  const file = new GeneratedFile(`${OUT}/index.ts`, ctx.preamble)
  const transitions = [
    'MISSION_STATES_WITH_EVENT',
    'MISSION_TRANSITION_LOOKUP',
    'WORK_ITEM_STATES_WITH_EVENT',
    'WORK_ITEM_TRANSITION_LOOKUP',
    'transitionTargets',
    'type StatesWithEvent',
    'type TransitionLookup',
    'type TransitionTarget',
  ]
  file.statements(
    [
      docBlock(['The generated surface of @weft/authority, from the catalogs and machines of @weft/spec.', '@module']),
      '',
      "export { dispatchCommand, type CommandHandlers } from './handlers.js'",
      "export { applyEvent, type AnyEvent, type EventReducers } from './reducers.js'",
      `export {\n${transitions.map((name) => `  ${name},`).join('\n')}\n} from './transitions.js'`,
    ].join('\n'),
  )
  return { path: file.path, content: file.print() }
}

/**
 * Emits `handlers.ts`, `reducers.ts`, `transitions.ts` and `index.ts` of @weft/authority. The
 * catalog's facts (issuer types, epochs, aggregates, emits) are not copied: the Authority reads them
 * from `@weft/spec` at run time, its one route to the catalog; what is generated is what the catalog
 * cannot say as data, the typed tables and their dispatch, and the flattened machines.
 */
export function emitAuthority(ctx: EmitContext): GeneratedOutput[] {
  return [handlersFile(ctx), reducersFile(ctx), transitionsFile(ctx), indexFile(ctx)]
}
