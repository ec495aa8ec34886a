/**
 * Emits the Mermaid statecharts of the WorkItem (§10.2) and Mission (§7.1) machines into
 * `spec/docs/`, one transition line per row of the tables of `@weft/spec/machines`, so the
 * diagrams cannot drift from the machines (`weft-codegen --check`).
 * @module
 */
import { MISSION_TRANSITIONS, NO_AGGREGATE, TERMINAL_MISSION_STATES, TERMINAL_WORK_ITEM_STATES, WORK_ITEM_TRANSITIONS, type AnyTransitionRow } from '@weft/spec/machines'
import type { EmitContext, GeneratedOutput } from './context.js'

/** One diagram to emit. */
interface Chart {
  readonly path: string
  readonly title: string
  readonly rows: readonly AnyTransitionRow[]
  readonly terminal: readonly string[]
}

const charts: readonly Chart[] = [
  {
    path: 'spec/docs/work-item-machine.mmd',
    title: 'The WorkItem state machine (§10.2), from WORK_ITEM_TRANSITIONS of @weft/spec/machines.',
    rows: WORK_ITEM_TRANSITIONS,
    terminal: TERMINAL_WORK_ITEM_STATES,
  },
  {
    path: 'spec/docs/mission-machine.mmd',
    title: 'The Mission lifecycle (§7.1), from MISSION_TRANSITIONS of @weft/spec/machines.',
    rows: MISSION_TRANSITIONS,
    terminal: TERMINAL_MISSION_STATES,
  },
]

/** The Mermaid line of one row: `from --> to : event [guard]`. */
export function statechartLine(row: AnyTransitionRow): string {
  return `${row.from} --> ${row.to} : ${row.event}${row.guard === undefined ? '' : ` [${row.guard}]`}`
}

/**
 * The text of one diagram: the preamble as a `%%` comment, a title comment, then a
 * `stateDiagram-v2` with the `none` pseudo-state (before the aggregate exists) as the start, one
 * line per row in table order, and an exit from each terminal state.
 */
function chart(ctx: EmitContext, c: Chart): string {
  const lines = [
    `%% ${ctx.preambleText}`,
    `%% ${c.title}`,
    'stateDiagram-v2',
    `${NO_AGGREGATE} : before creation`,
    `[*] --> ${NO_AGGREGATE}`,
    ...c.rows.map(statechartLine),
    ...c.terminal.map((state) => `${state} --> [*]`),
  ]
  return `${lines.join('\n')}\n`
}

/** Emits `spec/docs/work-item-machine.mmd` and `spec/docs/mission-machine.mmd`. */
export function emitStatecharts(ctx: EmitContext): GeneratedOutput[] {
  return charts.map((c) => ({ path: c.path, content: chart(ctx, c) }))
}
