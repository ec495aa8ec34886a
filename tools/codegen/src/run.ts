/** Process entry of `weft-codegen`: runs {@link main} with the process arguments. */
import { main } from './cli.js'

process.exitCode = main(process.argv.slice(2))
