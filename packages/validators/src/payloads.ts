/**
 * `@weft/validators/payloads`: validators of the `payload` of every Command and Event kind
 * catalogued in @weft/spec (the normative envelopes leave `payload` open; the payload schemas
 * fill that gap, see the payload contract of the architecture).
 *
 * @example
 * ```ts
 * import { commandPayloads } from '@weft/validators/payloads'
 *
 * const payload = commandPayloads['work.offer'].parse(command.payload) // typed CommandPayload<'work.offer'>
 * ```
 * @module
 */
import type { CommandKind, CommandPayload, EventKind, EventPayload } from '@weft/spec'
import { commandPayloadValidators, eventPayloadValidators } from './gen/payloads.js'
import { createValidator, resolveLimits, type GeneratedPair, type ValidationLimits, type Validator } from './validator.js'

/** One validator per Command kind, for the Command's `payload`. */
export type CommandPayloadValidators = { readonly [K in CommandKind]: Validator<CommandPayload<K>> }

/** One validator per Event kind, for the Event's `payload`. */
export type EventPayloadValidators = { readonly [K in EventKind]: Validator<EventPayload<K>> }

/** Payload validators sharing one set of limits. */
export interface PayloadValidatorSet {
  readonly commandPayloads: CommandPayloadValidators
  readonly eventPayloads: EventPayloadValidators
}

function wrap(table: Record<string, { kind: string }>, defaults: Required<ValidationLimits>): Record<string, Validator<unknown>> {
  const out: Record<string, Validator<unknown>> = {}
  for (const [kind, g] of Object.entries(table)) out[kind] = createValidator(kind, g as unknown as GeneratedPair<unknown>, defaults)
  return out
}

/** Builds payload validators defaulting to `limits` (bad limits throw a `UsageError`). */
export function createPayloadValidators(limits?: ValidationLimits): PayloadValidatorSet {
  const defaults = resolveLimits(limits)
  return {
    commandPayloads: wrap(commandPayloadValidators, defaults) as unknown as CommandPayloadValidators,
    eventPayloads: wrap(eventPayloadValidators, defaults) as unknown as EventPayloadValidators,
  }
}

const defaultSet = createPayloadValidators()

/** Command payload validators with the default limits, keyed by Command kind. */
export const commandPayloads: CommandPayloadValidators = defaultSet.commandPayloads
/** Event payload validators with the default limits, keyed by Event kind. */
export const eventPayloads: EventPayloadValidators = defaultSet.eventPayloads
