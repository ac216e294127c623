import type { GameRoom, GameRoomStatus } from '../../../common/src/generated/resources';
import { countRooms } from './scheduler-queries';

function room(name: string, status: GameRoomStatus['status'], extra: Partial<GameRoom['metadata']> = {}): GameRoom {
  return { apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name, namespace: 's', ...extra }, spec: { scheduler: 's', version: 'v1.0.0' }, status: { status } };
}

describe('countRooms (GET /schedulers/info)', () => {
  it('counts an allocated room as occupied and a room being deleted as terminating, whatever its status says', () => {
    const rooms = [
      room('ready', 'ready'),
      room('allocated', 'allocated'),
      room('occupied', 'occupied'),
      room('deleting', 'ready', { deletionTimestamp: new Date('2026-01-01T00:00:00Z') }),
      room('unready', 'unready'),
    ];
    expect(countRooms(rooms)).toMatchObject({ ready: 1, occupied: 2, pending: 1, terminating: 1 });
  });
});
