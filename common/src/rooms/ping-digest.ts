/**
 * The ping digest: how a gateway replica tells the operator which rooms it has heard from,
 * without one API write per ping.
 *
 * FORMAT (read by the operator to expire rooms; one PingDigest per gateway replica per scheduler,
 * crds/roomkeeper.io_pingdigests.yaml):
 *
 *   apiVersion: roomkeeper.io/v1
 *   kind: PingDigest
 *   metadata:
 *     name: roomkeeper-pings-<replica id>      # replica id = ROOMKEEPER_POD_NAME or the hostname, sanitised
 *     namespace: <scheduler name>              # the namespace of the scheduler's rooms
 *     labels:
 *       roomkeeper.io/ping-digest: "true"
 *       roomkeeper.io/scheduler: <scheduler name>
 *       roomkeeper.io/gateway-replica: <replica id>
 *   spec:
 *     scheduler: <scheduler name>
 *     replica: <replica id>
 *   status:                                    # the status subresource: the only part patched after creation
 *     lastPings: '{"<room id>":<unix ms of the last ping>,...}'   # compact JSON object
 *     flushedAt: "<unix ms when this replica wrote the digest>"
 *
 * A custom resource, not a ConfigMap, so that neither the gateway (which faces the internet) nor
 * the operator holds any right on ConfigMaps (issue 12, M1/M2): the gateway creates PingDigests
 * and patches their status, the operator lists and watches them.
 *
 * `lastPings` holds every room this replica heard from in the last 10 minutes (rooms not heard
 * for longer are dropped), so it can be read on its own; the time is the gateway's clock when the
 * ping arrived (as Maestro's lastPingAt), never the room's `timestamp`. A room's last ping is the
 * newest value across every replica's digest and `GameRoom.status.lastPingAt` (written at once
 * when a ping changes the room's status). A digest is written at most once per flush interval,
 * and only when a room was heard since the last flush.
 */

import type { PingDigestStatus } from '../generated/resources';

export const PING_DIGEST_LABEL = 'roomkeeper.io/ping-digest';
export const GATEWAY_REPLICA_LABEL = 'roomkeeper.io/gateway-replica';
const PING_DIGEST_NAME_PREFIX = 'roomkeeper-pings-';
/** Rooms not heard from for this long leave the digest. */
export const PING_DIGEST_RETENTION_MS = 10 * 60_000;

/** A replica id usable in an object name and a label value. */
export function sanitizeReplicaId(raw: string): string {
  const cleaned = raw.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 63).replace(/-+$/g, '');
  return cleaned === '' ? 'gateway' : cleaned;
}

export function pingDigestName(replicaId: string): string {
  return `${PING_DIGEST_NAME_PREFIX}${sanitizeReplicaId(replicaId)}`;
}

/** The `status` of a PingDigest. */
export function encodePingDigest(lastPings: ReadonlyMap<string, number>, flushedAtMs: number): PingDigestStatus {
  return { lastPings: JSON.stringify(Object.fromEntries(lastPings)), flushedAt: String(flushedAtMs) };
}

/** Parses a digest's `status` (the operator's side); bad entries are skipped, never thrown. */
export function decodePingDigest(data: PingDigestStatus | undefined): Map<string, number> {
  const out = new Map<string, number>();
  if (!data?.lastPings) return out;
  try {
    const parsed: unknown = JSON.parse(data.lastPings);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
      for (const [room, ms] of Object.entries(parsed)) if (typeof ms === 'number' && Number.isFinite(ms)) out.set(room, ms);
    }
  } catch {
    // an unreadable digest says nothing
  }
  return out;
}
