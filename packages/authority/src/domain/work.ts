/**
 * The WorkItem lifecycle domain (§9.1, §10–§13): the handlers of the WorkItem Commands and the
 * reducers of the WorkItem Events, for the pipeline to compose into its generated tables.
 *
 * - planning (`work-plan.ts`): propose, authorize, offer, accept an offer, add a dependency;
 * - execution (`work-run.ts`): execution approval, start, lease renewal, checkpoint, block,
 *   unblock, usage recording, submission;
 * - ending (`work-close.ts`): accept a result, fail, cancel;
 * - rules they share: the machine rows (`work-machine.ts`), leases (`leases.ts`), delegation
 *   (`delegation.ts`), Evidence (`evidence.ts`), the dependency DAG (`dag.ts`), contracts
 *   (`work-contract.ts`), budgets (`work-budget.ts`) and roles (`work-roles.ts`).
 * @module
 */
import type { HandlerFor, ReducerFor } from '../commit/handler.js'
import { acceptResult, cancelWork, failWork } from './work-close.js'
import { acceptOffer, addDependency, authorizeWork, offerWork, proposeWork } from './work-plan.js'
import { workItemReducers } from './work-reducers.js'
import { blockWork, checkpointWork, grantExecution, recordResourceUsage, renewExecution, startWork, submitWork, unblockWork } from './work-run.js'

/** The Command kinds the WorkItem domain handles. */
export type WorkCommandKind =
  | 'work.propose'
  | 'work.authorize'
  | 'work.offer'
  | 'work.accept_offer'
  | 'work.start'
  | 'work.checkpoint'
  | 'work.block'
  | 'work.unblock'
  | 'work.submit'
  | 'work.accept_result'
  | 'work.fail'
  | 'work.cancel'
  | 'approval.grant_execution'
  | 'ext.missionweaveprotocol.core.work_dependency_add'
  | 'ext.missionweaveprotocol.core.work_execution_lease_renew'
  | 'ext.missionweaveprotocol.core.resource_usage_record'

/** The Event kinds the WorkItem domain reduces. */
export type WorkEventKind =
  | 'work.proposed'
  | 'work.authorized'
  | 'work.offer.created'
  | 'work.offer.accepted'
  | 'work.contract.revised'
  | 'work.started'
  | 'work.progressed'
  | 'work.checkpointed'
  | 'work.blocked'
  | 'work.unblocked'
  | 'work.submitted'
  | 'work.result.accepted'
  | 'work.failed'
  | 'work.cancelled'
  | 'approval.execution.granted'
  | 'ext.missionweaveprotocol.core.resource_usage_recorded'
  | 'ext.missionweaveprotocol.core.work_execution_lease_revoked'

/** The handler of every WorkItem Command kind. */
export const workHandlers = {
  'work.propose': proposeWork,
  'work.authorize': authorizeWork,
  'work.offer': offerWork,
  'work.accept_offer': acceptOffer,
  'work.start': startWork,
  'work.checkpoint': checkpointWork,
  'work.block': blockWork,
  'work.unblock': unblockWork,
  'work.submit': submitWork,
  'work.accept_result': acceptResult,
  'work.fail': failWork,
  'work.cancel': cancelWork,
  'approval.grant_execution': grantExecution,
  'ext.missionweaveprotocol.core.work_dependency_add': addDependency,
  'ext.missionweaveprotocol.core.work_execution_lease_renew': renewExecution,
  'ext.missionweaveprotocol.core.resource_usage_record': recordResourceUsage,
} satisfies { readonly [K in WorkCommandKind]: HandlerFor<K> }

/**
 * The reducer of every WorkItem Event kind, including the forms other domains emit: `work.failed`
 * and `work.cancelled` propagated from the Mission, `work.result.accepted` for an approved child
 * Mission, and the Execution Lease revocation of a replacement Session (§11.3, §14).
 */
export const workReducers: { readonly [K in WorkEventKind]: ReducerFor<K> } = workItemReducers
