/**
 * A signed-in person: the sign-in of the console contract (`src/shared/sign-in.ts`), the
 * WebSocket session it opens (§17 frames, a pre-authenticated session: no HELLO, since §6.3's
 * handshake is an Agent's), the client that signs the person's Commands in the browser, and the
 * Groups opened by `SUBSCRIBE` from sequence 0 (§16, §17.2).
 *
 * The private key never leaves WebCrypto: it is imported non-extractable and the seed bytes are
 * wiped at once. Nothing secret is put on `window`.
 * @module
 */
import { encodeBase64url, webCryptoKeyPair, type AsyncSigningKey, type ProtocolError } from '@weft/codec'
import { createClient, type Client, type FeedSubscription } from '@weft/client'
import { connectWebSocket, type ConnectionStatus, type WebSocketConnection } from '@weft/client/wire'
import type { Event } from '@weft/spec'
import { CONSOLE_PATHS, sessionProtocols, signInTranscriptBytes, type ConsoleAgent, type ConsoleGroup } from '../shared/sign-in.js'
import { ApiError, authorityNow, fetchAgents, fetchChallenge, fetchGroups, postSignIn, postSignOut } from './api.js'
import type { PersonKey } from './keyfile.js'
import { createGroupView, receiveEvent, startAt, type GroupView } from './model.js'

/** Where a Group's subscription stands. */
export type GroupStatus = 'loading' | 'live' | 'not_found' | 'paused'

/** One opened Group. */
export interface OpenedGroup {
  readonly view: GroupView
  status: GroupStatus
  /** The code of the last error the feed reported for it. */
  errorCode: string | undefined
}

/** The signed-in person and everything the session holds. */
export interface SignedIn {
  readonly organizationId: string
  readonly person: { readonly type: 'human'; readonly id: string }
  readonly keyId: string
  readonly client: Client
  /** The connection's status, for the top bar (§17.3 liveness). */
  connection(): ConnectionStatus
  /** The Groups the person may see, as last fetched. */
  groups(): readonly ConsoleGroup[]
  refreshGroups(): Promise<readonly ConsoleGroup[]>
  /** The Organization's registered Agents (§6.1), fetched now: the Coordinators a person may name. */
  agents(): Promise<readonly ConsoleAgent[]>
  /** Opens (subscribes from 0) or returns an opened Group. */
  open(groupId: string): OpenedGroup
  opened(groupId: string): OpenedGroup | undefined
  /** The Authority's current time, for `issuedAt` and `occurredAt` (fetched now). */
  now(): Promise<string>
  /** Signs a document with the person's key ({@link AsyncSigningKey} for `signAsync`). */
  readonly signingKey: AsyncSigningKey
  /** Called on any change: an Event applied, a status change, a Groups refresh. */
  onChange(listener: () => void): () => void
  /** Called once when the session is gone (signed out, token refused): back to sign-in. */
  onEnded(listener: (reason: string | undefined) => void): () => void
  signOut(): Promise<void>
}

/** The WebSocket URL of the console on this page's origin. */
function socketUrl(): string {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:'
  return `${scheme}//${location.host}${CONSOLE_PATHS.socket}`
}

/** Signs in with `key`: imports it into WebCrypto, wipes the seed, answers a challenge, opens the session. */
export async function signIn(key: PersonKey): Promise<SignedIn> {
  let pair: Awaited<ReturnType<typeof webCryptoKeyPair>>
  try {
    pair = await webCryptoKeyPair(key.seed, key.publicKey)
  } finally {
    // The seed is in WebCrypto now (non-extractable) or refused: either way script holds it no longer.
    key.seed.fill(0)
  }
  const signingKey: AsyncSigningKey = Object.freeze({ keyId: key.keyId, pair })
  const challenge = await fetchChallenge()
  const signature = await pair.sign(signInTranscriptBytes(challenge, { principalId: key.principalId, keyId: key.keyId }))
  const session = await postSignIn({ principalId: key.principalId, keyId: key.keyId, challenge: challenge.challenge, signature: encodeBase64url(signature) })
  const token = session.token
  const person = { type: 'human' as const, id: session.principal?.id ?? key.principalId }
  const connection = await connectWebSocket({ url: socketUrl(), actor: person, signingKey, session: { protocols: () => sessionProtocols(token) } })
  const client = createClient({ actor: person, signingKey, transport: connection.transport })
  return signedIn(key.organizationId, person, signingKey, token, connection, client)
}

function signedIn(
  organizationId: string,
  person: { readonly type: 'human'; readonly id: string },
  signingKey: AsyncSigningKey,
  token: string,
  connection: WebSocketConnection,
  client: Client,
): SignedIn {
  const listeners = new Set<() => void>()
  const endListeners = new Set<(reason: string | undefined) => void>()
  const opened = new Map<string, OpenedGroup>()
  const subscriptions: FeedSubscription[] = []
  let groups: readonly ConsoleGroup[] = []
  let ended = false
  let scheduled = false
  const ackTimers = new Map<string, ReturnType<typeof setTimeout>>()

  // Many Events arrive per frame during replay: re-render once per animation frame, not per Event.
  const changed = (): void => {
    if (scheduled) return
    scheduled = true
    const flush = (): void => {
      scheduled = false
      for (const l of listeners) l()
    }
    if (typeof requestAnimationFrame === 'function') requestAnimationFrame(flush)
    else setTimeout(flush, 16)
  }

  const end = (reason: string | undefined): void => {
    if (ended) return
    ended = true
    for (const s of subscriptions) s.close()
    void connection.close()
    for (const l of endListeners) l(reason)
  }

  connection.on('state', (state) => {
    if (state.status === 'closed' && !ended) {
      const code = (state.error as Partial<ProtocolError> | undefined)?.code
      end(code === 'AUTH_REQUIRED' ? 'Your session has ended. Sign in again.' : 'The connection to the server was closed. Sign in again.')
      return
    }
    changed()
  })

  // §16: the ACK Cursor keeps the Group flowing; one per Group per moment is enough.
  const ack = (groupId: string, view: GroupView): void => {
    if (ackTimers.has(groupId)) return
    ackTimers.set(
      groupId,
      setTimeout(() => {
        ackTimers.delete(groupId)
        void Promise.resolve(connection.feed.ack(groupId, view.head)).catch(() => undefined)
      }, 100),
    )
  }

  const guard = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work()
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) end('Your session has ended. Sign in again.')
      throw error
    }
  }

  const self: SignedIn = {
    organizationId,
    person,
    keyId: signingKey.keyId,
    client,
    signingKey,
    connection: () => connection.status,
    groups: () => groups,
    agents: () => guard(() => fetchAgents(token)),
    async refreshGroups() {
      groups = await guard(() => fetchGroups(token))
      changed()
      return groups
    },
    open(groupId) {
      const existing = opened.get(groupId)
      if (existing !== undefined) return existing
      const entry: OpenedGroup = { view: createGroupView(groupId), status: 'loading', errorCode: undefined }
      opened.set(groupId, entry)
      const onEvent = (event: Event): void => {
        if (receiveEvent(entry.view, event) > 0) {
          entry.status = 'live'
          // §8, §15.1: the person's Membership Epoch is learned from the Group's Events.
          client.observe([event])
          ack(groupId, entry.view)
          changed()
        }
      }
      try {
        subscriptions.push(
          connection.feed.subscribe([{ groupId, afterSequence: 0 }], {
            onEvent,
            onStart: (_g, after) => startAt(entry.view, after),
            onError: (error) => {
              // §17.2: hidden and absent Groups answer the same GROUP_NOT_FOUND.
              entry.status = error.code === 'GROUP_NOT_FOUND' || error.code === 'MEMBERSHIP_REQUIRED' ? 'not_found' : 'paused'
              entry.errorCode = error.code
              changed()
            },
          }),
        )
      } catch (error) {
        entry.status = 'not_found'
        entry.errorCode = (error as Partial<ProtocolError>).code ?? 'GROUP_NOT_FOUND'
      }
      // An empty Group (or one whose history starts later) shows as live once the server answered.
      setTimeout(() => {
        if (entry.status === 'loading') {
          entry.status = 'live'
          changed()
        }
      }, 1500)
      changed()
      return entry
    },
    opened: (groupId) => opened.get(groupId),
    now: () => guard(() => authorityNow(token)),
    onChange(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    onEnded(listener) {
      endListeners.add(listener)
      return () => endListeners.delete(listener)
    },
    async signOut() {
      await postSignOut(token)
      end(undefined)
    },
  }
  return self
}
