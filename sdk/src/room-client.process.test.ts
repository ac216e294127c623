/**
 * The room client in a process of its own: a game server that awaits `ready()` while the rooms API
 * refuses connections (a gateway restart) stays alive until the rooms API answers, and then ends
 * by itself, as the SDK keeps no process alive once nothing awaits an acknowledgement.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';

const FIXTURE = path.join(__dirname, 'testing', 'await-ready.ts');

/** A port nothing listens on (one a server listened on and closed), to listen on later. */
async function freePort(): Promise<number> {
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

test('with the rooms API refusing connections, a pending ready() keeps the process alive until the API answers; then it ends by itself', async () => {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], {
    cwd: path.resolve(__dirname, '../..'),
    env: { ...process.env, ROOMS_API_URL: `http://127.0.0.1:${port}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const seen = (text: string): Promise<void> => new Promise((resolve) => {
    const check = (): void => { if (output.includes(text)) resolve(); };
    child.stdout.on('data', check);
    check();
  });
  child.stdout.on('data', (c: Buffer) => { output += c.toString(); });
  child.stderr.on('data', (c: Buffer) => { output += c.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}'));
  });
  try {
    // Several refused pings, and the process is still there to retry them.
    const outcome = await Promise.race([seen('pingFailed 5').then(() => 'retrying'), exited.then((code) => `exited with ${String(code)}: ${output}`)]);
    expect(outcome).toBe('retrying');
    expect(child.exitCode).toBeNull();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    expect(await exited).toBe(0);
    expect(output).toContain('ready acknowledged');
  } finally {
    child.kill('SIGKILL');
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
