/**
 * The yardstick for the operator's room creation: a bare loop that creates the same objects the
 * operator creates for a room (the GameRoom, then its Pod built by `buildRoomPod`, owned by the
 * GameRoom), with the same client-node client, concurrency and client-side rate limit, and
 * nothing else (no queue, no history, no informers).
 */
import type * as k8s from '@kubernetes/client-node';
import type { GameRoom, SchedulerSpec } from '../../common/src/generated/resources';
import { isConflict, MERGE_PATCH, type KubeClients } from '../../common/src/kube/clients';
import { RoomkeeperApi } from '../../common/src/kube/roomkeeper-api';
import { API_VERSION } from '../../common/src/resources/api-group';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, SCHEDULER_LABEL, VERSION_LABEL } from '../../common/src/resources/labels';
import { roomToken } from '../../common/src/rooms/room-token';
import { pickHostPorts } from '../../operator/src/rooms/domain/host-ports';
import { buildRoomPod, roomName } from '../../operator/src/rooms/domain/pod-template';

export interface BareLoopOptions {
  clients: KubeClients;
  namespace: string;
  definition: SchedulerSpec;
  count: number;
  concurrency: number;
  roomsApiUrl: string;
  roomTokenSecret: string;
  maestroEnv: boolean;
  /**
   * Also mark each room ready as the kubelet and the room would (the pod's status Running and
   * Ready, then the GameRoom's status `ready`): the least any system writes for a ready room.
   */
  markReady?: boolean;
}

export async function createRoomsBare(opts: BareLoopOptions): Promise<{ created: number; firstError?: string }> {
  const api = new RoomkeeperApi(opts.clients.custom);
  const core: k8s.CoreV1Api = opts.clients.core;
  const used = new Set<number>();
  let next = 0;
  let created = 0;
  let firstError: string | undefined;
  const one = async (): Promise<void> => {
    const ports = pickHostPorts(opts.definition, used, Math.random);
    if ('error' in ports) throw new Error(ports.error);
    for (const p of ports.flat()) used.add(p);
    // A name taken (36^5 names: likely somewhere in 10,000 rooms) is tried again with another.
    for (let tries = 1; ; tries++) {
      const name = roomName(opts.namespace, Math.random);
      try {
        await createRoom(name, ports);
        return;
      } catch (err) {
        if (!isConflict(err) || tries >= 5) throw err;
      }
    }
  };
  const createRoom = async (name: string, ports: number[][]): Promise<void> => {
    const room: GameRoom = {
      apiVersion: API_VERSION,
      kind: 'GameRoom',
      metadata: { name, namespace: opts.namespace, labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, [SCHEDULER_LABEL]: opts.namespace, [VERSION_LABEL]: 'v1.0.0' } },
      spec: { scheduler: opts.namespace, version: 'v1.0.0', validation: false },
    };
    const createdRoom = await api.createGameRoom(room);
    const pod = buildRoomPod({
      schedulerName: opts.namespace,
      roomName: name,
      version: 'v1.0.0',
      definition: opts.definition,
      hostPorts: ports,
      roomsApiUrl: opts.roomsApiUrl,
      roomToken: roomToken(opts.roomTokenSecret, opts.namespace, name),
      maestroEnv: opts.maestroEnv,
      ownerRef: { apiVersion: API_VERSION, kind: 'GameRoom', name, uid: createdRoom.metadata.uid as string, controller: true, blockOwnerDeletion: true },
    });
    await core.createNamespacedPod({ namespace: opts.namespace, body: pod });
    if (!opts.markReady) return;
    const now = new Date().toISOString();
    await core.patchNamespacedPodStatus({
      name, namespace: opts.namespace,
      body: { status: { phase: 'Running', startTime: now, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }] } },
    }, MERGE_PATCH);
    await api.patchGameRoomStatus(opts.namespace, name, { status: { status: 'ready' } });
  };
  const worker = async (): Promise<void> => {
    while (next < opts.count && firstError === undefined) {
      next++;
      try {
        await one();
        created++;
      } catch (err) {
        firstError ??= err instanceof Error ? err.message : String(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(opts.concurrency, opts.count) }, () => worker()));
  return firstError === undefined ? { created } : { created, firstError };
}
