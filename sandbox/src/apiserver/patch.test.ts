import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch, listStrategy } from './patch';

describe('applyMergePatch', () => {
  it('merges maps, removes nulls and replaces lists', () => {
    expect(applyMergePatch({ a: 1, b: { c: 2, d: 3 }, l: [1, 2] }, { b: { c: null, e: 4 }, l: [3] })).toEqual({ a: 1, b: { d: 3, e: 4 }, l: [3] });
  });
});

describe('applyJsonPatch', () => {
  const doc = { a: { b: [1, 2, 3] }, c: 'x' };

  it('adds, removes, replaces, moves, copies and tests', () => {
    const out = applyJsonPatch(doc, [
      { op: 'add', path: '/a/b/-', value: 4 },
      { op: 'remove', path: '/a/b/0' },
      { op: 'replace', path: '/c', value: 'y' },
      { op: 'copy', from: '/c', path: '/d' },
      { op: 'move', from: '/d', path: '/e~1f' },
      { op: 'test', path: '/c', value: 'y' },
    ]);
    expect(out).toEqual({ a: { b: [2, 3, 4] }, c: 'y', 'e/f': 'y' });
    expect(doc.a.b).toEqual([1, 2, 3]);
  });

  it('fails a failing test op with 422 and a malformed patch with 400', () => {
    expect(() => applyJsonPatch(doc, [{ op: 'test', path: '/c', value: 'z' }])).toThrow(expect.objectContaining({ code: 422 }) as Error);
    expect(() => applyJsonPatch(doc, { op: 'add' })).toThrow(expect.objectContaining({ code: 400 }) as Error);
    expect(() => applyJsonPatch(doc, [{ op: 'replace', path: '/nope', value: 1 }])).toThrow(expect.objectContaining({ code: 422 }) as Error);
  });

  it('tests a missing member of an object as null, as kube-apiserver does, and nothing else', () => {
    const doc = { metadata: { name: 'a' }, data: { x: '1' } };
    expect(applyJsonPatch(doc, [{ op: 'test', path: '/metadata/annotations', value: null }, { op: 'add', path: '/metadata/annotations', value: { k: 'v' } }])).toEqual({ metadata: { name: 'a', annotations: { k: 'v' } }, data: { x: '1' } });
    for (const path of ['/data/x', '/metadata/nothing/other']) {
      expect(() => applyJsonPatch(doc, [{ op: 'test', path, value: null }])).toThrow(expect.objectContaining({ code: 422 }) as Error);
    }
  });

  it('answers an unknown op as kube-apiserver does: 422 Invalid with its generic message', () => {
    expect(() => applyJsonPatch(doc, [{ op: 'bogus', path: '/c' }])).toThrow(expect.objectContaining({ code: 422, reason: 'Invalid', message: 'the server rejected our request due to an error in our request' }) as Error);
  });
});

describe('applyStrategicMergePatch', () => {
  const pod = {
    metadata: { finalizers: ['a'], labels: { x: '1' } },
    spec: {
      containers: [
        { name: 'a', image: 'a:1', env: [{ name: 'E1', value: '1' }], ports: [{ containerPort: 80, name: 'http' }] },
        { name: 'b', image: 'b:1' },
      ],
      tolerations: [{ key: 't1' }],
    },
  };

  it('merges lists by their merge key and replaces atomic lists', () => {
    const out = applyStrategicMergePatch(pod, {
      spec: {
        containers: [{ name: 'a', env: [{ name: 'E2', value: '2' }], ports: [{ containerPort: 80, name: 'web' }] }, { name: 'c', image: 'c:1' }],
        tolerations: [{ key: 't2' }],
      },
    }) as typeof pod & { spec: { containers: { name: string; env?: unknown; ports?: unknown }[] } };
    expect(out.spec.containers.map((c) => c.name)).toEqual(['a', 'b', 'c']);
    expect(out.spec.containers[0]!.env).toEqual([{ name: 'E1', value: '1' }, { name: 'E2', value: '2' }]);
    expect(out.spec.containers[0]!.ports).toEqual([{ containerPort: 80, name: 'web' }]);
    expect(out.spec.tolerations).toEqual([{ key: 't2' }]);
  });

  it('honours $patch delete and replace, $setElementOrder, $retainKeys and $deleteFromPrimitiveList', () => {
    const out = applyStrategicMergePatch(pod, {
      metadata: { finalizers: ['b'], '$deleteFromPrimitiveList/finalizers': ['a'] },
      spec: {
        '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }],
        containers: [{ name: 'a', $patch: 'delete' }, { name: 'b', image: 'b:2' }],
        $retainKeys: ['containers'],
      },
    }) as { metadata: { finalizers: string[] }; spec: Record<string, unknown> };
    expect(out.metadata.finalizers).toEqual(['b']);
    expect(out.spec).toEqual({ containers: [{ name: 'b', image: 'b:2' }] });
    const replaced = applyStrategicMergePatch(pod, { metadata: { labels: { y: '2', $patch: 'replace' } } }) as { metadata: { labels: unknown } };
    expect(replaced.metadata.labels).toEqual({ y: '2' });
  });

  it('knows the merge keys of the Go types', () => {
    expect(listStrategy(['spec', 'containers'])).toEqual({ kind: 'merge', key: 'name' });
    expect(listStrategy(['spec', 'containers', 'ports'])).toEqual({ kind: 'merge', key: 'containerPort' });
    expect(listStrategy(['spec', 'ports'])).toEqual({ kind: 'merge', key: 'port' });
    expect(listStrategy(['status', 'conditions'])).toEqual({ kind: 'merge', key: 'type' });
    expect(listStrategy(['spec', 'tolerations'])).toEqual({ kind: 'replace' });
  });
});

describe('patches never reach a prototype', () => {
  const polluted = () => (({}) as Record<string, unknown>).polluted;
  afterEach(() => {
    delete (Object.prototype as Record<string, unknown>).polluted;
  });

  it.each([
    [[{ op: 'add', path: '/__proto__/polluted', value: 'yes' }]],
    [[{ op: 'add', path: '/a/__proto__/polluted', value: 'yes' }]],
    [[{ op: 'add', path: '/constructor/prototype/polluted', value: 'yes' }]],
    [[{ op: 'replace', path: '/__proto__', value: { polluted: 'yes' } }]],
    [[{ op: 'copy', from: '/__proto__', path: '/b' }]],
  ])('refuses the JSON patch %j with 422: the pointer names a member the document does not have', (ops) => {
    expect(() => applyJsonPatch({ a: {} }, ops)).toThrow(expect.objectContaining({ code: 422 }) as Error);
    expect(polluted()).toBeUndefined();
  });

  it('does not read inherited properties through a pointer', () => {
    expect(() => applyJsonPatch({ a: {} }, [{ op: 'remove', path: '/a/toString' }])).toThrow(expect.objectContaining({ code: 422 }) as Error);
    expect(() => applyJsonPatch({ a: {} }, [{ op: 'copy', from: '/a/hasOwnProperty', path: '/b' }])).toThrow(expect.objectContaining({ code: 422 }) as Error);
  });

  it.each([
    ['merge', (patch: unknown) => applyMergePatch({ a: {} }, patch)],
    ['strategic merge', (patch: unknown) => applyStrategicMergePatch({ a: {} }, patch)],
  ])('keeps a __proto__ key of a %s patch at any depth as an own member', (_kind, apply) => {
    for (const text of ['{"__proto__":{"polluted":"yes"}}', '{"a":{"__proto__":{"polluted":"yes"}}}', '{"l":[{"__proto__":{"polluted":"yes"}}]}']) {
      const out = apply(JSON.parse(text)) as { a: object };
      expect(polluted()).toBeUndefined();
      expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
      expect(Object.getPrototypeOf(out.a)).toBe(Object.prototype);
      expect(JSON.stringify(out)).toContain('"__proto__":{"polluted":"yes"}');
    }
  });
});

describe('fields named like JavaScript prototypes', () => {
  // As JSON.parse makes a body: `__proto__` is an own member here, not the prototype.
  const body = JSON.parse('{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}') as Record<string, unknown>;
  afterEach(() => {
    expect((({}) as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([
    ['a merge patch', (target: unknown) => applyMergePatch(target, body)],
    ['a strategic merge patch', (target: unknown) => applyStrategicMergePatch(target, body)],
    ['a JSON patch', (target: unknown) => applyJsonPatch(target, [{ op: 'add', path: '/__proto__', value: { polluted: 'yes' } }, { op: 'add', path: '/constructor', value: { prototype: { polluted: 'yes' } } }])],
  ])('%s stores them as own members, as kube-apiserver stores ordinary fields, and changes no prototype', (_what, apply) => {
    const out = apply({ a: 1 }) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out).sort()).toEqual(['__proto__', 'a', 'constructor']);
    expect(JSON.stringify(out)).toContain('"__proto__":{"polluted":"yes"}');
    expect(out.polluted).toBeUndefined();
  });

  it('a merge patch merges into an existing own __proto__ member rather than into Object.prototype', () => {
    const target = JSON.parse('{"__proto__":{"x":1}}') as unknown;
    expect(JSON.stringify(applyMergePatch(target, JSON.parse('{"__proto__":{"y":2}}')))).toBe('{"__proto__":{"x":1,"y":2}}');
  });
});
