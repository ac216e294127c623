/**
 * The chaos scenarios' continuous check: informers (the test's own, not the components') on one
 * scheduler's GameRooms and room pods and on the Scheduler, calling `check` on every event with
 * the fleet as it stands, and collecting what it reports as violations. An informer that fails
 * (the chaos may reach the test's watches too) is started again.
 */
import * as k8s from '@kubernetes/client-node';
import type { GameRoom, Scheduler } from '../../common/src/generated/resources';
import type { Stack } from '../support/stack';

export interface Fleet {
  rooms(): GameRoom[];
  pods(): k8s.V1Pod[];
  scheduler(): Scheduler | undefined;
}

export interface FleetEvent {
  kind: 'room' | 'pod' | 'scheduler';
  type: 'add' | 'update' | 'delete';
  name: string;
  object: k8s.KubernetesObject;
}

/** Rooms that count: not terminating, not validation rooms. */
export const liveRooms = (rooms: readonly GameRoom[]): GameRoom[] => rooms.filter((r) => !r.metadata.deletionTimestamp && !r.spec.validation);
export const servingRooms = (rooms: readonly GameRoom[]): GameRoom[] => liveRooms(rooms).filter((r) => r.status?.status === 'ready' || r.status?.status === 'occupied');

export interface FleetWatch extends Fleet {
  readonly violations: string[];
  /** Events checked so far. */
  readonly events: number;
  stop(): Promise<void>;
}

export async function watchFleet(stack: Stack, name: string, check: (fleet: Fleet, event: FleetEvent) => string | undefined): Promise<FleetWatch> {
  const violations: string[] = [];
  let events = 0;
  let stopped = false;
  const rooms = k8s.makeInformer<GameRoom & k8s.KubernetesObject>(stack.kc, `/apis/roomkeeper.io/v1/namespaces/${name}/gamerooms`,
    () => stack.api.listGameRooms(name));
  const pods = k8s.makeInformer<k8s.V1Pod>(stack.kc, `/api/v1/namespaces/${name}/pods`, () => stack.core.listNamespacedPod({ namespace: name }));
  const schedulers = k8s.makeInformer<Scheduler & k8s.KubernetesObject>(stack.kc, '/apis/roomkeeper.io/v1/schedulers',
    () => stack.api.listSchedulers());
  const fleet: Fleet = {
    rooms: () => rooms.list(name) as GameRoom[],
    pods: () => [...pods.list(name)],
    scheduler: () => (schedulers.list() as Scheduler[]).find((s) => s.metadata.name === name),
  };
  const informers: [FleetEvent['kind'], k8s.Informer<k8s.KubernetesObject>][] = [['room', rooms], ['pod', pods], ['scheduler', schedulers]];
  for (const [kind, informer] of informers) {
    for (const type of ['add', 'update', 'delete'] as const) {
      informer.on(type, (object: k8s.KubernetesObject) => {
        if (kind === 'scheduler' && object.metadata?.name !== name) return;
        events++;
        const v = check(fleet, { kind, type, name: object.metadata?.name ?? '', object });
        if (v && violations.length < 50) violations.push(v);
      });
    }
    const restart = (): void => {
      if (!stopped) setTimeout(() => void informer.start().catch(restart), 500);
    };
    informer.on('error', restart);
  }
  await Promise.all(informers.map(([, i]) => i.start()));
  return {
    ...fleet,
    violations,
    get events() {
      return events;
    },
    async stop() {
      stopped = true;
      await Promise.all(informers.map(([, i]) => i.stop()));
    },
  };
}
