/**
 * Reading the instants the Authority compares on every Command (lease and offer expiries, rate
 * windows, deadlines, `issuedAt`) without paying for the date parser each time. Nearly all of them
 * are in the form `toISOString` writes (`YYYY-MM-DDTHH:MM:SS.sssZ`, what `timestampOf` writes) and
 * on one of a few UTC days, so those days' first milliseconds are kept and a time of such a day is
 * read from its digits.
 * @module
 */

/**
 * How many UTC days are remembered: the Authority's clock, the expiries a lease or an offer reaches
 * into the next days, the deadlines of Missions and WorkItems.
 */
const DAYS = 8

/** The remembered days, as `yyyymmdd` numbers of their `YYYY-MM-DDT` text, and their first milliseconds. */
const dayKeys = new Array<number>(DAYS).fill(-1)
const dayStarts = new Array<number>(DAYS).fill(0)
let nextSlot = 0

/**
 * Exactly `Date.parse(text)`, for any text: epoch milliseconds, or `NaN`. A text in the
 * `toISOString` form (or that form without the fraction) on one of the last few UTC days read is
 * read from its digits; anything else goes to `Date.parse`, which also makes its day one of the
 * remembered ones.
 */
export function parseInstant(text: string): number {
  // The same instant is often read twice in a row (a lease's expiry, by its liveness and its deadline).
  if (text === lastText) return lastMs
  const ms = readInstant(text)
  lastText = text
  lastMs = ms
  return ms
}

/** The text {@link parseInstant} read last, and what it read. */
let lastText = ''
let lastMs = Number.NaN

/** {@link parseInstant} without its memory of the last text. */
function readInstant(text: string): number {
  const inDay = isoTimeOfDay(text)
  const key = inDay >= 0 ? dayKeyOf(text) : -1
  if (key >= 0) {
    for (let i = 0; i < DAYS; i++) if (dayKeys[i] === key) return dayStarts[i]! + inDay
  }
  const ms = Date.parse(text)
  // The day is remembered from a text whose time of day the digits give, so its start is exact.
  if (key >= 0 && Number.isSafeInteger(ms)) {
    dayKeys[nextSlot] = key
    dayStarts[nextSlot] = ms - inDay
    nextSlot = (nextSlot + 1) % DAYS
  }
  return ms
}

/** `yyyymmdd` of a text starting `YYYY-MM-DDT`, or -1. */
function dayKeyOf(text: string): number {
  if (text.charCodeAt(4) !== 0x2d || text.charCodeAt(7) !== 0x2d || text.charCodeAt(10) !== 0x54) return -1
  const century = twoDigits(text, 0)
  const year = twoDigits(text, 2)
  const month = twoDigits(text, 5)
  const date = twoDigits(text, 8)
  if ((century | year | month | date) < 0) return -1
  return ((century * 100 + year) * 100 + month) * 100 + date
}

/**
 * The milliseconds into its day of a text in the `toISOString` form (`....-..-..THH:MM:SS.sssZ`) or
 * that form without the fraction (`....-..-..THH:MM:SSZ`), or -1 for another form, a non-digit, or
 * a time Date.parse does not read within the day (a leap second, 24:00).
 */
export function isoTimeOfDay(text: string): number {
  const length = text.length
  let millis = 0
  if (length === 24) {
    if (text.charCodeAt(23) !== 0x5a || text.charCodeAt(19) !== 0x2e) return -1
    millis = twoDigits(text, 20) * 10 + digit(text, 22)
  } else if (length !== 20 || text.charCodeAt(19) !== 0x5a) {
    return -1
  }
  if (text.charCodeAt(13) !== 0x3a || text.charCodeAt(16) !== 0x3a) return -1
  const hours = twoDigits(text, 11)
  const minutes = twoDigits(text, 14)
  const seconds = twoDigits(text, 17)
  if ((hours | minutes | seconds | millis) < 0 || hours >= 24 || minutes >= 60 || seconds >= 60) return -1
  return ((hours * 60 + minutes) * 60 + seconds) * 1000 + millis
}

/** The decimal digit at `at`, or a large negative number when there is none. */
function digit(text: string, at: number): number {
  const d = text.charCodeAt(at) - 0x30
  return d >= 0 && d <= 9 ? d : -1000
}

/** The two-digit number at `at`, negative when a digit is missing. */
function twoDigits(text: string, at: number): number {
  return digit(text, at) * 10 + digit(text, at + 1)
}
