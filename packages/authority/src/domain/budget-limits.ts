/**
 * The limits of a Resource Budget read per usage dimension (§12), money in millionths of the
 * currency, and the zero usage vector. The budget checks (`work-budget.ts`) and the WorkItem index
 * that sums reservations (`work-index.ts`) both need them; they live here, importing nothing of
 * the package, so that neither of those modules imports the other in a loop.
 * @module
 */
import type { ResourceBudget, UsageDimension } from '@weft/spec'
import type { Usage } from '../model.js'

/** The Resource Budget member holding each dimension's limit (§12). */
export const LIMIT_KEY = {
  financialMicrounits: 'financialLimit',
  modelTokens: 'modelTokenLimit',
  toolCalls: 'toolCallLimit',
  computeSeconds: 'computeSecondsLimit',
  wallClockSeconds: 'wallClockSecondsLimit',
  externalActions: 'externalSideEffectLimit',
} as const satisfies Record<UsageDimension, keyof ResourceBudget>

/** Microunits per currency unit: `financialMicrounits` keeps money in whole numbers so sums never drift. */
export const MICRO = 1_000_000

/** A zero usage vector. */
export function zeroUsage(): Usage {
  return { financialMicrounits: 0, modelTokens: 0, toolCalls: 0, computeSeconds: 0, wallClockSeconds: 0, externalActions: 0 }
}

/**
 * The limit `budget` sets on dimension `d` (money in microunits), or `undefined` when it sets none.
 * The budget checks run on every start, charge and end of work, so they read limits one by one
 * rather than through a `limitsOf` object (`work-budget.ts`) each time.
 */
export function limitOf(budget: ResourceBudget, d: UsageDimension): number | undefined {
  const value = budget[LIMIT_KEY[d]]
  return value === undefined || d !== 'financialMicrounits' ? value : Math.round(value * MICRO)
}
