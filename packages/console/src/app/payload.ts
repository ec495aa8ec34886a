/**
 * Reading an Event's payload as the console's folds do: a record whose members are checked for
 * their type where read, since a fold must not throw on an Event it does not fully expect.
 * @module
 */

/** An Event's payload, by member. */
export type Payload = Record<string, unknown>

/** `value` if it is a string. */
export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

/** `value` if it is a number. */
export function num(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined
}
