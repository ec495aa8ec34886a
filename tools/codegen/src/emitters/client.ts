/**
 * Emits `packages/client/src/gen/`: one typed builder method per Command kind of the catalog, the
 * kind-to-method name table, and `bindBuilders`, which binds every method to a `CommandSender`.
 * @module
 */
import { COMMAND_CATALOG, type CommandInfo } from '@weft/spec'
import { GeneratedFile } from '../generated-file.js'
import { commandFacts, docBlock, jsonLines, quoted } from './authority.js'
import type { EmitContext, GeneratedOutput } from './context.js'

const OUT = 'packages/client/src/gen'

/** The prefix of the reference extension kinds (§15.1), dropped from builder names. */
const REFERENCE_PREFIX = 'ext.missionweaveprotocol.'

/**
 * The builder method name of a Command kind: camelCase of its dot- and underscore-separated words,
 * without the reference extension prefix (`work.accept_offer` -> `workAcceptOffer`,
 * `ext.missionweaveprotocol.identity.session_open` -> `identitySessionOpen`).
 */
export function builderName(kind: string): string {
  const bare = kind.startsWith(REFERENCE_PREFIX) ? kind.slice(REFERENCE_PREFIX.length) : kind
  const [first = '', ...rest] = bare.split(/[._]/).filter(Boolean)
  return first + rest.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('')
}

/**
 * The builder name of each kind (by default every catalogued kind, in catalog order).
 * @throws Error when two kinds map to one name, which would make a builder unreachable.
 */
export function builderNames(kinds: readonly string[] = COMMAND_CATALOG.map((e) => e.kind)): [string, string][] {
  const names = kinds.map((kind): [string, string] => [kind, builderName(kind)])
  const seen = new Map<string, string>()
  for (const [kind, name] of names) {
    const other = seen.get(name)
    if (other !== undefined) throw new Error(`builder name ${name} is shared by ${other} and ${kind}`)
    seen.set(name, kind)
  }
  return names
}

function builderDoc(entry: CommandInfo): string {
  return docBlock(
    [
      `Sends \`${entry.kind}\` (COMMAND_CATALOG): ${entry.summary}`,
      '',
      ...commandFacts(entry),
      '',
      'The client fills the envelope: IDs, `issuedAt`, the epochs above from its session state, and the signature.',
      `@param payload - The \`${entry.kind}\` payload (\`CommandPayload<${quoted(entry.kind)}>\` of @weft/spec).`,
      '@param options - Envelope members to set for this Command (Group, `expectedRevision`, correlation, ...).',
      '@returns The receipt with the Events the Authority appended.',
      '@throws ProtocolError (from `@weft/codec`) with the §19 code when the Authority refuses the Command.',
      `@see PROTOCOL.md ${entry.section}`,
    ],
    '  ',
  )
}

function buildersFile(ctx: EmitContext): GeneratedOutput {
  const file = new GeneratedFile(`${OUT}/builders.ts`, ctx.preamble)
  file.importNamed('@weft/spec', ['CommandKind', 'CommandPayload'], true)
  file.importNamed('../sender.js', ['CommandOptions', 'CommandSender', 'Receipt'], true)
  const names = new Map(builderNames())
  const name = (kind: string): string => names.get(kind) ?? builderName(kind)
  const methods = COMMAND_CATALOG.map((entry) => `${builderDoc(entry)}\n  ${name(entry.kind)}(payload: CommandPayload<${quoted(entry.kind)}>, options?: CommandOptions): Promise<Receipt>`)
  file.statements(
    [
      docBlock([
        'One typed, signed builder per Command kind of the @weft/spec COMMAND_CATALOG (§15.1), in catalog order.',
        'Method names are the camelCase of the kind without the `ext.missionweaveprotocol.` prefix',
        '(see {@link COMMAND_BUILDER_NAMES}).',
      ]),
      'export interface CommandBuilders {',
      ...methods,
      '}',
    ].join('\n'),
  )
  file.statements(
    `${docBlock(['The builder method of each Command kind (COMMAND_CATALOG, §15.1).'])}\nexport const COMMAND_BUILDER_NAMES: { readonly [K in CommandKind]: keyof CommandBuilders } = Object.freeze(${jsonLines([...names])})`,
  )
  file.fn({
    name: 'bindBuilders',
    exported: true,
    parameters: [{ name: 'sender', type: 'CommandSender' }],
    returnType: 'CommandBuilders',
    body: ['return {', ...COMMAND_CATALOG.map((e) => `${name(e.kind)}: (payload, options) => sender.send(${quoted(e.kind)}, payload, options),`), '}'].join('\n'),
    doc: [
      'Binds every builder of {@link CommandBuilders} to `sender`: each method sends its own kind.',
      '@example',
      '```ts',
      'const receipt = await bindBuilders(sender).workAcceptOffer({ workItemId, ownershipLeaseSeconds: 600 }, { expectedRevision: 3 })',
      '```',
    ].join('\n'),
  })
  return { path: file.path, content: file.print() }
}

function indexFile(ctx: EmitContext): GeneratedOutput {
  const file = new GeneratedFile(`${OUT}/index.ts`, ctx.preamble)
  file.statements(
    [
      docBlock(['The generated surface of @weft/client: one Command builder per kind of @weft/spec.', '@module']),
      '',
      "export { COMMAND_BUILDER_NAMES, bindBuilders, type CommandBuilders } from './builders.js'",
    ].join('\n'),
  )
  return { path: file.path, content: file.print() }
}

/** Emits `builders.ts` and `index.ts` of @weft/client. */
export function emitClient(ctx: EmitContext): GeneratedOutput[] {
  return [buildersFile(ctx), indexFile(ctx)]
}
