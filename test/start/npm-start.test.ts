/**
 * `npm start` with no cluster configured: the sandbox comes up, a kubeconfig is written and its
 * path printed, the real kubectl works with it, a pause of the process is told when it runs again, and
 * Ctrl-C stops everything cleanly, also when it
 * finds the process busy (on a loaded machine the event loop can be blocked for a moment; a signal
 * relay such as the `tsx` command's kills its child outright when the child does not acknowledge
 * the signal within 60 ms: the stop did not run or did not finish, and simulated nodes stayed
 * behind on a cluster).
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { PAUSE_MS } from '../../common/src/runtime/pauses';
import { sandboxStartEnv, spawnNpmStart } from '../support/npm-start';
import { toolPath } from '../support/tools';
import { waitFor } from '../support/wait';

const run = promisify(execFile);

/** The process of `group` whose command line runs `script` and that started no other such process. */
function processRunning(group: number, script: string): number {
  const procs = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)).flatMap((d) => {
    try {
      // /proc/<pid>/stat: "pid (comm) state ppid pgrp ..."; comm may hold spaces, so split after it.
      const fields = fs.readFileSync(`/proc/${d}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
      return [{ pid: Number(d), ppid: Number(fields[1]), pgrp: Number(fields[2]), cmd: fs.readFileSync(`/proc/${d}/cmdline`, 'utf8') }];
    } catch {
      return []; // ended while being read
    }
  }).filter((p) => p.pgrp === group && p.cmd.includes(script));
  const innermost = procs.filter((p) => !procs.some((c) => c.ppid === p.pid));
  expect(innermost).toHaveLength(1);
  return (innermost[0] as { pid: number }).pid;
}

function processState(pid: number): string | undefined {
  try {
    return /^State:\s+(\S)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  } catch {
    return undefined;
  }
}

test('npm start prints a kubeconfig path that kubectl can use, and stops cleanly on a Ctrl-C that finds it busy', async () => {
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-start-'));
  const start = spawnNpmStart(sandboxStartEnv(state));
  const child = start.child;
  try {
    const kubeconfig = await waitFor(() => /kubeconfig: (\S+)/.exec(start.output())?.[1], { timeoutMs: 60_000, message: `npm start printed its kubeconfig; output so far:\n${start.output()}` });
    expect(kubeconfig).toBe(path.join(state, 'kubeconfig'));
    expect(start.output()).toMatch(/Management API: http:\/\/127\.0\.0\.1:\d+/);
    expect(start.output()).toMatch(/Rooms API: +http:\/\/127\.0\.0\.1:\d+/);
    const { stdout } = await run(toolPath('kubectl'), ['--kubeconfig', kubeconfig, 'get', 'ns'], { timeout: 30_000 });
    expect(stdout).toMatch(/^default\s+Active/m);
    const crds = await run(toolPath('kubectl'), ['--kubeconfig', kubeconfig, 'get', 'crd'], { timeout: 30_000 });
    expect(crds.stdout).toContain('schedulers.roomkeeper.io');
    // Paused (a frozen node, a SIGSTOP) for longer than PAUSE_MS, it says so when it runs again:
    // what fails right after is told as the pause's, not the API server's (pauses.ts).
    const launcher = processRunning(child.pid as number, 'launcher/start.ts');
    process.kill(launcher, 'SIGSTOP');
    await waitFor(() => processState(launcher) === 'T', { timeoutMs: 5_000, message: 'npm start paused' });
    await new Promise((resolve) => setTimeout(resolve, PAUSE_MS + 1_500)); // the pause under test, not a wait for a state
    process.kill(launcher, 'SIGCONT');
    const paused = await waitFor(() => start.output().split('\n').find((l) => l.includes('this process did not run for a while')), { timeoutMs: 20_000, message: `the pause told; output:\n${start.output()}` });
    expect((JSON.parse(paused) as { pausedForMs: number }).pausedForMs).toBeGreaterThan(PAUSE_MS);
    // Ctrl-C while Roomkeeper cannot answer at once: stopped (SIGSTOP) it stands for a blocked
    // event loop, held far longer than a relay's 60 ms; then it runs again and must stop cleanly.
    process.kill(launcher, 'SIGSTOP');
    await waitFor(() => processState(launcher) === 'T', { timeoutMs: 5_000, message: 'npm start held' });
    process.kill(-(child.pid as number), 'SIGINT');
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // the hold under test (a process that cannot answer), not a wait for a state
    expect(processState(launcher)).toBe('T'); // still there: nothing killed it while the Ctrl-C waited
    process.kill(launcher, 'SIGCONT');
  } finally {
    for (const signal of ['SIGINT', 'SIGCONT'] as const) { // SIGCONT: in case the test failed while it was held
      try {
        process.kill(-(child.pid as number), signal);
      } catch {
        // the group has ended already
      }
    }
  }
  await start.exited;
  // npm itself ends by the signal, as it does at a terminal; what matters is that Roomkeeper
  // shut down cleanly (it prints this last, after saving its state).
  await waitFor(() => start.output().includes('Stopped.'), { timeoutMs: 20_000, message: `clean stop; output:\n${start.output()}` });
  expect(start.output()).not.toMatch(/failed to start/);
  fs.rmSync(state, { recursive: true, force: true });
});

test('npm start stops cleanly on a SIGTERM sent to npm\'s process alone, as a supervisor sends it (the shell between npm and Roomkeeper ended and left it running)', async () => {
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-start-'));
  const start = spawnNpmStart(sandboxStartEnv(state));
  const child = start.child;
  try {
    await waitFor(() => /kubeconfig: (\S+)/.exec(start.output())?.[1], { timeoutMs: 60_000, message: `npm start printed its kubeconfig; output so far:\n${start.output()}` });
    const launcher = processRunning(child.pid as number, 'launcher/start.ts');
    process.kill(child.pid as number, 'SIGTERM');
    await waitFor(() => start.output().includes('Stopped.'), { timeoutMs: 20_000, message: `clean stop; output:\n${start.output()}` });
    await waitFor(() => (processState(launcher) === undefined ? true : undefined), { timeoutMs: 10_000, message: `Roomkeeper's process ${launcher} ended` });
  } finally {
    try {
      process.kill(-(child.pid as number), 'SIGINT');
    } catch {
      // the group has ended already
    }
  }
  await start.exited;
  fs.rmSync(state, { recursive: true, force: true });
});
