import { deletedOperationNote, deletedPendingNote, deletedStuckNote } from './deleted-operation';

describe('the account of an operation deleted while it ran', () => {
  test.each([
    ['canceled', ['roomsReplicas changed from 2 to 102', 'Room creation stopped by the deletion of the operation: 7/100 rooms created (the 4 requests in flight completed)', 'Starting operation rollback', 'roomsReplicas restored to 2', 'Deleted the 7 rooms created by this operation', 'Operation rollback flow execution finished with success'],
      'Operation op-1 (add_rooms) was deleted while it ran (by kubectl or another client, not by Roomkeeper); it stopped after 1.2s as a cancel does. Its history went with it; it recorded: roomsReplicas changed from 2 to 102; Room creation stopped by the deletion of the operation: 7/100 rooms created (the 4 requests in flight completed); Starting operation rollback; roomsReplicas restored to 2; Deleted the 7 rooms created by this operation; Operation rollback flow execution finished with success.'],
    ['error', ['Operation execution failed: boom'], 'Operation op-1 (add_rooms) was deleted while it ran (by kubectl or another client, not by Roomkeeper); it ended in error after 1.2s. Its history went with it; it recorded: Operation execution failed: boom.'],
    ['finished', [], 'Operation op-1 (add_rooms) was deleted while it ran (by kubectl or another client, not by Roomkeeper); it had done its work and ended after 1.2s. Its history went with it; it recorded nothing.'],
  ] as const)('%s', (result, lines, note) => {
    expect(deletedOperationNote('op-1', 'add_rooms', 'after 1.2s', result, lines, 's')).toBe(note);
  });

  test('a long account keeps its first line and as many of its last as fit', () => {
    const lines = ['first', ...Array.from({ length: 100 }, (_, i) => `Created ${i + 1}/100 rooms`), 'roomsReplicas restored to 2', 'last'];
    const note = deletedOperationNote('op-1', 'add_rooms', 'after 1.2s', 'canceled', lines, 's', 300);
    expect(note.length).toBeLessThanOrEqual(300);
    expect(note).toMatch(/it recorded: first; \(\d+ more\); .*roomsReplicas restored to 2; last\.$/);
  });

  test('an operation the scheduler controller enqueues from the Scheduler (its creation, its deletion) is said to be enqueued again, with how to stop it', () => {
    const lines = ['first', ...Array.from({ length: 100 }, (_, i) => `Created ${i + 1}/100 rooms`), 'Starting operation rollback'];
    const note = deletedOperationNote('op-1', 'create_scheduler', 'after 0.8s', 'canceled', lines, 'arena', 500);
    // Cut to fit with the sentence kept whole.
    expect(note.length).toBeLessThanOrEqual(500);
    expect(note).toMatch(/; Starting operation rollback\. Scheduler arena still has no version, so the scheduler controller enqueues its creation again; to stop it, delete the scheduler \(DELETE \/schedulers\/arena, or kubectl delete rks arena\)\.$/);
    expect(deletedOperationNote('op-1', 'create_scheduler', 'after 0.8s', 'finished', [], 'arena')).not.toContain('again');
    expect(deletedPendingNote('op-2', 'delete_scheduler', '2026-12-05T12:00:00Z', 'arena')).toBe('Operation op-2 (delete_scheduler) was deleted before it started (by kubectl or another client, not by Roomkeeper); it did nothing. It had waited in the scheduler\'s queue since 2026-12-05T12:00:00Z. Scheduler arena stays marked for deletion, so the scheduler controller enqueues its deletion again.');
    expect(deletedPendingNote('op-3', 'add_rooms', '2026-12-05T12:00:00Z', 'arena')).toContain('it did nothing and will not run.');
  });

  test('one deleted after its operator had stopped running it: why it stopped, what it wrote and what was undone, then what follows', () => {
    const note = deletedStuckNote('op-4', 'add_rooms', 'its lease expired at 2026-12-06T05:00:00.000Z, holder op-a', ['roomsReplicas changed from 2 to 302', 'roomsReplicas restored to 2, as the operation\'s deletion asked; the health check removes the rooms above it, never one with players'], 'The health check brings the rooms to the desired count.');
    expect(note).toBe('Operation op-4 (add_rooms) was deleted (by kubectl or another client, not by Roomkeeper) after its operator had stopped running it (its lease expired at 2026-12-06T05:00:00.000Z, holder op-a); it ended as a cancel does, as far as its written history allows. '
      + 'Its history went with it; it recorded: roomsReplicas changed from 2 to 302; roomsReplicas restored to 2, as the operation\'s deletion asked; the health check removes the rooms above it, never one with players. The health check brings the rooms to the desired count.');
    expect(deletedStuckNote('op-4', 'switch_active_version', 'crashed', [], '')).toMatch(/\(crashed\); it ended as a cancel does, as far as its written history allows\. Its history went with it; it recorded nothing\.$/);
  });
});
