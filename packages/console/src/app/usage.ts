/**
 * Resource usage as the console shows it (§12): the six budget dimensions usage records name, the
 * Mission budget limit that caps each, and how an amount reads.
 * @module
 */
import type { ResourceBudget } from '@weft/spec'

/** The six budget dimensions of §12, as usage deltas name them. */
export const USAGE_DIMENSIONS = ['financialMicrounits', 'modelTokens', 'toolCalls', 'computeSeconds', 'wallClockSeconds', 'externalActions'] as const

/** A usage dimension. */
export type UsageDimension = (typeof USAGE_DIMENSIONS)[number]

/** Usage per dimension (absent: zero, or for a remaining budget: no limit). */
export type Usage = Partial<Record<UsageDimension, number>>

/** The Mission budget limit (§12) that caps a usage dimension, and how to convert usage into it. */
export const LIMIT_OF: Readonly<Record<UsageDimension, { readonly limit: keyof ResourceBudget; readonly scale: number }>> = {
  financialMicrounits: { limit: 'financialLimit', scale: 1_000_000 },
  modelTokens: { limit: 'modelTokenLimit', scale: 1 },
  toolCalls: { limit: 'toolCallLimit', scale: 1 },
  computeSeconds: { limit: 'computeSecondsLimit', scale: 1 },
  wallClockSeconds: { limit: 'wallClockSecondsLimit', scale: 1 },
  externalActions: { limit: 'externalSideEffectLimit', scale: 1 },
}

/** `tokens 1200, tool calls 3, $0.05`: a usage delta in words. */
export function formatUsage(usage: Usage): string {
  const parts: string[] = []
  for (const d of USAGE_DIMENSIONS) {
    const v = usage[d]
    if (v === undefined || v === 0) continue
    parts.push(`${DIMENSION_LABELS[d]} ${formatDimension(d, v)}`)
  }
  return parts.length === 0 ? 'none' : parts.join(', ')
}

/** Display names of the usage dimensions. */
export const DIMENSION_LABELS: Readonly<Record<UsageDimension, string>> = {
  financialMicrounits: 'cost',
  modelTokens: 'tokens',
  toolCalls: 'tool calls',
  computeSeconds: 'compute s',
  wallClockSeconds: 'wall-clock s',
  externalActions: 'external actions',
}

/** A usage amount in its display unit (money in currency units from micro-units, §12). */
export function formatDimension(d: UsageDimension, value: number): string {
  if (d === 'financialMicrounits') return (value / 1_000_000).toFixed(2)
  return String(value)
}

/** What the Mission budget allows per dimension (in usage units), or undefined for no limit. */
export function missionLimit(budget: ResourceBudget | undefined, d: UsageDimension): number | undefined {
  const limit = budget?.[LIMIT_OF[d].limit]
  return typeof limit === 'number' ? Math.round(limit * LIMIT_OF[d].scale) : undefined
}
