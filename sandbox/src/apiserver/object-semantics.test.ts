import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { startSandbox, type Sandbox } from '../index';
import { request } from './http-request.fixture';
import { widget, widgetCrd, WIDGET_GROUP, WIDGET_PLURAL, WIDGET_VERSION, type Widget } from './widget-crd.fixture';

const W = { group: WIDGET_GROUP, version: WIDGET_VERSION, plural: WIDGET_PLURAL, namespace: 'default' };
const WIDGETS = `/apis/${WIDGET_GROUP}/${WIDGET_VERSION}/namespaces/default/${WIDGET_PLURAL}`;

function errorCode(e: unknown): number | undefined {
  return typeof e === 'object' && e !== null && 'code' in e ? (e as { code: number }).code : undefined;
}

describe('object semantics against client-node', () => {
  let sandbox: Sandbox;
  let core: CoreV1Api;
  let custom: CustomObjectsApi;

  beforeAll(async () => {
    sandbox = await startSandbox();
    const kc = sandbox.kubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    custom = kc.makeApiClient(CustomObjectsApi);
    const res = await request(sandbox.url, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgetCrd());
    expect(res.status).toBe(201);
  });

  afterAll(async () => {
    await sandbox.stop();
  });

  it('gives every object uid, creationTimestamp, an increasing resourceVersion and generation 1', async () => {
    const a = (await custom.createNamespacedCustomObject({ ...W, body: widget('sem-a', { color: 'red' }) })) as Widget;
    const b = (await custom.createNamespacedCustomObject({ ...W, body: widget('sem-b', { color: 'red' }) })) as Widget;
    expect(a.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(Number(b.metadata.resourceVersion)).toBeGreaterThan(Number(a.metadata.resourceVersion));
    expect(a.metadata.generation).toBe(1);
    expect(a.spec.replicas).toBe(1); // schema default
  });

  it('selects custom objects by their CRD selectableFields only', async () => {
    await custom.createNamespacedCustomObject({ ...W, body: widget('sel-blue', { color: 'blue' }) });
    const blue = await request(sandbox.url, 'GET', `${WIDGETS}?fieldSelector=spec.color%3Dblue`);
    expect(blue.json!.items!.map((i) => i.metadata!.name)).toContain('sel-blue');
    expect(blue.json!.items!.every((i) => i.spec!.color === 'blue')).toBe(true);
    expect((await request(sandbox.url, 'GET', `${WIDGETS}?fieldSelector=spec.replicas%3D1`)).status).toBe(400);
  });

  it('answers 409 Conflict to an update carrying a stale resourceVersion', async () => {
    const created = (await custom.createNamespacedCustomObject({ ...W, body: widget('stale', { color: 'red' }) })) as Widget;
    await custom.patchNamespacedCustomObject({ ...W, name: 'stale', body: { spec: { color: 'blue' } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    const stale = { ...created, spec: { color: 'green' } };
    let code: number | undefined;
    try {
      await custom.replaceNamespacedCustomObject({ ...W, name: 'stale', body: stale });
    } catch (e) {
      code = errorCode(e);
    }
    expect(code).toBe(409);
    const raw = await request(sandbox.url, 'PUT', `${WIDGETS}/stale`, stale);
    expect(raw.json).toMatchObject({
      kind: 'Status', status: 'Failure', reason: 'Conflict', code: 409,
      message: `Operation cannot be fulfilled on widgets.${WIDGET_GROUP} "stale": the object has been modified; please apply your changes to the latest version and try again`,
      details: { name: 'stale', group: WIDGET_GROUP, kind: 'widgets' },
    });
  });

  it('refuses an update or patch of a custom resource that leaves no resourceVersion, as kube-apiserver does; a built-in kind is updated unconditionally', async () => {
    await custom.createNamespacedCustomObject({ ...W, body: widget('rv-patch', { color: 'red' }) });
    const mustBeSpecified = {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Invalid', code: 422,
      message: `widgets.${WIDGET_GROUP} "rv-patch" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update`,
      details: { name: 'rv-patch', group: WIDGET_GROUP, kind: 'widgets', causes: [{ reason: 'FieldValueInvalid', field: 'metadata.resourceVersion', message: 'Invalid value: 0x0: must be specified for an update' }] },
    };
    const merge = { 'Content-Type': 'application/merge-patch+json' };
    const refused = [
      await request(sandbox.url, 'PATCH', `${WIDGETS}/rv-patch`, { metadata: { resourceVersion: '' }, spec: { color: 'green' } }, merge),
      await request(sandbox.url, 'PATCH', `${WIDGETS}/rv-patch/status`, { metadata: { resourceVersion: '' }, status: { ready: true } }, merge),
      await request(sandbox.url, 'PATCH', `${WIDGETS}/rv-patch`, [{ op: 'remove', path: '/metadata/resourceVersion' }], { 'Content-Type': 'application/json-patch+json' }),
      await request(sandbox.url, 'PUT', `${WIDGETS}/rv-patch`, widget('rv-patch', { color: 'green' })),
    ];
    for (const res of refused) expect(res.json).toEqual(mustBeSpecified);
    expect((await request(sandbox.url, 'PATCH', `${WIDGETS}/rv-patch`, { metadata: { resourceVersion: '1' }, spec: { color: 'green' } }, merge)).status).toBe(409);
    expect(((await custom.getNamespacedCustomObject({ ...W, name: 'rv-patch' })) as Widget).spec.color).toBe('red');

    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'rv-patch' }, data: { a: '1' } } });
    const unconditional = await request(sandbox.url, 'PATCH', '/api/v1/namespaces/default/configmaps/rv-patch', { metadata: { resourceVersion: '' }, data: { a: '2' } }, merge);
    expect(unconditional.status).toBe(200);
    expect(unconditional.json!.data).toEqual({ a: '2' });
    expect((await request(sandbox.url, 'PUT', '/api/v1/namespaces/default/configmaps/rv-patch', { metadata: { name: 'rv-patch' }, data: { a: '3' } })).status).toBe(200);
  });

  it('keeps spec on /status writes and status on main-resource writes', async () => {
    await custom.createNamespacedCustomObject({ ...W, body: { ...widget('split', { color: 'red' }), status: { state: 'ignored' } } });
    const afterCreate = (await custom.getNamespacedCustomObject({ ...W, name: 'split' })) as Widget;
    expect(afterCreate.status).toBeUndefined();

    const statusWrite = { ...afterCreate, spec: { color: 'blue' }, status: { state: 'Ready', replicas: 1 } };
    const updated = (await custom.replaceNamespacedCustomObjectStatus({ ...W, name: 'split', body: statusWrite })) as Widget;
    expect(updated.spec.color).toBe('red');
    expect(updated.status!.state).toBe('Ready');
    expect(updated.metadata.generation).toBe(1);

    const mainWrite = { ...updated, spec: { color: 'green', replicas: 1 }, status: { state: 'Broken' } };
    const updated2 = (await custom.replaceNamespacedCustomObject({ ...W, name: 'split', body: mainWrite })) as Widget;
    expect(updated2.spec.color).toBe('green');
    expect(updated2.status!.state).toBe('Ready');
  });

  it('bumps generation only when the spec changes', async () => {
    await custom.createNamespacedCustomObject({ ...W, body: widget('gen', { color: 'red' }) });
    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    const labelled = (await custom.patchNamespacedCustomObject({ ...W, name: 'gen', body: { metadata: { labels: { a: 'b' } } } }, merge)) as Widget;
    expect(labelled.metadata.generation).toBe(1);
    const status = (await custom.patchNamespacedCustomObjectStatus({ ...W, name: 'gen', body: { status: { state: 'Up' } } }, merge)) as Widget;
    expect(status.metadata.generation).toBe(1);
    const spec = (await custom.patchNamespacedCustomObject({ ...W, name: 'gen', body: { spec: { color: 'blue' } } }, merge)) as Widget;
    expect(spec.metadata.generation).toBe(2);
    const same = (await custom.patchNamespacedCustomObject({ ...W, name: 'gen', body: { spec: { color: 'blue' } } }, merge)) as Widget;
    expect(same.metadata.generation).toBe(2);
    expect(same.metadata.resourceVersion).toBe(spec.metadata.resourceVersion);
  });

  it('rejects invalid custom objects with a 422 Status naming the fields', async () => {
    const one = await request(sandbox.url, 'POST', WIDGETS, widget('bad-one', { color: 'red', replicas: -1 }));
    expect(one.status).toBe(422);
    expect(one.json).toMatchObject({
      kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Invalid', code: 422,
      // The schema's minimum, and (the Widget has a scale subresource) the replicas path check,
      // which kube-apiserver reports with the path as the CRD writes it.
      message: `Widget.${WIDGET_GROUP} "bad-one" is invalid: [spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0, .spec.replicas: Invalid value: -1: should be a non-negative integer]`,
      details: { name: 'bad-one', group: WIDGET_GROUP, kind: 'Widget', causes: [{ reason: 'FieldValueInvalid', field: 'spec.replicas' }, { reason: 'FieldValueInvalid', field: '.spec.replicas' }] },
    });
    const enumValue = await request(sandbox.url, 'POST', WIDGETS, widget('bad-enum', { color: 'purple' }));
    expect(enumValue.status).toBe(422);
    expect(enumValue.json!.details!.causes![0]).toMatchObject({ reason: 'FieldValueNotSupported', field: 'spec.color' });
    const cel = await request(sandbox.url, 'POST', WIDGETS, widget('bad-cel', { color: 'red', replicas: 11 }));
    expect(cel.status).toBe(422);
    expect(cel.json!.message).toContain('replicas must be at most 10');
    const many = await request(sandbox.url, 'POST', WIDGETS, widget('bad-many', { replicas: -1 }));
    expect(many.status).toBe(422);
    expect(many.json!.message).toMatch(/is invalid: \[.*spec\.color: Required value.*\]/);
  });

  it('refuses with a 400 a body, or the object a patch makes, nested deeper than it keeps, and writes nothing', async () => {
    const nested = (depth: number): unknown => {
      let v: unknown = 1;
      for (let i = 0; i < depth; i++) v = { x: v };
      return v;
    };
    const deepWords = 'nests deeper than 1000 levels, the most the sandbox keeps (kube-apiserver keeps up to 10000); nothing was written';
    const refused = await request(sandbox.url, 'POST', WIDGETS, { ...widget('deep-one', { color: 'red' }), extra: nested(1000) });
    expect([refused.status, refused.json?.message]).toEqual([400, `the object ${deepWords}`]);
    expect((await request(sandbox.url, 'GET', `${WIDGETS}/deep-one`)).status).toBe(404);
    // Within the limit: stored (the unknown field pruned), served and deleted as any other.
    expect((await request(sandbox.url, 'POST', WIDGETS, { ...widget('deep-one', { color: 'red' }), extra: nested(990) })).status).toBe(201);
    const patched = await request(sandbox.url, 'PATCH', `${WIDGETS}/deep-one`, { spec: { extra: nested(1000) } }, { 'Content-Type': 'application/merge-patch+json' });
    expect([patched.status, patched.json?.message]).toEqual([400, `the patch ${deepWords}`]);
    expect((await request(sandbox.url, 'DELETE', `${WIDGETS}/deep-one`)).status).toBe(200);
  });

  it('handles fieldValidation Strict, Warn and Ignore for unknown fields', async () => {
    const body = widget('fv', { color: 'red', bogus: 1 });
    const strict = await request(sandbox.url, 'POST', `${WIDGETS}?fieldValidation=Strict`, body);
    expect(strict.status).toBe(400);
    expect(strict.json!.message).toContain('unknown field "spec.bogus"');
    const warn = await request(sandbox.url, 'POST', `${WIDGETS}?fieldValidation=Warn`, body);
    expect(warn.status).toBe(201);
    expect(warn.headers.get('warning')).toContain('unknown field \\"spec.bogus\\"');
    expect(warn.json!.spec!.bogus).toBeUndefined();
    const ignore = await request(sandbox.url, 'POST', `${WIDGETS}?fieldValidation=Ignore`, widget('fv2', { color: 'red', bogus: 1 }));
    expect(ignore.status).toBe(201);
    expect(ignore.headers.get('warning')).toBeNull();
  });

  it('drops, reports or refuses fields a built-in type does not have', async () => {
    const pod = { metadata: { name: 'typo' }, spec: { containers: [{ name: 'c', image: 'i:1', imagee: 'x' }], bogus: true } };
    const strict = await request(sandbox.url, 'POST', '/api/v1/namespaces/default/pods?fieldValidation=Strict', pod);
    expect(strict.status).toBe(400);
    expect(strict.json!.message).toBe('Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.containers[0].imagee", unknown field "spec.bogus"');
    const warn = await request(sandbox.url, 'POST', '/api/v1/namespaces/default/pods', pod);
    expect(warn.status).toBe(201);
    expect(warn.headers.get('warning')).toContain('unknown field \\"spec.bogus\\"');
    expect(warn.json!.spec!.bogus).toBeUndefined();
    expect(warn.json!.spec!.containers![0]!.imagee).toBeUndefined();
  });

  it('answers 400 for a pod quantity kube-apiserver cannot decode, and stores nothing', async () => {
    const pod = (name: string, resources: object) => ({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'i:1', resources }] } });
    const fractional = await request(sandbox.url, 'POST', '/api/v1/namespaces/default/pods', pod('q-frac', { requests: { cpu: '1e1.5' } }));
    expect(fractional.status).toBe(400);
    expect(fractional.json).toMatchObject({ reason: 'BadRequest', message: 'Pod in version "v1" cannot be handled as a Pod: quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'' });
    const twoPoints = await request(sandbox.url, 'POST', '/api/v1/namespaces/default/pods', pod('q-points', { limits: { memory: '1.2.3Mi' } }));
    expect(twoPoints.status).toBe(400);
    const suffix = await request(sandbox.url, 'POST', '/api/v1/namespaces/default/pods', pod('q-suffix', { limits: { memory: '1Mk' } }));
    expect(suffix.status).toBe(400);
    expect(suffix.json!.message).toBe('Pod in version "v1" cannot be handled as a Pod: unable to parse quantity\'s suffix');
    // A long quantity is answered at once (the reader does not backtrack).
    const long = await request(sandbox.url, 'POST', '/api/v1/namespaces/default/pods', pod('q-long', { requests: { cpu: `${'1'.repeat(100_000)}x` } }));
    expect(long.status).toBe(400);
    for (const name of ['q-frac', 'q-points', 'q-suffix', 'q-long']) expect((await request(sandbox.url, 'GET', `/api/v1/namespaces/default/pods/${name}`)).status).toBe(404);
    const edges = await request(sandbox.url, 'POST', '/api/v1/namespaces/default/pods', pod('q-edges', { requests: { cpu: '1e-3', memory: '+0' }, limits: { cpu: '2e+0', memory: '1E9' } }));
    expect(edges.status).toBe(201);
  });

  it('answers 404 and 409 AlreadyExists with real Status bodies', async () => {
    const missing = await request(sandbox.url, 'GET', '/api/v1/namespaces/default/pods/nope');
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'pods "nope" not found', reason: 'NotFound', details: { name: 'nope', kind: 'pods' }, code: 404,
    });
    const pod = { metadata: { name: 'dup' }, spec: { containers: [{ name: 'c', image: 'img:1' }] } };
    await core.createNamespacedPod({ namespace: 'default', body: pod });
    const again = await request(sandbox.url, 'POST', '/api/v1/namespaces/default/pods', pod);
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({ reason: 'AlreadyExists', message: 'pods "dup" already exists', details: { name: 'dup', kind: 'pods' } });
  });

  it('validates metadata names and generates names from generateName', async () => {
    const bad = await request(sandbox.url, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'Bad_Name' } });
    expect(bad.status).toBe(422);
    expect(bad.json!.message).toMatch(/^ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/);
    const noName = await request(sandbox.url, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: {} });
    expect(noName.status).toBe(422);
    expect(noName.json!.message).toContain('metadata.name: Required value: name or generateName is required');
    const generated = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { generateName: 'gen-' } } });
    expect(generated.metadata?.name).toMatch(/^gen-[a-z0-9]{5}$/);
  });

  it('refuses a create that carries a resourceVersion, as etcd storage does', async () => {
    const res = await request(sandbox.url, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'with-rv', resourceVersion: '5' } });
    expect(res.status).toBe(500);
    expect(res.json!.message).toBe('Internal error occurred: resourceVersion should not be set on objects to be created');
  });

  it('refuses to create in a missing namespace', async () => {
    const res = await request(sandbox.url, 'POST', '/api/v1/namespaces/ghost/configmaps', { metadata: { name: 'x' } });
    expect(res.status).toBe(404);
    expect(res.json!.message).toBe('namespaces "ghost" not found');
  });

  it('applies merge, JSON and strategic merge patches and server-side apply', async () => {
    await core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { name: 'patchme', labels: { a: '1' } }, spec: { containers: [{ name: 'a', image: 'a:1' }, { name: 'b', image: 'b:1' }] } },
    });
    const smp = await core.patchNamespacedPod(
      { name: 'patchme', namespace: 'default', body: { spec: { containers: [{ name: 'b', image: 'b:2' }] } } },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    expect(smp.spec?.containers.map((c) => `${c.name}=${String(c.image)}`)).toEqual(['a=a:1', 'b=b:2']);
    const json = await core.patchNamespacedPod(
      { name: 'patchme', namespace: 'default', body: [{ op: 'replace', path: '/metadata/labels/a', value: '2' }, { op: 'add', path: '/metadata/labels/c', value: '3' }] },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    expect(json.metadata?.labels).toEqual({ a: '2', c: '3' });
    const merge = await core.patchNamespacedPod(
      { name: 'patchme', namespace: 'default', body: { metadata: { labels: { c: null } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(merge.metadata?.labels).toEqual({ a: '2' });
    const smpOnCustom = await request(sandbox.url, 'PATCH', `${WIDGETS}/sem-a`, { spec: { color: 'blue' } }, { 'Content-Type': 'application/strategic-merge-patch+json' });
    expect(smpOnCustom.status).toBe(415);
    const apply = await request(
      sandbox.url, 'PATCH', '/api/v1/namespaces/default/configmaps/applied?fieldManager=test',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  k: v\n',
      { 'Content-Type': 'application/apply-patch+yaml' },
    );
    expect(apply.status).toBe(201);
    const reapply = await request(
      sandbox.url, 'PATCH', '/api/v1/namespaces/default/configmaps/applied?fieldManager=test',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  k2: v2\n',
      { 'Content-Type': 'application/apply-patch+yaml' },
    );
    expect(reapply.status).toBe(200);
    expect(reapply.json!.data).toEqual({ k: 'v', k2: 'v2' });
  });

  it('lets pod updates change images but not the rest of the spec', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'immutable' }, spec: { containers: [{ name: 'a', image: 'a:1' }] } } });
    const image = await request(sandbox.url, 'PATCH', '/api/v1/namespaces/default/pods/immutable', { spec: { containers: [{ name: 'a', image: 'a:2' }] } }, { 'Content-Type': 'application/strategic-merge-patch+json' });
    expect(image.status).toBe(200);
    const env = await request(sandbox.url, 'PATCH', '/api/v1/namespaces/default/pods/immutable', { spec: { containers: [{ name: 'a', env: [{ name: 'X', value: '1' }] }] } }, { 'Content-Type': 'application/strategic-merge-patch+json' });
    expect(env.status).toBe(422);
    expect(env.json!.message).toMatch(/^Pod "immutable" is invalid: spec: Forbidden: pod updates may not change fields other than/);
  });

  it('serves the scale subresource of custom resources', async () => {
    await custom.createNamespacedCustomObject({ ...W, body: widget('scaled', { color: 'red', replicas: 2 }) });
    const scale = await request(sandbox.url, 'GET', `${WIDGETS}/scaled/scale`);
    expect(scale.json).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 2 }, status: { replicas: 0 } });
    const patched = await request(sandbox.url, 'PATCH', `${WIDGETS}/scaled/scale`, { spec: { replicas: 4 } }, { 'Content-Type': 'application/merge-patch+json' });
    expect(patched.json!.spec!.replicas).toBe(4);
    const obj = (await custom.getNamespacedCustomObject({ ...W, name: 'scaled' })) as Widget;
    expect(obj.spec.replicas).toBe(4);
    expect(obj.metadata.generation).toBe(2);
  });

  it('does nothing on dryRun=All', async () => {
    const before = sandbox.store.count('configmaps');
    const res = await request(sandbox.url, 'POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { metadata: { name: 'dry' } });
    expect(res.status).toBe(201);
    expect(sandbox.store.count('configmaps')).toBe(before);
    expect((await request(sandbox.url, 'GET', '/api/v1/namespaces/default/configmaps/dry')).status).toBe(404);
  });

  it('on dryRun=All, validates a custom resource\'s patch and update (CEL rules too) and answers the object it would store, storing nothing', async () => {
    const created = (await custom.createNamespacedCustomObject({ ...W, body: widget('dry-cel', { color: 'red', replicas: 2 }) })) as Widget;
    const JSON_PATCH = { 'Content-Type': 'application/json-patch+json' };
    const patchTo = (replicas: number) => [{ op: 'test', path: '/metadata/generation', value: 1 }, { op: 'replace', path: '/spec/replicas', value: replicas }];
    const refused = await request(sandbox.url, 'PATCH', `${WIDGETS}/dry-cel?dryRun=All`, patchTo(11), JSON_PATCH);
    expect(refused.status).toBe(422);
    expect(refused.json!.details).toMatchObject({ causes: [{ field: 'spec', message: expect.stringContaining('replicas must be at most 10') as unknown }] });
    const admitted = await request(sandbox.url, 'PATCH', `${WIDGETS}/dry-cel?dryRun=All`, patchTo(5), JSON_PATCH);
    expect(admitted.status).toBe(200);
    expect(admitted.json).toMatchObject({ spec: { replicas: 5 }, metadata: { generation: 2 } });
    const put = await request(sandbox.url, 'PUT', `${WIDGETS}/dry-cel?dryRun=All`, { ...created, spec: { color: 'red', replicas: 12 } });
    expect(put.status).toBe(422);
    expect((await request(sandbox.url, 'PUT', `${WIDGETS}/dry-cel?dryRun=All`, { ...created, spec: { color: 'blue', replicas: 3 } })).status).toBe(200);
    const stored = (await custom.getNamespacedCustomObject({ ...W, name: 'dry-cel' })) as Widget;
    expect([stored.spec, stored.metadata.generation, stored.metadata.resourceVersion]).toEqual([{ color: 'red', replicas: 2 }, 1, created.metadata.resourceVersion]);
  });

  it('checks delete preconditions', async () => {
    const cm = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'precond' } } });
    const res = await request(sandbox.url, 'DELETE', '/api/v1/namespaces/default/configmaps/precond', { preconditions: { resourceVersion: '1' } });
    expect(res.status).toBe(409);
    expect(res.json!.message).toContain('Precondition failed');
    await core.deleteNamespacedConfigMap({ name: 'precond', namespace: 'default', body: { preconditions: { resourceVersion: cm.metadata!.resourceVersion } } });
    expect((await request(sandbox.url, 'GET', '/api/v1/namespaces/default/configmaps/precond')).status).toBe(404);
  });

  it.each([
    ['POST', '/api/v1/namespaces/default/configmaps', '{not json'],
    ['POST', '/api/v1/namespaces/default/configmaps', '[1,2]'],
    ['POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 5 } }],
    ['POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'x1', ownerReferences: { uid: 'u' } } }],
    ['POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'x2', finalizers: 'a' } }],
    ['POST', '/api/v1/namespaces/default/configmaps', {
      metadata: { name: 'x4', ownerReferences: [1, 2].map((i) => ({ apiVersion: 'v1', kind: 'ConfigMap', name: `o${i}`, uid: `u${i}`, controller: true })) },
    }],
    ['POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'x3', labels: 'a' } }],
    ['GET', '/api/v1/namespaces/default/configmaps?limit=abc', undefined],
    ['GET', '/api/v1/namespaces/default/configmaps?continue=garbage', undefined],
    ['GET', '/api/v1/namespaces/default/configmaps/%E0%A4%A', undefined],
    ['PATCH', '/api/v1/namespaces/default/pods/patchme', 'null'],
    ['GET', '/apis/nope.io/v1/things', undefined],
  ])('answers %s %s with a 4xx Status and keeps serving', async (method, path, body) => {
    const res = await request(sandbox.url, method, path, body, body === 'null' ? { 'Content-Type': 'application/merge-patch+json' } : {});
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.json).toMatchObject({ kind: 'Status', status: 'Failure' });
    expect((await request(sandbox.url, 'GET', '/healthz')).text).toBe('ok');
  });

  it('serves events.k8s.io/v1 Events and core/v1 Events from one storage', async () => {
    const created = await request(sandbox.url, 'POST', '/apis/events.k8s.io/v1/namespaces/default/events', {
      metadata: { name: 'ev-1' },
      eventTime: '2024-01-01T00:00:00.000000Z',
      reportingController: 'roomkeeper.io/operator',
      reportingInstance: 'op-1',
      action: 'Scale',
      reason: 'Scaled',
      type: 'Normal',
      note: 'scaled to 3 rooms',
      regarding: { kind: 'Pod', name: 'dup', namespace: 'default' },
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ apiVersion: 'events.k8s.io/v1', kind: 'Event', note: 'scaled to 3 rooms', regarding: { name: 'dup' } });
    const core = await request(sandbox.url, 'GET', '/api/v1/namespaces/default/events/ev-1');
    expect(core.json).toMatchObject({ apiVersion: 'v1', kind: 'Event', message: 'scaled to 3 rooms', involvedObject: { name: 'dup' }, reportingComponent: 'roomkeeper.io/operator' });
    const selected = await request(sandbox.url, 'GET', '/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector=regarding.name%3Ddup');
    expect(selected.json!.items!.map((e) => e.metadata!.name)).toEqual(['ev-1']);
    const patched = await request(sandbox.url, 'PATCH', '/apis/events.k8s.io/v1/namespaces/default/events/ev-1', { note: 'scaled to 4 rooms' }, { 'Content-Type': 'application/merge-patch+json' });
    expect(patched.json!.note).toBe('scaled to 4 rooms');
    expect((await request(sandbox.url, 'GET', '/api/v1/namespaces/default/events/ev-1')).json!.message).toBe('scaled to 4 rooms');
  });

  it('counts write requests per resource, refused ones included', async () => {
    const before = sandbox.writeCount('configmaps');
    const reads = sandbox.writeCount('pods');
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'counted' } } });
    await expect(core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'counted' } } })).rejects.toMatchObject({ code: 409 });
    await core.deleteNamespacedConfigMap({ name: 'counted', namespace: 'default' });
    await core.listNamespacedPod({ namespace: 'default' });
    expect(sandbox.writeCount('configmaps')).toBe(before + 3);
    expect(sandbox.writeCount('pods')).toBe(reads);
    expect(sandbox.writeCount()).toBeGreaterThanOrEqual(sandbox.writeCount('configmaps'));
  });
});
