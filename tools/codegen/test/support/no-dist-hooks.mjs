// The hooks no-dist.mjs registers. `load` (not `resolve`) is hooked: loaders such as tsx probe
// several candidate specifiers during resolution, but whatever is finally executed is loaded.
import { pathToFileURL } from 'node:url'

/** `file:///repo/` of the guarded root; set by `initialize`. */
let prefix = ''

/** Receives the root from `register`. */
export function initialize(data) {
  prefix = pathToFileURL(data.root).href.replace(/\/?$/, '/')
}

/** Refuses `<root>/<workspace>/dist/...` and `<root>/<group>/<workspace>/dist/...`, node_modules excepted. */
export async function load(url, context, nextLoad) {
  if (url.startsWith(prefix)) {
    const rest = url.slice(prefix.length)
    if (!rest.includes('node_modules/') && /^(?:[^/]+\/){1,2}dist\//.test(rest)) {
      throw new Error(`no-dist guard: refused to load build output ${url}`)
    }
  }
  return nextLoad(url, context)
}
