/**
 * The members error.schema.json gives particular codes (§19), filled by the code that answers them:
 * `expectedRevision` and `currentRevision` of `REVISION_CONFLICT` (§15.3), `retryAfterMs` of
 * `RATE_LIMITED` (§20) and `BACKPRESSURE` (§17.3), `snapshotArtifactHash` of `CURSOR_TOO_OLD` (§16).
 * Each test makes the Authority answer the code for real, then checks the in-process error, its
 * error document and its `ERROR` frame against the generated validators, and the error the
 * receiver reads back from that frame.
 */
import { errorFrame, errorOfFrame } from '@weft/client/wire'
import { ProtocolError, type ErrorCode } from '@weft/codec'
import { validators } from '@weft/validators'
import { describe, expect, it } from 'vitest'
import { createDelivery } from '../src/delivery/delivery.js'
import { aggregateKey } from '../src/model.js'
import { compactHead, post, startedKept } from '@weft/testkit/recovery'
import { refusal, cast, T0 } from '@weft/testkit/fixtures'
import { coordinatorOf, offer, reach, started } from '@weft/testkit/world'

/** Expects `error` to be a `code` carrying `members` in process, in its valid error document and ERROR frame, and read back from the frame. */
function expectMembers(error: unknown, code: ErrorCode, members: Record<string, unknown>): void {
  expect(error).toBeInstanceOf(ProtocolError)
  const e = error as ProtocolError
  expect(e).toMatchObject({ code, ...members })
  const document = e.toWire(T0)
  expect(validators.error.errors(document)).toEqual([])
  expect(document).toMatchObject(members)
  const frame = errorFrame(e, 'urn:weft:test:frame:members', T0, { groupId: 'urn:weft:test:group:members' })
  expect(validators.websocketFrame.errors(frame)).toEqual([])
  expect(errorOfFrame(frame)).toMatchObject({ code, retryable: e.retryable, ...members })
}

describe('error members by code (§19, error.schema.json)', () => {
  it('[error REVISION_CONFLICT] for a stale expectedRevision carries both revisions, in process, in its error document and in its ERROR frame', async () => {
    const w = await started()
    const id = await reach(w, 'offered')
    const revision = w.item(id).doc.revision
    await offer(w, id, ['worker1'])
    const error = await refusal(w.as.worker1.workAcceptOffer({ workItemId: id, ownershipLeaseSeconds: 600 }, { expectedRevision: revision }))
    expectMembers(error, 'REVISION_CONFLICT', { expectedRevision: revision, currentRevision: revision + 1 })
  })

  it('[error REVISION_CONFLICT] for a stale missionRevision in mission.submit_for_approval carries both revisions', async () => {
    const w = await started()
    await reach(w, 'verified')
    const current = w.group().revisions.get(aggregateKey('mission', w.groupId)) ?? w.group().mission.revision
    const artifactHashes = [...new Set([...w.group().artifacts.values()].map((a) => a.manifest.contentHash))]
    const error = await refusal(coordinatorOf(w).missionSubmitForApproval({ artifactHashes, missionRevision: current + 5 }))
    expectMembers(error, 'REVISION_CONFLICT', { expectedRevision: current + 5, currentRevision: current })
  })

  it('[error RATE_LIMITED] for the per-minute Message rate carries retryAfterMs', async () => {
    const w = await started({ policy: { maxMessagesPerMinute: 1 } })
    await post(w)
    w.clock.advance(10)
    // The counted Message leaves the one-minute window 50 s later.
    expectMembers(await refusal(post(w)), 'RATE_LIMITED', { retryAfterMs: 50_001 })
  })

  it('[error BACKPRESSURE] for a full delivery buffer carries retryAfterMs', async () => {
    const w = await started()
    const delivery = createDelivery(w.authority, { maxBufferedPerGroup: 1, retryAfterMs: 250 })
    const seen: ProtocolError[] = []
    const subscription = delivery.subscribe(cast.worker1.actor, [{ groupId: w.groupId, afterSequence: w.group().head }], { onEvent: () => undefined, onError: (e) => seen.push(e) })
    subscription.pause(w.groupId)
    await post(w)
    await post(w)
    expect(seen).toHaveLength(1)
    expectMembers(seen[0], 'BACKPRESSURE', { retryAfterMs: 250 })
  })

  it('[error CURSOR_TOO_OLD] for a read below the compaction point carries snapshotArtifactHash', async () => {
    const kept = await startedKept()
    await post(kept.w)
    const record = compactHead(kept, 'urn:weft:test:snapshot:members')
    let error: unknown
    try {
      kept.w.authority.events(kept.w.groupId, 0)
    } catch (thrown) {
      error = thrown
    }
    expectMembers(error, 'CURSOR_TOO_OLD', { snapshotArtifactHash: record.snapshotHash })
  })
})
