import type { Operation } from '../generated/resources';
import { buildOperation, labelsToWrite, operationLabels } from './operation-factory';

const SCHEDULER = 'roomkeeper.io/scheduler';
const DEFINITION = 'roomkeeper.io/definition';
const MANAGED_BY = 'app.kubernetes.io/managed-by';

/** An Operation as a kubectl user writes it: the spec, and the labels given (none by default). */
function written(labels?: Record<string, string>, schedulerName = 'arena', definitionName = 'add_rooms'): Operation {
  return {
    apiVersion: 'roomkeeper.io/v1', kind: 'Operation', metadata: { name: 'mine', ...(labels ? { labels } : {}) },
    spec: { schedulerName, definitionName, enqueuedAt: '2026-12-03T09:00:00.000Z', input: { amount: 1 } },
  };
}

describe('labelsToWrite', () => {
  test.each<[string, Operation, Record<string, string | null> | undefined]>([
    ['written with kubectl, no labels: all three', written(), { [SCHEDULER]: 'arena', [DEFINITION]: 'add_rooms', [MANAGED_BY]: 'roomkeeper' }],
    ['a labels map without ours: all three, the others kept (a merge patch)', written({ team: 'blue' }), { [SCHEDULER]: 'arena', [DEFINITION]: 'add_rooms', [MANAGED_BY]: 'roomkeeper' }],
    ['a scheduler label naming another scheduler: set to the spec\'s', written({ [SCHEDULER]: 'other', [DEFINITION]: 'add_rooms', [MANAGED_BY]: 'roomkeeper' }), { [SCHEDULER]: 'arena' }],
    ['a definition label naming another definition: set to the spec\'s', written({ [SCHEDULER]: 'arena', [DEFINITION]: 'remove_rooms', [MANAGED_BY]: 'roomkeeper' }), { [DEFINITION]: 'add_rooms' }],
    ['another tool\'s managed-by is left', written({ [SCHEDULER]: 'arena', [DEFINITION]: 'add_rooms', [MANAGED_BY]: 'Helm' }), undefined],
    ['a definition name no label can hold: its label-safe form', written({}, 'arena', 'my op!'), { [SCHEDULER]: 'arena', [DEFINITION]: 'my_op', [MANAGED_BY]: 'roomkeeper' }],
    ['a scheduler name no label can hold: no scheduler label', written({}, 'Not A Name'), { [DEFINITION]: 'add_rooms', [MANAGED_BY]: 'roomkeeper' }],
    ['a scheduler name no label can hold: a scheduler label it carries is removed', written({ [SCHEDULER]: 'arena' }, 'Not A Name'), { [SCHEDULER]: null, [DEFINITION]: 'add_rooms', [MANAGED_BY]: 'roomkeeper' }],
  ])('%s', (_what, op, expected) => {
    expect(labelsToWrite(op)).toEqual(expected);
  });

  test('an operation the gateway or the operator builds needs no write', () => {
    for (const source of ['api', 'operator', 'kubectl'] as const) {
      expect(labelsToWrite(buildOperation({ id: 'x', schedulerName: 'arena', definitionName: 'add_rooms', source }))).toBeUndefined();
    }
  });

  test('once written, nothing more to write (level-based: derived from the object)', () => {
    const op = written({ team: 'blue', [SCHEDULER]: 'other' });
    const patch = labelsToWrite(op) ?? {};
    const after = { ...op, metadata: { ...op.metadata, labels: { ...op.metadata.labels, ...patch } as Record<string, string> } };
    expect(after.metadata.labels).toEqual({ team: 'blue', ...operationLabels('arena', 'add_rooms') });
    expect(labelsToWrite(after)).toBeUndefined();
  });
});
