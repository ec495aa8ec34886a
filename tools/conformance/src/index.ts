/**
 * `@weft/conformance`: runs the normative MissionWeaveProtocol 0.1 conformance bundle against
 * Weft. The CLI is `weft-conformance`; everything it does is available here as functions.
 * @module
 */
export {
  runStructural,
  readManifest,
  loadExpectedFailures,
  bundleSchemaFiles,
  unmappedSchemas,
  PINNED_MANIFEST_COUNTS,
  EXPECTED_FAILURES_FILE,
} from './structural.js'
export type {
  ManifestVector,
  ExpectedFailure,
  StructuralRun,
  StructuralResult,
  StructuralSummary,
  StructuralOptions,
  StructuralValidator,
  Verdict,
} from './structural.js'
export { main, EXIT } from './cli.js'
export type { CliIo } from './cli.js'
export { locateBundle, bundleForTests, readBundleJson, PINNED_PROTOCOL_COMMIT } from './bundle.js'
export type { BundleLocation } from './bundle.js'

// For suite and tool authors: the generic report pieces and the suite registry.
export {
  renderTable,
  resultLabel,
  structuralRows,
  structuralSummaryLine,
  formatStructuralReport,
  structuralJson,
  STRUCTURAL_COLUMNS,
} from './report.js'
export type { TableColumn, StructuralReportOptions, StructuralJson } from './report.js'
export { SUITES, structuralSuite, cryptographySuite, admissionSuite } from './suites.js'
export type { Suite, SuiteOutcome } from './suites.js'

// The signed-document suites (§6.4) and their bundle-integrity helpers.
export {
  runCryptography,
  formatCryptographyReport,
  cryptographyJson,
  cryptographySummaryLine,
  stageTable,
  CRYPTOGRAPHY_COLUMNS,
  PINNED_CRYPTOGRAPHY,
} from './cryptography.js'
export type {
  CryptographyRun,
  CryptographyResult,
  CryptographySummary,
  CryptographyOptions,
  CryptographyJson,
  CryptographyOutcome,
  StageCount,
} from './cryptography.js'
export { runAdmission, formatAdmissionReport, admissionJson, admissionSummaryLine, ADMISSION_COLUMNS, PINNED_ADMISSION } from './admission.js'
export type { AdmissionRun, AdmissionEvaluationResult, AdmissionSummary, AdmissionOptions, AdmissionJson } from './admission.js'
export { registryFixtureIssues, signingKeyFixtureIssues } from './fixtures.js'
export { checkManifestDigest, checkArtifacts, artifactEntries, readStrictJson, readBundleFile, isRepositoryPath } from './artifacts.js'
export type { ArtifactEntry, ArtifactCheck, DigestCheck } from './artifacts.js'
