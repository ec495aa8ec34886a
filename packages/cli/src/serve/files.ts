/**
 * Files of a data directory. They hold private keys, every Command and every Artifact blob, so
 * they are created for their owner alone, whatever the umask of the process.
 * @module
 */
import { closeSync, fchmodSync, openSync, writeSync } from 'node:fs'
import { chmod, mkdir } from 'node:fs/promises'

/** Owner read and write: every file of a data directory. */
const FILE_MODE = 0o600

/** Owner only: the data directory. */
const DIR_MODE = 0o700

/**
 * Creates the file `path` with mode 0600 and `text` in it. The mode is set on the open file
 * descriptor, since a mode given to `open` only loses the bits of the umask.
 * @throws the `node:fs` error; code `EEXIST` when `path` exists (it is left as it is).
 */
export function createPrivateFile(path: string, text = ''): void {
  const fd = openSync(path, 'wx', FILE_MODE)
  try {
    fchmodSync(fd, FILE_MODE)
    if (text.length > 0) writeSync(fd, text)
  } finally {
    closeSync(fd)
  }
}

/** Creates the directory `path` (and its missing parents) when absent, itself with mode 0700; an existing one is left as it is. */
export async function createPrivateDir(path: string): Promise<void> {
  const created = await mkdir(path, { recursive: true, mode: DIR_MODE })
  if (created !== undefined) await chmod(path, DIR_MODE)
}
