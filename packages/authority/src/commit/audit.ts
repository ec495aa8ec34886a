/**
 * The audit record of refused Commands (§6.4: the first failing stage and its reason are retained
 * for authorized auditors and never sent to the caller), bounded in entries and in what each keeps.
 * @module
 */
import { parseStrictJson, ProtocolError, sha256Tagged } from '@weft/codec'
import { jsonText } from '../ingress/documents.js'
import { diagnosticOf, type IngressStage } from '../ingress/refusal.js'
import { boundedError, isWireId, truncated } from '../ingress/bounded.js'
import type { ActorRef } from '../model.js'
import type { AuditEntry } from './api.js'

/**
 * The caller's error, after recording the refusal in `audit`. It names the Command's Action ID when
 * that is one (§19), and its `details` are bounded: nothing of the input is echoed whole.
 */
export function refused(audit: AuditRing, thrown: unknown, input: unknown, trusted: boolean, source: unknown, at: string, stage: IngressStage): ProtocolError {
  const error = boundedError(ProtocolError.from(thrown))
  const { actionId, actor, kind, groupId, correlationId } = envelopeOf(source)
  const diagnostic = diagnosticOf(error, stage)
  // Input refused for its size is not hashed: hashing it would make each refusal cost as much as the attacker sent.
  const hash = diagnostic.reason === 'command-too-large' ? undefined : bytesHashOf(input, trusted)
  audit.add(
    Object.freeze({
      at,
      code: error.code,
      stage: truncated(diagnostic.stage),
      reason: truncated(diagnostic.reason),
      ...(diagnostic.detail === undefined ? {} : { detail: truncated(diagnostic.detail) }),
      ...(actor === undefined ? {} : { actor: Object.freeze({ type: actor.type, id: truncated(actor.id) }) }),
      ...(hash === undefined ? {} : { bytesHash: hash }),
      ...(actionId === undefined ? {} : { actionId: truncated(actionId) }),
      ...(kind === undefined ? {} : { kind: truncated(kind) }),
      ...(groupId === undefined ? {} : { groupId: truncated(groupId) }),
      ...(correlationId === undefined ? {} : { correlationId: truncated(correlationId) }),
    }),
  )
  // §19: a value that is no schema `id` (a megabyte of `actionId`, say) is not named back.
  return isWireId(actionId) ? error.with({ relatedActionId: actionId }) : error
}

/** The raw document of refused bytes, read again for the audit record (only refusals pay for it). */
export function peek(bytes: unknown, maxBytes: number): unknown {
  if (typeof bytes !== 'string' && !(bytes instanceof Uint8Array)) return undefined
  const parsed = parseStrictJson(bytes, { maxBytes })
  return parsed.ok ? parsed.value : undefined
}

/** The envelope members of a (possibly invalid) Command that the audit record and `relatedActionId` use, whole. */
function envelopeOf(source: unknown): Pick<AuditEntry, 'actor' | 'actionId' | 'kind' | 'groupId' | 'correlationId'> {
  if (typeof source !== 'object' || source === null) return {}
  const s = source as Record<string, unknown>
  const actor = s['actor'] as Record<string, unknown> | undefined
  const text = (v: unknown): v is string => typeof v === 'string'
  return {
    ...(text(s['actionId']) ? { actionId: s['actionId'] } : {}),
    ...(typeof actor === 'object' && actor !== null && text(actor['id']) && ['agent', 'human', 'service'].includes(actor['type'] as string)
      ? { actor: { type: actor['type'] as ActorRef['type'], id: actor['id'] } }
      : {}),
    ...(text(s['kind']) ? { kind: s['kind'] } : {}),
    ...(text(s['groupId']) ? { groupId: s['groupId'] } : {}),
    ...(text(s['correlationId']) ? { correlationId: s['correlationId'] } : {}),
  }
}

/** {@link AuditEntry.bytesHash} of submitted `input`: its bytes, or the JSON text of a trusted Command object. */
function bytesHashOf(input: unknown, trusted: boolean): string | undefined {
  const bytes = trusted ? jsonText(input) : input
  if (bytes instanceof Uint8Array) return sha256Tagged(bytes)
  return typeof bytes === 'string' ? sha256Tagged(Buffer.from(bytes, 'utf8')) : undefined
}

/** The audit record: a ring of the newest `capacity` entries. */
export interface AuditRing {
  add(entry: AuditEntry): void
  /** The entries, oldest first. */
  entries(): AuditEntry[]
}

/** A ring of the newest `capacity` audit entries; 0 keeps none. */
export function createAuditRing(capacity: number): AuditRing {
  const ring: AuditEntry[] = []
  // Where the next entry goes once the ring is full: the oldest entry's place.
  let next = 0
  return {
    add(entry) {
      if (capacity === 0) return
      if (ring.length < capacity) {
        ring.push(entry)
        return
      }
      ring[next] = entry
      next = (next + 1) % capacity
    },
    entries: () => [...ring.slice(next), ...ring.slice(0, next)],
  }
}
