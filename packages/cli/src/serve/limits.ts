/**
 * The §20 limits `weft serve` applies unless told otherwise, and the one it enforces itself: HELLOs
 * per Agent. An unlimited server accepts a flood of Messages from one Agent, and every HELLO of a
 * looping runtime appends a durable `session_opened` Event; the defaults stop both well above what
 * legitimate Agents do. Beside them, the bounds on what the server holds for refused input: the
 * audit record of refused Commands and the body of a control endpoint request.
 * @module
 */
import { DEFAULT_MAX_AUDIT_ENTRIES, DEFAULT_POLICY, type Clock } from '@weft/authority'
import { DEFAULT_MAX_FRAMES_PER_SECOND, DEFAULT_MAX_OUTBOUND_BYTES, DEFAULT_SEND_TIMEOUT_MS } from '@weft/authority/wire'
import { ProtocolError } from '@weft/codec'
import type { ServedAuthority } from './backend.js'
import { DEFAULT_MAX_CONTROL_REQUESTS } from './control.js'

/** The limits of {@link SERVE_LIMITS}, each a positive integer. */
export interface ServeLimits {
  /** §20 `message_rate`: Messages one actor may have accepted per Group in any sliding minute (at most 1024). */
  readonly maxMessagesPerMinute: number
  /** §20 `proposal_rate`: `work.propose` Commands one actor may have accepted per Group in any sliding minute (at most 1024). */
  readonly maxProposalsPerMinute: number
  /** Sessions one Agent may open (HELLO handshakes that verified) in any sliding minute. */
  readonly maxHellosPerMinute: number
  /** WebSocket connections open at once, handshakes included. */
  readonly maxConnections: number
  /** WebSocket connections open at once from one peer address. */
  readonly maxConnectionsPerPeer: number
  /** Refused Commands the Authority's audit record keeps in memory, the newest (each entry of bounded size). */
  readonly maxAuditEntries: number
  /** Bytes of a control endpoint request body; a longer one is refused with HTTP 413 unread. Default: the Authority's `maxCommandBytes`. */
  readonly maxControlBodyBytes: number
  /** Control endpoint requests handled at once (each holds up to `maxControlBodyBytes`); one more is refused with HTTP 503 unread. */
  readonly maxControlRequests: number
  /** Bytes one WebSocket connection may hold for a peer that does not read them (§17.3 bounded buffering). */
  readonly maxOutboundBytes: number
  /** Milliseconds a WebSocket connection's socket may take none of the bytes waiting for it. */
  readonly sendTimeoutMs: number
  /**
   * Bytes of one WebSocket message (frame) a peer may send; a longer one closes its connection
   * (1009). Default: the Authority's `maxCommandBytes` and 64 KiB for the frame around the Command.
   */
  readonly maxFrameBytes: number
  /** Frames one WebSocket connection may send per second, with bursts of as many; beyond, its socket is read no further until the allowance refills. */
  readonly maxFramesPerSecond: number
}

/**
 * Room for a COMMAND frame's own members around the largest Command: a frame larger than the
 * Command limit and this can only carry a Command the Authority refuses, so it is refused unread.
 */
export const FRAME_OVERHEAD_BYTES = 64 * 1024

/**
 * The defaults: about 16 Messages a second per Agent and Group, sustained, with bursts to a
 * thousand; two proposals a second; a reconnect every second per Agent; a thousand connections, a
 * hundred of them from one address (Agents behind one proxy or NAT share it); the last 10,000
 * refused Commands audited (some 20 MB at the very worst); a control request body as large as
 * the largest Command the Authority takes (1 MiB unless `policy.maxCommandBytes` says otherwise),
 * 16 of them at once;
 * 2000 frames a second read from one connection, each at most the largest Command and 64 KiB.
 */
export const SERVE_LIMITS: ServeLimits = Object.freeze({
  maxMessagesPerMinute: 1000,
  maxProposalsPerMinute: 120,
  maxHellosPerMinute: 60,
  maxConnections: 1000,
  maxConnectionsPerPeer: 100,
  maxAuditEntries: DEFAULT_MAX_AUDIT_ENTRIES,
  maxControlBodyBytes: DEFAULT_POLICY.maxCommandBytes,
  maxControlRequests: DEFAULT_MAX_CONTROL_REQUESTS,
  maxOutboundBytes: DEFAULT_MAX_OUTBOUND_BYTES,
  sendTimeoutMs: DEFAULT_SEND_TIMEOUT_MS,
  maxFramesPerSecond: DEFAULT_MAX_FRAMES_PER_SECOND,
  maxFrameBytes: DEFAULT_POLICY.maxCommandBytes + FRAME_OVERHEAD_BYTES,
})

/** The command-line flag of each limit. */
export const LIMIT_FLAGS = Object.freeze({
  maxMessagesPerMinute: 'max-messages-per-minute',
  maxProposalsPerMinute: 'max-proposals-per-minute',
  maxHellosPerMinute: 'max-hellos-per-minute',
  maxConnections: 'max-connections',
  maxConnectionsPerPeer: 'max-connections-per-peer',
  maxAuditEntries: 'max-audit-entries',
  maxControlBodyBytes: 'max-control-body-bytes',
  maxControlRequests: 'max-control-requests',
  maxOutboundBytes: 'max-outbound-bytes',
  sendTimeoutMs: 'send-timeout-ms',
  maxFramesPerSecond: 'max-frames-per-second',
  maxFrameBytes: 'max-frame-bytes',
} as const satisfies { readonly [K in keyof ServeLimits]: string })

const SESSION_OPEN = 'ext.missionweaveprotocol.identity.session_open'
const WINDOW_MS = 60_000

/**
 * `authority` whose in-process transport (`connect()`, what the wire server opens sessions
 * through) refuses a `session_open` for an Agent that already opened `limit` sessions in the last
 * minute, with a retryable `RATE_LIMITED` (§19, §20) before the Authority appends anything.
 * Only handshakes that verified reach it, so a peer cannot spend another Agent's allowance.
 */
export function limitHellos(authority: ServedAuthority, limit: number, clock: Clock): ServedAuthority {
  const opened = new Map<string, number[]>()
  const check = (agentId: string): void => {
    const now = clock.now()
    const recent = (opened.get(agentId) ?? []).filter((t) => t > now - WINDOW_MS)
    if (recent.length >= limit) {
      opened.set(agentId, recent)
      const retryAfterMs = Math.max(1, recent[recent.length - limit]! + WINDOW_MS - now)
      throw new ProtocolError('RATE_LIMITED', `hello_rate: ${recent.length} sessions opened in the last minute reach the limit of ${limit}`, {
        retryable: true,
        details: { policyName: 'hello_rate', limit, windowSeconds: WINDOW_MS / 1000, retryAfterMs },
      })
    }
    recent.push(now)
    opened.set(agentId, recent)
  }
  const connect: ServedAuthority['connect'] = () => {
    const inner = authority.connect()
    return {
      async submit(command, bytes) {
        const payload = command['payload'] as { readonly agentId?: unknown } | undefined
        if (command['kind'] === SESSION_OPEN && typeof payload?.agentId === 'string') check(payload.agentId)
        return inner.submit(command, bytes)
      },
    }
  }
  return Object.freeze(Object.create(authority, { connect: { value: connect, enumerable: true } }) as ServedAuthority)
}
