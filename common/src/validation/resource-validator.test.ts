import { validateResource } from './resource-validator';

const definition = { game: 'g', maxSurge: 1, portRange: { start: 1000, end: 2000 }, spec: { terminationGracePeriod: '10s', containers: [{ name: 'c', image: 'i' }] } };

describe('validateResource', () => {
  it('accepts a Scheduler and prunes unknown fields outside metadata', () => {
    const r = validateResource('Scheduler', { apiVersion: 'roomkeeper.io/v1', kind: 'Scheduler', metadata: { name: 'my-game', labels: { a: 'b' } }, spec: { ...definition, state: 'x' } });
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.value).toMatchObject({ metadata: { name: 'my-game', labels: { a: 'b' } }, spec: { roomsReplicas: 0 } });
    if (r.ok) expect((r.value as { spec: object }).spec).not.toHaveProperty('state');
  });

  it('runs the Scheduler root rules and the definition rules with resource paths', () => {
    const r = validateResource('Scheduler', { metadata: { name: 'info' }, spec: { ...definition, portRange: { start: 5, end: 5 } } });
    expect(r).toEqual({
      ok: false,
      errors: [
        { field: '', message: "name must not be 'info' (reserved by GET /schedulers/info)" },
        { field: 'spec.portRange.start', message: 'start must be less than end' },
      ],
    });
  });

  it('runs the definition rules inside a SchedulerVersion, and its name rule', () => {
    const sv = { metadata: { name: 'my-game-v1.0.0' }, spec: { scheduler: 'my-game', version: 'v1.0.0', kind: 'initial', definition } };
    expect(validateResource('SchedulerVersion', sv).ok).toBe(true);
    const bad = { metadata: { name: 'other' }, spec: { ...sv.spec, version: '1.0', definition: { ...definition, maxSurge: '0' } } };
    const r = validateResource('SchedulerVersion', bad);
    expect(r.ok ? [] : r.errors).toEqual([
      { field: 'spec.version', message: 'must be a version such as "v1.2.0"' },
      { field: '', message: 'name must be <spec.scheduler>-<spec.version>' },
      { field: 'spec.definition.maxSurge', message: 'maxSurge must be an integer >= 1 or a percentage such as "10%"' },
    ]);
  });

  it('runs transition rules only on update', () => {
    const sv = { metadata: { name: 'my-game-v1.0.0' }, spec: { scheduler: 'my-game', version: 'v1.0.0', kind: 'initial', definition } };
    const edited = { ...sv, spec: { ...sv.spec, definition: { ...definition, game: 'other' } } };
    expect(validateResource('SchedulerVersion', edited).ok).toBe(true);
    expect(validateResource('SchedulerVersion', edited, sv)).toEqual({ ok: false, errors: [{ field: 'spec', message: 'a SchedulerVersion is immutable' }] });
    expect(validateResource('SchedulerVersion', { ...sv, status: { active: true } }, sv).ok).toBe(true);
  });

  it('stores an Operation with an unknown definition name, and keeps its identity fields immutable', () => {
    const op = { metadata: { name: 'op-1' }, spec: { schedulerName: 's', definitionName: 'made_up', enqueuedAt: '2026-01-01T00:00:00.000Z', input: { any: { thing: 1 } } } };
    const r = validateResource('Operation', op);
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.value).toMatchObject({ spec: { priority: false, cancelRequested: false, input: { any: { thing: 1 } } } });
    expect(validateResource('Operation', { ...op, spec: { ...op.spec, cancelRequested: true } }, op).ok).toBe(true);
    expect(validateResource('Operation', { ...op, spec: { ...op.spec, schedulerName: 't' } }, op)).toEqual({
      ok: false,
      errors: [{ field: 'spec', message: 'schedulerName, definitionName and enqueuedAt are immutable' }],
    });
    expect(validateResource('Operation', { ...op, spec: { ...op.spec, enqueuedAt: 'yesterday' } })).toEqual({
      ok: false,
      errors: [{ field: 'spec.enqueuedAt', message: 'must be an RFC 3339 date-time' }],
    });
  });

  it('validates GameRoom status values', () => {
    const room = { metadata: { name: 'r', namespace: 's' }, spec: { scheduler: 's', version: 'v1.0.0' }, status: { status: 'ready', ports: [{ name: 'p', port: 1 }] } };
    expect(validateResource('GameRoom', room).ok).toBe(true);
    const r = validateResource('GameRoom', { ...room, status: { status: 'happy' } });
    expect(r.ok ? [] : r.errors.map((e) => e.field)).toEqual(['status.status']);
  });
});
