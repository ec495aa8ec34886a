/**
 * The Command, Event and error catalogs of MissionWeaveProtocol 0.1 as plain data (§15, §19):
 * generators and tests read these instead of re-typing kind strings.
 * @module
 */
export {
  COMMAND_CATALOG,
  COMMAND_KINDS,
  CORE_COMMAND_KINDS,
  REFERENCE_EXTENSION_COMMAND_KINDS,
  commandInfo,
  isCommandKind,
  type CommandEntry,
  type CommandInfo,
  type CommandKind,
  type CoreCommandKind,
  type ReferenceExtensionCommandKind,
} from './commands.js'
export {
  CORE_EVENT_KINDS,
  EVENT_CATALOG,
  EVENT_KINDS,
  REFERENCE_EXTENSION_EVENT_KINDS,
  eventInfo,
  isEventKind,
  type CoreEventKind,
  type EventEntry,
  type EventInfo,
  type EventKind,
  type ReferenceExtensionEventKind,
} from './events.js'
export { ERROR_CATALOG, ERROR_CODES, errorInfo, isErrorCode, type ErrorCode, type ErrorEntry, type ErrorInfo } from './errors.js'
// For library authors: the vocabulary the entries are written in.
export {
  kindsOf,
  type AggregateType,
  type CatalogScope,
  type EpochName,
  type IssuerType,
  type KindsOf,
  type SectionRef,
} from './shared.js'
export { aggregateIdReader, type AggregateIdReader, type EnvelopePointer } from './aggregate-id.js'
