/**
 * Signed Documents embedded in a Command (Evidence, Artifact manifests, Approvals, Context
 * Packages, Agent Cards, Group Snapshots): the verifier handlers call as
 * `HandlerContext.verifyDocument`, which runs all six §6.4 stages against the Registry, or on the
 * trusted path the document's schema alone, once.
 * @module
 */
import { canonicalize, GENERIC_WIRE_MESSAGES, isDocumentKind, ProtocolError, type DocumentKind, type KeyResolver, type SignedVerifier, type Stage } from '@weft/codec'
import { CommandPayloads, type Command } from '@weft/spec'
import { schemaCheckForKind } from '@weft/validators/signed'
import type { HandlerContext } from '../commit/handler.js'
import type { Diagnostic } from './refusal.js'

/**
 * `HandlerContext.verifyDocument`: the six §6.4 stages for an embedded Signed Document, given as its
 * canonical JSON; with `registry` undefined (the trusted path) only its schema. There, a document
 * that is a payload member of the Command being handled (`handling`), which the payload schema
 * checked against the document's own schema at admission, is not checked a second time.
 */
export function documentVerifier(verifier: SignedVerifier, registry: KeyResolver | undefined, handling?: () => Command | undefined): HandlerContext['verifyDocument'] {
  return (kind, document) => {
    if (registry === undefined) {
      const command = handling?.()
      if (command !== undefined && checkedWithPayload(command, kind, document)) return
      if (!schemaCheckForKind(kind, document as never)) throw documentError('SCHEMA_VALIDATION_FAILED', kind, 'schema', 'schema-invalid')
      return
    }
    // The document was parsed out of a verified Command, so its JSON text is one the six stages
    // read back to the same value; the native serializer saves a canonicalization the verifier
    // repeats anyway. Anything it cannot write gets the canonical form's own diagnosis.
    const text = jsonText(document)
    if (text === undefined) {
      const jcs = canonicalize(document)
      throw documentError('PROTOCOL_VIOLATION', kind, 'canonicalization', jcs.ok ? 'jcs-unsupported-value' : `jcs-${jcs.reason}`)
    }
    const result = verifier.verify(kind, text, registry)
    if (!result.ok) throw documentError(result.error.code as keyof typeof GENERIC_WIRE_MESSAGES, kind, result.stage, result.reason, result.detail)
  }
}

/** A payload member whose schema is a Signed Document's own (`$ref` to it), or a list of such documents (`each`). */
interface PayloadDocument {
  readonly member: string
  readonly kind: string
  readonly each: boolean
}

/**
 * Per Command kind, the payload members its schema checks with a Signed Document's schema, read off
 * the spec's payload schemas: the validators are generated from the same schemas, so the payload
 * check runs the very check a document's schema stage runs.
 */
const PAYLOAD_DOCUMENTS: ReadonlyMap<string, readonly PayloadDocument[]> = new Map(
  Object.entries(CommandPayloads as Readonly<Record<string, { readonly properties?: Readonly<Record<string, SchemaRef>> }>>).map(([kind, schema]) => [
    kind,
    Object.entries(schema.properties ?? {}).flatMap(([member, property]): PayloadDocument[] => {
      const each = property.type === 'array'
      const document = documentKindOf(each ? property.items?.$ref : property.$ref)
      return document === undefined ? [] : [{ member, kind: document, each }]
    }),
  ]),
)

/** The part of a payload member's schema {@link PAYLOAD_DOCUMENTS} reads. */
interface SchemaRef {
  readonly $ref?: string
  readonly type?: string
  readonly items?: { readonly $ref?: string }
}

/** The Signed Document kind a `$ref` names (`evidence.schema.json` -> `evidence`), or `undefined`. */
function documentKindOf(ref: string | undefined): string | undefined {
  const kind = ref?.endsWith('.schema.json') === true ? ref.slice(0, -'.schema.json'.length) : undefined
  return kind !== undefined && isDocumentKind(kind) ? kind : undefined
}

/** Whether `document` is a payload member of `command` that its payload schema checked as a `kind` document. */
export function checkedWithPayload(command: Command, kind: string, document: unknown): boolean {
  const members = PAYLOAD_DOCUMENTS.get(command.kind)
  if (members === undefined) return false
  const payload = command.payload as Readonly<Record<string, unknown>>
  for (const m of members) {
    if (m.kind !== kind) continue
    const value = payload[m.member]
    if (value === document || (m.each && Array.isArray(value) && value.includes(document))) return true
  }
  return false
}

/** `JSON.stringify` of a value, or `undefined` when it has no JSON text (a cycle, a bigint, `undefined` itself). */
export function jsonText(value: unknown): string | undefined {
  try {
    return JSON.stringify(value) as string | undefined
  } catch {
    return undefined
  }
}

function documentError(code: keyof typeof GENERIC_WIRE_MESSAGES, kind: DocumentKind, stage: Stage, reason: string, detail?: string): ProtocolError {
  const cause: Diagnostic = { stage: `${kind}:${stage}`, reason, ...(detail === undefined ? {} : { detail }) }
  return new ProtocolError(code, GENERIC_WIRE_MESSAGES[code], { cause })
}
