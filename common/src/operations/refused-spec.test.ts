import type { Operation } from '../generated/resources';
import { nextAttemptId } from './attempts';
import { newVersionOperationId } from './operation-id';
import { withCountInForce, refusedSpec, refusedSpecBase } from './refused-spec';

describe('refusedSpec and withCountInForce', () => {
  it('calls a spec refused when its version change ended in error or canceled, not while it runs, once it finished, or when it got stuck', () => {
    expect([undefined, {}, { status: { status: 'pending' } }, { status: { status: 'finished' } }].map((op) => refusedSpec(op as Pick<Operation, 'status'>))).toEqual([false, false, false, false]);
    expect([{ status: { status: 'error' } }, { status: { status: 'canceled' } }].map((op) => refusedSpec(op as Pick<Operation, 'status'>))).toEqual([true, true]);
    expect(refusedSpec({ status: { status: 'error', conditions: [{ type: 'Stuck', status: 'True', reason: 'LeaseExpired', message: '', lastTransitionTime: '2026-12-05T12:00:00Z' }] } })).toBe(false);
  });

  it('builds on the active definition with the room count in force: the spec\'s roomsReplicas (also when the active one has none) and the active version\'s autoscaling (a refused one takes no effect)', () => {
    type Spec = { image: string; roomsReplicas?: number; autoscaling?: { enabled: boolean } };
    const active: Spec = { image: 'game:1', roomsReplicas: 3, autoscaling: { enabled: false } };
    expect(withCountInForce<Spec>(active, { image: 'game:broken', roomsReplicas: 7 })).toEqual({ image: 'game:1', roomsReplicas: 7, autoscaling: { enabled: false } });
    expect(withCountInForce<Spec>({ image: 'game:1' }, { image: 'game:broken', roomsReplicas: 2, autoscaling: { enabled: true } })).toEqual({ image: 'game:1', roomsReplicas: 2 });
  });
});

describe('refusedSpecBase', () => {
  type Spec = { image: string; roomsReplicas?: number };
  const scheduler = { metadata: { uid: 'uid-1', generation: 4 }, status: { version: 'v1.0.0' }, spec: { image: 'game:2', roomsReplicas: 5 } };
  const first = newVersionOperationId('uid-1', 4);
  const stuck: Pick<Operation, 'status'> = { status: { status: 'error', conditions: [{ type: 'Stuck', status: 'True', reason: 'LeaseExpired', message: 'lease expired', lastTransitionTime: '2026-12-05T12:00:00Z' }] } };
  const base = (ops: Record<string, Pick<Operation, 'status'>>, s: typeof scheduler & { status: { versionedGeneration?: number } } = scheduler) => refusedSpecBase<Spec>(s, {
    operation: (id) => ops[id],
    activeDefinition: () => Promise.resolve({ image: 'game:1', roomsReplicas: 3 }),
    differs: (a, b) => a.image !== b.image,
  });

  it('builds on the active version after a refusal, and on the spec while the change has no verdict: a stuck attempt is none (its operator stopped, or lost the API server), its successor decides', async () => {
    expect(await base({ [first]: { status: { status: 'error' } } })).toEqual({ definition: { image: 'game:1', roomsReplicas: 5 }, version: 'v1.0.0', lastAttempt: first, how: 'failed' });
    expect(await base({ [first]: stuck })).toBeUndefined();
    expect(await base({ [first]: stuck, [nextAttemptId(first)]: { status: { status: 'pending' } } })).toBeUndefined();
    expect(await base({ [first]: stuck, [nextAttemptId(first)]: { status: { status: 'finished' } } })).toBeUndefined();
    expect(await base({ [first]: stuck, [nextAttemptId(first)]: { status: { status: 'canceled' } } })).toEqual({ definition: { image: 'game:1', roomsReplicas: 5 }, version: 'v1.0.0', lastAttempt: nextAttemptId(first), how: 'was canceled' });
    expect(await base({})).toBeUndefined();
    // The same change sent again after a refusal is the refused attempt's successor: it decides.
    expect(await base({ [first]: { status: { status: 'canceled' } }, [nextAttemptId(first)]: { status: { status: 'in_progress' } } })).toBeUndefined();
  });

  it('counts a versioned generation whose operation is gone (deleted while it ran, as a cancel; or pruned) as refused when the spec holds what the active version does not', async () => {
    const versioned = { ...scheduler, status: { version: 'v1.0.0', versionedGeneration: 4 } };
    expect(await base({}, versioned)).toEqual({ definition: { image: 'game:1', roomsReplicas: 5 }, version: 'v1.0.0', lastAttempt: first, how: 'was deleted while it ran' });
    expect(await base({ [nextAttemptId(first)]: { status: { status: 'finished' } } }, versioned)).toBeUndefined();
    // The spec is what runs (a switch, an add_rooms, a create): nothing refused.
    expect(await base({}, { ...versioned, spec: { image: 'game:1', roomsReplicas: 5 } })).toBeUndefined();
    // Not versioned yet: its operation is still to be enqueued.
    expect(await base({}, { ...versioned, status: { version: 'v1.0.0', versionedGeneration: 3 } })).toBeUndefined();
    // A stuck attempt whose successor is still to come is no verdict, versioned or not.
    expect(await base({ [first]: stuck }, versioned)).toBeUndefined();
  });

  it('counts a change whose version was made but whose switch to it was canceled, failed or is gone as refused, while the spec holds what the active version does not: the next change builds on what runs', async () => {
    const made = (switchId: string): Pick<Operation, 'status'> => ({ status: { status: 'finished', executionHistory: [
      { createdAt: '2026-12-05T12:00:00Z', event: 'Created version v2.0.0' },
      { createdAt: '2026-12-05T12:00:00Z', event: `enqueued switch active version operation with id: ${switchId}` },
    ] } });
    const built = { definition: { image: 'game:1', roomsReplicas: 5 }, version: 'v1.0.0', lastAttempt: first };
    expect(await base({ [first]: made('sw'), sw: { status: { status: 'canceled' } } })).toEqual({ ...built, how: 'made a version whose switch, operation sw, was canceled' });
    expect(await base({ [first]: made('sw'), sw: { status: { status: 'error' } } })).toEqual({ ...built, how: 'made a version whose switch, operation sw, failed' });
    expect(await base({ [first]: made('sw') })).toEqual({ ...built, how: 'made a version whose switch, operation sw, is gone' });
    // The switch is to run, ran, or is stuck (another attempt follows): no verdict.
    for (const status of ['pending', 'in_progress', 'finished'] as const) expect(await base({ [first]: made('sw'), sw: { status: { status } } })).toBeUndefined();
    expect(await base({ [first]: made('sw'), sw: stuck })).toBeUndefined();
    // Switched to since (a PUT of the version writes its definition into the spec): nothing refused.
    expect(await base({ [first]: made('sw'), sw: { status: { status: 'canceled' } } }, { ...scheduler, spec: { image: 'game:1', roomsReplicas: 5 } })).toBeUndefined();
    // A finished version operation that enqueued no switch (none said): no verdict either.
    expect(await base({ [first]: { status: { status: 'finished' } } })).toBeUndefined();
  });
});
