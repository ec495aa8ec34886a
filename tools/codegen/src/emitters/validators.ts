/**
 * Emits `packages/validators/src/gen/`: the validator functions of the normative documents in one
 * module and those of the payloads in another (one function per schema, each shared part emitted
 * once, see {@link ValidatorCompiler}), and the tables tying them to names and static types.
 * @module
 */
import type { TSchema } from 'typebox'
import { ValidatorCompiler, assertsNothing, type CompiledModule, type FormatImport } from '../compiler/compiler.js'
import { SchemaRegistry, type SchemaNode } from '../compiler/registry.js'
import { GeneratedFile } from '../generated-file.js'
import type { EmitContext, GeneratedOutput } from './context.js'

const OUT = 'packages/validators/src/gen'

/**
 * The protocol's format rules (§2) as the generated code imports them. `uri` decides the two
 * patterns of the common `id` definition: an absolute URI starts with a scheme and a colon, and
 * contains only URI characters. `formats.test.ts` proves both claims against `isAbsoluteUri`.
 */
export const PROTOCOL_FORMATS = {
  uri: {
    name: 'isAbsoluteUri',
    from: '@weft/codec/formats',
    implies: { patterns: ['^[A-Za-z][A-Za-z0-9+.-]*:'], excludes: ["[^A-Za-z0-9._~:/?#\\[\\]@!$&'()*+,;=%-]"] },
  },
  'date-time': { name: 'isProtocolTimestamp', from: '@weft/codec/formats' },
} as const satisfies Record<string, FormatImport>

/** A payload family (Command or Event payloads) to compile. */
export interface PayloadFamily {
  /** Synthetic schema-name part keeping the family's kinds apart, e.g. `command-payloads`. */
  readonly module: string
  /** Function-name prefix, e.g. `cmd`. */
  readonly prefix: string
  /** Exported table name, e.g. `commandPayloadValidators`. */
  readonly table: string
  /** The spec type mapping a kind to its payload type, e.g. `CommandPayload`. */
  readonly payloadType: string
  /** The spec union of kinds, e.g. `CommandKind`. */
  readonly kindType: string
  /** Where in the spec the kinds are catalogued (for TSDoc). */
  readonly source: string
  readonly schemas: Readonly<Record<string, TSchema>>
}

/**
 * All document validators go into one module and all payload validators into another: loading
 * ESM modules costs about 2 ms each, so one module per document made the cold start four times
 * slower than the same code in one file.
 */
const DOCUMENTS_MODULE = 'documents'
const PAYLOADS_MODULE = 'payloads'

function json(schema: unknown): SchemaNode {
  return JSON.parse(JSON.stringify(schema)) as SchemaNode
}

/** Emits every validator module and the two tables. */
export function emitValidators(ctx: EmitContext, families: readonly PayloadFamily[]): GeneratedOutput[] {
  const registry = new SchemaRegistry()
  const placements = new Map<string, { module: string; prefix: string }>()
  for (const doc of ctx.documents) {
    const base = ctx.schemaBase + doc.file
    registry.add(base, json(doc.schema))
    placements.set(base, { module: DOCUMENTS_MODULE, prefix: doc.name })
  }
  // Payload schemas live beside the normative ones so `common.schema.json#...` resolves.
  const payloadBase = (family: PayloadFamily, kind: string): string => `${ctx.schemaBase}weft-${family.module}.${kind}`
  for (const family of families) {
    for (const [kind, schema] of Object.entries(family.schemas)) {
      const base = payloadBase(family, kind)
      registry.add(base, json(schema))
      placements.set(base, { module: PAYLOADS_MODULE, prefix: `${family.prefix}_${kind.replace(/[^A-Za-z0-9]+/g, '_')}` })
    }
  }
  const compiler = new ValidatorCompiler(registry, {
    place: (base) => {
      const placement = placements.get(base)
      if (!placement) throw new Error(`no module for schema ${base}`)
      return placement
    },
    formats: PROTOCOL_FORMATS,
    runtime: '../runtime.js',
  })

  // Every document gets a validator, definitions-only ones included: a conformance vector may
  // name any schema file of the bundle (§21), and `common.schema.json` accepts every value.
  const documentEntries = ctx.documents.map((doc) => ({
    doc,
    fn: compiler.entry(ctx.schemaBase + doc.file).name,
    guard: assertsNothing(json(doc.schema)) ? 'unknown' : doc.typeName,
  }))
  // Every common definition is exported, so hand-written code can validate a primitive alone.
  const common = ctx.documents.find((doc) => doc.name === 'common')
  if (common) {
    for (const def of Object.keys((common.schema as unknown as { $defs: object }).$defs)) {
      compiler.entry(ctx.schemaBase + common.file, `/$defs/${def}`)
    }
  }
  const familyEntries = families.map((family) => ({
    family,
    entries: Object.keys(family.schemas).map((kind) => ({ kind, fn: compiler.entry(payloadBase(family, kind)).name })),
  }))

  const sources = new Map<string, string>()
  for (const doc of ctx.documents) sources.set(ctx.schemaBase + doc.file, `the ${doc.file} definition of @weft/spec (§21)`)
  for (const family of families) {
    for (const kind of Object.keys(family.schemas)) sources.set(payloadBase(family, kind), `the \`${kind}\` payload of @weft/spec`)
  }
  const sourceOf = (location: string): string => sources.get(location.split('#')[0]!) ?? 'the spec'
  const modules = compiler.modules()
  // One function serves both members of a table row: `check` calls it without a collector.
  const pair = (fn: string, guard: string): Record<string, string> => ({
    check: `${fn} as (v: unknown) => v is ${guard}`,
    collect: `${fn} as (v: unknown, p: string, x: Collector) => void`,
  })

  // Document functions, then the document table.
  const docs = emitModule(ctx, modules.get(DOCUMENTS_MODULE)!, sourceOf)
  docs.importNamed(
    '@weft/spec',
    documentEntries.map(({ guard }) => guard).filter((guard) => guard !== 'unknown'),
    true,
  )
  docs.record({
    name: 'documentValidators',
    exported: true,
    doc: 'Generated validator functions of every normative document, keyed by document name.',
    members: documentEntries.map(({ doc, fn, guard }) => ({
      key: doc.name,
      doc: `${doc.title} (\`${doc.file}\`).`,
      value: { name: JSON.stringify(doc.name), file: JSON.stringify(doc.file), schemaId: JSON.stringify(ctx.schemaBase + doc.file), ...pair(fn, guard) },
    })),
    suffix: 'as const',
  })
  const outputs: GeneratedOutput[] = [{ path: docs.path, content: docs.print() }]

  // Payload functions, then one table per family.
  const payloadModule = modules.get(PAYLOADS_MODULE)
  if (payloadModule) {
    const payloads = emitModule(ctx, payloadModule, sourceOf)
    payloads.importNamed(
      '@weft/spec',
      families.flatMap((f) => [f.payloadType, f.kindType]),
      true,
    )
    for (const { family, entries } of familyEntries) {
      payloads.record({
        name: family.table,
        exported: true,
        doc: `Generated payload validators keyed by kind (${family.source}).`,
        members: entries.map(({ kind, fn }) => ({ key: kind, value: { kind: JSON.stringify(kind), ...pair(fn, `${family.payloadType}<${JSON.stringify(kind)}>`) } })),
        suffix: `as const satisfies Record<${family.kindType}, unknown>`,
      })
    }
    outputs.push({ path: payloads.path, content: payloads.print() })
  }
  return outputs
}

function emitModule(ctx: EmitContext, mod: CompiledModule, sourceOf: (location: string) => string): GeneratedFile {
  const file = new GeneratedFile(`${OUT}/${mod.name}.ts`, ctx.preamble)
  for (const [from, names] of [...mod.imports].sort(([a], [b]) => a.localeCompare(b))) {
    // `Collector` is only a parameter type; it is imported as a type below
    file.importNamed(
      from,
      [...names].filter((n) => n !== 'Collector'),
    )
  }
  file.importNamed('../runtime.js', ['Collector'], true)
  for (const constant of mod.constants) file.constant(constant.name, constant.initializer)
  for (const fn of mod.functions) {
    const exported = mod.exported.has(fn.name)
    const what = fn.mode === 'check' ? 'Returns whether the value is valid against' : 'Validates the value against'
    const how = fn.mode === 'check' ? '' : ': without a collector returns whether it is valid; with one reports every issue, up to the collector bound, and returns true'
    file.fn({
      name: fn.name,
      exported,
      parameters: [
        { name: 'v', type: 'any' },
        ...(fn.mode === 'check'
          ? []
          : [
              { name: 'p', type: 'string', initializer: "''" },
              { name: 'x', type: 'Collector', optional: true },
            ]),
        // a shared part reports under the schema path of the location it validates
        ...(fn.schemaPathDefault === undefined ? [] : [{ name: 's', type: 'string', initializer: JSON.stringify(fn.schemaPathDefault) }]),
      ],
      returnType: 'boolean',
      body: fn.body,
      ...(exported ? { doc: `${what} \`${fn.location.replace(ctx.schemaBase, '')}\`, from ${sourceOf(fn.location)}${how}.` } : {}),
    })
  }
  return file
}
