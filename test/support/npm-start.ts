/**
 * `npm start` as a child process, for the tests of what it starts: the environment of a run on
 * the embedded sandbox, and the child with everything it printed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { REPO_ROOT } from './stack';

/**
 * The environment of `npm start` on the embedded sandbox: no cluster configured (no KUBECONFIG,
 * not in a pod), state in `stateDir`, every listener on a free port; `extra` adds or overrides.
 */
export function sandboxStartEnv(stateDir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ROOMKEEPER_STATE_DIR: stateDir,
    ROOMKEEPER_GATEWAY_PORT: '0',
    ROOMKEEPER_ROOMS_PORT: '0',
    ROOMKEEPER_OPERATOR_PORT: '0',
    ...extra,
  };
  delete env.KUBECONFIG;
  delete env.E2E_KUBECONFIG;
  delete env.KUBERNETES_SERVICE_HOST;
  return env;
}

export interface NpmStart {
  child: ChildProcess;
  /** Everything printed so far, stdout and stderr interleaved. */
  output: () => string;
  /** Resolves when the child has exited, with its exit code (null when a signal ended it). */
  exited: Promise<number | null>;
}

/** Runs `npm start` in its own process group, so a test can send Ctrl-C to all of it as a terminal would. */
export function spawnNpmStart(env: NodeJS.ProcessEnv): NpmStart {
  const child = spawn('npm', ['start'], { cwd: REPO_ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}
