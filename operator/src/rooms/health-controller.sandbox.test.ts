/**
 * The health check alone on the sandbox API server, with the operator's real caches and clients
 * (test/support/controller-harness.ts): it writes its decision and enqueues what heals the fleet
 * once, and a check of a fleet it already decided on makes no write at all.
 */
import { OperationDefinition, OperationSourceName } from '../../../common/src/resources/operation-names';
import { startControllerHarness, type ControllerHarness } from '../../../test/support/controller-harness';
import { HealthController } from './health-controller';

describe('HealthController on the sandbox', () => {
  let h: ControllerHarness;
  let health: HealthController;
  const lostRooms = new Map<string, string[]>();

  beforeAll(async () => {
    h = await startControllerHarness();
    health = new HealthController(h.deps, {
      operationsOf: (s) => h.runner.operationsOf(s),
      track: (op) => h.runner.track(op),
      takeLostRooms: (s) => {
        const lost = lostRooms.get(s) ?? [];
        lostRooms.delete(s);
        return lost;
      },
    });
  });

  afterAll(async () => {
    await h.stop();
  });

  test('a scheduler without rooms gets its desired count and one add_rooms operation; once more: no write', async () => {
    await h.createdScheduler('empty', { roomsReplicas: 2 });
    lostRooms.set('empty', ['empty-gone (its pod was deleted)']);
    await h.converge(() => health.reconcile('empty'));

    const s = await h.api.getScheduler('empty');
    expect(s.status?.rooms?.desired).toBe(2);
    expect(s.status?.autoscaling).toMatchObject({ desired: 2 });
    const ops = (await h.api.listOperations('empty')).items;
    expect(ops).toHaveLength(1);
    expect(ops[0]?.spec).toMatchObject({ definitionName: OperationDefinition.AddRooms, priority: true, source: OperationSourceName.Operator, input: { amount: 2 } });
    expect(String(ops[0]?.spec.input?.reason)).toContain('lost: empty-gone (its pod was deleted)');

    expect(await h.writesOf(() => health.reconcile('empty'))).toBe(0);
    expect((await h.api.listOperations('empty')).items).toHaveLength(1);
  });

  test('a scheduler whose rooms are all there and ready: its decision written once; once more: no write', async () => {
    const s = await h.createdScheduler('whole', { roomsReplicas: 2 });
    await h.readyRoom(s);
    await h.readyRoom(s);
    await h.converge(() => health.reconcile('whole'));

    expect((await h.api.getScheduler('whole')).status?.rooms?.desired).toBe(2);
    expect((await h.api.listOperations('whole')).items).toEqual([]);

    expect(await h.writesOf(() => health.reconcile('whole'))).toBe(0);
  });
});
