/**
 * @weft/codegen: generators from @weft/spec to the generated parts of the Weft packages.
 * @packageDocumentation
 */
export { generate, checkOutputs, writeOutputs, preamble, lineDiff, driftReport, GENERATED_DIRS } from './codegen.js'
export type { GenerateOptions, GeneratedOutput, Drift, DiffOptions, EmitContext } from './codegen.js'
export { catalogProblems, assertCompleteCatalog, IncompleteCatalogError, SPEC_CATALOGS } from './catalog-check.js'
export type { SpecCatalogs } from './catalog-check.js'
export { main } from './cli.js'
export type { Output } from './cli.js'

// Library-author surface: the schema compiler and the generated-file facade.
export { ValidatorCompiler } from './compiler/compiler.js'
export type { CompilerOptions, CompiledModule, CompiledFunction, CompiledConstant, FunctionMode, Placement, FormatImport } from './compiler/compiler.js'
export { SchemaRegistry, resolveUri } from './compiler/registry.js'
export type { SchemaNode, Location } from './compiler/registry.js'
export { GeneratedFile, indent } from './generated-file.js'
export type { FunctionSpec, ParameterSpec, RecordSpec, RecordMember } from './generated-file.js'
export { emitValidators } from './emitters/validators.js'
export type { PayloadFamily } from './emitters/validators.js'
export { emitJsonSchemas } from './emitters/json-schema.js'
export { emitErrorCodes } from './emitters/error-codes.js'
export { emitStatecharts, statechartLine } from './emitters/statecharts.js'
export { emitAuthority, transitionLookup, statesWithEvent } from './emitters/authority.js'
export { emitClient, builderName, builderNames } from './emitters/client.js'
export { emitWorker } from './emitters/worker.js'
