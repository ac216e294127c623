import type { Operation } from '../../common/src/generated/resources';
import { operationView } from './maestro-views';

function operation(input: Record<string, unknown>): Operation {
  return {
    apiVersion: 'roomkeeper.io/v1', kind: 'Operation', metadata: { name: 'op-1' },
    spec: { schedulerName: 'a', definitionName: 'add_rooms', enqueuedAt: '2026-01-01T00:00:00.000Z', input },
    status: { status: 'error' },
  };
}

describe('operationView', () => {
  it('shows the input of an operation', () => {
    expect(operationView(operation({ amount: 3 })).input).toEqual({ amount: 3 });
  });

  it('does not show an input nested deeper than any request may be (kube-apiserver keeps 10,000 levels), so the answer can be written', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 10_000; i++) deep = { x: deep };
    const view = operationView(operation({ x: deep }));
    expect(view.input).toEqual({ notShown: 'the input nests deeper than 32 levels, deeper than any operation\'s input, and is not shown here' });
    expect(() => JSON.stringify(view)).not.toThrow();
  });
});
