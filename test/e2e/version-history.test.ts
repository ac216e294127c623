/**
 * The version history limit (ROOMKEEPER_VERSION_HISTORY_LIMIT, here 2): each switch deletes the
 * oldest versions beyond it, but never the active one, one a room still runs or the greatest of a
 * major, and its history names what it deleted. Runs on the sandbox, on kube-apiserver in the
 * real tier, or on a real cluster when E2E_KUBECONFIG is set.
 */
import type { Operation } from '../../common/src/generated/resources';
import { managementCall } from '../support/http';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';
import type { SchedulerAnswer, VersionsAnswer } from './management-bodies';

const NAME = 'history';
const LIMIT = 2;

describe('the version history limit', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ external: true, config: { healthInterval: 300, versionHistoryLimit: LIMIT }, simulation: { pingIntervalMs: 300 } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  const listed = async () => ((await managementCall(stack, 'GET', `/schedulers/${NAME}/versions`)).body as VersionsAnswer).versions.map((v) => v.version).sort();
  const shown = (version: string) => waitFor(async () => {
    const answer = (await managementCall(stack, 'GET', `/schedulers/${NAME}`)).body as Partial<SchedulerAnswer> | undefined;
    return answer?.scheduler?.spec.version === version ? answer.scheduler : undefined;
  }, { timeoutMs: 60_000, message: `GET /schedulers/${NAME} shows ${version}` });
  const switchOf = async (version: string) => waitFor(async () => (await stack.api.listOperations(NAME)).items.find((o: Operation) =>
    o.spec.definitionName === 'switch_active_version' && (o.spec.input as { newActiveVersion?: string }).newActiveVersion === version && o.status?.status === 'finished'), { timeoutMs: 60_000, message: `the switch to ${version} finished` });

  test('keeps the newest versions, the one rooms run and the greatest of each major; the switch says what it deleted', async () => {
    const create = { name: NAME, ...(schedulerObject(NAME, { roomsReplicas: 1, maxSurge: '1' }) as { spec: Record<string, unknown> }).spec };
    expect((await managementCall(stack, 'POST', '/schedulers', create)).status).toBe(200);
    await shown('v1.0.0');
    // Four minor changes: a minor switch replaces no room, so the room still runs v1.0.0.
    for (const [i, version] of ['v1.1.0', 'v1.2.0', 'v1.3.0', 'v1.4.0'].entries()) {
      expect((await managementCall(stack, 'PATCH', `/schedulers/${NAME}`, { maxSurge: String(i + 2) })).status).toBe(200);
      await shown(version);
    }
    await waitFor(async () => (await listed()).join() === 'v1.0.0,v1.3.0,v1.4.0', { timeoutMs: 30_000, message: 'v1.1.0 and v1.2.0 deleted' });
    expect((await switchOf('v1.3.0')).status?.executionHistory?.map((h) => h.event)).toContain(
      `Deleted 1 old version beyond the history limit of ${LIMIT} (ROOMKEEPER_VERSION_HISTORY_LIMIT; no room runs them): v1.1.0`);
    // A version deleted so is not found, and the answer says where the versions kept are listed, and why it went.
    expect(await managementCall(stack, 'GET', `/schedulers/${NAME}?version=v1.1.0`)).toEqual({ status: 404, body: { code: 5, details: [],
      message: `scheduler ${NAME} version v1.1.0 not found: GET /schedulers/${NAME}/versions lists the versions it has (each switch deletes the oldest beyond ROOMKEEPER_VERSION_HISTORY_LIMIT, but for the active one, one rooms still run and the greatest of each major)` } });

    // A major change: v1.3.0 goes, and once the rollout has replaced the v1.0.0 room, the next
    // switch deletes v1.0.0 too and keeps v1.4.0, the greatest of major 1.
    const current = await shown('v1.4.0');
    const { name: _n, state: _s, createdAt: _c, spec, ...rest } = current;
    const major = { ...rest, spec: { ...spec, version: undefined, containers: spec.containers.map((c) => ({ ...c, image: 'example.com/game:2.0.0' })) } };
    expect((await managementCall(stack, 'POST', `/schedulers/${NAME}`, major)).status).toBe(200);
    await shown('v2.0.0');
    await waitFor(async () => {
      const rooms = (await stack.api.listGameRooms(NAME)).items;
      return rooms.length === 1 && rooms.every((r) => r.spec.version === 'v2.0.0' && r.status?.status === 'ready');
    }, { timeoutMs: 60_000, message: 'the one room runs v2.0.0' });
    expect((await managementCall(stack, 'PATCH', `/schedulers/${NAME}`, { maxSurge: '9' })).status).toBe(200);
    await shown('v2.1.0');
    await waitFor(async () => (await listed()).join() === 'v1.4.0,v2.0.0,v2.1.0', { timeoutMs: 30_000, message: 'v1.0.0 and v1.3.0 deleted' });
    // The switch to v2.0.0 deleted v1.3.0 (the room still ran v1.0.0), the one to v2.1.0 v1.0.0:
    // every deleted version is named once, by the switch that deleted it.
    await switchOf('v2.1.0');
    const named = (await stack.api.listOperations(NAME)).items
      .filter((o) => o.spec.definitionName === 'switch_active_version')
      .flatMap((o) => (o.status?.executionHistory ?? []).map((h) => /^Deleted \d+ old versions? beyond the history limit of 2 \(ROOMKEEPER_VERSION_HISTORY_LIMIT; no room runs them\): (.*)$/.exec(h.event)?.[1]))
      .flatMap((list) => (list ? list.split(', ') : []));
    expect(named.sort()).toEqual(['v1.0.0', 'v1.1.0', 'v1.2.0', 'v1.3.0']);

    // Back to v1.4.0, kept as the greatest of major 1: its next minor is v1.5.0, a number no
    // deleted version had.
    expect((await managementCall(stack, 'PUT', `/schedulers/${NAME}`, { version: 'v1.4.0' })).status).toBe(200);
    const back = await shown('v1.4.0');
    const { name: _n2, state: _s2, createdAt: _c2, spec: spec2, ...rest2 } = back;
    expect((await managementCall(stack, 'POST', `/schedulers/${NAME}`, { ...rest2, spec: { ...spec2, version: undefined }, maxSurge: '7' })).status).toBe(200);
    await shown('v1.5.0');

    // A switch to the version already active switches nothing, and says so.
    expect((await managementCall(stack, 'PUT', `/schedulers/${NAME}`, { version: 'v1.5.0' })).status).toBe(200);
    const again = await waitFor(async () => (await stack.api.listOperations(NAME)).items.filter((o) => o.spec.definitionName === 'switch_active_version'
      && (o.spec.input as { newActiveVersion?: string }).newActiveVersion === 'v1.5.0' && o.spec.source !== 'operator' && o.status?.status === 'finished')[0], { timeoutMs: 60_000, message: 'the switch to v1.5.0 asked for finished' });
    expect(again.status?.executionHistory?.map((h) => h.event)).toContain('v1.5.0 was already the active version: nothing switched');
  }, 240_000);
});
