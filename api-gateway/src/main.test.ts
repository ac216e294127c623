/**
 * The whole gateway in process against the sandbox API server: real listeners, real client,
 * real caches.
 */
import { loadConfig, type Config } from '../../common/src/config';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { PassThrough } from 'node:stream';
import { createLogger, silentLogger } from '../../common/src/logger';
import { makeKubeClients } from '../../common/src/kube/clients';
import { roomToken } from '../../common/src/rooms/room-token';
import { startSandbox, type Sandbox } from '../../sandbox/src/index';
import { waitFor } from '../../test/support/wait';
import { GatewayStartupError, startGateway, type RunningGateway } from './main';
import { decodePingDigest, pingDigestName } from '../../common/src/rooms/ping-digest';
import type { PingDigest } from '../../common/src/generated/resources';
import { validCreateBody } from './testing/fixtures';

jest.setTimeout(30_000);

const SECRET = 'main-test-room-secret';
const auth = `Basic ${Buffer.from('ops:pw-123').toString('base64')}`;

function config(overrides: Partial<Record<keyof Config, unknown>> = {}): Config {
  return loadConfig({}, { gatewayPort: 0, roomsPort: 0, authUsername: 'ops', authPassword: 'pw-123', roomTokenSecret: SECRET, pingFlushInterval: 60_000, shutdownTimeout: 2_000, ...overrides });
}

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ crdDirs: ['crds'] });
});
afterAll(async () => {
  await (sandbox as Sandbox | undefined)?.stop(); // undefined when beforeAll failed before assigning it
});

/**
 * The gateway as the chart runs it (api-gateway/src/main.ts in a process of its own) on the
 * sandbox, with these settings besides the credentials; its JSON lines as they come, until it
 * has listened. `stop()` kills it if still running and removes its kubeconfig.
 */
async function spawnGatewayProcess(podName: string, env: Record<string, string>) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${podName}-`));
  const kubeconfig = path.join(dir, 'kubeconfig');
  fs.writeFileSync(kubeconfig, sandbox.kubeConfig().exportConfig(), { mode: 0o600 });
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'main.ts')], {
    env: {
      PATH: process.env.PATH ?? '', KUBECONFIG: kubeconfig, ROOMKEEPER_GATEWAY_PORT: '0', ROOMKEEPER_ROOMS_PORT: '0', ROOMKEEPER_GATEWAY_OPS_PORT: '0', ROOMKEEPER_POD_NAME: podName,
      ROOMKEEPER_AUTH_USERNAME: 'ops', ROOMKEEPER_AUTH_PASSWORD: 'pw-123', ROOMKEEPER_ROOM_TOKEN_SECRET: SECRET, ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
    const parts = out.split('\n');
    out = parts.pop() ?? '';
    for (const line of parts.filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const listening = await waitFor(() => lines.find((l) => l.message === 'gateway listening'), { timeoutMs: 20_000, message: `the gateway process to listen (stderr: ${stderr})` });
    return { child, lines, exited, stop, managementUrl: String(listening.managementUrl), roomsUrl: String(listening.roomsUrl), opsUrl: String(listening.opsUrl) };
  } catch (err) {
    stop();
    throw err;
  }
}

/**
 * Holds `slots` idle connections to the listener at `url` (pushed to `held`, for the caller to
 * destroy), then asks /healthz on one more; resolves with what that one was answered ('' when the
 * listener closed it unanswered).
 */
async function healthzPastSlots(url: string, slots: number, held: net.Socket[]): Promise<string> {
  const port = Number(new URL(url).port);
  for (let i = 0; i < slots; i++) {
    const socket = net.connect(port, '127.0.0.1');
    held.push(socket);
    await new Promise((resolve) => socket.once('connect', resolve));
  }
  const extra = net.connect(port, '127.0.0.1');
  extra.on('error', () => undefined);
  const answered = new Promise<string>((resolve) => {
    const chunks: Buffer[] = [];
    extra.on('data', (d: Buffer) => chunks.push(d));
    extra.on('close', () => resolve(Buffer.concat(chunks).toString()));
  });
  extra.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
  return answered;
}

describe('startGateway', () => {
  it('refuses to start without management credentials', async () => {
    await expect(startGateway({ config: config({ authUsername: '', authPassword: '' }), kubeConfig: sandbox.kubeConfig(), logger: silentLogger(), host: '127.0.0.1' })).rejects.toBeInstanceOf(GatewayStartupError);
  });

  it('refuses to start with ping authentication on and no room token secret', async () => {
    await expect(startGateway({ config: config({ roomTokenSecret: '' }), kubeConfig: sandbox.kubeConfig(), logger: silentLogger(), host: '127.0.0.1' })).rejects.toThrow(/ROOM_TOKEN_SECRET/);
  });

  it('refuses to start on a port in use, naming the setting that moves it', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      await expect(startGateway({ config: config({ roomsPort: port }), kubeConfig: sandbox.kubeConfig(), logger: silentLogger(), host: '127.0.0.1' }))
        .rejects.toThrow(`rooms API port ${port} is in use; set ROOMKEEPER_ROOMS_PORT to another port`);
      await expect(startGateway({ config: config({ gatewayOpsPort: port }), kubeConfig: sandbox.kubeConfig(), logger: silentLogger(), host: '127.0.0.1', serveOps: true }))
        .rejects.toThrow(`health and metrics port ${port} is in use; set ROOMKEEPER_GATEWAY_OPS_PORT to another port`);
    } finally {
      taken.close();
    }
  });

  it('reads credentials from a Secret', async () => {
    const { core } = makeKubeClients(sandbox.kubeConfig(), { qps: 100, burst: 100 });
    await core.createNamespace({ body: { metadata: { name: 'roomkeeper-system' } } });
    await core.createNamespacedSecret({ namespace: 'roomkeeper-system', body: { metadata: { name: 'gw-auth' }, stringData: { username: 'from-secret', password: 'pw' }, data: { username: Buffer.from('from-secret').toString('base64'), password: Buffer.from('pw').toString('base64') } } });
    const gw = await startGateway({ config: config({ authUsername: '', authPassword: '', authSecretName: 'gw-auth' }), kubeConfig: sandbox.kubeConfig(), logger: silentLogger(), host: '127.0.0.1' });
    try {
      const ok = await fetch(`${gw.managementUrl}/schedulers`, { headers: { Authorization: `Basic ${Buffer.from('from-secret:pw').toString('base64')}` } });
      expect(ok.status).toBe(200);
      const wrong = await fetch(`${gw.managementUrl}/schedulers`, { headers: { Authorization: auth } });
      expect(wrong.status).toBe(401);
    } finally {
      await gw.stop();
    }
  });

  it('starts when its Secret cannot be read yet (the API server fails), answers the management API 503 saying why, and takes the Secret\'s credentials once it reads them; a Secret that does not exist stops the start, saying so', async () => {
    const { core } = makeKubeClients(sandbox.kubeConfig(), { qps: 100, burst: 100 });
    await core.createNamespace({ body: { metadata: { name: 'gw-late' } } }).catch(() => undefined);
    await core.createNamespacedSecret({ namespace: 'gw-late', body: { metadata: { name: 'gw-auth' }, data: { username: Buffer.from('late').toString('base64'), password: Buffer.from('pw').toString('base64') } } });
    const settings = config({ authUsername: '', authPassword: '', authSecretName: 'gw-auth', authSecretNamespace: 'gw-late' });
    sandbox.faults.set({ errorRate: 1, errorStatus: 500, match: { verb: 'get', resource: 'secrets' } });
    let gw: RunningGateway | undefined;
    try {
      gw = await startGateway({ config: settings, kubeConfig: sandbox.kubeConfig(), logger: silentLogger(), host: '127.0.0.1' });
      const late = `Basic ${Buffer.from('late:pw').toString('base64')}`;
      const before = await fetch(`${gw.managementUrl}/schedulers`, { headers: { Authorization: late } });
      expect(before.status).toBe(503);
      expect(((await before.json()) as { message: string }).message).toMatch(/^the management API's credentials are not known yet: Secret gw-late\/gw-auth could not be read: .*500.*; the gateway reads the Secret again every few seconds: try again shortly$/);
      sandbox.faults.clear();
      await waitFor(async () => (await fetch(`${gw!.managementUrl}/schedulers`, { headers: { Authorization: late } })).status === 200, { timeoutMs: 15_000, message: 'the Secret read, its credentials taken' });
    } finally {
      sandbox.faults.clear();
      await gw?.stop();
    }
    await expect(startGateway({ config: config({ authUsername: '', authPassword: '', authSecretName: 'no-such', authSecretNamespace: 'gw-late' }), kubeConfig: sandbox.kubeConfig(), logger: silentLogger(), host: '127.0.0.1' }))
      .rejects.toThrow('no management API credentials: Secret gw-late/no-such does not exist: create it with keys username and password, or name an existing one in ROOMKEEPER_AUTH_SECRET_NAME and ROOMKEEPER_AUTH_SECRET_NAMESPACE (the chart\'s auth.existingSecret)');
  });

  it('/healthz answers 503 naming a cache whose watch has had no answer for longer than ROOMKEEPER_LIVENESS_CACHE_TIMEOUT, logged once; 200 once answered', async () => {
    const stream = new PassThrough();
    const lines: Record<string, unknown>[] = [];
    stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>)));
    const gw = await startGateway({ config: config({ livenessCacheTimeout: 1000 }), kubeConfig: sandbox.kubeConfig(), logger: createLogger('gateway', { stream, level: 'info' }), host: '127.0.0.1' });
    const healthz = async () => {
      const res = await fetch(`${gw.managementUrl}/healthz`);
      return { status: res.status, body: await res.json() as { status: string; failing?: { check: string; what: string; meaning: string; failingSince: string }[] } };
    };
    try {
      await waitFor(async () => (await fetch(`${gw.managementUrl}/readyz`)).status === 200, { message: 'the gateway is ready' });
      expect(await healthz()).toEqual({ status: 200, body: { status: 'ok', checks: [{ check: 'caches', ok: true, sees: 'no cache\'s list or watch request waits for an answer (whether they succeed is /readyz\'s to say)', timeoutSeconds: 1 }] } });
      // The rooms cache's next watch is answered after 6 s: longer than the 1 s the check allows.
      sandbox.faults.set({ latencyMs: 6000, match: { verb: 'watch', resource: 'gamerooms' } });
      sandbox.faults.cutWatches();
      const unhealthy = await waitFor(async () => {
        const answer = await healthz();
        return answer.status === 503 ? answer.body : undefined;
      }, { timeoutMs: 6000, intervalMs: 50, message: '/healthz answers 503' });
      sandbox.faults.clear();
      expect(unhealthy).toEqual({
        status: 'unhealthy',
        failing: [expect.objectContaining({ check: 'caches', what: expect.stringMatching(/^the gamerooms cache's watch request has had no answer since \d{4}-/) as unknown, meaning: expect.stringContaining('ROOMKEEPER_LIVENESS_CACHE_TIMEOUT') as unknown })],
        checks: [expect.objectContaining({ check: 'caches', ok: false })],
        whatToDo: expect.stringContaining('the kubelet restarts the container') as unknown,
      });
      // The rooms listener answers the same.
      expect((await fetch(`${gw.roomsUrl}/healthz`)).status).toBe(503);
      await waitFor(async () => (await healthz()).status === 200, { timeoutMs: 15_000, message: '/healthz answers 200 once the watch started' });
      expect(lines.filter((l) => String(l.message).startsWith('liveness check caches fails: the gamerooms cache')).map((l) => l.level)).toEqual(['warn']);
      expect(lines.filter((l) => l.message === 'liveness check caches passes again: /healthz answers 200')).toHaveLength(1);
    } finally {
      sandbox.faults.clear();
      await gw.stop();
    }
  });

  it('answers a request Node cannot parse with a JSON 400 in each API\'s error shape (the rooms API\'s with success: false)', async () => {
    const gw = await startGateway({ config: config(), kubeConfig: sandbox.kubeConfig(), logger: silentLogger(), host: '127.0.0.1' });
    const malformed = (url: string) => new Promise<string>((resolve) => {
      const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('error', () => undefined);
      socket.on('data', (d: Buffer) => chunks.push(d));
      socket.on('close', () => resolve(Buffer.concat(chunks).toString()));
      socket.write('PUT /scheduler/s/rooms/r/ping HTTP/1.1 extra\r\nHost: x\r\n\r\n');
    });
    const bodyOf = (answer: string): unknown => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    try {
      const message = expect.stringMatching(/^malformed HTTP request \(HPE_/) as unknown;
      const management = await malformed(gw.managementUrl);
      expect(management).toMatch(/^HTTP\/1\.1 400 /);
      expect(bodyOf(management)).toEqual({ code: 3, message, details: [] });
      const rooms = await malformed(gw.roomsUrl);
      expect(rooms).toMatch(/^HTTP\/1\.1 400 /);
      expect(bodyOf(rooms)).toEqual({ success: false, code: 3, message, details: [] });
    } finally {
      await gw.stop();
    }
  });

  it('warns loudly at start-up when ping authentication is off, and limits connections per listener', async () => {
    const stream = new PassThrough();
    const lines: Record<string, unknown>[] = [];
    stream.on('data', (c: Buffer) => {
      for (const line of c.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
    });
    const gw = await startGateway({ config: config({ pingAuth: false, roomTokenSecret: '', maxConnections: 2 }), kubeConfig: sandbox.kubeConfig(), logger: createLogger('gateway', { level: 'warn', stream }), host: '127.0.0.1' });
    const held: net.Socket[] = [];
    try {
      expect(lines).toContainEqual(expect.objectContaining({
        level: 'warn', component: 'gateway', setting: 'ROOMKEEPER_PING_AUTH=false', roomsUrl: gw.roomsUrl,
        message: expect.stringMatching(/^PING AUTHENTICATION IS OFF: anyone who can reach the rooms port can change the status of any room/) as unknown,
        remedy: expect.stringContaining('ROOMKEEPER_PING_AUTH=true') as unknown,
      }));
      // Its two slots held: a third connection is closed unanswered.
      expect(await healthzPastSlots(gw.roomsUrl, 2, held)).toBe('');
    } finally {
      for (const socket of held) socket.destroy();
      await gw.stop();
    }
  });

  it('answers its probes and scrapers on an operations port of its own (serveOps, as the chart runs it), whose slots a flood of the management API\'s connections does not take', async () => {
    const gw = await startGateway({ config: config({ gatewayOpsPort: 0, maxConnections: 2 }), kubeConfig: sandbox.kubeConfig(), logger: silentLogger(), host: '127.0.0.1', serveOps: true });
    const held: net.Socket[] = [];
    try {
      const opsUrl = gw.opsUrl ?? '';
      expect(opsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      await waitFor(async () => (await fetch(`${opsUrl}/readyz`)).status === 200, { timeoutMs: 10_000, message: 'the gateway ready on its operations port' });
      // Every slot of the management listener held, as a flood of idle connections holds them.
      expect(await healthzPastSlots(gw.managementUrl, 2, held)).toBe('');
      const health = await fetch(`${opsUrl}/healthz`);
      expect(health.status).toBe(200);
      const ready = await fetch(`${opsUrl}/readyz`);
      expect(await ready.json()).toMatchObject({ status: 'ready', checks: [{ check: 'shutdown', ready: true }, { check: 'api access', ready: true }, { check: 'caches', ready: true }, { check: 'management credentials', ready: true }, { check: 'api server', ready: true }] });
      expect(await (await fetch(`${opsUrl}/metrics`)).text()).toContain('roomkeeper_kube_api_request_duration_seconds_count{resource="schedulers",verb="list"}');
      // Only those: the operations port serves no API.
      expect((await fetch(`${opsUrl}/schedulers`, { headers: { Authorization: auth } })).status).toBe(404);
    } finally {
      for (const socket of held) socket.destroy();
      await gw.stop();
    }
    await expect(fetch(`${gw.opsUrl ?? ''}/healthz`)).rejects.toThrow();
  });

  it('drains before it stops: /readyz answers 503 (shutting down) while every request is still served and told to close its connection, then the listeners close', async () => {
    let endDrain: () => void = () => undefined;
    const drains: number[] = [];
    const drainWait = (ms: number) => new Promise<void>((resolve) => {
      drains.push(ms);
      endDrain = resolve;
    });
    const gw = await startGateway({ config: config(), kubeConfig: sandbox.kubeConfig(), logger: silentLogger(), host: '127.0.0.1', replicaId: 'gw-drain', drainWait });
    await waitFor(async () => (await fetch(`${gw.managementUrl}/readyz`)).status === 200, { timeoutMs: 10_000, message: 'the gateway ready' });
    const stopped = gw.stop({ drainMs: 5_000 });
    const notReady = await waitFor(async () => {
      const res = await fetch(`${gw.managementUrl}/readyz`);
      return res.status === 503 ? (await res.json()) as { status: string; reason: string } : undefined;
    }, { message: '/readyz to answer 503 once the drain began' });
    const shutdown = expect.stringMatching(/^shutting down: this replica got SIGTERM; it serves requests for 5000 ms more .*send new requests to another replica$/) as unknown;
    expect(notReady).toEqual({
      status: 'not ready', reason: shutdown,
      checks: [{ check: 'shutdown', ready: false, reason: shutdown }, { check: 'api access', ready: true }, { check: 'caches', ready: true }, { check: 'management credentials', ready: true }, { check: 'api server', ready: true }],
    });
    expect(drains).toEqual([5_000]);
    // Still served on both listeners, each answer closing its connection.
    const listed = await fetch(`${gw.managementUrl}/schedulers`, { headers: { Authorization: auth } });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('connection')).toBe('close');
    const health = await fetch(`${gw.roomsUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(health.headers.get('connection')).toBe('close');
    endDrain();
    await stopped;
    await expect(fetch(`${gw.managementUrl}/readyz`)).rejects.toThrow();
    await expect(fetch(`${gw.roomsUrl}/healthz`)).rejects.toThrow();
  });

  it('as a process: SIGTERM turns /readyz to 503 while requests are still answered for ROOMKEEPER_SHUTDOWN_DRAIN_DELAY, then the process closes its listeners and exits 0', async () => {
    // A drain long enough that a request sent after the 503 is seen is answered inside it on a loaded machine.
    const { child, lines, exited, stop, managementUrl, opsUrl } = await spawnGatewayProcess('gw-sigterm', { ROOMKEEPER_SHUTDOWN_DRAIN_DELAY: '6s', ROOMKEEPER_SHUTDOWN_TIMEOUT: '2s' });
    try {
      await waitFor(async () => (await fetch(`${managementUrl}/readyz`)).status === 200, { timeoutMs: 10_000, message: 'the gateway process ready' });
      child.kill('SIGTERM');
      const notReady = await waitFor(async () => {
        const res = await fetch(`${managementUrl}/readyz`);
        return res.status === 503 ? (await res.json()) as { reason: string } : undefined;
      }, { message: '/readyz to answer 503 after SIGTERM' });
      expect(notReady.reason).toMatch(/^shutting down: this replica got SIGTERM/);
      // The chart's probes read the operations port (the process opens it): it says the same.
      expect((await fetch(`${opsUrl}/readyz`)).status).toBe(503);
      expect((await fetch(`${managementUrl}/schedulers`, { headers: { Authorization: auth } })).status).toBe(200);
      expect(await Promise.race([exited, delay(30_000, 'still running 30 s after SIGTERM', { ref: false })])).toBe(0);
      await expect(fetch(`${managementUrl}/readyz`)).rejects.toThrow();
      await expect(fetch(`${opsUrl}/readyz`)).rejects.toThrow();
      const said = lines.map((l) => l.message);
      expect(said.indexOf('gateway draining: /readyz answers 503 while every request is still served, so endpoints and load balancers drop this replica before it stops accepting')).toBeGreaterThan(said.indexOf('shutting down'));
      expect(said.slice(-3)).toEqual(['gateway stopping', 'gateway stopped', 'stopped cleanly']);
    } finally {
      stop();
    }
  }, 90_000); // a child process under tsx: its start-up alone takes seconds on a loaded machine

  it('as a process: a SIGTERM whose stop hangs (the API server holds the last ping-digest write) exits 1 within the drain and the shutdown budget, saying so, before the pod\'s grace period ends in SIGKILL', async () => {
    const { core, custom } = makeKubeClients(sandbox.kubeConfig(), { qps: 100, burst: 100 });
    await core.createNamespace({ body: { metadata: { name: 'hang-ns' } } });
    await custom.createNamespacedCustomObject({ group: 'roomkeeper.io', version: 'v1', namespace: 'hang-ns', plural: 'gamerooms', body: { apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name: 'r1', namespace: 'hang-ns' }, spec: { scheduler: 'hang-ns', version: 'v1.0.0' } } });
    const { child, lines, exited, stop, roomsUrl } = await spawnGatewayProcess('gw-hang', { ROOMKEEPER_PING_FLUSH_INTERVAL: '10m', ROOMKEEPER_SHUTDOWN_DRAIN_DELAY: '1s', ROOMKEEPER_SHUTDOWN_TIMEOUT: '2s' });
    try {
      // A ping the gateway holds in memory until its next flush: at the latest, its stop.
      await waitFor(async () => {
        const res = await fetch(`${roomsUrl}/scheduler/hang-ns/rooms/r1/ping`, { method: 'PUT', headers: { Authorization: `Bearer ${roomToken(SECRET, 'hang-ns', 'r1')}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ status: 'ready', timestamp: 1 }) });
        return ((await res.json()) as { success?: boolean }).success;
      }, { timeoutMs: 10_000, message: 'a ping answered' });
      sandbox.faults.set({ latencyMs: 120_000, match: { resource: 'pingdigests' } });
      child.kill('SIGTERM');
      expect(await Promise.race([exited, delay(30_000, 'still running 30 s after SIGTERM', { ref: false })])).toBe(1);
      // Saying what was cut off: the last digest write, which the API server held.
      expect(lines).toContainEqual(expect.objectContaining({
        level: 'error', message: 'graceful shutdown timed out', timeoutMs: 3000,
        stopStep: 'writing the pending room status writes and the last ping digests, then closing the watches', pendingStatusWrites: 0,
      }));
    } finally {
      sandbox.faults.clear();
      stop();
    }
  }, 90_000); // a child process under tsx

  it('as a process: a start that fails says so in one JSON line (component, what failed) and exits 1', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'main.ts')], {
      env: { PATH: process.env.PATH ?? '', ROOMKEEPER_KUBE_QPS: 'fast' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(code).toBe(1);
    const lines = out.split('\n').filter(Boolean);
    expect(lines.map((l) => { try { return JSON.parse(l) as Record<string, unknown>; } catch { return l; } })).toEqual([
      expect.objectContaining({ level: 'error', component: 'gateway', message: 'failed to start', error: expect.stringContaining('ROOMKEEPER_KUBE_QPS: expected a number, got "fast"') as unknown }),
    ]);
  }, 60_000); // a child process under tsx

  describe('when the API server refuses the gateway a right', () => {
    let gw: RunningGateway;
    beforeAll(async () => {
      gw = await startGateway({ config: config(), kubeConfig: sandbox.kubeConfig(), logger: silentLogger(), host: '127.0.0.1', replicaId: 'gw-rbac' });
      await waitFor(async () => (await fetch(`${gw.managementUrl}/readyz`)).status === 200, { timeoutMs: 10_000 });
    });
    afterEach(() => sandbox.faults.clear());
    afterAll(async () => {
      await (gw as RunningGateway | undefined)?.stop();
    });
    const call = (method: string, urlPath: string, body?: unknown) => fetch(`${gw.managementUrl}${urlPath}`, {
      method, headers: { Authorization: auth, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body),
    });

    it('DELETE whose Scheduler delete is forbidden answers 500 saying the delete_scheduler operation was created and which right to restore', async () => {
      expect((await call('POST', '/schedulers', validCreateBody('rbac-delete'))).status).toBe(200);
      sandbox.faults.set({ errorRate: 1, errorStatus: 403, match: { verb: 'delete', resource: 'schedulers' } });
      const res = await call('DELETE', '/schedulers/rbac-delete');
      const body = (await res.json()) as { code: number; message: string; details: { reason: string; request: string; operationId: string }[] };
      expect(res.status).toBe(500);
      expect(body.code).toBe(13);
      expect(body.message).toContain("refused the gateway's own request to delete schedulers.roomkeeper.io (403 Forbidden");
      expect(body.message).toContain('delete_scheduler) was created and the operator carries it out');
      expect(body.message).toContain("restore the chart's RBAC for the gateway's ServiceAccount");
      // The deletion goes ahead: nothing to send again (a second DELETE would find no scheduler).
      expect(body.message).not.toContain('send the request again');
      expect(body.message).not.toContain('internal error');
      expect(body.details[0]).toMatchObject({ reason: 'GATEWAY_FORBIDDEN', request: 'delete schedulers.roomkeeper.io' });
      // What the answer says was created, was: the operator's delete_scheduler, which deletes the scheduler.
      sandbox.faults.clear();
      const op = await call('GET', `/schedulers/rbac-delete/operations/${body.details[0]?.operationId ?? ''}`);
      expect(op.status).toBe(200);
      expect(((await op.json()) as { operation: { definitionName: string } }).operation.definitionName).toBe('delete_scheduler');
    });

    it('a write forbidden at its only write answers 500 naming it and saying nothing was changed', async () => {
      expect((await call('POST', '/schedulers', validCreateBody('rbac-add'))).status).toBe(200);
      await waitFor(async () => (await call('GET', '/schedulers/rbac-add')).status === 200, { timeoutMs: 10_000 });
      const before = sandbox.faults.requests({ verb: 'create', resource: 'operations' });
      sandbox.faults.set({ errorRate: 1, errorStatus: 403, match: { verb: 'create', resource: 'operations' } });
      const res = await call('POST', '/schedulers/rbac-add/add-rooms', { amount: 1 });
      const body = (await res.json()) as { code: number; message: string };
      expect(res.status).toBe(500);
      expect(body.code).toBe(13);
      expect(body.message).toContain("refused the gateway's own request to create operations.roomkeeper.io (403 Forbidden");
      expect(body.message).toContain('the request was not carried out (no scheduler, operation or room was changed by it)');
      expect(body.message).toMatch(/, then send the request again$/);
      expect(sandbox.faults.requests({ verb: 'create', resource: 'operations' })).toBe(before + 1);
    });
  });

  describe('running', () => {
    let gw: RunningGateway;
    beforeAll(async () => {
      gw = await startGateway({ config: config(), kubeConfig: sandbox.kubeConfig(), logger: silentLogger(), host: '127.0.0.1', replicaId: 'gw-test' });
      await waitFor(async () => (await fetch(`${gw.managementUrl}/readyz`)).status === 200, { timeoutMs: 10_000 });
    });
    afterAll(async () => {
      await (gw as RunningGateway | undefined)?.stop(); // undefined when beforeAll failed before assigning it
    });

    it('creates a scheduler and its operation through HTTP', async () => {
      const res = await fetch(`${gw.managementUrl}/schedulers`, { method: 'POST', headers: { Authorization: auth, 'Content-Type': 'application/json' }, body: JSON.stringify(validCreateBody('main-sched')) });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { operationId: string; scheduler: { state: string } };
      expect(body.scheduler.state).toBe('creating');
      const op = await fetch(`${gw.managementUrl}/schedulers/main-sched/operations/${body.operationId}`, { headers: { Authorization: auth } });
      expect(op.status).toBe(200);
      expect(((await op.json()) as { operation: { definitionName: string } }).operation.definitionName).toBe('create_scheduler');
      await waitFor(async () => {
        const list = await fetch(`${gw.managementUrl}/schedulers/main-sched/operations?stage=pending`, { headers: { Authorization: auth } });
        return ((await list.json()) as { total: number }).total === 1;
      });
      const dup = await fetch(`${gw.managementUrl}/schedulers`, { method: 'POST', headers: { Authorization: auth, 'Content-Type': 'application/json' }, body: JSON.stringify(validCreateBody('main-sched')) });
      expect(dup.status).toBe(409);
    });

    it('records pings: a change goes to the GameRoom status, liveness to the digest on stop', async () => {
      const { core, custom } = makeKubeClients(sandbox.kubeConfig(), { qps: 100, burst: 100 });
      await core.createNamespace({ body: { metadata: { name: 'ping-ns' } } });
      await custom.createNamespacedCustomObject({ group: 'roomkeeper.io', version: 'v1', namespace: 'ping-ns', plural: 'gamerooms', body: { apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name: 'r1', namespace: 'ping-ns' }, spec: { scheduler: 'ping-ns', version: 'v1.0.0' } } });
      const ping = (status: string) => fetch(`${gw.roomsUrl}/scheduler/ping-ns/rooms/r1/ping`, { method: 'PUT', headers: { Authorization: `Bearer ${roomToken(SECRET, 'ping-ns', 'r1')}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ status, timestamp: 1 }) });
      await waitFor(async () => ((await (await ping('ready')).json()) as { success: boolean }).success, { timeoutMs: 10_000 });
      const room = (await custom.getNamespacedCustomObject({ group: 'roomkeeper.io', version: 'v1', namespace: 'ping-ns', plural: 'gamerooms', name: 'r1' })) as { status?: { pingStatus?: string } };
      expect(room.status?.pingStatus).toBe('ready');
      const unauth = await fetch(`${gw.roomsUrl}/scheduler/ping-ns/rooms/r1/ping`, { method: 'PUT', body: JSON.stringify({ status: 'ready' }) });
      expect(unauth.status).toBe(401);
      // Pings and events are small: the rooms API takes 16 KiB, the management API 1 MiB.
      const big = await fetch(`${gw.roomsUrl}/scheduler/ping-ns/rooms/r1/ping`, { method: 'PUT', headers: { Authorization: `Bearer ${roomToken(SECRET, 'ping-ns', 'r1')}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ status: 'ready', metadata: { pad: 'x'.repeat(16 * 1024) } }) });
      expect(big.status).toBe(413);
      const bigManagement = await fetch(`${gw.managementUrl}/schedulers`, { method: 'POST', headers: { Authorization: auth, 'Content-Type': 'application/json' }, body: JSON.stringify({ ...validCreateBody('big-body'), annotations: { pad: 'x'.repeat(16 * 1024) }, game: 7 }) });
      expect(bigManagement.status).toBe(400);

      await gw.stop();
      const digest = (await custom.getNamespacedCustomObject({ group: 'roomkeeper.io', version: 'v1', plural: 'pingdigests', namespace: 'ping-ns', name: pingDigestName('gw-test') })) as PingDigest;
      expect([...decodePingDigest(digest.status).keys()]).toEqual(['r1']);
    });
  });
});
