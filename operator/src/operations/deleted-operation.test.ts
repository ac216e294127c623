import { deletedOperationNote } from './deleted-operation';

describe('the account of an operation deleted while it ran', () => {
  test.each([
    ['canceled', ['roomsReplicas changed from 2 to 102', 'Room creation stopped by the deletion of the operation: 7/100 rooms created (the 4 requests in flight completed)', 'Starting operation rollback', 'roomsReplicas restored to 2', 'Deleted the 7 rooms created by this operation', 'Operation rollback flow execution finished with success'],
      'Operation op-1 (add_rooms) was deleted while it ran (by kubectl or another client, not by Roomkeeper); it stopped after 1.2s as a cancel does. Its history went with it; it recorded: roomsReplicas changed from 2 to 102; Room creation stopped by the deletion of the operation: 7/100 rooms created (the 4 requests in flight completed); Starting operation rollback; roomsReplicas restored to 2; Deleted the 7 rooms created by this operation; Operation rollback flow execution finished with success.'],
    ['error', ['Operation execution failed: boom'], 'Operation op-1 (add_rooms) was deleted while it ran (by kubectl or another client, not by Roomkeeper); it ended in error after 1.2s. Its history went with it; it recorded: Operation execution failed: boom.'],
    ['finished', [], 'Operation op-1 (add_rooms) was deleted while it ran (by kubectl or another client, not by Roomkeeper); it had done its work and ended after 1.2s. Its history went with it; it recorded nothing.'],
  ] as const)('%s', (result, lines, note) => {
    expect(deletedOperationNote('op-1', 'add_rooms', 'after 1.2s', result, lines)).toBe(note);
  });

  test('a long account keeps its first line and as many of its last as fit', () => {
    const lines = ['first', ...Array.from({ length: 100 }, (_, i) => `Created ${i + 1}/100 rooms`), 'roomsReplicas restored to 2', 'last'];
    const note = deletedOperationNote('op-1', 'add_rooms', 'after 1.2s', 'canceled', lines, 300);
    expect(note.length).toBeLessThanOrEqual(300);
    expect(note).toMatch(/it recorded: first; \(\d+ more\); .*roomsReplicas restored to 2; last\.$/);
  });
});
