/**
 * The reference side of the differential tests: Ajv (Draft 2020-12) compiling the normative
 * schema files of the bundle as they are, with the §2 format rules of `@weft/codec` registered
 * for `uri` and `date-time`. Both sides then share the format rules, so a disagreement points at
 * the generated validators (or at Ajv), never at two readings of RFC 3339 / RFC 3986.
 * @module
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { isAbsoluteUri, isProtocolTimestamp } from '@weft/codec'
import Ajv2020Import from 'ajv/dist/2020.js'
import type { AnySchemaObject, ErrorObject, Options, ValidateFunction } from 'ajv/dist/2020.js'

// Ajv is CommonJS: under NodeNext the default import is `module.exports`, which is the class and
// also carries it as `.default`; take whichever the loader hands over.
type Ajv2020Class = typeof Ajv2020Import.default
const Ajv2020: Ajv2020Class = (Ajv2020Import as unknown as { default?: Ajv2020Class }).default ?? (Ajv2020Import as unknown as Ajv2020Class)

/** Number of normative schema files in a MissionWeaveProtocol 0.1 bundle (`schemas/*.schema.json`). */
export const NORMATIVE_SCHEMA_COUNT = 22

/** Options of {@link referenceValidators}. */
export interface ReferenceOptions {
  /** Collect every error instead of stopping at the first (slower; for diagnostics). */
  readonly allErrors?: boolean
}

/** A compiled reference validator of one schema file. */
export type ReferenceValidator = ValidateFunction & { readonly errors?: ErrorObject[] | null }

/**
 * Compiles every `schemas/*.schema.json` of the bundle with Ajv 2020 (`strict: false`: the
 * normative schemas carry annotations such as `$comment` that strict mode would question) and
 * returns the validators keyed by file name (`work-item.schema.json`). Schemas are registered
 * by their `$id` first, so cross-file `$ref`s resolve as the bundle README requires.
 * @throws Error when the bundle does not hold exactly {@link NORMATIVE_SCHEMA_COUNT} schema files.
 */
export function referenceValidators(bundleDir: string, options: ReferenceOptions = {}): Map<string, ReferenceValidator> {
  const ajvOptions: Options = { strict: false, allErrors: options.allErrors ?? false }
  const ajv = new Ajv2020(ajvOptions)
  // §2: every format is an assertion; these are the protocol's own rules for the two formats used.
  ajv.addFormat('uri', { type: 'string', validate: isAbsoluteUri })
  ajv.addFormat('date-time', { type: 'string', validate: isProtocolTimestamp })

  const schemaDir = join(bundleDir, 'schemas')
  const files = readdirSync(schemaDir)
    .filter((f) => f.endsWith('.schema.json'))
    .sort()
  if (files.length !== NORMATIVE_SCHEMA_COUNT) {
    throw new Error(`${schemaDir}: expected ${NORMATIVE_SCHEMA_COUNT} schema files, found ${files.length}`)
  }
  const ids = new Map<string, string>()
  for (const file of files) {
    const schema = JSON.parse(readFileSync(join(schemaDir, file), 'utf8')) as AnySchemaObject
    if (typeof schema.$id !== 'string') throw new Error(`${file}: no $id`)
    ajv.addSchema(schema)
    ids.set(file, schema.$id)
  }
  const compiled = new Map<string, ReferenceValidator>()
  for (const [file, id] of ids) {
    const validate = ajv.getSchema(id)
    if (validate === undefined) throw new Error(`${file}: Ajv did not compile ${id}`)
    compiled.set(file, validate as ReferenceValidator)
  }
  return compiled
}
