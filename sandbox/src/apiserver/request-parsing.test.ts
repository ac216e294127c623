import { outputFormat, parseResourcePath, patchTypeOf, splitPath, verbOf } from './request-parsing';

describe('parseResourcePath', () => {
  it.each([
    ['/api/v1', 'discovery'],
    ['/apis/apps/v1', 'discovery'],
    ['/api/v1/pods', { group: '', version: 'v1', namespace: '', plural: 'pods', watchPath: false }],
    ['/api/v1/namespaces', { group: '', version: 'v1', namespace: '', plural: 'namespaces' }],
    ['/api/v1/namespaces/default', { namespace: '', plural: 'namespaces', name: 'default' }],
    ['/api/v1/namespaces/default/status', { namespace: '', plural: 'namespaces', name: 'default', subresource: 'status' }],
    ['/api/v1/namespaces/default/pods', { namespace: 'default', plural: 'pods' }],
    ['/api/v1/namespaces/default/pods/p1/binding', { namespace: 'default', plural: 'pods', name: 'p1', subresource: 'binding' }],
    ['/api/v1/watch/namespaces/default/pods', { namespace: 'default', plural: 'pods', watchPath: true }],
    ['/apis/roomkeeper.io/v1/schedulers/s1/scale', { group: 'roomkeeper.io', version: 'v1', plural: 'schedulers', name: 's1', subresource: 'scale' }],
  ])('%s', (path, expected) => {
    const parsed = parseResourcePath(splitPath(path));
    if (expected === 'discovery') expect(parsed).toBe('discovery');
    else expect(parsed).toMatchObject(expected);
  });

  it('refuses paths that are too long or not under /api(s)', () => {
    expect(parseResourcePath(splitPath('/api/v1/namespaces/a/pods/b/status/extra'))).toBeUndefined();
    expect(parseResourcePath(splitPath('/metrics'))).toBeUndefined();
    expect(() => splitPath('/api/%E0%A4%A')).toThrow(expect.objectContaining({ code: 400 }) as Error);
  });
});

describe('request details', () => {
  it('picks the output format from the first Accept entry', () => {
    expect(outputFormat('application/json;as=Table;v=v1;g=meta.k8s.io,application/json')).toBe('table');
    expect(outputFormat('application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io')).toBe('metadata');
    expect(outputFormat('application/vnd.kubernetes.protobuf,application/json')).toBe('json');
    expect(outputFormat(undefined)).toBe('json');
  });

  it('maps patch content types and refuses others with 415', () => {
    expect(patchTypeOf('application/merge-patch+json; charset=utf-8')).toBe('merge');
    expect(patchTypeOf('application/apply-patch+yaml')).toBe('apply');
    expect(() => patchTypeOf('application/json')).toThrow(expect.objectContaining({ code: 415 }) as Error);
  });

  it('names verbs like the real server', () => {
    const base = { group: '', version: 'v1', namespace: '', plural: 'pods', watchPath: false };
    expect(verbOf('GET', base, false)).toBe('list');
    expect(verbOf('GET', base, true)).toBe('watch');
    expect(verbOf('GET', { ...base, name: 'x' }, false)).toBe('get');
    expect(verbOf('DELETE', base, false)).toBe('deletecollection');
    expect(verbOf('PATCH', { ...base, name: 'x' }, false)).toBe('patch');
  });
});
