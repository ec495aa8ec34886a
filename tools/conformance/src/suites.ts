/**
 * The registry of conformance suites the CLI can run. Each suite turns a bundle directory into a
 * text report and a JSON value: the structural, cryptography and admission suites.
 * @module
 */
import { admissionJson, formatAdmissionReport, runAdmission } from './admission.js'
import { cryptographyJson, formatCryptographyReport, runCryptography } from './cryptography.js'
import { formatStructuralReport, structuralJson } from './report.js'
import { runStructural } from './structural.js'

/** What a suite run hands back to the CLI. */
export interface SuiteOutcome {
  /** The suite name, as given to `--suite`. */
  readonly suite: string
  /** Whether the suite passed (known failures allowed, no problems). */
  readonly ok: boolean
  /** The plain-text report, ending with a one-line summary. */
  text(options?: { readonly verbose?: boolean }): string
  /** The JSON summary of the run. */
  json(): unknown
}

/** A conformance suite over one part of the normative bundle. */
export interface Suite {
  readonly name: string
  /** One line for `--help`. */
  readonly description: string
  /** Runs the suite; may be asynchronous (the admission suite drives an asynchronous log seam). */
  run(bundleDir: string): SuiteOutcome | Promise<SuiteOutcome>
}

/** The structural suite: `conformance/manifest.json` against `@weft/validators`. */
export const structuralSuite: Suite = {
  name: 'structural',
  description: 'conformance/manifest.json vectors against the generated validators',
  run(bundleDir) {
    const run = runStructural(bundleDir)
    return {
      suite: 'structural',
      ok: run.ok,
      text: (options) => formatStructuralReport(run, options),
      json: () => structuralJson(run),
    }
  },
}

/** The cryptography suite: `cryptography/manifest.json` (§6.4, 62 evaluations) against `@weft/codec`. */
export const cryptographySuite: Suite = {
  name: 'cryptography',
  description: 'cryptography/manifest.json: six-stage signed-document verification (§6.4)',
  run(bundleDir) {
    const run = runCryptography(bundleDir)
    return {
      suite: 'cryptography',
      ok: run.ok,
      text: (options) => formatCryptographyReport(run, options),
      json: () => cryptographyJson(run),
    }
  },
}

/** The admission suite: `admission/manifest.json` (§6.4, 30 evaluations) against `@weft/codec`. */
export const admissionSuite: Suite = {
  name: 'admission',
  description: 'admission/manifest.json: first admission and historical replay (§6.4)',
  async run(bundleDir) {
    const run = await runAdmission(bundleDir)
    return {
      suite: 'admission',
      ok: run.ok,
      text: (options) => formatAdmissionReport(run, options),
      json: () => admissionJson(run),
    }
  },
}

/** Every suite, in the order the CLI runs them by default. */
export const SUITES: readonly Suite[] = [structuralSuite, cryptographySuite, admissionSuite]
