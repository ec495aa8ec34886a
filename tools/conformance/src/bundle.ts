/**
 * Locating the normative bundle: re-exported from `@weft/spec/bundle`, where it lives so that
 * every package's tests can use it without depending on this tool.
 * @module
 */
export { PINNED_PROTOCOL_COMMIT, bundleForTests, locateBundle, readBundleJson } from '@weft/spec/bundle'
export type { BundleLocation } from '@weft/spec/bundle'
