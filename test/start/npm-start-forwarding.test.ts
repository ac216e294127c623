/**
 * `npm start` forwards what the operator changes: a real gRPC receiver of the forwarder contract
 * hears an allocation (`SendRoomStatus` occupied, `roomStatus: allocated`) and a room removed by
 * id (`SendRoomStatus` terminated), as with the operator's own process (operator/src/main.ts).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startForwardReceiver, type ForwarderRequests, type ForwardReceiver, type PartialMessage } from '../../common/src/forwarding';
import { sandboxStartEnv, spawnNpmStart } from '../support/npm-start';
import { REPO_ROOT } from '../support/stack';
import { waitFor } from '../support/wait';

const statusName = (v: unknown): string => (typeof v === 'number' ? ['ready', 'occupied', 'terminating', 'terminated'][v] ?? String(v) : String(v));

test('npm start forwards the operator\'s status changes (an allocation, a room removed) to a real gRPC receiver', async () => {
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-start-fwd-'));
  const receiver: ForwardReceiver = await startForwardReceiver();
  const start = spawnNpmStart(sandboxStartEnv(state, { ROOMKEEPER_AUTH_USERNAME: 'admin', ROOMKEEPER_AUTH_PASSWORD: 'forward-test' }));
  const out = start.output;
  // Every field read as possibly absent: protobufjs gives a message field the sender left out as null.
  const statuses = (roomId: string, status: string) => (receiver.requestsOf('SendRoomStatus') as PartialMessage<ForwarderRequests['SendRoomStatus']>[])
    .filter((r) => r.room?.roomId === roomId && statusName(r.statusType) === status);
  try {
    const managementUrl = await waitFor(() => /Management API: (http:\/\/\S+)/.exec(out())?.[1], { timeoutMs: 60_000, message: `npm start printed its management URL; output so far:\n${out()}` });
    const call = async (method: string, route: string, body?: unknown): Promise<{ status: number; body: unknown }> => {
      const res = await fetch(`${managementUrl}${route}`, {
        method,
        headers: { authorization: `Basic ${Buffer.from('admin:forward-test').toString('base64')}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    };
    const scheduler = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'sandbox/examples/scheduler.json'), 'utf8')) as Record<string, unknown>;
    const forwarders = [{ name: 'matchmaker', enable: true, type: 'gRPC', address: receiver.address, options: { timeout: 2000, metadata: { roomType: 'arena' } } }];
    expect(await call('POST', '/schedulers', { ...scheduler, name: 'fwd-start', roomsReplicas: 1, forwarders })).toMatchObject({ status: 200 });

    const allocated = await waitFor(async () => {
      const res = await call('POST', '/scheduler/fwd-start/rooms/allocate', { allocationId: 'start-1' });
      return res.status === 200 ? res.body as { roomId: string } : undefined;
    }, { timeoutMs: 60_000, intervalMs: 250, message: `a room of fwd-start allocated; output so far:\n${out()}` });
    const taken = await waitFor(() => statuses(allocated.roomId, 'occupied')[0], { timeoutMs: 20_000, message: 'the allocation forwarded as occupied' });
    expect(taken.room?.metadata).toMatchObject({ roomStatus: 'allocated', allocationId: 'start-1', roomType: 'arena' });

    expect(await call('POST', '/schedulers/fwd-start/remove-rooms', { roomsIds: [allocated.roomId] })).toMatchObject({ status: 200 });
    const terminated = await waitFor(() => statuses(allocated.roomId, 'terminated')[0], { timeoutMs: 30_000, message: `the removed room forwarded as terminated; output so far:\n${out()}` });
    expect(terminated.room?.game).toBe('space-game');
  } finally {
    try {
      process.kill(-(start.child.pid as number), 'SIGINT');
    } catch {
      // the group has ended already
    }
    await start.exited;
    await receiver.stop();
  }
  await waitFor(() => out().includes('Stopped.'), { timeoutMs: 20_000, message: `clean stop; output:\n${out()}` });
  fs.rmSync(state, { recursive: true, force: true });
});
