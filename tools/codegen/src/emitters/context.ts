/**
 * What every emitter receives and returns.
 * @module
 */
import type { DocumentDefinition } from '@weft/spec'

/** One file a generator writes, relative to the repository root. */
export interface GeneratedOutput {
  readonly path: string
  readonly content: string
}

/** Inputs shared by the emitters. */
export interface EmitContext {
  /** The `// @generated ...` line every generated TypeScript file starts with. */
  readonly preamble: string
  /** The same text, for JSON outputs (carried in `$comment`). */
  readonly preambleText: string
  /** The normative `$id` prefix. */
  readonly schemaBase: string
  /** The 22 documents in §21 order. */
  readonly documents: readonly DocumentDefinition[]
}
