import { evaluateJsonPath } from './json-path';

const room = {
  metadata: { name: 'r1', creationTimestamp: '2024-01-02T03:04:05Z', labels: { 'app.kubernetes.io/name': 'game', tier: 'web' } },
  spec: {
    replicas: 3,
    containers: [
      { name: 'game', image: 'game:1', ports: [{ name: 'udp', containerPort: 7777 }] },
      { name: 'sidecar', image: 'side:2', ports: [] },
    ],
  },
  status: {
    state: 'Ready',
    conditions: [
      { type: 'Scheduled', status: 'True' },
      { type: 'Ready', status: 'False', count: 2 },
    ],
  },
};

describe('evaluateJsonPath', () => {
  const rows: [string, unknown][] = [
    ['.status.state', 'Ready'],
    ['{.status.state}', 'Ready'],
    ['$.status.state', 'Ready'],
    ['.spec.replicas', 3],
    ['.spec.containers[0].image', 'game:1'],
    ['.spec.containers[-1].name', 'sidecar'],
    ['.spec.containers[1].ports', []],
    ['.spec.containers[*].name', ['game', 'sidecar']],
    ['.spec.containers[0:1].name', 'game'],
    ['.metadata.creationTimestamp', '2024-01-02T03:04:05Z'],
    ['.status.conditions[?(@.type=="Ready")].status', 'False'],
    [".status.conditions[?(@.type=='Scheduled')].status", 'True'],
    ['.status.conditions[?(@.count > 1)].type', 'Ready'],
    ['.status.conditions[?(@.count)].type', 'Ready'],
    ['.status.conditions[?(@.type!="Ready")].type', 'Scheduled'],
    [".metadata.labels['app.kubernetes.io/name']", 'game'],
    ['.metadata.labels.app\\.kubernetes\\.io/name', 'game'],
    ['.metadata.labels.*', ['game', 'web']],
    ['..containerPort', 7777],
    ['.status.missing', undefined],
    ['.spec.containers[5].name', undefined],
    ['.status.conditions[?(@.type=="Nope")].status', undefined],
    ['.spec.replicas.deeper', undefined],
  ];
  it.each(rows)('%s', (path, expected) => {
    expect(evaluateJsonPath(room, path)).toEqual(expected);
  });

  it.each(['.spec.containers[', '[?(@.x', '.a[abc]', '', '{', '.x[?(junk)]'])('never throws on a malformed path %p', (path) => {
    expect(() => evaluateJsonPath(room, path)).not.toThrow();
  });

  it('never throws on odd inputs', () => {
    for (const input of [null, undefined, 5, 'str', [], [1, [2]]]) expect(() => evaluateJsonPath(input, '.a[0].b')).not.toThrow();
    expect(evaluateJsonPath(room, 5 as unknown as string)).toEqual(room);
  });
});
