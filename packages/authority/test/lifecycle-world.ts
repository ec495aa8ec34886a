/**
 * What the client-driven lifecycle tests (`lifecycle-*.test.ts`) share beyond `@weft/testkit/world`.
 */

/** The text content of a Message. */
export const text = (value: string) => [{ type: 'text' as const, text: value }]
