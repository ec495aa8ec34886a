/**
 * The First-Admission Record (`first-admission-record.schema.json`, §6.4): durable Admission Log
 * metadata binding a verified Signed Document's signing hash to its Organization, kind, key,
 * Principal and trusted acceptance time. It is not itself signed and proves nothing by its own
 * bytes; the log it comes from is the authority.
 * @module
 */
import Type, { type Static } from 'typebox'
import { constant, document, oneOfValues } from '../schema.js'
import { Actor, Id, ProtocolVersion, Sha256, Timestamp } from './common.js'

/**
 * The Signed Document kinds that can be admitted, spelled as their schema file stems (§6.4).
 */
export const ADMISSION_DOCUMENT_KINDS = ['agent-card', 'approval', 'artifact', 'command', 'context-package', 'event', 'evidence', 'extension-profile', 'group-snapshot'] as const

/** An admissible Signed Document kind. */
export type AdmissionDocumentKind = (typeof ADMISSION_DOCUMENT_KINDS)[number]

/** A common actor whose type is `service`. */
export interface ServiceActor {
  /** Always `service`. */
  type: 'service'
  /** The service Principal's identifier. */
  id: Id
}

/**
 * The accepting service: the common actor shape narrowed to `type: service`. The normative
 * spelling is a bare `allOf` of the common actor and a `properties`-only constraint, with no
 * `type`, which `Type.Object` cannot emit, so it is written with `Type.Unsafe`.
 */
export const AdmittingService = Type.Unsafe<ServiceActor>({
  allOf: [Actor, { properties: { type: constant('service') } }],
})

/**
 * A First-Admission Record (§6.4). Looked up and appended under `(organizationId, signingHash)`;
 * the lexical form of `trustedAcceptedAt` is kept as written. It must not carry a `signature`.
 */
export const FirstAdmissionRecord = Type.Object(
  {
    protocolVersion: ProtocolVersion,
    admissionRecordId: Id,
    organizationId: Id,
    documentKind: oneOfValues(ADMISSION_DOCUMENT_KINDS),
    signingHash: Sha256,
    keyId: Id,
    principal: Actor,
    trustedAcceptedAt: Timestamp,
    acceptedBy: AdmittingService,
  },
  { additionalProperties: false },
)

/** A First-Admission Record. */
export type FirstAdmissionRecord = Static<typeof FirstAdmissionRecord>

/** `first-admission-record.schema.json` (§6.4, §21). */
export const firstAdmissionRecordDocument = document('firstAdmissionRecord', 'first-admission-record.schema.json', 'MissionWeaveProtocol 0.1 First-Admission Record', FirstAdmissionRecord)
