/**
 * Which PingDigests belong to gateway replicas that are gone (pure). Each gateway replica writes
 * one digest per scheduler it hears rooms of (`roomkeeper-pings-<replica>`), and only while it
 * hears them; a replica that stopped (a rollout gives every pod a new name) never deletes its own,
 * so without this each rollout would leave `replicas × schedulers` digests behind for good, every
 * one of them in the operator's cache.
 *
 * A digest not written for STALE_FACTOR × (ping timeout + flush interval) is stale:
 * - a live replica that hears a room writes it every flush interval, so it is far fresher;
 * - every ping time it holds is then older than the ping timeout, so no room's liveness depends on
 *   it any more (a room that ever pinged a status change also has `status.lastPingAt`);
 * - the factor leaves room for the gateway's clock (which `status.flushedAt` is written in) to lag
 *   the operator's by minutes.
 * A digest deleted while its replica is in fact alive costs nothing: the replica creates it again
 * at its next flush (its status patch finds it missing, then it creates it).
 */
import type { PingDigest } from '../../../../common/src/generated/resources';

const STALE_FACTOR = 2;

export interface StaleDigest {
  name: string;
  /** The version the decision was made on: deleted only if still that one (not written since). */
  resourceVersion: string;
  replica: string;
  /** When it was last written (ms since the epoch). */
  writtenAt: number;
}

/** How long a digest may go unwritten before it is stale. */
export function digestStaleAfterMs(t: { pingTimeoutMs: number; flushIntervalMs: number }): number {
  return STALE_FACTOR * (t.pingTimeoutMs + t.flushIntervalMs);
}

/** When a digest was last written: its `status.flushedAt`, else (never flushed) its creation. */
export function digestWrittenAt(digest: PingDigest): number | undefined {
  const flushed = Number(digest.status?.flushedAt);
  if (digest.status?.flushedAt !== undefined && Number.isFinite(flushed) && flushed > 0) return flushed;
  const created = Date.parse(String(digest.metadata.creationTimestamp ?? ''));
  return Number.isFinite(created) ? created : undefined;
}

/** The digests among `digests` not written for longer than `staleAfterMs` at `now`, oldest first. */
export function staleDigests(digests: readonly PingDigest[], now: number, staleAfterMs: number): StaleDigest[] {
  const out: StaleDigest[] = [];
  for (const d of digests) {
    const writtenAt = digestWrittenAt(d);
    if (writtenAt === undefined || now - writtenAt <= staleAfterMs || d.metadata.deletionTimestamp) continue;
    out.push({ name: d.metadata.name ?? '', resourceVersion: d.metadata.resourceVersion ?? '', replica: d.spec.replica, writtenAt });
  }
  return out.filter((d) => d.name !== '').sort((a, b) => a.writtenAt - b.writtenAt);
}
