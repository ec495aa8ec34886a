/**
 * How `weft` reports what went wrong: one line, `weft <command>: <what happened and what to do>`,
 * never a stack trace unless asked for with {@link DEBUG_ENV}. Mistakes an operator makes every day
 * (a missing file, a path through a regular file, a port in use) are worded as such; anything else
 * is reported as the bug it is, with the hint to rerun for the stack.
 * @module
 */
import { randomBytes } from 'node:crypto'
import { mkdir, open, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { UsageError } from '@weft/codec'

/** Set this environment variable to a non-empty value other than `0` to have unexpected errors print their stack trace. */
export const DEBUG_ENV = 'WEFT_DEBUG'

/** Whether {@link DEBUG_ENV} asks for stack traces. */
export function debugging(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env[DEBUG_ENV]
  return value !== undefined && value !== '' && value !== '0'
}

/** A `node:fs` or `node:net` error: it has a code such as `ENOENT` and says which call failed. */
function systemError(error: unknown): error is NodeJS.ErrnoException & { address?: string; port?: number } {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).code === 'string' && typeof (error as NodeJS.ErrnoException).syscall === 'string'
}

/**
 * What a failed file operation means, in words, e.g. `no such file or directory (ENOENT)`; for any
 * other error its message's first line.
 */
export function fileProblem(error: unknown): string {
  if (!systemError(error)) return firstLine(error)
  switch (error.code) {
    case 'ENOENT':
      return 'no such file or directory (ENOENT)'
    case 'ENOTDIR':
      return 'a part of the path is a file, not a directory (ENOTDIR)'
    case 'EISDIR':
      return 'it is a directory, not a file (EISDIR)'
    case 'EACCES':
    case 'EPERM':
      return `permission denied (${error.code})`
    case 'EEXIST':
      return 'it exists already (EEXIST)'
    case 'ENOSPC':
      return 'no space left on the device (ENOSPC)'
    case 'EROFS':
      return 'the filesystem is read-only (EROFS)'
    default:
      return `${error.code}: ${firstLine(error)}`
  }
}

/** The first line of an error's message; its name when the message is empty. */
function firstLine(error: unknown): string {
  const text = (error instanceof Error ? error.message : String(error)).split('\n')[0]!
  return text === '' && error instanceof Error ? error.name : text
}

/** The line and exit code for an error that reached the top of the command. */
export interface Failure {
  /** One line, ending in a newline. */
  readonly text: string
  readonly code: number
}

/**
 * The one line for `error`, which ended `weft command`, and its exit code: a UsageError is
 * `codes.usage`; a system error (a file, a port) is described with its path or address, and
 * anything else is unexpected: its message and the hint to rerun with {@link DEBUG_ENV} for the
 * stack; both `codes.failed`.
 */
export function failureText(command: string | undefined, error: unknown, codes: FailureCodes): Failure {
  const prefix = command === undefined ? 'weft' : `weft ${command}`
  if (error instanceof UsageError) return { text: `${prefix}: ${error.message}\n`, code: codes.usage }
  if (systemError(error)) {
    if (error.syscall === 'listen') {
      const where = error.address === undefined ? '' : ` ${error.address}${error.port === undefined ? '' : `:${error.port}`}`
      const what =
        error.code === 'EADDRINUSE'
          ? 'the address is in use (EADDRINUSE): stop the process listening there, or choose another port (0 picks a free one)'
          : `${error.code}: choose another address or port`
      return { text: `${prefix}: cannot listen on${where}: ${what}\n`, code: codes.failed }
    }
    const path = error.path === undefined ? '' : `${error.path}: `
    return { text: `${prefix}: ${path}${fileProblem(error)}\n`, code: codes.failed }
  }
  return { text: `${prefix}: unexpected error: ${firstLine(error)} (a bug in weft; rerun with ${DEBUG_ENV}=1 for the stack trace)\n`, code: codes.failed }
}

/**
 * Makes sure the directory `dir` exists (creating it and its parents) and takes new files, before
 * a long run that writes there at its end.
 * @param flag - The option that named it, for the message, e.g. `--report`.
 * @throws UsageError naming the directory and what is wrong with it.
 */
export async function checkWritableDir(dir: string, flag: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true })
    // Creating (and removing) a file is the direct proof that the run's files can be written there.
    const probe = join(dir, `.weft-write-check-${randomBytes(6).toString('hex')}`)
    const handle = await open(probe, 'wx')
    await handle.close()
    await rm(probe, { force: true })
  } catch (error) {
    throw new UsageError(`${flag} ${dir}: cannot write there: ${fileProblem(error)}`)
  }
}

/** Exit codes {@link failureText} chooses from. */
export interface FailureCodes {
  readonly usage: number
  readonly failed: number
}

/**
 * Writes the one line for `error` (see {@link failureText}) to `write`, and its stack after it when
 * {@link DEBUG_ENV} is set; returns the exit code.
 */
export function reportFailure(command: string | undefined, error: unknown, write: (text: string) => void, codes: FailureCodes): number {
  const { text, code } = failureText(command, error, codes)
  write(text)
  if (debugging() && error instanceof Error && error.stack !== undefined) write(`${error.stack}\n`)
  return code
}

/**
 * For `weft` running as the process: an error thrown where no `await` of the command can catch it
 * (an `'error'` event nobody listens to, a rejection nobody awaits) is reported like any other,
 * on one line, and ends the process with its exit code instead of Node's stack trace.
 */
export function exitOnStrayErrors(command: string | undefined, write: (text: string) => void, codes: FailureCodes): void {
  let ending = false
  const fatal = (error: unknown): void => {
    // The first error is the one to report; what fails after it is its consequence.
    if (ending) return
    ending = true
    const code = reportFailure(command, error, write, codes)
    process.exitCode = code
    // Exit once what was written has left (a pipe is asynchronous on some systems): the callback
    // of an empty write runs after the writes before it.
    process.stderr.write('', () => process.exit(code))
  }
  process.on('uncaughtException', fatal)
  process.on('unhandledRejection', fatal)
}
