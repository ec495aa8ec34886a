/**
 * `weft serve --init`: a new Organization in a data directory (`organization.json`, mode 0600)
 * and, unless told otherwise, its first human with a key file of its own, then what to do next:
 * register the other people and Agents, start the server, sign in to the console (§5).
 * @module
 */
import { access } from 'node:fs/promises'
import { join } from 'node:path'
import { UsageError } from '@weft/codec'
import { principalCommand } from '../principal.js'
import { createPrivateDir } from './files.js'
import { loadOrganization, newOrganization, ORGANIZATION_FILE, registryEvidence, writeOrganization } from './organization.js'

/** The name of the human `--init` adds unless told `--human NAME` or `--no-human`. */
export const FIRST_HUMAN = 'owner'

/** The names `weft principal add` takes: they become a file name and the last segment of an ID. */
const PRINCIPAL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/** Whether `path` exists. */
async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  )
}

/**
 * `--init`: a new Organization and, unless `human` is `undefined`, its first human, whose private
 * key goes to `DATA/NAME.key.json` (mode 0600, never overwritten) as `weft principal add` writes
 * it: the person who signs in to the console first (§5) and owns the first Missions.
 */
export async function initOrganization(dataDir: string, write: (text: string) => void, human: string | undefined): Promise<void> {
  if (human !== undefined && !PRINCIPAL_NAME.test(human))
    throw new UsageError(`--human must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit; got ${JSON.stringify(human)}`)
  await createPrivateDir(dataDir)
  const file = newOrganization()
  const path = join(dataDir, ORGANIZATION_FILE)
  const keyPath = human === undefined ? undefined : join(dataDir, `${human}.key.json`)
  // Refused before anything is written: a key file is never overwritten (nor an Organization, below).
  if (keyPath !== undefined && !(await exists(path)) && (await exists(keyPath)))
    throw new UsageError(`${keyPath} exists already; a key file is never overwritten (move it away, or choose --human NAME or --no-human)`)
  await writeOrganization(path, file)
  const evidence = registryEvidence(file)
  let first: { readonly id: string; readonly keyId: string } | undefined
  if (human !== undefined && keyPath !== undefined) {
    let refused = ''
    const code = await principalCommand(['add', 'human', '--data', dataDir, '--name', human, '--key-out', keyPath], { stdout: () => undefined, stderr: (text) => void (refused += text) })
    if (code !== 0) throw new UsageError(`${path} was written, but its first human was not: ${refused.replace(/^weft principal: /, '').trim()}`)
    first = (await loadOrganization(path)).file.principals.find((p) => p.type === 'human')
  }
  write(
    `Created ${path} (mode 600: it holds the private keys of two services).\n\n` +
      `Organization ${file.organizationId}\n` +
      `  Authority      ${file.authority.id}  key ${file.authority.keyId}\n` +
      `  control plane  ${file.controlPlane.id}  key ${file.controlPlane.keyId}\n` +
      (first === undefined ? '' : `  first human    ${first.id}  key ${first.keyId}\n`) +
      '\n' +
      "Agents verify the Authority's Event signatures with these Registry bindings:\n" +
      `${JSON.stringify(evidence, null, 2)}\n\n` +
      `Next, register your ${first === undefined ? '' : 'other '}people and Agents, each with a key pair of its own (the private key goes to a\n` +
      'file of its own, mode 600, never into the organization file):\n' +
      `  weft principal add human --data ${shellWord(dataDir)} --name NAME\n` +
      `  weft principal add agent --data ${shellWord(dataDir)} --name NAME --capability ID@VERSION\n` +
      `or add one entry per Principal to "principals" in ${path} by hand,\n` +
      '  { "type": "human", "id": URI, "keyId": URI, "publicKey": base64url }\n' +
      '  { "type": "agent", "id": URI, "keyId": URI, "publicKey": base64url, "card": { "displayName", "owner", "endpoints", "capabilities", "maxConcurrency" } }\n' +
      '  (a key may also state "validFrom", "validUntil" and "revokedAt", RFC 3339 times: §6.4)\n' +
      'then start the server. On this machine, for development: plain ws on 127.0.0.1, on a free port\n' +
      '(the "listening" log line gives its URL; --port N for a fixed one):\n' +
      `  weft serve --data ${shellWord(dataDir)} --insecure-loopback --port 0\n` +
      'For Agents on other machines: wss with TLS 1.3 (§17.1) on port 7443, with your certificate and key:\n' +
      `  weft serve --data ${shellWord(dataDir)} --host 0.0.0.0 --tls-cert cert.pem --tls-key key.pem\n` +
      (first === undefined || keyPath === undefined
        ? ''
        : '\n' +
          'The web console is on the same port, at /console/; the server prints its address when it starts\n' +
          '("console: http://127.0.0.1:PORT/console/" for the development command above). Sign in there as\n' +
          `${first.id} by loading the key file\n` +
          `  ${keyPath}\n` +
          "(mode 600: that person's private key, and nowhere else). The page signs with it in the browser; the key\n" +
          'never leaves it. Behind a reverse proxy, name the address people open with --console-origin https://NAME.\n'),
  )
}

/** `text` as one word of a POSIX shell command line: quoted when it holds anything but safe characters. */
function shellWord(text: string): string {
  return /^[\w./:@%+=,-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`
}
