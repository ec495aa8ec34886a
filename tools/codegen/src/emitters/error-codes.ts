/**
 * Emits `packages/codec/src/gen/error-codes.ts`: the closed union of §19 error codes and their
 * catalog facts, so `ProtocolError` can only carry a code the spec defines.
 * @module
 */
import { ERROR_CATALOG } from '@weft/spec'
import { GeneratedFile } from '../generated-file.js'
import type { EmitContext, GeneratedOutput } from './context.js'

/** Emits the error-code module of @weft/codec. */
export function emitErrorCodes(ctx: EmitContext): GeneratedOutput[] {
  const file = new GeneratedFile('packages/codec/src/gen/error-codes.ts', ctx.preamble)
  const union = ERROR_CATALOG.map((e) => `  /** ${e.meaning} (${e.section}) */\n  | ${JSON.stringify(e.code)}`).join('\n')
  file.statements(`/** A MissionWeaveProtocol 0.1 error code: the closed set of §19, from the @weft/spec error catalog. */\nexport type ErrorCode =\n${union}`)
  file.constant('ERROR_CODES', `${JSON.stringify(ERROR_CATALOG.map((e) => e.code))} as const`, {
    exported: true,
    doc: 'Every §19 error code, in the order of the specification.',
  })
  const rows = ERROR_CATALOG.map((e) => `  ${e.code}: { meaning: ${JSON.stringify(e.meaning)}, retryable: ${e.retryable} },`).join('\n')
  file.statements(
    `/** What each code means and whether an unchanged retry of the same Command is safe (§19). */\nexport const ERROR_CODE_INFO: { readonly [C in ErrorCode]: { readonly meaning: string; readonly retryable: boolean } } = {\n${rows}\n}`,
  )
  return [{ path: file.path, content: file.print() }]
}
