import type { GameRoom } from '../../../common/src/generated/resources';
import { silentLogger } from '../../../common/src/logger';
import type { OperatorDeps } from '../deps';
import { RoomStatusController } from './room-status-controller';

/** A room created 60 s ago whose pod the operator's cache has never shown. */
function setup(podOnServer: boolean) {
  const now = Date.parse('2026-01-01T00:01:00Z');
  const room: GameRoom = {
    apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom',
    metadata: { name: 'r1', namespace: 's', uid: 'uid-r1', resourceVersion: '5', creationTimestamp: new Date('2026-01-01T00:00:00Z') },
    spec: { scheduler: 's', version: 'v1.0.0' },
  };
  const calls: string[] = [];
  const lost: string[] = [];
  const deps = {
    api: {
      deleteGameRoom: (ns: string, name: string) => {
        calls.push(`delete ${ns}/${name}`);
        return Promise.resolve({});
      },
    },
    core: {
      readNamespacedPod: (req: { namespace: string; name: string }) => {
        calls.push(`get pod ${req.namespace}/${req.name}`);
        return podOnServer ? Promise.resolve({ metadata: { name: req.name } }) : Promise.reject(Object.assign(new Error('not found'), { code: 404 }));
      },
    },
    caches: { rooms: { get: () => room }, pods: { get: () => undefined }, nodes: { get: () => undefined } },
    logger: silentLogger(),
    now: () => now,
  } as unknown as OperatorDeps;
  const controller = new RoomStatusController(deps, (scheduler, name, why) => lost.push(`${scheduler}/${name}: ${why}`));
  return { controller, calls, lost };
}

describe('RoomStatusController: a room whose pod the cache never showed', () => {
  it('is not lost when a fresh read finds its pod (the pod cache lags on a loaded API server)', async () => {
    const t = setup(true);
    expect(await t.controller.reconcile('s/r1')).toEqual({ requeueAfterMs: 30_000 });
    expect(t.calls).toEqual(['get pod s/r1']);
    expect(t.lost).toEqual([]);
  });

  it('is lost, and deleted, when the API server has no pod for it either', async () => {
    const t = setup(false);
    await t.controller.reconcile('s/r1');
    expect(t.calls).toEqual(['get pod s/r1', 'delete s/r1']);
    expect(t.lost).toEqual(['s/r1: its pod never appeared']);
  });
});
