/**
 * `weft --version`: the version of this package and of the protocol it speaks (§21), so a bug
 * report or an operator's inventory can say exactly what runs.
 * @module
 */
import { readFileSync } from 'node:fs'
import { CommonDefs } from '@weft/spec'

/** The MissionWeaveProtocol version Weft implements: the `protocolVersion` constant of the spec's common schema (§21). */
export const PROTOCOL_VERSION: string = (CommonDefs.protocolVersion as unknown as { readonly const: string }).const

/** The version of `@weft/cli`, from its package.json (one level above both `src/` and `dist/`). */
export function cliVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { readonly version: string }
  return manifest.version
}

/** The line `weft --version` prints, e.g. `weft 0.1.0 (@weft/cli), MissionWeaveProtocol 0.1`. */
export function versionText(): string {
  return `weft ${cliVersion()} (@weft/cli), MissionWeaveProtocol ${PROTOCOL_VERSION}\n`
}
