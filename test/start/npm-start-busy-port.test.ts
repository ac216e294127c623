/**
 * `npm start` with a busy port names the port's role and the variable that moves it, for each of
 * its listeners: the management API, the rooms API, the operator's health/metrics port and the
 * sandbox's Kubernetes API.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { sandboxStartEnv, spawnNpmStart } from '../support/npm-start';
import { waitFor } from '../support/wait';

/** A port held by this test on every interface, as another program would hold it. */
async function holdPort(): Promise<net.Server> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, () => resolve());
  });
  return server;
}

const cases: [string, string][] = [
  ['ROOMKEEPER_GATEWAY_PORT', 'management API'],
  ['ROOMKEEPER_ROOMS_PORT', 'rooms API'],
  ['ROOMKEEPER_OPERATOR_PORT', 'operator (health and metrics)'],
  ['ROOMKEEPER_SANDBOX_PORT', 'sandbox Kubernetes API'],
];

test.each(cases)('a busy %s: npm start says which port and which variable moves it', async (variable, role) => {
  const blocker = await holdPort();
  const port = (blocker.address() as net.AddressInfo).port;
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-busy-'));
  const start = spawnNpmStart(sandboxStartEnv(state, { ROOMKEEPER_SANDBOX_SNAPSHOT: '', ROOMKEEPER_SANDBOX_PORT: '0', [variable]: String(port) }));
  const child = start.child;
  const out = start.output;
  let code: number | null | undefined;
  child.once('exit', (c) => (code = c));
  try {
    await waitFor(() => code !== undefined, { timeoutMs: 60_000, message: `npm start exited; output so far:\n${out()}` });
  } finally {
    if (code === undefined) process.kill(-(child.pid as number), 'SIGKILL');
    blocker.close();
    fs.rmSync(state, { recursive: true, force: true });
  }
  expect(code).not.toBe(0);
  expect(out()).toContain(`roomkeeper failed to start: ${role} port ${port} is in use; set ${variable} to another port`);
  expect(out()).not.toContain('Roomkeeper is running.');
}, 90_000);
