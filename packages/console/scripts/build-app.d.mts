// Types of scripts/build-app.mjs, for the tests that build the app into a directory of their own.
/** One built file as manifest.json lists it. */
export interface BuiltFile {
  readonly type: string
  readonly sha256: string
  readonly bytes: number
}
/** Builds the browser app into `outDir` (default dist/app/); resolves to the manifest's files and esbuild's metafile. */
export function buildApp(options?: { readonly outDir?: string; readonly minify?: boolean }): Promise<{ readonly files: Record<string, BuiltFile>; readonly metafile: { readonly outputs: Record<string, { readonly bytes: number }>; readonly inputs: Record<string, { readonly bytes: number }> } }>
