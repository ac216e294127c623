/**
 * Rotating the room-token secret under pinging rooms, with no room expiring (issue 12, M3; the
 * procedure of SECURITY.md, step by step):
 *   1. gateway: current = new secret, previous = old secret; operator: current = new secret;
 *   2. new rooms get tokens under the new secret (pod label roomkeeper.io/room-token-key), old
 *      rooms keep pinging with theirs and are accepted;
 *   3. the rooms still on the old key id are replaced (remove-rooms by id; the health check adds
 *      new ones), then the gateway drops the previous secret.
 * Every room event is checked: no room is deleted but those the test removes in step 3, and after
 * each restart every ping is accepted. Runs on the sandbox, or on a real cluster when
 * E2E_KUBECONFIG is set.
 */
import * as k8s from '@kubernetes/client-node';
import type { GameRoom } from '../../common/src/generated/resources';
import { decodePingDigest } from '../../common/src/rooms/ping-digest';
import { roomToken, roomTokenKeyId, ROOM_TOKEN_KEY_LABEL } from '../../common/src/rooms/room-token';
import { managementCall } from '../support/http';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';

const NAME = 'token-rotation';
const PING_TIMEOUT_MS = 8000;

describe('room-token rotation', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ external: true, config: { roomPingTimeout: PING_TIMEOUT_MS, healthInterval: 300 }, simulation: { pingIntervalMs: 300 } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  test('old and new rooms keep pinging through the rotation and no room expires', async () => {
    const oldSecret = stack.config.roomTokenSecret;
    const newSecret = `rotated-${Math.random().toString(36).slice(2)}-${Date.now()}`;
    const oldKey = roomTokenKeyId(oldSecret);
    const newKey = roomTokenKeyId(newSecret);
    const live = async () => (await stack.api.listGameRooms(NAME)).items.filter((r) => !r.metadata.deletionTimestamp && !r.spec.validation);
    const ready = async () => (await live()).filter((r) => r.status?.status === 'ready');
    const podsWithKey = async (key: string) => (await stack.core.listNamespacedPod({ namespace: NAME, labelSelector: `${ROOM_TOKEN_KEY_LABEL}=${key}` })).items
      .filter((p) => !p.metadata?.deletionTimestamp && p.metadata?.labels?.['roomkeeper.io/validation-room'] !== 'true').map((p) => p.metadata?.name as string);
    const failures = () => stack.simulation!.rooms!.stats().pingFailures;
    // Every room the digest names was heard after `since`.
    const allHeardSince = async (since: number, rooms: string[]) => {
      const digests = (await stack.api.listPingDigests(NAME)).items;
      const last = new Map<string, number>();
      for (const d of digests) for (const [room, at] of decodePingDigest(d.status)) last.set(room, Math.max(at, last.get(room) ?? 0));
      return rooms.every((r) => (last.get(r) ?? 0) > since);
    };

    expect((await managementCall(stack, 'POST', '/schedulers', { name: NAME, ...(schedulerObject(NAME, { roomsReplicas: 3 }) as { spec: Record<string, unknown> }).spec })).status).toBe(200);
    await waitFor(async () => (await ready()).length === 3, { timeoutMs: 60_000, message: '3 ready rooms' });
    const oldRooms = (await live()).map((r) => r.metadata.name as string).sort();
    expect((await podsWithKey(oldKey)).sort()).toEqual(oldRooms);

    // No room leaves but those the test removes (checked on every event).
    const violations: string[] = [];
    const removing = new Set<string>();
    const informer = k8s.makeInformer<GameRoom & k8s.KubernetesObject>(stack.kc, `/apis/roomkeeper.io/v1/namespaces/${NAME}/gamerooms`, () => stack.api.listGameRooms(NAME));
    const check = (room: GameRoom & k8s.KubernetesObject) => {
      const name = room.metadata.name as string;
      if (room.metadata.deletionTimestamp && !removing.has(name)) violations.push(`${name} deleted (${String(room.status?.status)}, last ping ${String(room.status?.lastPingAt)})`);
    };
    informer.on('update', check);
    informer.on('delete', (room) => { if (!removing.has(room.metadata.name as string)) violations.push(`${room.metadata.name!} gone`); });
    await informer.start();
    try {
      // 1. Both secrets on the gateway, the new one on the operator.
      const rotated = Date.now();
      await stack.restartGateway({ roomTokenSecret: newSecret, roomTokenPreviousSecret: oldSecret });
      await stack.restartOperators({ roomTokenSecret: newSecret });
      await waitFor(() => allHeardSince(rotated, oldRooms), { timeoutMs: 30_000, message: 'every old room heard by the restarted gateway' });
      const failuresAfterRestart = failures();

      // 2. New rooms carry the new key; old and new rooms all ping, and every ping is accepted.
      expect((await managementCall(stack, 'POST', `/schedulers/${NAME}/add-rooms`, { amount: 2 })).status).toBe(200);
      await waitFor(async () => (await ready()).length === 5, { timeoutMs: 60_000, message: '5 ready rooms' });
      const newRooms = (await podsWithKey(newKey)).sort();
      expect(newRooms).toHaveLength(2);
      expect((await podsWithKey(oldKey)).sort()).toEqual(oldRooms);
      const held = Date.now();
      await waitFor(() => allHeardSince(held + 2 * PING_TIMEOUT_MS, [...oldRooms, ...newRooms]), { timeoutMs: 2 * PING_TIMEOUT_MS + 60_000, message: 'every room heard two ping timeouts later' });
      expect(violations).toEqual([]);
      expect(failures()).toBe(failuresAfterRestart);
      const tokenPing = (secret: string, room: string) => fetch(`${stack.roomsUrl}/scheduler/${NAME}/rooms/${room}/ping`, {
        method: 'PUT', headers: { 'content-type': 'application/json', authorization: `Bearer ${roomToken(secret, NAME, room)}` }, body: JSON.stringify({ status: 'ready', timestamp: 1 }),
      });
      expect((await tokenPing(oldSecret, oldRooms[0] as string)).status).toBe(200);
      expect((await tokenPing('not-a-secret-of-ours', oldRooms[0] as string)).status).toBe(401);

      // 3. Replace the rooms still on the old key, then drop the previous secret.
      for (const r of oldRooms) removing.add(r);
      expect((await managementCall(stack, 'POST', `/schedulers/${NAME}/remove-rooms`, { roomsIds: oldRooms })).status).toBe(200);
      await waitFor(async () => (await podsWithKey(oldKey)).length === 0 && (await ready()).length >= 3, { timeoutMs: 60_000, message: 'no room on the old key, rooms ready again' });
      const dropped = Date.now();
      await stack.restartGateway({ roomTokenSecret: newSecret });
      const remaining = (await live()).map((r) => r.metadata.name as string);
      await waitFor(() => allHeardSince(dropped, remaining), { timeoutMs: 30_000, message: 'every remaining room heard by the gateway without the previous secret' });
      const failuresAfterDrop = failures();
      await waitFor(() => allHeardSince(dropped + PING_TIMEOUT_MS, remaining), { timeoutMs: PING_TIMEOUT_MS + 60_000, message: 'every remaining room heard a ping timeout later' });
      expect(failures()).toBe(failuresAfterDrop);
      expect(violations).toEqual([]);
      expect((await podsWithKey(newKey)).sort()).toEqual([...remaining].sort());
      // The old secret's tokens no longer pass.
      expect((await tokenPing(oldSecret, remaining[0] as string)).status).toBe(401);
    } finally {
      await informer.stop();
    }
  });
});
