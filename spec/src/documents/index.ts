/**
 * The 22 normative documents of MissionWeaveProtocol 0.1 (§21) as TypeBox schemas, with their
 * static types, enum value lists and {@link DocumentDefinition}s.
 * @module
 */
import type { DocumentDefinition } from '../schema.js'
import { agentCardDocument } from './agent-card.js'
import { approvalDocument } from './approval.js'
import { artifactDocument } from './artifact.js'
import { commandDocument } from './command.js'
import { common } from './common.js'
import { contextPackageDocument } from './context-package.js'
import { conversationDocument } from './conversation.js'
import { errorDocument } from './error.js'
import { eventDocument } from './event.js'
import { evidenceDocument } from './evidence.js'
import { extensionProfileDocument } from './extension-profile.js'
import { firstAdmissionRecordDocument } from './first-admission-record.js'
import { groupSnapshotDocument } from './group-snapshot.js'
import { groupDocument } from './group.js'
import { leaseDocument } from './lease.js'
import { membershipDocument } from './membership.js'
import { messageDocument } from './message.js'
import { missionDocument } from './mission.js'
import { presenceRecordDocument } from './presence-record.js'
import { websocketFrameDocument } from './websocket-frame.js'
import { workContractDocument } from './work-contract.js'
import { workItemDocument } from './work-item.js'

export * from './common.js'
export * from './websocket-frame.js'
export * from './command.js'
export * from './event.js'
export * from './agent-card.js'
export * from './presence-record.js'
export * from './mission.js'
export * from './group.js'
export * from './membership.js'
export * from './conversation.js'
export * from './message.js'
export * from './work-contract.js'
export * from './work-item.js'
export * from './artifact.js'
export * from './evidence.js'
export * from './lease.js'
export * from './approval.js'
export * from './context-package.js'
export * from './group-snapshot.js'
export * from './extension-profile.js'
export * from './first-admission-record.js'
export * from './error.js'

/**
 * The short name of one of the 22 documents: the `name` of its {@link DocumentDefinition}, in
 * §21 order. The equivalence test checks this list against {@link documents}.
 */
export type DocumentName =
  | 'common'
  | 'websocketFrame'
  | 'command'
  | 'event'
  | 'agentCard'
  | 'presenceRecord'
  | 'mission'
  | 'group'
  | 'membership'
  | 'conversation'
  | 'message'
  | 'workContract'
  | 'workItem'
  | 'artifact'
  | 'evidence'
  | 'lease'
  | 'approval'
  | 'contextPackage'
  | 'groupSnapshot'
  | 'extensionProfile'
  | 'firstAdmissionRecord'
  | 'error'

/**
 * All 22 normative documents, in the order §21 lists their schema files. Generators emit one
 * schema and one validator per entry; the equivalence test checks each against the bundle.
 */
export const documents: readonly DocumentDefinition[] = [
  common,
  websocketFrameDocument,
  commandDocument,
  eventDocument,
  agentCardDocument,
  presenceRecordDocument,
  missionDocument,
  groupDocument,
  membershipDocument,
  conversationDocument,
  messageDocument,
  workContractDocument,
  workItemDocument,
  artifactDocument,
  evidenceDocument,
  leaseDocument,
  approvalDocument,
  contextPackageDocument,
  groupSnapshotDocument,
  extensionProfileDocument,
  firstAdmissionRecordDocument,
  errorDocument,
]
