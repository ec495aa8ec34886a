/**
 * Strict reading of Registry evidence (§6.4 stage 4): each member read at its JSON path, and the
 * first problem found ends validation.
 *
 * §6.4 fails stage 4 on any invalid record, related to the requested key or not, so one problem
 * is enough: the readers throw {@link EvidenceRejected} at the first fault rather than collect
 * them, and the Registry turns it back into data at its boundary ({@link problemOf}). A member
 * outside the expected ones fails closed, for it might carry meaning this model would ignore.
 * @module
 */
import type { RegistryFault, RegistryProblem } from './registry-types.js'
import { parseTimestamp, type ProtocolTimestamp } from './timestamp.js'

/** Thrown internally to stop validation at the first problem; never escapes the Registry ({@link problemOf}). */
export class EvidenceRejected {
  constructor(readonly problem: RegistryProblem) {}
}

/** Ends validation with one problem: the first invalid record fails stage 4 (§6.4). */
export function reject(fault: RegistryFault, path: string, detail: string): never {
  throw new EvidenceRejected({ fault, path, detail })
}

/**
 * Reads a plain object, rejecting any member outside `allowed`: an unknown member might carry
 * meaning (a status, a revision) this model would otherwise silently ignore, so it fails closed.
 */
export function objectAt(value: unknown, path: string, allowed: ReadonlySet<string>): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) reject('evidence-malformed', path, 'not an object')
  for (const name of Object.keys(value)) {
    if (!allowed.has(name)) reject('evidence-malformed', `${path}.${name}`, 'unknown member')
  }
  return value as Record<string, unknown>
}

/** Reads the string member `name`, which must be present. */
export function stringAt(object: Record<string, unknown>, name: string, path: string): string {
  const value = object[name]
  if (typeof value !== 'string') reject('evidence-malformed', `${path}.${name}`, value === undefined ? 'missing' : 'not a string')
  return value
}

/** Reads the array member `name`, which must be present. */
export function arrayAt(object: Record<string, unknown>, name: string, path: string): readonly unknown[] {
  const value = object[name]
  if (!Array.isArray(value)) reject('evidence-malformed', `${path}.${name}`, value === undefined ? 'missing' : 'not an array')
  return value
}

/** Parses a §2 timestamp, failing with `fault` when the text is outside the profile. */
export function timestampAt(text: string, fault: RegistryFault, path: string): ProtocolTimestamp {
  const parsed = parseTimestamp(text)
  if (parsed === undefined) reject(fault, path, 'outside the protocol timestamp profile (§2)')
  return parsed
}

/** The problem a failed validation threw; anything but a rejection (a throwing getter, a Proxy) is unreadable evidence. */
export function problemOf(e: unknown): RegistryProblem {
  return Object.freeze(e instanceof EvidenceRejected ? e.problem : { fault: 'evidence-unreadable' as const, path: '$', detail: 'reading the evidence threw' })
}
