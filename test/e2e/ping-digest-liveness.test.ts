/**
 * Rooms kept alive by the gateway's PingDigests alone (issue 12, M1/M2: the digests moved from
 * ConfigMaps to a custom resource). Simulated rooms ping `ready` over and over; only the first
 * ping changes a room, so `GameRoom.status.lastPingAt` stops moving and liveness reaches the
 * operator only through the PingDigest status. For three ping timeouts no room may be deleted
 * (checked on every room event); a room that falls silent is then expired and replaced.
 * The digest of a gateway replica that is gone (each gateway pod name leaves one per scheduler) is
 * deleted by the operator; a live replica's digest deleted anyway is written again at its next flush.
 * Where the API server refuses a scheduler's PingDigest (a ResourceQuota), each room's last ping
 * is written on its GameRoom instead, and the rooms live.
 * Runs on the sandbox, or on a real cluster when E2E_KUBECONFIG is set (there under the chart's
 * RBAC, which grants the gateway pingdigests but no ConfigMaps, and the operator delete on them).
 */
import * as k8s from '@kubernetes/client-node';
import type { GameRoom, PingDigest } from '../../common/src/generated/resources';
import { MERGE_PATCH } from '../../common/src/kube/clients';
import { SCHEDULER_LABEL } from '../../common/src/resources/labels';
import { decodePingDigest, GATEWAY_REPLICA_LABEL, PING_DIGEST_LABEL, pingDigestName } from '../../common/src/rooms/ping-digest';
import { managementCall } from '../support/http';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';

const NAME = 'digest-alive';
const PING_TIMEOUT_MS = 6000;

describe('liveness through PingDigests', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ external: true, config: { roomPingTimeout: PING_TIMEOUT_MS, healthInterval: 300 }, simulation: { pingIntervalMs: 300 } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  test('rooms whose pings change nothing outlive three ping timeouts; a silent one is replaced', async () => {
    const body = { name: NAME, ...(schedulerObject(NAME, { roomsReplicas: 3 }) as { spec: Record<string, unknown> }).spec };
    expect((await managementCall(stack, 'POST', '/schedulers', body)).status).toBe(200);
    const live = async () => (await stack.api.listGameRooms(NAME)).items.filter((r) => !r.metadata.deletionTimestamp && !r.spec.validation);
    await waitFor(async () => (await live()).filter((r) => r.status?.status === 'ready').length === 3, { timeoutMs: 60_000, message: '3 ready rooms' });
    const rooms = new Set((await live()).map((r) => r.metadata.name as string));

    // Every room event: none of the three is deleted while its room keeps pinging.
    const violations: string[] = [];
    let silenced: string | undefined;
    const informer = k8s.makeInformer<GameRoom & k8s.KubernetesObject>(stack.kc, `/apis/roomkeeper.io/v1/namespaces/${NAME}/gamerooms`,
      () => stack.api.listGameRooms(NAME));
    const check = (room: GameRoom & k8s.KubernetesObject) => {
      const name = room.metadata.name as string;
      if (rooms.has(name) && name !== silenced && room.metadata.deletionTimestamp) violations.push(`${name} deleted at ${room.metadata.deletionTimestamp.toString()} while pinging`);
    };
    informer.on('update', check);
    informer.on('delete', (room) => { if (rooms.has(room.metadata.name as string) && room.metadata.name !== silenced) violations.push(`${room.metadata.name!} gone while pinging`); });
    await informer.start();
    try {
      const digest = async (): Promise<PingDigest | undefined> =>
        ((await stack.api.listPingDigests(NAME)).items)[0];
      const start = Date.now();
      // Hold until the digest has been written after three ping timeouts (a condition, not a sleep).
      const held = await waitFor(async () => {
        const d = await digest();
        return d && Number(d.status?.flushedAt) > start + 3 * PING_TIMEOUT_MS ? d : undefined;
      }, { timeoutMs: 3 * PING_TIMEOUT_MS + 60_000, message: 'a digest written after three ping timeouts' });
      expect(violations).toEqual([]);
      expect(held.spec.scheduler).toBe(NAME);
      const lastPings = decodePingDigest(held.status);
      for (const room of rooms) expect(lastPings.get(room)).toBeGreaterThan(start + 2 * PING_TIMEOUT_MS);
      // The rooms' own lastPingAt stopped at their last status change: the digest is what kept them.
      const stale = (await live()).filter((r) => rooms.has(r.metadata.name as string) && Date.parse(r.status?.lastPingAt ?? '0') < Date.now() - PING_TIMEOUT_MS);
      expect(stale.map((r) => r.metadata.name).sort()).toEqual([...rooms].sort());

      // One room falls silent: the operator expires it on the digest's word and replaces it.
      silenced = [...rooms][0]!;
      stack.simulation!.rooms!.silence(silenced);
      await waitFor(async () => {
        const now = await live();
        return !now.some((r) => r.metadata.name === silenced) && now.filter((r) => r.status?.status === 'ready').length === 3;
      }, { timeoutMs: PING_TIMEOUT_MS + 60_000, message: 'the silent room replaced' });
      expect(violations).toEqual([]);
    } finally {
      await informer.stop();
    }
  });

  test('rooms whose PingDigest the API server refuses (a ResourceQuota) outlive three ping timeouts: each room\'s last ping is written on its GameRoom instead', async () => {
    const name = 'digest-refused';
    const body = { name, ...(schedulerObject(name, { roomsReplicas: 3 }) as { spec: Record<string, unknown> }).spec };
    expect((await managementCall(stack, 'POST', '/schedulers', body)).status).toBe(200);
    const live = async () => (await stack.api.listGameRooms(name)).items.filter((r) => !r.metadata.deletionTimestamp && !r.spec.validation);
    await waitFor(async () => (await live()).filter((r) => r.status?.status === 'ready').length === 3, { timeoutMs: 60_000, message: '3 ready rooms' });
    const rooms = new Set((await live()).map((r) => r.metadata.name as string));
    // The cluster's quota allows no PingDigest in the scheduler's namespace (the sandbox enforces
    // no ResourceQuota: there its create is refused 403 the same way).
    const sandbox = stack.sandbox;
    if (sandbox) {
      sandbox.faults.set({ errorRate: 1, errorStatus: 403, match: { verb: 'create', resource: 'pingdigests' } });
    } else {
      await stack.core.createNamespacedResourceQuota({ namespace: name, body: { metadata: { name: 'no-digests' }, spec: { hard: { 'count/pingdigests.roomkeeper.io': '0' } } } });
      await waitFor(async () => (await stack.core.readNamespacedResourceQuota({ name: 'no-digests', namespace: name })).status?.hard !== undefined, { timeoutMs: 30_000, message: 'the quota in force' });
    }
    try {
      for (const d of (await stack.api.listPingDigests(name)).items) await stack.api.deletePingDigest(name, d.metadata.name as string);
      const start = Date.now();
      // Every room stays, pinging, for three ping timeouts with no digest (a condition, not a sleep).
      await waitFor(async () => {
        const now = await live();
        const gone = [...rooms].filter((r) => !now.some((x) => x.metadata.name === r));
        if (gone.length > 0) throw new Error(`rooms removed while pinging: ${gone.join(', ')}`);
        return Date.now() > start + 3 * PING_TIMEOUT_MS && now.every((r) => !rooms.has(r.metadata.name as string) || Date.parse(r.status?.lastPingAt ?? '0') > start + 2 * PING_TIMEOUT_MS);
      }, { timeoutMs: 3 * PING_TIMEOUT_MS + 60_000, intervalMs: 250, message: 'three ping timeouts with every room kept alive by its GameRoom\'s lastPingAt' });
      expect((await stack.api.listPingDigests(name)).items).toEqual([]);
    } finally {
      if (sandbox) sandbox.faults.clear();
      else await stack.core.deleteNamespacedResourceQuota({ name: 'no-digests', namespace: name });
    }
  });

  test('the operator deletes the PingDigest of a gateway replica gone for long, never a live one; a live replica writes its own again once it is deleted', async () => {
    const name = 'digest-gone';
    const gone = 'gw-gone-1';
    const body = { name, ...(schedulerObject(name, { roomsReplicas: 1 }) as { spec: Record<string, unknown> }).spec };
    expect((await managementCall(stack, 'POST', '/schedulers', body)).status).toBe(200);
    const room = await waitFor(async () => (await stack.api.listGameRooms(name)).items.find((r) => !r.metadata.deletionTimestamp && !r.spec.validation && r.status?.status === 'ready'),
      { timeoutMs: 60_000, message: 'a ready room' });
    const digests = async () => (await stack.api.listPingDigests(name)).items;
    const live = await waitFor(async () => (await digests()).find((d) => d.spec.replica !== gone), { timeoutMs: 30_000, message: 'the live gateway\'s digest' });

    // A replica that stopped an hour ago left its digest (its room's ping as old).
    const custom = stack.kc.makeApiClient(k8s.CustomObjectsApi);
    const target = { group: 'roomkeeper.io', version: 'v1', plural: 'pingdigests', namespace: name };
    const hourAgo = Date.now() - 3_600_000;
    await custom.createNamespacedCustomObject({ ...target, body: {
      apiVersion: 'roomkeeper.io/v1', kind: 'PingDigest',
      metadata: { name: pingDigestName(gone), labels: { [PING_DIGEST_LABEL]: 'true', [SCHEDULER_LABEL]: name, [GATEWAY_REPLICA_LABEL]: gone } },
      spec: { scheduler: name, replica: gone },
    } });
    await custom.patchNamespacedCustomObjectStatus({ ...target, name: pingDigestName(gone), body: { status: { lastPings: JSON.stringify({ [room.metadata.name as string]: hourAgo }), flushedAt: String(hourAgo) } } }, MERGE_PATCH);
    await waitFor(async () => !(await digests()).some((d) => d.metadata.name === pingDigestName(gone)), { timeoutMs: 30_000, message: 'the operator to delete the gone replica\'s digest' });
    expect((await digests()).find((d) => d.metadata.name === live.metadata.name)?.metadata.uid).toBe(live.metadata.uid);

    // The live replica's digest, deleted anyway, is created again at the gateway's next flush.
    await stack.api.deletePingDigest(name, live.metadata.name as string);
    // (Created, then its status patched: two writes, the first one seen alone for a moment.)
    const again = await waitFor(async () => (await digests()).find((d) => d.metadata.name === live.metadata.name && d.metadata.uid !== live.metadata.uid
      && decodePingDigest(d.status).has(room.metadata.name as string)), { timeoutMs: 30_000, message: 'the live gateway to write its digest again, with its room' });
    expect(decodePingDigest(again.status).get(room.metadata.name as string)).toBeGreaterThan(hourAgo);
    // Its room lived through all of it.
    expect((await stack.api.getGameRoom(name, room.metadata.name as string)).metadata.deletionTimestamp).toBeUndefined();
  });
});
