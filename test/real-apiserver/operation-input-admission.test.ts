/**
 * The input rules of an Operation (crds/roomkeeper.io_operations.yaml) as a kubectl user meets
 * them: each Operation is sent with `kubectl create --dry-run=server` (admission runs in full,
 * nothing is stored) to kube-apiserver v1.28, which must refuse it with the message the rule
 * states, and to the sandbox, which must answer alike. The messages tell the cases apart as the
 * operator's parser does (common/src/operations/operation-inputs.ts): no amount nor ids, both,
 * an empty list of ids.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { realApiServer, reportNotRun } from '../support/real-apiserver';
import { CRD_DIR } from '../support/stack';
import { toolPath } from '../support/tools';
import { startSandbox, type Sandbox } from '../../sandbox/src/index';

const NEITHER = 'spec.input: Required value: remove_rooms takes either input.amount (how many rooms to remove, at least 1) or input.roomsIds (the rooms to remove): neither is given';
const BOTH = 'spec.input: Invalid value: "object": remove_rooms takes either input.amount (how many rooms to remove, at least 1) or input.roomsIds (the rooms to remove), not both: both are given';
const EMPTY = 'spec.input.roomsIds: Invalid value: "object": remove_rooms takes input.roomsIds as a non-empty list of room ids (the rooms to remove): the list is empty';

const run = promisify(execFile);

/**
 * `admitted`, or the causes kubectl prints after `is invalid: ` (one per rule broken, in its order).
 * Asynchronous: the sandbox answers from this process.
 */
async function createDryRun(kubeconfig: string, file: string, name: string, input: Record<string, unknown> | undefined): Promise<string | string[]> {
  const operation = {
    apiVersion: 'roomkeeper.io/v1', kind: 'Operation', metadata: { name },
    spec: { schedulerName: 'nobody', definitionName: 'remove_rooms', enqueuedAt: '2026-12-06T05:00:00.000Z', ...(input ? { input } : {}) },
  };
  fs.writeFileSync(file, JSON.stringify(operation));
  try {
    await run(toolPath('kubectl'), ['--kubeconfig', kubeconfig, 'create', '--dry-run=server', '-f', file], { timeout: 30_000 });
    return 'admitted';
  } catch (err) {
    const stderr = String((err as { stderr?: string }).stderr ?? err).trim();
    const invalid = /is invalid: (?:\[(.*)\]|(.*))$/s.exec(stderr);
    if (!invalid) return stderr;
    return invalid[1] !== undefined ? invalid[1].split(/, (?=spec\.)/) : [invalid[2] ?? ''];
  }
}

const CASES: Record<string, Record<string, unknown> | undefined> = {
  'no input': undefined,
  'input {}': {},
  'input {roomsIds: []}': { roomsIds: [] },
  'input {amount, roomsIds}': { amount: 2, roomsIds: ['room-a'] },
  'input {amount, roomsIds: []}': { amount: 2, roomsIds: [] },
  'input {amount}': { amount: 2 },
  'input {roomsIds: [one]}': { roomsIds: ['room-a'] },
};

describe('remove_rooms input at admission (kube-apiserver v1.28 and the sandbox)', () => {
  let sandbox: Sandbox | undefined;
  let dir: string | undefined;
  const kubeconfigs: { real?: string; sandbox?: string } = {};

  beforeAll(async () => {
    const plane = realApiServer();
    if (!plane) return;
    kubeconfigs.real = plane.adminKubeconfig;
    sandbox = await startSandbox({ crdDirs: [CRD_DIR] });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-op-admission-'));
    kubeconfigs.sandbox = path.join(dir, 'kubeconfig');
    fs.writeFileSync(kubeconfigs.sandbox, sandbox.kubeConfig().exportConfig(), { mode: 0o600 });
  });
  afterAll(async () => {
    await sandbox?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('an empty roomsIds, neither amount nor roomsIds, and both are refused, each with its own message naming the field; one of them is admitted', async () => {
    const { real, sandbox: onSandbox } = kubeconfigs;
    if (!real || !onSandbox) {
      expect(reportNotRun('remove_rooms input at admission')).toMatch(/NOT RUN/);
      return;
    }
    const answers = async (kubeconfig: string, target: string): Promise<Record<string, string | string[]>> => {
      const got: Record<string, string | string[]> = {};
      let i = 0;
      for (const [what, input] of Object.entries(CASES)) got[what] = await createDryRun(kubeconfig, path.join(dir ?? '', `op-${target}.json`), `rm-input-${target}-${i++}`, input);
      return got;
    };
    const onReal = await answers(real, 'r');
    expect(onReal).toEqual({
      'no input': [NEITHER],
      'input {}': [NEITHER],
      'input {roomsIds: []}': [EMPTY],
      'input {amount, roomsIds}': [BOTH],
      // One message, as the parser gives: two failed rules with a fieldPath would name the second
      // field wrongly on v1.28 (spec.input.input.roomsIds).
      'input {amount, roomsIds: []}': [BOTH],
      'input {amount}': 'admitted',
      'input {roomsIds: [one]}': 'admitted',
    });
    expect(await answers(onSandbox, 's')).toEqual(onReal);
  }, 120_000);
});
