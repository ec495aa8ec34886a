/**
 * Runs {@link main} on the process arguments: the entry `bin/weft.mjs` starts through tsx when the
 * package was not built. Importing it runs the command.
 * @module
 */
import { main } from './bin.js'

process.exitCode = await main(process.argv.slice(2))
