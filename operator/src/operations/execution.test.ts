import type { Operation } from '../../../common/src/generated/resources';
import { silentLogger } from '../../../common/src/logger';
import type { OperatorDeps } from '../deps';
import { ExecutionContext } from './execution';

/** An API whose status writes are held until the test lets each go, recording every body sent. */
function heldWrites() {
  const sent: Array<{ status?: { status?: string; executionHistory?: Array<{ event: string }> } }> = [];
  const waiting: Array<() => void> = [];
  const api = {
    patchOperationStatus: async (_name: string, body: (typeof sent)[number]) => {
      sent.push(JSON.parse(JSON.stringify(body)) as (typeof sent)[number]);
      await new Promise<void>((release) => waiting.push(release));
      return op;
    },
  };
  const op = { metadata: { name: 'op-1' }, spec: { schedulerName: 's', definitionName: 'add_rooms' }, status: { status: 'in_progress' } } as unknown as Operation;
  const deps = { api, now: () => Date.now() } as unknown as OperatorDeps;
  return { op, deps, sent, waiting };
}

describe('an execution\'s status writes', () => {
  beforeEach(() => { jest.useFakeTimers(); });
  afterEach(() => { jest.useRealTimers(); });

  it('never carry its end line with an earlier status: a write queued before the end sends the history as it was then', async () => {
    const w = heldWrites();
    const ctx = new ExecutionContext(w.op, w.deps, silentLogger(), 30_000, () => undefined);
    ctx.event('Added 1 room');
    await jest.advanceTimersByTimeAsync(300); // the first flush is sent, and held
    ctx.event('Added 2 rooms');
    await jest.advanceTimersByTimeAsync(300); // the second waits behind it
    expect(w.sent).toHaveLength(1);
    const finishing = ctx.finish('finished', 'Operation finished');
    while (w.sent.length < 3) {
      w.waiting.shift()?.();
      await jest.advanceTimersByTimeAsync(1);
    }
    w.waiting.shift()?.();
    await finishing;
    const lines = w.sent.map((b) => ({ status: b.status?.status, last: b.status?.executionHistory?.at(-1)?.event }));
    expect(lines).toEqual([
      { status: undefined, last: 'Added 1 room' },
      { status: undefined, last: 'Added 2 rooms' },
      { status: 'finished', last: 'Operation finished' },
    ]);
  });
});
