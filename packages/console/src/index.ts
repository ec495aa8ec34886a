/**
 * @weft/console: the human interface of a MissionWeaveProtocol 0.1 deployment (§5). This entry
 * holds the sign-in contract the browser app and the server share; `@weft/console/server` serves
 * the app and its API from `weft serve`.
 * @packageDocumentation
 */
export { CONSOLE_PATHS, CONSOLE_PROTOCOL, SESSION_PROTOCOL_PREFIX, SIGN_IN_CONTEXT, sessionProtocols, signInTranscriptBytes } from './shared/sign-in.js'
export type { ConsoleAgent, ConsoleGroup, ConsoleSession, ConsoleTime, SignInChallenge, SignInRequest } from './shared/sign-in.js'
