/**
 * Emits `packages/validators/schemas/*.schema.json`: the Draft 2020-12 form of every document of
 * @weft/spec, for users of other languages and for the equivalence test against the normative set.
 * @module
 */
import { toJsonSchema } from '@weft/spec'
import type { EmitContext, GeneratedOutput } from './context.js'

/** Emits one JSON Schema file per document; the preamble travels in `$comment` (an annotation). */
export function emitJsonSchemas(ctx: EmitContext): GeneratedOutput[] {
  return ctx.documents.map((doc) => {
    const { $schema, $id, title, ...rest } = toJsonSchema(doc)
    const withComment = { $schema, $id, title, $comment: ctx.preambleText, ...rest }
    return { path: `packages/validators/schemas/${doc.file}`, content: JSON.stringify(withComment, null, 2) + '\n' }
  })
}
