/**
 * The registry of conformance suites the CLI can run. Each suite turns a bundle directory into a
 * text report and a JSON value; the cryptography and admission bundles become suites here.
 * @module
 */
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
  run(bundleDir: string): SuiteOutcome
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

/** Every suite, in the order the CLI runs them by default. */
export const SUITES: readonly Suite[] = [structuralSuite]
