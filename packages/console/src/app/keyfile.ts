/**
 * Reads the key file `weft principal add human NAME` writes (`weft.key/1`): the person's
 * Principal, Registry key ID and Ed25519 key (§6.4). Only a human's key signs in to the console:
 * an Agent authenticates with the HELLO handshake of §6.3 and never through a person's page.
 * @module
 */
import { decodeBase64url } from '@weft/codec'

/** The `format` member of a version 1 key file. */
export const KEY_FILE_FORMAT = 'weft.key/1'

/** A key file as read: the seed is the only secret, and the caller wipes it after import. */
export interface PersonKey {
  readonly organizationId: string
  readonly principalId: string
  readonly keyId: string
  readonly publicKey: Uint8Array
  readonly seed: Uint8Array
  readonly validFrom: string | undefined
  readonly validUntil: string | undefined
}

/** The key file, or a plain sentence saying why it cannot be used. */
export type KeyFileResult = { readonly ok: true; readonly key: PersonKey } | { readonly ok: false; readonly problem: string }

/** Parses the text of a key file; never throws. */
export function readKeyFile(text: string): KeyFileResult {
  let file: Record<string, unknown>
  try {
    const parsed: unknown = JSON.parse(text)
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      return { ok: false, problem: 'This is not a key file: it must be the JSON file that `weft principal add human NAME` wrote.' }
    file = parsed as Record<string, unknown>
  } catch {
    return { ok: false, problem: 'This is not a key file: it is not valid JSON.' }
  }
  if (file['format'] !== KEY_FILE_FORMAT) return { ok: false, problem: `This is not a key file of format ${KEY_FILE_FORMAT}.` }
  const principal = file['principal'] as { type?: unknown; id?: unknown } | undefined
  if (principal?.type !== 'human') return { ok: false, problem: 'This key belongs to an Agent or a service, not a person. Only a human Principal’s key can sign in to the console.' }
  if (typeof principal.id !== 'string' || typeof file['keyId'] !== 'string' || typeof file['organizationId'] !== 'string')
    return { ok: false, problem: 'The key file is incomplete: it needs the Organization, the Principal and the key ID.' }
  const seed = typeof file['seed'] === 'string' ? decodeBase64url(file['seed']) : undefined
  const publicKey = typeof file['publicKey'] === 'string' ? decodeBase64url(file['publicKey']) : undefined
  if (seed?.length !== 32 || publicKey?.length !== 32) return { ok: false, problem: 'The key file is damaged: its key must be 32 bytes in base64url.' }
  return {
    ok: true,
    key: {
      organizationId: file['organizationId'],
      principalId: principal.id,
      keyId: file['keyId'],
      publicKey,
      seed,
      validFrom: typeof file['validFrom'] === 'string' ? file['validFrom'] : undefined,
      validUntil: typeof file['validUntil'] === 'string' ? file['validUntil'] : undefined,
    },
  }
}
