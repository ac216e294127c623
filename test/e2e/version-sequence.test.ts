/**
 * A Maestro client's version sequence over HTTP, as its e2e suite drives it: create, a minor
 * change, a major change, `PUT` back to v1.0.0, waiting each time only until `GET` shows the new
 * version, then a minor and a major change again. Every request is answered 200 the first time
 * (a switch holds up nothing once its version is active) and every version gets Maestro's number.
 * 20 rounds on one scheduler on the sandbox; 2 on a real cluster (E2E_KUBECONFIG), where each
 * major change's validation room takes longer.
 */
import { describeScheduler, managementCall } from '../support/http';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';
import type { SchedulerAnswer, VersionsAnswer } from './management-bodies';

const ROUNDS = process.env.E2E_KUBECONFIG ? 2 : 20;
const NAME = 'maestro-sequence';

/** Maestro's numbering (maestro-behaviour.md §7), written out independently of the operator's. */
class VersionModel {
  readonly versions: string[] = ['v1.0.0'];
  active = 'v1.0.0';

  next(change: 'minor' | 'major'): string {
    const parsed = this.versions.map((v) => v.slice(1).split('.').map(Number) as [number, number, number]);
    const activeMajor = Number(this.active.slice(1).split('.')[0]);
    const made = change === 'major'
      ? `v${Math.max(...parsed.map((p) => p[0])) + 1}.0.0`
      : `v${activeMajor}.${Math.max(...parsed.filter((p) => p[0] === activeMajor).map((p) => p[1])) + 1}.0`;
    this.versions.push(made);
    this.active = made;
    return made;
  }
}

describe('a Maestro client\'s version sequence', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ external: true, config: { healthInterval: 300 }, simulation: { pingIntervalMs: 300 } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  test(`create, minor, major, switch back to v1.0.0, minor, major: ${ROUNDS} rounds with Maestro's numbers, no request refused`, async () => {
    const create = { name: NAME, ...(schedulerObject(NAME, { roomsReplicas: 1, maxSurge: '1' }) as { spec: Record<string, unknown> }).spec };
    expect((await managementCall(stack, 'POST', '/schedulers', create)).status).toBe(200);
    const model = new VersionModel();
    const shown = async (version: string) => {
      let seen = 'nothing';
      try {
        return await waitFor(async () => {
          const answer = (await managementCall(stack, 'GET', `/schedulers/${NAME}`)).body as Partial<SchedulerAnswer> | undefined;
          seen = answer?.scheduler?.spec.version ?? JSON.stringify(answer).slice(0, 300);
          return answer?.scheduler?.spec.version === version ? answer.scheduler : undefined;
        }, { timeoutMs: 60_000, message: `GET /schedulers/${NAME} shows ${version}` });
      } catch (err) {
        // What the gateway showed, what the Scheduler's status says and what each operation did: a stall is read from these.
        const status = (await stack.api.getScheduler(NAME)).status;
        throw new Error(`${(err as Error).message} (it showed ${seen})\nstatus: ${JSON.stringify(status)}\n${await describeScheduler(stack, NAME)}`, { cause: err });
      }
    };
    let current = await shown('v1.0.0');
    let step = 0;
    const change = async (kind: 'minor' | 'major') => {
      step++;
      const { name: _n, state: _s, createdAt: _c, spec, ...rest } = current;
      const body = kind === 'minor'
        ? { ...rest, spec: { ...spec, version: undefined }, maxSurge: String(step + 1) }
        : { ...rest, spec: { ...spec, version: undefined, containers: spec.containers.map((c) => ({ ...c, image: `example.com/game:${step}.0.0` })) } };
      const res = await managementCall(stack, 'POST', `/schedulers/${NAME}`, body);
      const answer: unknown = res.body;
      expect({ step, kind, status: res.status, body: answer }).toEqual({ step, kind, status: 200, body: { operationId: expect.any(String) as unknown } });
      current = await shown(model.next(kind));
    };
    for (let round = 1; round <= ROUNDS; round++) {
      await change('minor');
      await change('major');
      const switched = await managementCall(stack, 'PUT', `/schedulers/${NAME}`, { version: 'v1.0.0' });
      expect({ round, status: switched.status }).toEqual({ round, status: 200 });
      model.active = 'v1.0.0';
      current = await shown('v1.0.0');
      await change('minor');
      await change('major');
    }
    const listed = await managementCall(stack, 'GET', `/schedulers/${NAME}/versions`);
    expect((listed.body as VersionsAnswer).versions.map((v) => v.version).sort()).toEqual([...model.versions].sort());
    // The rollouts the switches started end with every room on the last major.
    await waitFor(async () => {
      const st = (await stack.api.getScheduler(NAME)).status;
      return st?.rooms?.current === 1 && st.rooms.updated === 1 && st.state === 'in-sync';
    }, { timeoutMs: 60_000, message: 'the last rollout complete' });
  }, ROUNDS * 60_000);
});
