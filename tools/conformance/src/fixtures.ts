/**
 * Structural checks of the two fixture shapes the cryptography and admission bundles declare in
 * `fixtureSchemas`: the Registry fixture and the test-only signing-key fixture. The bundle says
 * fixtures must be validated against those schemas before a case is evaluated.
 *
 * Why hand-written: the two schemas are small, closed and flat (a dozen members, lengths, one
 * enum, two patterns, one `uri` format), they are not among the protocol documents
 * `@weft/validators` generates, and compiling them at runtime would pull a schema compiler into
 * `@weft/conformance` (Ajv, or `@weft/codegen`, which the tool does not depend on). A direct
 * check is shorter than the wiring and has no runtime dependency. Its equivalence to the schemas
 * is tested against Ajv compiled from the bundle's own schema files
 * (`test/fixtures.test.ts`), so it cannot drift silently.
 *
 * Registry fixtures are deliberately only *structurally* checked here: negative cases carry
 * readable but semantically invalid values that stage 4 must reject (`cryptography/README.md`).
 * @module
 */
import { isAbsoluteUri } from '@weft/codec'

type Obj = { readonly [name: string]: unknown }

function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** JSON Schema `maxLength`/`minLength` count code points, not UTF-16 units. */
function codePoints(s: string): number {
  let n = 0
  for (const _ of s) n++
  return n
}

class Issues {
  readonly list: string[] = []
  add(path: string, message: string): void {
    this.list.push(`${path === '' ? '/' : path}: ${message}`)
  }
  /** Checks members: only `allowed`, all of `required`. Returns whether `value` is an object. */
  object(value: unknown, path: string, allowed: readonly string[], required: readonly string[]): value is Obj {
    if (!isObject(value)) {
      this.add(path, 'must be an object')
      return false
    }
    for (const name of Object.keys(value)) if (!allowed.includes(name)) this.add(`${path}/${name}`, 'is not allowed')
    for (const name of required) if (!Object.hasOwn(value, name)) this.add(path, `must have ${name}`)
    return true
  }
  string(value: unknown, path: string, min: number, max: number): value is string {
    if (value === undefined) return false
    if (typeof value !== 'string') {
      this.add(path, 'must be a string')
      return false
    }
    const n = codePoints(value)
    if (n < min || n > max) this.add(path, `length must be ${min}..${max}, is ${n}`)
    return true
  }
  array(value: unknown, path: string, min: number, max: number): value is readonly unknown[] {
    if (value === undefined) return false
    if (!Array.isArray(value)) {
      this.add(path, 'must be an array')
      return false
    }
    if (value.length < min || value.length > max) this.add(path, `must have ${min}..${max} items, has ${value.length}`)
    return true
  }
}

const PRINCIPAL_TYPES = ['agent', 'human', 'service']
const BINDING_MEMBERS = ['keyId', 'principal', 'algorithm', 'publicKey', 'validFrom', 'validityHistory']
const STATUS_MEMBERS = ['sequence', 'recordedAt', 'validUntil', 'revokedAt']

/**
 * Issues of `value` against `cryptography/registry-fixture.schema.json` (empty when valid): the
 * container shape, identifier candidates of 1–512 code points, strings within their bounds, and
 * 1–64 bindings of at most 64 validity records each, sequences positive safe integers.
 */
export function registryFixtureIssues(value: unknown): string[] {
  const issues = new Issues()
  if (!issues.object(value, '', ['organizationId', 'bindings'], ['organizationId', 'bindings'])) return issues.list
  issues.string(value['organizationId'], '/organizationId', 1, 512)
  const bindings = value['bindings']
  if (!issues.array(bindings, '/bindings', 1, 64)) return issues.list
  bindings.forEach((binding, i) => {
    const path = `/bindings/${i}`
    if (!issues.object(binding, path, BINDING_MEMBERS, BINDING_MEMBERS)) return
    issues.string(binding['keyId'], `${path}/keyId`, 1, 512)
    const principal = binding['principal']
    if (principal !== undefined && issues.object(principal, `${path}/principal`, ['type', 'id'], ['type', 'id'])) {
      const type = principal['type']
      if (type !== undefined && (typeof type !== 'string' || !PRINCIPAL_TYPES.includes(type))) issues.add(`${path}/principal/type`, 'must be agent, human or service')
      issues.string(principal['id'], `${path}/principal/id`, 1, 512)
    }
    issues.string(binding['algorithm'], `${path}/algorithm`, 1, 64)
    issues.string(binding['publicKey'], `${path}/publicKey`, 1, 4096)
    issues.string(binding['validFrom'], `${path}/validFrom`, 1, 128)
    const history = binding['validityHistory']
    if (!issues.array(history, `${path}/validityHistory`, 0, 64)) return
    history.forEach((status, j) => {
      const at = `${path}/validityHistory/${j}`
      if (!issues.object(status, at, STATUS_MEMBERS, ['sequence', 'recordedAt'])) return
      const sequence = status['sequence']
      // JSON Schema `integer` is a number with no fractional part (1.0 counts).
      if (sequence !== undefined && (typeof sequence !== 'number' || !Number.isInteger(sequence) || sequence < 1 || sequence > Number.MAX_SAFE_INTEGER)) {
        issues.add(`${at}/sequence`, 'must be an integer in 1..2^53-1')
      }
      for (const name of ['recordedAt', 'validUntil', 'revokedAt']) issues.string(status[name], `${at}/${name}`, 1, 128)
    })
  })
  return issues.list
}

const KEY_ID_PATTERN = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s]+$(?![\s\S])/u
const BASE64URL_32 = /^[A-Za-z0-9_-]{43}$(?![\s\S])/u
const SIGNING_KEY_MEMBERS = ['testOnly', 'keyId', 'algorithm', 'seed', 'publicKey']

/**
 * Issues of `value` against `cryptography/signing-key-fixture.schema.json` (empty when valid):
 * `testOnly: true`, an absolute-URI key ID of at most 512 code points, algorithm `Ed25519`, and a
 * 43-character base64url seed and public key.
 */
export function signingKeyFixtureIssues(value: unknown): string[] {
  const issues = new Issues()
  if (!issues.object(value, '', SIGNING_KEY_MEMBERS, SIGNING_KEY_MEMBERS)) return issues.list
  if (Object.hasOwn(value, 'testOnly') && value['testOnly'] !== true) issues.add('/testOnly', 'must be true')
  const keyId = value['keyId']
  if (issues.string(keyId, '/keyId', 0, 512)) {
    if (!KEY_ID_PATTERN.test(keyId)) issues.add('/keyId', 'does not match the identifier pattern')
    if (!isAbsoluteUri(keyId)) issues.add('/keyId', 'is not a URI')
  }
  if (Object.hasOwn(value, 'algorithm') && value['algorithm'] !== 'Ed25519') issues.add('/algorithm', 'must be Ed25519')
  for (const name of ['seed', 'publicKey']) {
    const text = value[name]
    if (text !== undefined && (typeof text !== 'string' || !BASE64URL_32.test(text))) issues.add(`/${name}`, 'must be 43 base64url characters')
  }
  return issues.list
}
