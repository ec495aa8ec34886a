/**
 * Emits `packages/worker/src/gen/`: the `WorkerEventReducers` interface (one member per catalogued
 * Event kind, so a kind added to the spec fails to compile in the Worker until its projection
 * handles it) and `applyWorkerEvent`, the switch that folds one Event into the Worker's view.
 * @module
 */
import { EVENT_CATALOG, type EventInfo } from '@weft/spec'
import { GeneratedFile } from '../generated-file.js'
import { docBlock, quoted } from './authority.js'
import type { EmitContext, GeneratedOutput } from './context.js'

const OUT = 'packages/worker/src/gen'

/** The TSDoc lines of one reducer member: what the Event records, where it applies, its section. */
export function workerReducerDoc(entry: EventInfo): string[] {
  const reach = entry.scope === 'group' ? 'A Group fact, folded in Group sequence order' : 'An Organization fact outside every Group order (§15.2)'
  return [`\`${entry.kind}\` (EVENT_CATALOG): ${entry.summary}`, '', `${reach}; it advances the ${entry.aggregate} aggregate.`, `@see PROTOCOL.md ${entry.section}`]
}

/** The `case` line of one kind in `applyWorkerEvent`. */
export function workerCase(kind: string): string {
  return `case ${quoted(kind)}: return reducers[${quoted(kind)}](view, event as WorkerEventOf<${quoted(kind)}>)`
}

function reducersFile(ctx: EmitContext): GeneratedOutput {
  const file = new GeneratedFile(`${OUT}/reducers.ts`, ctx.preamble)
  file.importNamed('@weft/spec', ['Event', 'ExtensionKind'], true)
  file.importNamed('../seams.js', ['WorkerView'], true)
  file.importNamed('../reducer-types.js', ['WorkerEventOf', 'WorkerReducerFor'], true)
  const members = EVENT_CATALOG.map((entry) => `${docBlock(workerReducerDoc(entry), '  ')}\n  readonly ${quoted(entry.kind)}: WorkerReducerFor<${quoted(entry.kind)}>`)
  file.statements(
    [
      docBlock([
        'The Worker projection’s reducer of every Event kind of the @weft/spec EVENT_CATALOG (§15.2), in',
        'catalog order. Live delivery and replay from the local store run the same reducers, so the',
        'per-Group queues are a fold of the Group log (§11.1); an Event kind added to the spec does not',
        'compile until the Worker has a reducer for it (a no-op is a decision, written down).',
      ]),
      'export interface WorkerEventReducers {',
      ...members,
      '}',
    ].join('\n'),
  )
  file.fn({
    name: 'applyWorkerEvent',
    exported: true,
    parameters: [
      { name: 'reducers', type: 'WorkerEventReducers' },
      { name: 'view', type: 'WorkerView' },
      { name: 'event', type: 'Event' },
    ],
    returnType: 'void',
    body: [
      'switch (event.kind) {',
      ...EVENT_CATALOG.map((entry) => workerCase(entry.kind)),
      'default: {',
      '// §18: an Extension Profile kind outside the catalog is retained in the log without',
      '// interpretation, so the view has nothing to fold. The check below compiles only while every',
      '// core kind (§15.2) has its case above: only `ext.` kinds may reach this branch.',
      'event.kind satisfies ExtensionKind',
      '}',
      '}',
    ].join('\n'),
    doc: [
      'Folds one Event into `view` with the reducer of `event.kind` (one `case` per EVENT_CATALOG kind, §15.2).',
      'An `ext.` kind outside the catalog changes nothing (§18: unknown extensions are tolerated by readers).',
      'The payload is trusted to match its kind: the Worker reads Events its Group Authority accepted and signed.',
    ].join('\n'),
  })
  return { path: file.path, content: file.print() }
}

function indexFile(ctx: EmitContext): GeneratedOutput {
  const file = new GeneratedFile(`${OUT}/index.ts`, ctx.preamble)
  file.statements(
    [docBlock(['The generated surface of @weft/worker, from the Event catalog of @weft/spec.', '@module']), '', "export { applyWorkerEvent, type WorkerEventReducers } from './reducers.js'"].join(
      '\n',
    ),
  )
  return { path: file.path, content: file.print() }
}

/** Emits `reducers.ts` and `index.ts` of @weft/worker. */
export function emitWorker(ctx: EmitContext): GeneratedOutput[] {
  return [reducersFile(ctx), indexFile(ctx)]
}
