import type { V1Pod } from '@kubernetes/client-node';
import type { GameRoom } from '../../../common/src/generated/resources';
import { loadConfig } from '../../../common/src/config';
import type { KubeEvent } from '../../../common/src/kube/event-recorder';
import { MetricsRegistry } from '../../../common/src/metrics';
import type { OperatorDeps } from '../deps';
import { OrphanedPods } from './orphaned-pods';
import { captureLogs } from '../../../test/support/log-capture';
import { waitFor } from '../../../test/support/wait';

const GRACE = 30_000;
const LABELS = { 'app.kubernetes.io/managed-by': 'roomkeeper', 'roomkeeper.io/scheduler': 's', 'roomkeeper.io/version': 'v1.0.0' };

/** A scheduler `s` whose pods and rooms the test sets; the clock moves when the test says. */
function setup() {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const pods = new Map<string, V1Pod>();
  const rooms = new Map<string, GameRoom>();
  const fresh = new Map<string, GameRoom>();
  const deletes: { name: string; uid: string | undefined }[] = [];
  const failNext: number[] = [];
  const events: KubeEvent[] = [];
  const logs = captureLogs('info');
  let namespace: { metadata: { name: string; deletionTimestamp?: Date } } | undefined = { metadata: { name: 's' } };
  const deps = {
    api: {
      getGameRoom: (_ns: string, name: string) => {
        const room = fresh.get(name);
        return room ? Promise.resolve(room) : Promise.reject(Object.assign(new Error('not found'), { code: 404 }));
      },
    },
    core: {
      deleteNamespacedPod: (req: { name: string; namespace: string; body?: { preconditions?: { uid?: string } } }) => {
        const status = failNext.shift();
        if (status !== undefined) return Promise.reject(Object.assign(new Error(`refused ${status}`), { code: status }));
        deletes.push({ name: req.name, uid: req.body?.preconditions?.uid });
        pods.delete(req.name);
        return Promise.resolve({});
      },
    },
    caches: {
      schedulers: { list: () => [], get: () => ({ metadata: { name: 's', uid: 'uid-s' } }) },
      namespaces: { list: () => [], get: () => namespace },
      pods: { list: () => [...pods.values()], get: (name: string) => pods.get(name) },
      rooms: { list: () => [...rooms.values()], get: (name: string) => rooms.get(name) },
    },
    config: loadConfig({}, { orphanedPodGrace: GRACE }),
    logger: logs.logger,
    metrics: new MetricsRegistry(),
    events: { record: (e: KubeEvent) => events.push(e) },
    now: () => now,
  } as unknown as OperatorDeps;
  const pod = (name: string, owned: boolean): void => {
    pods.set(name, {
      metadata: {
        name, namespace: 's', uid: `pod-${name}`, labels: LABELS,
        ...(owned ? { ownerReferences: [{ apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', name, uid: `uid-${name}`, controller: true }] } : {}),
      },
    });
  };
  const room = (name: string): GameRoom => ({ apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name, namespace: 's', uid: `uid-${name}` }, spec: { scheduler: 's', version: 'v1.0.0' } });
  return {
    deps, pods, rooms, fresh, deletes, failNext, events, logs, pod, room,
    advance: (ms: number) => { now += ms; },
    setNamespace: (ns: typeof namespace) => { namespace = ns; },
  };
}

/** A sweeper that has seen the pods of `t` once, the clock then moved on by the grace period. */
async function seenForTheGrace(t: ReturnType<typeof setup>): Promise<OrphanedPods> {
  const sweeper = new OrphanedPods(t.deps);
  await sweeper.sweep('s');
  t.advance(GRACE);
  return sweeper;
}

describe('OrphanedPods: the room pods without their GameRoom, deleted and told', () => {
  it('deletes an orphaned pod once seen so for the grace period, with its uid as precondition; tells it once; a pass after it does nothing', async () => {
    const t = setup();
    t.pod('s-orphan', false);
    t.pod('s-live', true);
    t.rooms.set('s-live', t.room('s-live'));
    const sweeper = new OrphanedPods(t.deps);
    await sweeper.sweep('s');
    t.advance(GRACE - 1);
    await sweeper.sweep('s');
    expect(t.deletes).toEqual([]);
    t.advance(1);
    await sweeper.sweep('s');
    await sweeper.sweep('s');
    expect(t.deletes).toEqual([{ name: 's-orphan', uid: 'pod-s-orphan' }]);
    expect(t.events).toHaveLength(1);
    expect(t.events[0]).toMatchObject({ regarding: { kind: 'Scheduler', name: 's' }, type: 'Warning', reason: 'OrphanedRoomPodsDeleted', action: 'DeletePod' });
    expect(t.events[0]?.note).toMatch(/^Deleted room pod s-orphan, which ran without its GameRoom: its GameRoom was deleted with its pod orphaned/);
    expect(t.deps.metrics.sum('roomkeeper_orphaned_room_pods_total', { result: 'deleted' })).toBe(1);
    await waitFor(() => t.logs.lines.some((l) => String(l.message).startsWith('deleted room pods that ran without their GameRoom')));
    expect(t.logs.lines.find((l) => String(l.message).startsWith('deleted room pods'))).toMatchObject({ scheduler: 's', count: 1, pods: ['s-orphan'], orphaned: 1, ownerGone: 0 });
  });

  it('keeps a pod whose GameRoom a fresh read finds (the cache behind), and deletes one whose GameRoom is gone', async () => {
    const t = setup();
    t.pod('s-new', true);
    t.pod('s-gone', true);
    t.fresh.set('s-new', t.room('s-new'));
    const sweeper = await seenForTheGrace(t);
    await sweeper.sweep('s');
    expect(t.deletes.map((d) => d.name)).toEqual(['s-gone']);
    expect(t.events.map((e) => e.note)).toEqual([expect.stringMatching(/^Deleted room pod s-gone, which ran without its GameRoom: its GameRoom is gone, and the garbage collector/)]);
  });

  it('a deletion refused is logged once, counted, and tried again by the next passes; the Event tells only what was deleted', async () => {
    const t = setup();
    t.pod('s-a', false);
    const sweeper = await seenForTheGrace(t);
    t.failNext.push(403, 403);
    await sweeper.sweep('s');
    await sweeper.sweep('s');
    expect(t.deletes).toEqual([]);
    expect(t.events).toEqual([]);
    expect(t.deps.metrics.sum('roomkeeper_orphaned_room_pods_total', { result: 'failed' })).toBe(2);
    await sweeper.sweep('s');
    expect(t.deletes.map((d) => d.name)).toEqual(['s-a']);
    expect(t.events).toHaveLength(1);
    await waitFor(() => t.logs.lines.some((l) => String(l.message).startsWith('deleted room pods')));
    const failures = t.logs.lines.filter((l) => String(l.message).startsWith('could not delete a room pod'));
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ level: 'warn', scheduler: 's', pod: 's-a' });
    expect(String(failures[0]?.error)).toContain('refused 403');
  });

  it('a pod gone meanwhile, or replaced by another of its name (409 on the uid), is not told', async () => {
    const t = setup();
    t.pod('s-a', false);
    t.pod('s-b', false);
    const sweeper = await seenForTheGrace(t);
    t.failNext.push(404, 409);
    await sweeper.sweep('s');
    expect(t.events).toEqual([]);
    expect(t.deps.metrics.sum('roomkeeper_orphaned_room_pods_total', {})).toBe(0);
  });

  it('nothing while the namespace goes (its pods go with it), and what was seen before counts no more', async () => {
    const t = setup();
    t.pod('s-a', false);
    const sweeper = await seenForTheGrace(t);
    t.setNamespace({ metadata: { name: 's', deletionTimestamp: new Date() } });
    await sweeper.sweep('s');
    t.setNamespace({ metadata: { name: 's' } });
    await sweeper.sweep('s');
    expect(t.deletes).toEqual([]);
    expect(t.events).toEqual([]);
  });
});
