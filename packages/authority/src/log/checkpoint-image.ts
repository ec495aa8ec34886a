/**
 * The state image of a checkpoint (`checkpoint.ts`): the whole {@link AuthorityState} as one UTF-8
 * JSON text, and back.
 *
 * JSON because the engine parses it several times faster than `v8.deserialize` reads the same
 * state (a 100,000-Message Group is some 48 MB either way), and the text does not depend on the
 * Node version that wrote it. What JSON has no form for travels in a short list of fix-ups beside
 * the body, so reading the image costs one `JSON.parse` plus work in proportion to the fix-ups, not
 * to the state:
 *
 * - a `Map` is written as `[keys, values]` (two arrays) and a `Set` as its array of members, each
 *   with a container fix-up (rebuilt deepest first, so every path still runs through arrays);
 * - an object reached a second time (an Agent Card held by the Agent record, its card history and
 *   the Event that registered it) is written once; the other places get a reference fix-up, so the
 *   restored state shares it as the live state does;
 * - `undefined` (a cleared member keeps its place, see `clearMember`), `NaN`, `±Infinity` and `-0`
 *   get value fix-ups.
 *
 * The ledgers of Groups and WorkItems (`model.ts`: budget usage, retry ledgers, submissions, closed
 * leases, rate windows, override and snapshot indexes) travel beside the state body as named table
 * entries ({@link STATE_IMAGE_TABLES}), keyed by the Group or WorkItem they belong to; the derived
 * indexes are not written at all and are rebuilt on reading (`domain/indexes.ts`).
 *
 * What the state must not hold, because a checkpoint could not carry it: functions, symbols and
 * BigInts as values, class instances (anything but plain objects, arrays, `Map` and `Set`),
 * non-enumerable members, `Map` keys other than strings and finite numbers, a `Map` or `Set` held in
 * two places. {@link encodeStateImage} refuses each, naming where it is. An accessor member is read
 * (a lazily signed Event is signed by it) and restored as the value it returned; symbol-keyed
 * members are private bookkeeping and are left behind. Restored objects are not frozen, except the
 * Organization Events of `org.log`, which are accepted Events (§4.6).
 * @module
 */
import { createRequire } from 'node:module'
import { deepFreeze, UsageError } from '@weft/codec'
import { indexState } from '../domain/indexes.js'
import type { AuthorityState, GroupState, WorkItemRecord } from '../model.js'

/** The format of the images this build writes and reads. */
export const STATE_IMAGE_FORMAT = 'weft-state-image/1'

/** The ledger members of a Group ({@link GroupState}) that an image carries as table entries. */
export type GroupLedger = 'missionUsage' | 'rateWindows' | 'overridesByTarget' | 'snapshots'

/** The ledger members of a WorkItem ({@link WorkItemRecord}) that an image carries as table entries. */
export type WorkItemLedger = 'usage' | 'retryLedger' | 'submissionFacts' | 'closedLeases'

/** One ledger table of an image: its name in the image, what it is keyed by, and the state member it holds. */
export type StateImageTable =
  | { readonly name: string; readonly keyedBy: 'group'; readonly member: GroupLedger }
  | { readonly name: string; readonly keyedBy: 'workItem'; readonly member: WorkItemLedger }

/**
 * The ledger tables of an image, in name order (the order of the image header). The names are part
 * of the format: an image names the tables it carries, and one naming others is not read.
 */
export const STATE_IMAGE_TABLES: readonly StateImageTable[] = Object.freeze([
  { name: 'budget.itemUsage', keyedBy: 'workItem', member: 'usage' },
  { name: 'budget.missionUsage', keyedBy: 'group', member: 'missionUsage' },
  { name: 'evidence.submissions', keyedBy: 'workItem', member: 'submissionFacts' },
  { name: 'leases.closed', keyedBy: 'workItem', member: 'closedLeases' },
  { name: 'policy.snapshots', keyedBy: 'group', member: 'snapshots' },
  { name: 'retry.ledgers', keyedBy: 'workItem', member: 'retryLedger' },
  { name: 'runaway.grantsByTarget', keyedBy: 'group', member: 'overridesByTarget' },
  { name: 'runaway.rings', keyedBy: 'group', member: 'rateWindows' },
] as const)

const GROUP_TABLES = STATE_IMAGE_TABLES.filter((t) => t.keyedBy === 'group')
const WORK_ITEM_TABLES = STATE_IMAGE_TABLES.filter((t) => t.keyedBy === 'workItem')
const TABLES_BY_NAME = new Map(STATE_IMAGE_TABLES.map((t) => [t.name, t]))

/** The members the state body leaves out: the ledgers (written as table entries) and the derived indexes (not written). */
const LEFT_OUT = {
  state: new Set<string>(['childGroupIndex']),
  group: new Set<string>([...GROUP_TABLES.map((t) => t.member), 'workItemIndex', 'acceptedEvidenceIds']),
  workItem: new Set<string>(WORK_ITEM_TABLES.map((t) => t.member)),
} satisfies Record<string, ReadonlySet<string>>

/**
 * The writer of an image: this package and its version. The reducers that made the state are part
 * of what an image means, so an image of another version is not read (the restart folds instead).
 */
const WRITER = `@weft/authority@${(createRequire(import.meta.url)('../../package.json') as { version: string }).version}`

/** A place in the image body: member names and array indexes from the root. */
type Path = (string | number)[]

/** Where an object was first written: its parent's place and its own key. */
interface Place {
  readonly up: Place | undefined
  readonly key: string | number
}

type Special = 'undefined' | 'NaN' | 'Infinity' | '-Infinity' | '-0'

/** What JSON has no form for, by where it goes (see the module notes). */
interface Fixups {
  /** `m` rebuilds a Map from its entries, `s` a Set from its members. */
  readonly containers: ['m' | 's', Path][]
  /** `[where, first]`: the object first written at `first` also goes at `where`. */
  readonly refs: [Path, Path][]
  readonly values: [Path, Special][]
}

/** The image as JSON: header first, body last. */
interface ImageDocument {
  readonly format: string
  /** See {@link WRITER}. */
  readonly writer: string
  /** The names of the ledger tables carried, in {@link STATE_IMAGE_TABLES} order. */
  readonly tables: readonly string[]
  readonly fixups: Fixups
  /** `[state, [[table name, key object, value], ...]]`. */
  readonly body: [unknown, unknown]
}

const ROOT: Place = { up: undefined, key: 'body' }

/** Strict: bytes that are not UTF-8 are not an image (the hash check makes this a writer's bug, not an attack). */
const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * The image of `state` as UTF-8 JSON bytes (see the module notes): the state body without its
 * ledgers and derived indexes, then each ledger a Group or WorkItem holds as a table entry, Group by
 * Group, each Group's own before its WorkItems'.
 * @throws UsageError naming the place of a value the image cannot carry.
 */
export function encodeStateImage(state: AuthorityState): Uint8Array {
  const entries: [string, object, unknown][] = []
  // Views of the state objects without the left-out members, in the same member order; an entry is
  // keyed by the view, which the body holds, so it is written as a reference to it.
  const groups = new Map<string, Record<string, unknown>>()
  for (const [groupId, group] of state.groups) {
    const groupView = without(group, LEFT_OUT.group)
    for (const t of GROUP_TABLES) if (group[t.member] !== undefined) entries.push([t.name, groupView, group[t.member]])
    const workItems = new Map<string, Record<string, unknown>>()
    for (const [workItemId, record] of group.workItems) {
      const recordView = without(record, LEFT_OUT.workItem)
      for (const t of WORK_ITEM_TABLES) if (record[t.member] !== undefined) entries.push([t.name, recordView, record[t.member]])
      workItems.set(workItemId, recordView)
    }
    groupView['workItems'] = workItems
    groups.set(groupId, groupView)
  }
  const stateView = without(state, LEFT_OUT.state)
  stateView['groups'] = groups
  const encoder = new Encoder()
  // The state first, so every key object of a table entry is already written and becomes a reference.
  const body = encoder.array([stateView, entries], ROOT)
  const document: ImageDocument = { format: STATE_IMAGE_FORMAT, writer: WRITER, tables: STATE_IMAGE_TABLES.map((t) => t.name), fixups: encoder.fixups, body: body as [unknown, unknown] }
  return new TextEncoder().encode(JSON.stringify(document))
}

/** `value`'s own enumerable members but `leftOut`, in its member order. */
function without(value: object, leftOut: ReadonlySet<string>): Record<string, unknown> {
  const view: Record<string, unknown> = {}
  for (const key of Object.keys(value)) if (!leftOut.has(key)) view[key] = (value as Record<string, unknown>)[key]
  return view
}

/** A decoded image: the state, ledgers and derived indexes in place. */
export type DecodedImage = { readonly ok: true; readonly state: AuthorityState } | { readonly ok: false; readonly reason: string }

/**
 * Reads an image written by {@link encodeStateImage}, putting each ledger entry back as the member
 * of its Group or WorkItem and rebuilding the derived indexes. An image of another format or
 * package version, or carrying other ledger tables than {@link STATE_IMAGE_TABLES}, or that does
 * not parse, is not read (`ok: false`).
 */
export function decodeStateImage(bytes: Uint8Array): DecodedImage {
  try {
    const document = JSON.parse(utf8.decode(bytes)) as ImageDocument
    if (document?.format !== STATE_IMAGE_FORMAT) return { ok: false, reason: `the image format ${JSON.stringify(document?.format)} is not ${STATE_IMAGE_FORMAT}` }
    if (document.writer !== WRITER) return { ok: false, reason: `the image was written by ${JSON.stringify(document.writer)}, this is ${WRITER}` }
    const names = [...TABLES_BY_NAME.keys()]
    if (!Array.isArray(document.tables) || document.tables.join('\n') !== names.join('\n')) {
      return { ok: false, reason: `the image carries the ledger tables [${String(document.tables)}], this build keeps [${names.join(',')}]` }
    }
    const root = { body: document.body }
    applyFixups(root, document.fixups)
    const [state, entries] = root.body as [AuthorityState, [string, object, unknown][]]
    const shape = shapeRefusal(state) ?? entriesRefusal(entries)
    if (shape !== undefined) return { ok: false, reason: shape }
    for (const event of state.org.log) deepFreeze(event)
    for (const [name, key, value] of entries) (key as Record<string, unknown>)[TABLES_BY_NAME.get(name)!.member] = value
    indexState(state)
    return { ok: true, state }
  } catch (error) {
    return { ok: false, reason: `the image does not read: ${(error as Error).message}` }
  }
}

/**
 * The walk of {@link encodeStateImage}: a JSON-ready copy of a value and the fix-ups it needs. A
 * value's place is passed as its parent's place and its key, and made an object only for what is
 * remembered (objects) or fixed up, so the walk allocates little beyond the copy.
 */
class Encoder {
  readonly fixups: Fixups = { containers: [], refs: [], values: [] }
  private readonly seen = new Map<object, Place>()

  value(value: unknown, up: Place | undefined, key: string | number): unknown {
    switch (typeof value) {
      case 'string':
      case 'boolean':
        return value
      case 'number':
        if (Number.isFinite(value) && !Object.is(value, -0)) return value
        this.fixups.values.push([pathOf({ up, key }), Object.is(value, -0) ? '-0' : (String(value) as Special)])
        return null
      case 'undefined':
        this.fixups.values.push([pathOf({ up, key }), 'undefined'])
        return null
      case 'object':
        return value === null ? null : this.object(value, { up, key })
      default:
        return refuse({ up, key }, `a ${typeof value}`)
    }
  }

  array(items: readonly unknown[], place: Place): unknown[] {
    const out = new Array<unknown>(items.length)
    for (let i = 0; i < items.length; i++) out[i] = this.value(items[i], place, i)
    return out
  }

  private object(value: object, place: Place): unknown {
    const first = this.seen.get(value)
    const proto = Object.getPrototypeOf(value) as object | null
    if (first !== undefined) {
      if (proto === Map.prototype || proto === Set.prototype) refuse(place, `a ${proto === Map.prototype ? 'Map' : 'Set'} also held at ${pathOf(first).join('.')}`)
      this.fixups.refs.push([pathOf(place), pathOf(first)])
      return null
    }
    this.seen.set(value, place)
    if (proto === Array.prototype) return this.array(value as unknown[], place)
    if (proto === Map.prototype) {
      this.fixups.containers.push(['m', pathOf(place)])
      // `[keys, values]`: two arrays rather than an array per entry, which the reader would allocate.
      const keys: unknown[] = []
      const values: unknown[] = []
      const valuesPlace: Place = { up: place, key: 1 }
      for (const [key, member] of value as Map<unknown, unknown>) {
        if (typeof key !== 'string' && !(typeof key === 'number' && Number.isFinite(key))) refuse(place, `a Map key that is a ${typeof key}`)
        values.push(this.value(member, valuesPlace, keys.length))
        keys.push(key)
      }
      return [keys, values]
    }
    if (proto === Set.prototype) {
      this.fixups.containers.push(['s', pathOf(place)])
      return this.array([...(value as Set<unknown>)], place)
    }
    if (proto !== Object.prototype && proto !== null) return refuse(place, `an instance of ${(proto.constructor as { name?: string } | undefined)?.name ?? 'a class'}`)
    const keys = Object.keys(value)
    // A frozen object is an accepted fact's deep-frozen JSON (§4.6): it has no hidden members.
    if (!Object.isFrozen(value) && Object.getOwnPropertyNames(value).length !== keys.length) refuse(place, 'an object with non-enumerable members')
    const out: Record<string, unknown> = {}
    for (const key of keys) {
      const member = this.value((value as Record<string, unknown>)[key], place, key)
      if (key === '__proto__') Object.defineProperty(out, key, { value: member, enumerable: true, writable: true, configurable: true })
      else out[key] = member
    }
    return out
  }
}

function pathOf(place: Place): Path {
  const path: Path = []
  for (let p: Place | undefined = place; p !== undefined && p !== ROOT; p = p.up) path.push(p.key)
  path.push('body')
  return path.reverse()
}

function refuse(place: Place, what: string): never {
  throw new UsageError(`checkpoint: the state holds ${what} at ${pathOf(place).join('.')}, which a state image cannot carry`)
}

const SPECIAL: Record<Special, unknown> = { undefined: undefined, NaN: Number.NaN, Infinity: Number.POSITIVE_INFINITY, '-Infinity': Number.NEGATIVE_INFINITY, '-0': -0 }

/** Puts back what JSON could not hold: values, then shared objects, then containers deepest first. */
function applyFixups(root: { body: unknown }, fixups: Fixups): void {
  for (const [path, special] of fixups.values) {
    if (!(special in SPECIAL)) throw new Error(`unknown value ${String(special)}`)
    place(root, path, SPECIAL[special])
  }
  // References first: their targets are plain objects, reached through arrays not yet rebuilt.
  for (const [path, first] of fixups.refs) place(root, path, reach(root, first, first.length))
  const containers = fixups.containers.slice().sort((a, b) => b[1].length - a[1].length)
  for (const [kind, path] of containers) {
    const items = reach(root, path, path.length)
    if (!Array.isArray(items)) throw new Error(`no array at ${path.join('.')}`)
    place(root, path, kind === 'm' ? mapOf(items, path) : new Set(items))
  }
}

/** The Map written as `[keys, values]`. */
function mapOf(items: unknown[], path: Path): Map<unknown, unknown> {
  const [keys, values] = items as [unknown[], unknown[]]
  if (!Array.isArray(keys) || !Array.isArray(values) || keys.length !== values.length) throw new Error(`no Map entries at ${path.join('.')}`)
  const map = new Map<unknown, unknown>()
  for (let i = 0; i < keys.length; i++) map.set(keys[i], values[i])
  return map
}

/** The value at the first `depth` steps of `path`. */
function reach(root: unknown, path: Path, depth: number): unknown {
  let at = root
  for (let i = 0; i < depth; i++) {
    if (typeof at !== 'object' || at === null) throw new Error(`no object at ${path.slice(0, i).join('.')}`)
    at = (at as Record<string | number, unknown>)[path[i]!]
  }
  return at
}

function place(root: unknown, path: Path, value: unknown): void {
  const parent = reach(root, path, path.length - 1)
  const key = path.at(-1)!
  if (typeof parent !== 'object' || parent === null) throw new Error(`no object at ${path.slice(0, -1).join('.')}`)
  if (key === '__proto__') Object.defineProperty(parent, key, { value, enumerable: true, writable: true, configurable: true })
  else (parent as Record<string | number, unknown>)[key] = value
}

/** Why `state` is not an Authority state, or `undefined` when it has the shape of one. */
function shapeRefusal(state: AuthorityState): string | undefined {
  const ok =
    typeof state === 'object' &&
    state !== null &&
    state.groups instanceof Map &&
    state.childLinks instanceof Map &&
    typeof state.org === 'object' &&
    state.org !== null &&
    state.org.agents instanceof Map &&
    Array.isArray(state.org.log)
  return ok ? undefined : 'the image body is not an Authority state'
}

function entriesRefusal(entries: unknown): string | undefined {
  const ok = Array.isArray(entries) && entries.every((e) => Array.isArray(e) && TABLES_BY_NAME.has(e[0] as string) && typeof e[1] === 'object' && e[1] !== null)
  return ok ? undefined : 'the image ledger-table entries are malformed'
}
