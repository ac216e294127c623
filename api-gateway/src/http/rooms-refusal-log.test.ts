import { captureLogs } from '../../../test/support/log-capture';
import { waitFor } from '../../../test/support/wait';
import { RoomsRefusalLog, RoomsRefusalReason } from './rooms-refusal-log';

describe('RoomsRefusalLog', () => {
  it('counts a flood of made-up scheduler names apart up to a bound, the rest under (others), and names the ten most refused', async () => {
    const { logger, lines } = captureLogs('warn', 'gateway');
    let now = 0;
    const log = new RoomsRefusalLog({ logger, now: () => now, intervalMs: 60_000 });
    log.record({ reason: RoomsRefusalReason.InvalidToken, schedulerName: 'first', roomId: 'r' }); // said at once
    // A real scheduler's rooms, refused all along, then a flood of names; then the real ones again.
    for (let i = 0; i < 20; i++) log.record({ reason: RoomsRefusalReason.InvalidToken, schedulerName: 'busy', roomId: 'r' });
    for (let i = 0; i < 5_000; i++) log.record({ reason: RoomsRefusalReason.InvalidToken, schedulerName: `made-up-${i}`, roomId: 'r' });
    for (let i = 0; i < 10; i++) log.record({ reason: RoomsRefusalReason.InvalidToken, schedulerName: 'busy', roomId: 'r' });
    now = 60_000;
    log.flush();
    await waitFor(() => lines.length === 2, { message: 'two lines: the first refusal, then the flush' });
    const last = lines.at(-1) as { refused: number; schedulers: Record<string, number>; exampleRooms: string[] };
    expect(last.refused).toBe(5_030);
    expect(Object.keys(last.schedulers)).toHaveLength(11);
    expect(last.schedulers.busy).toBe(30);
    expect(Object.values(last.schedulers).reduce((a, b) => a + b, 0)).toBe(5_030);
    expect(last.exampleRooms).toHaveLength(5);
  });
});
