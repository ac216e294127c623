/**
 * A major rollout under a ResourceQuota that leaves room for fewer pods than maxSurge, on the real
 * API server (its quota admission; the sandbox has none): 6 rooms, maxSurge 25 % (2), quota
 * pods=7 (and again with a quota of 7 GameRooms, count/gamerooms.roomkeeper.io). Each add_rooms of the rollout makes 1 of its 2 rooms and is refused the other; its
 * rollback keeps the room it made (the rollout wants it, within desired + surge), the health
 * check removes an older room for it, and the rollout moves on one room at a time, as a
 * Deployment does, until every room runs v2.0.0. The quota is never passed, and each refused
 * add_rooms says in its history how many rooms it kept, why, and the refusal.
 */
import type { GameRoom, Operation } from '../../common/src/generated/resources';
import { realApiServer, realClusterEnv, reportNotRun } from '../support/real-apiserver';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';

const ROOMS = 6;
const QUOTA = ROOMS + 1;

const live = (rooms: readonly GameRoom[]): GameRoom[] => rooms.filter((r) => !r.metadata.deletionTimestamp && !r.spec.validation);
const history = (op: Operation): string[] => (op.status?.executionHistory ?? []).map((h) => h.event);

test.each([
  ['pods', 'quota-rollout-pods'],
  ['count/gamerooms.roomkeeper.io', 'quota-rollout-rooms'],
])('a major rollout whose ResourceQuota (%s) allows 1 room above the desired count (maxSurge 2) replaces every room, one at a time, within the quota', async (resource, name) => {
  const plane = realApiServer();
  if (!plane) {
    expect(reportNotRun('a major rollout under a ResourceQuota')).toMatch(/NOT RUN/);
    return;
  }
  const saved = { ...process.env };
  Object.assign(process.env, realClusterEnv(plane));
  let stack: Stack | undefined;
  let watching: ReturnType<typeof setInterval> | undefined;
  try {
    stack = await startStack({ external: true, config: { healthInterval: 300 }, simulation: { pingIntervalMs: 300 } });
    const s = stack;
    await s.api.createScheduler(schedulerObject(name, { roomsReplicas: ROOMS, maxSurge: '25%' }) as never);
    const ready = async (version: string): Promise<number> => live((await s.api.listGameRooms(name)).items)
      .filter((r) => r.spec.version === version && r.status?.status === 'ready').length;
    await waitFor(async () => (await ready('v1.0.0')) === ROOMS, { timeoutMs: 30_000, message: `${ROOMS} ready rooms of v1.0.0` });

    // The quota counts every pod (or GameRoom) of the namespace; admission refuses them only once its usage is known.
    await s.core.createNamespacedResourceQuota({ namespace: name, body: { metadata: { name: 'q' }, spec: { hard: { [resource]: String(QUOTA) } } } });
    await waitFor(async () => (await s.core.readNamespacedResourceQuota({ name: 'q', namespace: name })).status?.hard?.[resource] === String(QUOTA), { timeoutMs: 30_000, message: 'the quota counted' });

    // The most objects seen at once that the quota counts: pods not ended, or GameRooms.
    let most = 0;
    let sampling = false;
    const sample = async (): Promise<void> => {
      if (sampling) return;
      sampling = true;
      try {
        const counted = resource === 'pods'
          ? (await s.core.listNamespacedPod({ namespace: name })).items.filter((p) => !['Succeeded', 'Failed'].includes(p.status?.phase ?? '')).length
          : (await s.api.listGameRooms(name)).items.length;
        most = Math.max(most, counted);
      } finally {
        sampling = false;
      }
    };
    watching = setInterval(() => void sample().catch(() => undefined), 100);

    // A major change, as kubectl makes it: a new image.
    const started = Date.now();
    await s.api.jsonPatchScheduler(name, [{ op: 'replace', path: '/spec/spec/containers/0/image', value: 'example.com/game:2.0.0' }]);
    await waitFor(async () => {
      const rooms = live((await s.api.listGameRooms(name)).items);
      return rooms.length === ROOMS && rooms.every((r) => r.spec.version === 'v2.0.0' && r.status?.status === 'ready');
    }, { timeoutMs: 90_000, intervalMs: 250, message: `every room on v2.0.0 under the quota of ${QUOTA} pods` }).catch(async (err: unknown) => {
      const ops = (await s.api.listOperations(name)).items.filter((o) => o.spec.definitionName === 'add_rooms');
      throw new Error(`${(err as Error).message}\n${ops.map((o) => `${o.metadata.name as string} ${o.status?.status ?? ''}: ${history(o).join(' | ')}`).join('\n')}`, { cause: err });
    });
    const took = Date.now() - started;
    clearInterval(watching);
    watching = undefined;
    await sample();
    expect(most).toBeLessThanOrEqual(QUOTA);

    // The rollout's add_rooms that were refused part-way kept what they made and say so, with the refusal.
    const adds = (await s.api.listOperations(name)).items.filter((o) => o.spec.definitionName === 'add_rooms' && o.spec.source === 'operator');
    const refusedPartWay = adds.filter((o) => o.status?.status === 'error' && history(o).some((e) => e.startsWith('Kept ')));
    expect(refusedPartWay.length).toBeGreaterThan(0);
    for (const op of refusedPartWay) {
      const lines = history(op);
      expect(lines).toContainEqual(expect.stringMatching(/^Operation execution failed: room creation failed after 1\/2 rooms: .*exceeded quota: q/));
      expect(lines).toContainEqual(expect.stringMatching(/^Kept 1 of the rooms created by this operation: the rolling update to v2\.0\.0 wants it: the scheduler has \d+ rooms of the 8 the rollout allows \(6 desired \+ surge 2\), \d of the 6 desired on v2\.0\.0's major; the health check removes older rooms for it, then adds the next batch; the other 1 could not be created \(.*exceeded quota: q/));
      expect(lines.join('\n')).not.toMatch(/^Deleted the/m);
    }
    // No add_rooms of the rollout deleted a room of it it had made.
    for (const op of adds) expect(history(op).join('\n')).not.toMatch(/^Deleted the [1-9]\d* rooms? created by this operation/m);
    const status = await waitFor(async () => {
      const st = (await s.api.getScheduler(name)).status;
      return st?.conditions?.find((c) => c.type === 'Progressing')?.reason === 'RolloutComplete' ? st : undefined;
    }, { timeoutMs: 30_000, message: 'the rollout reported complete' });
    expect(status.rooms).toMatchObject({ current: ROOMS, updated: ROOMS });
    process.stdout.write(`[rollout under quota of ${resource}] ${ROOMS} rooms replaced in ${Math.round(took / 1000)} s; ${adds.length} add_rooms, ${refusedPartWay.length} refused part-way and kept their room; at most ${most} counted (quota ${QUOTA})\n`);
  } finally {
    if (watching) clearInterval(watching);
    await stack?.stop();
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k]; // eslint-disable-line @typescript-eslint/no-dynamic-delete -- the environment is a dictionary: restoring it removes the variables this test added
    Object.assign(process.env, saved);
  }
}, 180_000);
