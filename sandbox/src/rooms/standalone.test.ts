/**
 * The standalone simulated room (the Dockerfile.simroom entry point) as a real process: it pings
 * a recording rooms API through @roomkeeper/sdk, follows its script, and on SIGTERM reports
 * terminating, then terminated, then exits by itself with code 0.
 */
import { runStandaloneRoom as run } from '../../../test/support/standalone-room';
import { startPingRecorder, type PingRecorder } from './testing/ping-recorder';

async function until(cond: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('standalone simulated room', () => {
  let recorder: PingRecorder;
  beforeAll(async () => { recorder = await startPingRecorder(); });
  afterAll(async () => { await recorder.close(); });

  test('pings its script through the SDK with its token, and on SIGTERM reports terminating then terminated and exits 0', async () => {
    const proc = run({
      ROOMKEEPER_SCHEDULER_NAME: 'arena', ROOMKEEPER_ROOM_ID: 'arena-s1', ROOMKEEPER_ROOMS_API_URL: recorder.url,
      ROOMKEEPER_ROOM_TOKEN: 'tok-1', ROOMKEEPER_PING_INTERVAL: '200', ROOMKEEPER_SIM_ROOM: 'occupied-after:0.5',
    });
    try {
      const statuses = (): unknown[] => recorder.pingsFor('arena', 'arena-s1').map((p) => (p.body as { status: unknown }).status);
      await until(() => statuses().filter((s) => s === 'occupied').length >= 2, 'two occupied pings');
      expect(statuses()[0]).toBe('ready');
      expect(recorder.pingsFor('arena', 'arena-s1').every((p) => p.authorization === 'Bearer tok-1')).toBe(true);
      proc.child.kill('SIGTERM');
      expect(await proc.exited).toBe(0);
      const all = statuses();
      expect(all.slice(-2)).toEqual(['terminating', 'terminated']);
      expect(all.slice(0, -2).every((s) => s === 'ready' || s === 'occupied')).toBe(true);
      expect(proc.output()).toContain('"message":"game room stopped"');
      expect(proc.output()).toContain('"terminatedAcknowledged":true');
    } finally {
      proc.child.kill('SIGKILL');
    }
  });

  test('without the operator\'s environment it says what is missing and exits 2', async () => {
    const proc = run({ ROOMKEEPER_ROOM_ID: 'x' });
    expect(await proc.exited).toBe(2);
    expect(proc.output()).toContain('missing environment variables: ROOMKEEPER_SCHEDULER_NAME (or MAESTRO_SCHEDULER_NAME), ROOMKEEPER_ROOMS_API_URL');
  });
});
