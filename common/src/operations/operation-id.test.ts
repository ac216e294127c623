import { deterministicOperationId, newOperationId, timeOrderedIdGenerator } from './operation-id';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('operation ids', () => {
  test('a new id is a UUIDv7 whose first 48 bits are the time it was made', () => {
    const at = Date.parse('2026-11-25T12:00:00.123Z');
    const id = timeOrderedIdGenerator()(at);
    expect(id).toMatch(UUID);
    expect(id[14]).toBe('7');
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(at);
  });

  test('ids made later sort later (kubectl get rkop lists by name), within one millisecond too', () => {
    const next = timeOrderedIdGenerator();
    const start = Date.parse('2026-11-25T12:00:00Z');
    // Several per millisecond, milliseconds apart, and a clock that stepped back once.
    const times = [start, start, start, start + 1, start + 1, start + 250, start + 100, start + 251, start + 86_400_000];
    const ids = times.map((t) => next(t));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test('more than 4096 ids in one millisecond still sort in order', () => {
    const next = timeOrderedIdGenerator();
    const ids = Array.from({ length: 5000 }, () => next(1_000));
    expect([...ids].sort()).toEqual(ids);
  });

  test('the shared generator: ids made later sort later', async () => {
    const first = newOperationId();
    await new Promise((r) => setTimeout(r, 2));
    const second = newOperationId();
    expect(first < second).toBe(true);
    expect(second).toMatch(UUID);
  });

  test('deterministic ids stay as they were (UUIDv5 layout, same key same id)', () => {
    const id = deterministicOperationId('uid-1/delete_scheduler');
    expect(id).toMatch(UUID);
    expect(id[14]).toBe('5');
    expect(deterministicOperationId('uid-1/delete_scheduler')).toBe(id);
  });
});
