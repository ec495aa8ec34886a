import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPrivateDir, createPrivateFile } from './files.js'
import { newOrganization, ORGANIZATION_FILE, STORE_FILE, writeOrganization } from './organization.js'
import { startServer } from './serve.js'

const modeOf = async (path: string): Promise<number> => (await stat(path)).mode & 0o777

let root: string
let umask: number
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'weft-files-'))
  // What a process started under `umask 000` would do; restored after.
  umask = process.umask(0)
})
afterAll(async () => {
  process.umask(umask)
  await rm(root, { recursive: true, force: true })
})

describe('data directory files under umask 000', () => {
  it('creates the directory 0700 and a file 0600, and leaves an existing file alone', async () => {
    const dir = join(root, 'a', 'data')
    await createPrivateDir(dir)
    expect(await modeOf(dir)).toBe(0o700)
    createPrivateFile(join(dir, 'f'), 'text')
    expect(await modeOf(join(dir, 'f'))).toBe(0o600)
    expect(() => createPrivateFile(join(dir, 'f'))).toThrow(expect.objectContaining({ code: 'EEXIST' }))
  })

  it('gives authority.db, its -wal and -shm, and organization.json mode 0600 in an in-process server', async () => {
    const dir = join(root, 'served')
    await createPrivateDir(dir)
    await writeOrganization(join(dir, ORGANIZATION_FILE), newOrganization())
    const server = await startServer({ dataDir: dir, port: 0, insecureLoopback: true })
    try {
      for (const name of [STORE_FILE, `${STORE_FILE}-wal`, `${STORE_FILE}-shm`, ORGANIZATION_FILE]) expect([name, await modeOf(join(dir, name))]).toEqual([name, 0o600])
    } finally {
      await server.close()
    }
  })
})
