import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import request from 'supertest';
import { createLogger } from '../../../common/src/logger';
import { waitFor } from '../../../test/support/wait';
import { createHttpServer, MANAGEMENT_TIMEOUTS } from '../../../common/src/http-server';
import { AUTH, bodyOf, buildTestApps, MAX_BODY, validCreateBody, validSpec, type Answer, type TestApps } from '../testing/fixtures';
import { nextAttemptId } from '../../../common/src/operations/attempts';
import { schedulerDefinitionInput } from '../../../common/src/operations/operation-inputs';
import { createSchedulerOperationId, deleteSchedulerOperationId, newVersionOperationId } from '../../../common/src/operations/operation-id';
import { MANAGEMENT_ROUTES } from './management-routes';
import { requestListener } from '../app';
import { NOT_UNICODE, NUMBER_TOO_LARGE } from '../json-body-limits';

let t: TestApps;
beforeEach(() => {
  t = buildTestApps();
});

const api = () => request(t.management);
const DUPLICATE_KEY = 'duplicate key: sent more than once in the same object, and JSON keeps only one of the values; send each key once (the request was refused and nothing changed)';

describe('authentication', () => {
  const INVALID_CREDENTIALS = "invalid credentials: the user or the password is wrong; send the management API's, set by ROOMKEEPER_AUTH_USERNAME and ROOMKEEPER_AUTH_PASSWORD or held in the Secret ROOMKEEPER_AUTH_SECRET_NAME names (npm start prints them; a Helm install's NOTES say how to read them)";
  it.each([
    ['missing', undefined, 'missing credentials: use HTTP Basic authentication'],
    ['wrong password', `Basic ${Buffer.from('admin:nope').toString('base64')}`, INVALID_CREDENTIALS],
    ['wrong user', `Basic ${Buffer.from('root:s3cret-pass').toString('base64')}`, INVALID_CREDENTIALS],
    ['not basic', 'Bearer abc', 'malformed credentials: send Authorization: Basic <base64 of user:password>'],
    ['garbage', 'Basic !!!', 'malformed credentials: send Authorization: Basic <base64 of user:password>'],
  ])('answers 401 with WWW-Authenticate when credentials are %s, saying which', async (_what, header, message) => {
    const req = api().get('/schedulers');
    const res = header ? await req.set('Authorization', header) : await req;
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Basic realm="roomkeeper"/);
    expect(res.body).toEqual({ code: 16, message, details: [] });
  });

  it('guards writes before reading the body, and writes nothing', async () => {
    const res = await api().post('/schedulers').send(validCreateBody());
    expect(res.status).toBe(401);
    expect(t.store.writes).toEqual([]);
  });

  it('answers /livez as /healthz (the same body), as the README says the management port does', async () => {
    const healthz = await api().get('/healthz');
    const livez = await api().get('/livez');
    expect(livez.status).toBe(200);
    expect(livez.body).toEqual(healthz.body);
    expect(livez.body).toMatchObject({ status: 'ok' });
  });

  it('leaves health, readiness and metrics open', async () => {
    expect((await api().get('/healthz')).status).toBe(200);
    expect((await api().get('/readyz')).status).toBe(200);
    const metrics = await api().get('/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('roomkeeper_http_requests_total');
  });

  it('lists the allocation counters without labels at 0 on a fresh gateway, before any allocation, and the labelled ones the README names by their HELP and TYPE', async () => {
    const text = (await api().get('/metrics')).text;
    expect(text).toMatch(/^roomkeeper_allocation_conflicts_total 0$/m);
    expect(text).toMatch(/^roomkeeper_allocation_retries_total 0$/m);
    // (The forwarder's own, roomkeeper_forwarded_events_total and roomkeeper_forward_duration_seconds: event-forwarder.test.ts.)
    for (const name of ['roomkeeper_allocations_total', 'roomkeeper_allocation_duration_seconds', 'roomkeeper_gateway_forwards_total']) {
      expect(text).toMatch(new RegExp(`^# HELP ${name} \\S`, 'm'));
      expect(text).toMatch(new RegExp(`^# TYPE ${name} (counter|histogram)$`, 'm'));
    }
  });

  it('logs the polls of probes and Prometheus (health, readiness, metrics) only at debug, a failing one as a warning, and other requests at info', async () => {
    const stream = new PassThrough();
    const lines: Record<string, unknown>[] = [];
    stream.on('data', (chunk: Buffer) => chunk.toString().split('\n').filter(Boolean).forEach((l) => lines.push(JSON.parse(l) as Record<string, unknown>)));
    const polled = buildTestApps({ logger: createLogger('gateway', { level: 'info', stream }) });
    for (const path of ['/healthz', '/readyz', '/metrics']) expect((await request(polled.management).get(path)).status).toBe(200);
    polled.ready.reason = 'caches not synced';
    expect((await request(polled.management).get('/readyz')).status).toBe(503);
    expect((await request(polled.management).get('/schedulers').set('Authorization', AUTH)).status).toBe(200);
    await waitFor(() => lines.some((l) => l.route === '/schedulers'), { message: 'the access line of GET /schedulers' });
    expect(lines.filter((l) => l.message === 'request').map((l) => [l.level, l.route, l.status])).toEqual([['warn', '/readyz', 503], ['info', '/schedulers', 200]]);
  });

  it('names in a call\'s access line the scheduler, room and operation of its path, and the operation it enqueued', async () => {
    const stream = new PassThrough();
    const lines: Record<string, unknown>[] = [];
    stream.on('data', (chunk: Buffer) => chunk.toString().split('\n').filter(Boolean).forEach((l) => lines.push(JSON.parse(l) as Record<string, unknown>)));
    const apps = buildTestApps({ logger: createLogger('gateway', { level: 'info', stream }) });
    apps.store.seedScheduler('tennis-eu', validSpec());
    const deleted = await request(apps.management).delete('/schedulers/tennis-eu').set('Authorization', AUTH);
    expect(deleted.status).toBe(200);
    const canceled = await request(apps.management).post('/schedulers/tennis-eu/operations/no-such-op/cancel').set('Authorization', AUTH);
    await waitFor(() => lines.filter((l) => l.message === 'request').length === 2, { message: 'two access lines' });
    expect(lines.filter((l) => l.message === 'request').map((l) => [l.route, l.status, l.scheduler, l.operation])).toEqual([
      ['/schedulers/:schedulerName', 200, 'tennis-eu', (deleted.body as Answer).operationId],
      ['/schedulers/:schedulerName/operations/:operationId/cancel', canceled.status, 'tennis-eu', 'no-such-op'],
    ]);
  });

  it('reports not ready with 503', async () => {
    t.ready.reason = 'caches not synced';
    const res = await api().get('/readyz');
    expect(res.status).toBe(503);
    expect(bodyOf(res).reason).toBe('caches not synced');
  });

  it('serves the OpenAPI document to authenticated clients only', async () => {
    expect((await api().get('/openapi.json')).status).toBe(401);
    const res = await api().get('/openapi.json').set('Authorization', AUTH);
    expect(res.status).toBe(200);
    expect(bodyOf(res).openapi).toMatch(/^3\./);
  });
});

describe('routing', () => {
  it('answers 404 Not Found for an unknown path', async () => {
    const res = await api().get('/nope').set('Authorization', AUTH);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 5, message: 'Not Found: no route GET /nope; the routes of both APIs are listed in GET /openapi.json on the management API', details: [] });
  });

  it('routes by case, as Maestro: /SCHEDULERS is no route', async () => {
    const res = await api().get('/SCHEDULERS').set('Authorization', AUTH);
    expect([res.status, (res.body as { message: string }).message]).toEqual([404, 'Not Found: no route GET /SCHEDULERS; the routes of both APIs are listed in GET /openapi.json on the management API']);
  });

  it.each([
    ['put', '/schedulers', '/schedulers takes GET or POST', 'GET, POST, HEAD'],
    ['delete', '/schedulers', '/schedulers takes GET or POST', 'GET, POST, HEAD'],
    ['post', '/schedulers/x/versions', '/schedulers/{schedulerName}/versions takes GET', 'GET, HEAD'],
    ['delete', '/schedulers/x/operations/abc', '/schedulers/{schedulerName}/operations/{operationId} takes GET', 'GET, HEAD'],
    ['get', '/schedulers/x/add-rooms', '/schedulers/{schedulerName}/add-rooms takes POST', 'POST'],
  ] as const)('answers 501 for %s %s (wrong method), naming the methods the path takes', async (method, path, takes, allow) => {
    const res = await api()[method](path).set('Authorization', AUTH);
    expect(res.status).toBe(501);
    expect(res.body).toEqual({ code: 12, message: `Method Not Allowed: ${takes}`, details: [] });
    expect(res.headers.allow).toBe(allow);
  });

  it('names a scheduler name longer than any message quotes by its start and its length', async () => {
    const res = await api().get(`/schedulers/${'a'.repeat(5000)}`).set('Authorization', AUTH);
    expect(res.status).toBe(404);
    expect(bodyOf(res).message).toBe(`scheduler ${'a'.repeat(64)}… (5000 characters) not found`);
  });

  it('routes GET /schedulers/info before GET /schedulers/{name}', async () => {
    t.store.seedScheduler('info-like', validSpec());
    const res = await api().get('/schedulers/info').query({ game: 'tennis' }).set('Authorization', AUTH);
    expect(res.status).toBe(200);
    expect(bodyOf(res).schedulers![0]).toMatchObject({ name: 'info-like', game: 'tennis' });
  });
});

describe('POST /schedulers', () => {
  it('creates the scheduler and its create_scheduler operation', async () => {
    const res = await api().post('/schedulers').set('Authorization', AUTH).send(validCreateBody());
    expect(res.status).toBe(200);
    expect(bodyOf(res).scheduler).toMatchObject({
      name: 'tennis-eu', game: 'tennis', state: 'creating', maxSurge: '10%', roomsReplicas: 1,
      portRange: { start: 40000, end: 60000 },
      spec: { version: 'v1.0.0', terminationGracePeriod: '100s', toleration: '', affinity: '' },
      forwarders: [], annotations: {}, labels: {},
      // Sent without one: Maestro's default, one match a room.
      matchAllocation: { maxMatches: 1 },
    });
    const stored = t.store.schedulers.get('tennis-eu');
    expect(stored?.spec).toEqual(validSpec());
    expect(bodyOf(res).operationId!).toBe(createSchedulerOperationId(stored?.metadata.uid ?? '', 1));
    const op = t.store.operations.get(bodyOf(res).operationId!);
    expect(op?.spec).toMatchObject({ schedulerName: 'tennis-eu', definitionName: 'create_scheduler', source: 'api', priority: false, cancelRequested: false, enqueuedAt: '2026-01-01T00:00:00.000Z' });
    expect(op?.spec.input).toEqual({ scheduler: { ...validSpec(), name: 'tennis-eu' } });
  });

  it('says in a Warning header which fields of the body it ignored (a misspelt roomReplicas), as kube-apiserver warns kubectl, and none when there are none; the body stays Maestro\'s', async () => {
    const clean = await api().post('/schedulers').set('Authorization', AUTH).send(validCreateBody());
    expect(clean.status).toBe(200);
    expect(clean.headers.warning).toBeUndefined();
    const spec = validSpec();
    const body = { ...validCreateBody('tennis-us'), roomReplicas: 5, spec: { ...spec.spec, containers: [{ ...spec.spec.containers[0], imagePullPolicyy: 'Always' }] }, 'we"ird\u00e9': 1 };
    const res = await api().post('/schedulers').set('Authorization', AUTH).send(body);
    expect(res.status).toBe(200);
    expect(res.headers.warning).toBe([
      '299 - "field \\"spec.containers[0].imagePullPolicyy\\" ignored, as Maestro ignores it: this request sets no such field (GET /openapi.json lists those it sets)"',
      '299 - "field \\"roomReplicas\\" ignored, as Maestro ignores it: this request sets no such field (GET /openapi.json lists those it sets)"',
      '299 - "field \\"[\\"we\\\\\\"ird\\u00e9\\"]\\" ignored, as Maestro ignores it: this request sets no such field (GET /openapi.json lists those it sets)"',
    ].join(', '));
    expect(Object.keys(bodyOf(res))).toEqual(Object.keys(bodyOf(clean)));
    expect(t.store.schedulers.get('tennis-us')?.spec.roomsReplicas).toBe(validSpec().roomsReplicas);
    const patched = await api().patch('/schedulers/tennis-us').set('Authorization', AUTH).send({ maxSurge: 2, maxSurgee: 3 });
    expect(patched.status).toBe(200);
    expect(patched.headers.warning).toBe('299 - "field \\"maxSurgee\\" ignored, as Maestro ignores it: this request sets no such field (GET /openapi.json lists those it sets)"');
    const many = await api().post('/schedulers').set('Authorization', AUTH).send({ ...validCreateBody('tennis-asia'), ...Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`x${i}`, i])) });
    expect(many.status).toBe(200);
    expect(many.headers.warning?.match(/299 - /g)).toHaveLength(11);
    expect(many.headers.warning).toMatch(/, 299 - "5 more fields ignored"$/);
  });

  it('returns the forwarder timeout as a string, as Maestro', async () => {
    const body = validCreateBody('fw', { forwarders: [{ name: 'matchmaker', enable: true, type: 'gRPC', address: 'mm:9090', options: { timeout: 1000, metadata: {} } }] });
    const res = await api().post('/schedulers').set('Authorization', AUTH).send(body);
    expect(res.status).toBe(200);
    expect(bodyOf(res).scheduler!.forwarders[0]!.options.timeout).toBe('1000');
  });

  it('shows a forwarder sent without enable as disabled, as it forwards nothing (Maestro\'s zero value, the CRD\'s default)', async () => {
    const body = validCreateBody('fw-off', { forwarders: [{ name: 'matchmaker', type: 'gRPC', address: 'mm:9090', options: { timeout: 1000 } }] });
    expect((await api().post('/schedulers').set('Authorization', AUTH).send(body)).status).toBe(200);
    const res = await api().get('/schedulers/fw-off').set('Authorization', AUTH);
    expect(res.status).toBe(200);
    expect(bodyOf(res).scheduler!.forwarders[0]!.enable).toBe(false);
  });

  it.each(['unix:/var/run/docker.sock', 'unix:///run/containerd.sock', 'dns:///mm:9090', 'http://mm:9090', 'mm', 'mm:port', '[::1]', 'a b:80'])('refuses the forwarder address %p (400, code 3) and writes nothing', async (address) => {
    const body = validCreateBody('fw', { forwarders: [{ name: 'matchmaker', enable: true, type: 'gRPC', address, options: { timeout: 1000 } }] });
    const res = await api().post('/schedulers').set('Authorization', AUTH).send(body);
    expect(res.status).toBe(400);
    expect(bodyOf(res).code).toBe(3);
    expect(bodyOf(res).details).toContainEqual(expect.objectContaining({ field: 'forwarders[0].address' }));
    expect(t.store.writes).toEqual([]);
  });

  it('refuses a forwarder type sent empty (400, code 3, naming the field and the type it takes), as Maestro does, in a create, a new version and a PATCH, instead of taking it as gRPC', async () => {
    const forwarders = [{ name: 'matchmaker', enable: true, type: '', address: 'mm:9090', options: { timeout: 1000 } }];
    const refusal = { field: 'forwarders[0].type', message: 'Unsupported value: "": supported values: "gRPC"' };
    const created = await api().post('/schedulers').set('Authorization', AUTH).send({ ...validCreateBody('fw'), forwarders });
    expect(created.status).toBe(400);
    expect(created.body).toEqual({ code: 3, message: `Validation Error:\n${refusal.field}: ${refusal.message}`, details: [refusal] });
    expect(t.store.writes).toEqual([]);
    t.store.seedScheduler('tennis-eu', validSpec());
    const { name: _name, ...definition } = validCreateBody('tennis-eu');
    const versioned = await api().post('/schedulers/tennis-eu').set('Authorization', AUTH).send({ ...definition, forwarders });
    expect([versioned.status, bodyOf(versioned).details]).toEqual([400, [refusal]]);
    const patched = await api().patch('/schedulers/tennis-eu').set('Authorization', AUTH).send({ forwarders });
    expect([patched.status, bodyOf(patched).details]).toEqual([400, [refusal]]);
    expect(t.store.writes).toEqual([]);
  });

  it.each(['mm:9090', '10.0.0.7:50051', '[fd00::7]:50051', 'matchmaker.games.svc.cluster.local:9000'])('accepts the forwarder address %p', async (address) => {
    const body = validCreateBody('fw', { forwarders: [{ name: 'matchmaker', enable: true, type: 'gRPC', address, options: { timeout: 1000 } }] });
    expect((await api().post('/schedulers').set('Authorization', AUTH).send(body)).status).toBe(200);
  });

  it('lists every violation with its field (400, code 3) and writes nothing', async () => {
    // Schema violations are found before any write; cross-field (CEL) rules are the API
    // server's (test/e2e/validation.test.ts).
    const res = await api().post('/schedulers').set('Authorization', AUTH).send({ name: 'bad-scheduler', game: 7, maxSurge: '10%', spec: { terminationGracePeriod: '100', containers: [] } });
    expect(res.status).toBe(400);
    expect(bodyOf(res).code).toBe(3);
    expect(bodyOf(res).message).toMatch(/^Validation Error:\n/);
    const fields = (bodyOf(res).details as { field: string }[]).map((d) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['game', 'spec.containers', 'spec.terminationGracePeriod']));
    expect(bodyOf(res).message!.split('\n').length).toBe(fields.length + 1);
    expect(t.store.writes).toEqual([]);
  });

  it('answers 409 when the name exists, writing nothing', async () => {
    t.store.seedScheduler('tennis-eu', validSpec());
    const res = await api().post('/schedulers').set('Authorization', AUTH).send(validCreateBody());
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ code: 6, message: 'error creating scheduler tennis-eu: name already exists', details: [] });
    expect(t.store.writes).toEqual([]);
  });

  it('answers 409 while a scheduler of that name is being deleted, saying so and when to create it again, writing nothing', async () => {
    const s = t.store.seedScheduler('tennis-eu', validSpec());
    s.metadata.deletionTimestamp = new Date('2026-01-01T00:00:00Z');
    const res = await api().post('/schedulers').set('Authorization', AUTH).send(validCreateBody());
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      code: 6,
      message: 'error creating scheduler tennis-eu: name already exists: scheduler tennis-eu is being deleted (its rooms and namespace go first); create it again once GET /schedulers/tennis-eu answers 404',
      details: [],
    });
    expect(t.store.writes).toEqual([]);
  });

  it('answers 400 for malformed JSON', async () => {
    const res = await api().post('/schedulers').set('Authorization', AUTH).set('Content-Type', 'application/json').send('{"name": ');
    expect(res.status).toBe(400);
    expect(bodyOf(res).code).toBe(3);
    expect(t.store.writes).toEqual([]);
  });

  it.each([
    ['a nested key sent twice', (text: string) => text.replace('{"name":"MODE","value":"ranked"}', '{"name":"A","value":"1"},{"name":"MODE","value":"ranked","name":"B"}'), 'spec.containers[0].environment[1].name'],
    ['"name" and "\\u006eame", which are one key', (text: string) => text.replace('{"name":"tennis-eu"', '{"name":"tennis-eu","\\u006eame":"other"'), 'name'],
    ['a key sent twice in a free-form map', (text: string) => text.replace('"annotations":{}', '"annotations":{"team":"a","team":"b"}'), 'annotations.team'],
  ])('answers 400 naming %s by its path, saying to send each key once, and creates nothing', async (_what, edit, field) => {
    const text = edit(JSON.stringify({ ...validCreateBody(), annotations: {} }));
    expect(JSON.parse(text)).toBeTruthy();
    const res = await api().post('/schedulers').set('Authorization', AUTH).set('Content-Type', 'application/json').send(text);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 3, message: `Validation Error:\n${field}: ${DUPLICATE_KEY}`, details: [{ field, message: DUPLICATE_KEY }] });
    expect(t.store.writes).toEqual([]);
    expect((await api().get('/schedulers/tennis-eu').set('Authorization', AUTH)).status).toBe(404);
  });

  it('answers 400 for a field sent in both spellings (max_surge and maxSurge), which protojson counts as one field sent twice, naming it, on create and PATCH, and writes nothing', async () => {
    const create = await api().post('/schedulers').set('Authorization', AUTH).send({ ...validCreateBody(), max_surge: '50%' });
    expect(create.status).toBe(400);
    expect(create.body).toEqual({ code: 3, message: expect.stringMatching(/^Validation Error:\nmaxSurge: duplicate key: sent as both max_surge and maxSurge, .*send it once/) as unknown, details: [{ field: 'maxSurge', message: expect.stringContaining('send it once') as unknown }] });
    expect((await api().get('/schedulers/tennis-eu').set('Authorization', AUTH)).status).toBe(404);
    t.store.seedScheduler('tennis-eu', validSpec());
    t.store.writes.length = 0;
    const patch = await api().patch('/schedulers/tennis-eu').set('Authorization', AUTH).send({ spec: { containers: [{ imagePullPolicy: 'Never', image_pull_policy: 'Always' }] } });
    expect(patch.status).toBe(400);
    expect(bodyOf(patch).details).toEqual([{ field: 'spec.containers[0].imagePullPolicy', message: expect.stringMatching(/^duplicate key: sent as both image_pull_policy and imagePullPolicy/) as unknown }]);
    expect(t.store.writes).toEqual([]);
    expect(t.store.schedulers.get('tennis-eu')?.spec).toEqual(validSpec());
  });

  it('names every key sent twice, in the order sent', async () => {
    const text = JSON.stringify(validCreateBody()).replace('{"name":"tennis-eu"', '{"name":"tennis-eu","game":"x","name":"y"').replace('"image":', '"image":"a","image":');
    const res = await api().post('/schedulers').set('Authorization', AUTH).set('Content-Type', 'application/json').send(text);
    expect(res.status).toBe(400);
    expect(bodyOf(res).details).toEqual([{ field: 'name', message: DUPLICATE_KEY }, { field: 'game', message: DUPLICATE_KEY }, { field: 'spec.containers[0].image', message: DUPLICATE_KEY }]);
    expect(t.store.writes).toEqual([]);
  });

  it.each([[10, []], [11, [{ field: '(body)', message: 'and 1 more duplicate key, not named here (only the first 10 are); send each key once' }]],
    [15, [{ field: '(body)', message: 'and 5 more duplicate keys, not named here (only the first 10 are); send each key once' }]]])(
    'names the first 10 of %i keys sent twice and says how many more were not named', async (count, more) => {
      const labels = Array.from({ length: count }, (_, i) => `"k${i}":"a","k${i}":"b"`).join(',');
      const text = JSON.stringify({ ...validCreateBody(), labels: {} }).replace('"labels":{}', `"labels":{${labels}}`);
      const res = await api().post('/schedulers').set('Authorization', AUTH).set('Content-Type', 'application/json').send(text);
      expect(res.status).toBe(400);
      const named = Array.from({ length: 10 }, (_, i) => ({ field: `labels.k${i}`, message: DUPLICATE_KEY }));
      expect(bodyOf(res).details).toEqual([...named, ...more]);
      expect(bodyOf(res).message).toBe(`Validation Error:\n${[...named, ...more].map((d) => `${d.field}: ${d.message}`).join('\n')}`);
      expect(t.store.writes).toEqual([]);
    });

  it('reads a body in another UTF charset as the body parser does to find a key sent twice in it', async () => {
    const server = http.createServer(t.management);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const post = async (text: string) => fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/schedulers`, {
      method: 'POST', headers: { authorization: AUTH, 'content-type': 'application/json; charset=utf-16le' }, body: Buffer.from(text, 'utf16le'),
    });
    try {
      const twice = await post(JSON.stringify(validCreateBody()).replace('{"name":"tennis-eu"', '{"name":"tennis-eu","\\u006eame":"tennis-é"'));
      expect(twice.status).toBe(400);
      expect(await twice.json()).toEqual({ code: 3, message: `Validation Error:\nname: ${DUPLICATE_KEY}`, details: [{ field: 'name', message: DUPLICATE_KEY }] });
      expect(t.store.writes).toEqual([]);
      expect((await post(JSON.stringify(validCreateBody('tennis-utf16')))).status).toBe(200);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('answers a body nested too deep with the depth limit first, also when it sends a key twice', async () => {
    const text = '{"name":"a","name":"b","x":' + '['.repeat(40) + ']'.repeat(40) + '}';
    const res = await api().post('/schedulers').set('Authorization', AUTH).set('Content-Type', 'application/json').send(text);
    expect(res.status).toBe(400);
    expect(bodyOf(res)).toMatchObject({ code: 3, details: [{ field: 'x', message: 'nests deeper than the 32 levels of objects and arrays a body may hold (no field of this API needs more); send it flatter' }] });
    expect(t.store.writes).toEqual([]);
  });

  it('answers a number beyond a double (read as Infinity) with 400 naming its field, not as the null JSON would write it', async () => {
    t.store.seedScheduler('tennis-eu', validSpec());
    const res = await api().patch('/schedulers/tennis-eu').set('Authorization', AUTH).set('Content-Type', 'application/json').send('{"roomsReplicas":1e400}');
    expect(res.status).toBe(400);
    expect(bodyOf(res).details).toEqual([{ field: 'roomsReplicas', message: NUMBER_TOO_LARGE }]);
    const create = await api().post('/schedulers').set('Authorization', AUTH).set('Content-Type', 'application/json')
      .send(JSON.stringify(validCreateBody('tennis-us')).replace('"start":40000', '"start":-1e999'));
    expect(bodyOf(create).details).toEqual([{ field: 'portRange.start', message: NUMBER_TOO_LARGE }]);
    expect(t.store.writes).toEqual([]);
  });

  it('answers text that is not Unicode (a lone surrogate in a value or a key, bytes that are not UTF-8) with 400 naming where, writing nothing: the API server would store U+FFFD instead', async () => {
    t.store.seedScheduler('tennis-eu', validSpec());
    const send = (body: string) => api().post('/schedulers').set('Authorization', AUTH).set('Content-Type', 'application/json').send(body);
    const text = JSON.stringify(validCreateBody('tennis-us'));
    const game = await send(text.replace(/"game":"[^"]*"/, '"game":"g\\ud800x"'));
    expect(game.status).toBe(400);
    expect(bodyOf(game).details).toEqual([{ field: 'game', message: NOT_UNICODE }]);
    const key = await api().patch('/schedulers/tennis-eu').set('Authorization', AUTH).set('Content-Type', 'application/json').send('{"annotations":{"\\udfffa":"b"}}');
    expect(bodyOf(key).details).toEqual([{ field: 'annotations["\\udfffa"]', message: `(the key) ${NOT_UNICODE}` }]);
    const at = text.indexOf('"game":"') + '"game":"'.length;
    // A Buffer as it is: superagent would write a JSON-typed Buffer as {"type":"Buffer",…}.
    const bytes = await api().post('/schedulers').set('Authorization', AUTH).set('Content-Type', 'application/json').serialize((b: unknown) => b as string).send(Buffer.concat([Buffer.from(`${text.slice(0, at)}g`), Buffer.from([0xff, 0xfe]), Buffer.from(text.slice(text.indexOf('"', at)))]));
    expect(bytes.status).toBe(400);
    expect(bodyOf(bytes).details).toEqual([{ field: '(body)', message: 'is not UTF-8 text: it holds bytes that no UTF-8 character is made of; send the body as UTF-8, or name its charset in Content-Type' }]);
    // A pair of surrogates is a character, and is taken.
    expect((await send(text.replace(/"game":"[^"]*"/, '"game":"g\\ud83d\\ude00x"'))).status).toBe(200);
    expect(t.store.writes.filter((w) => JSON.stringify(w).includes('\ufffd'))).toEqual([]);
  });

  it.each([['POST', '/schedulers'], ['PATCH', '/schedulers/tennis-eu'], ['POST', '/schedulers/tennis-eu']])('%s %s answers 400 for a JSON array, saying the body must be an object', async (method, path) => {
    t.store.seedScheduler('tennis-eu', validSpec());
    const req = method === 'PATCH' ? api().patch(path) : api().post(path);
    const res = await req.set('Authorization', AUTH).send([]);
    expect(res.status).toBe(400);
    expect(bodyOf(res).message).toBe('the body must be a JSON object; got an array');
    expect(t.store.writes).toEqual([]);
  });

  it.each([['null', 'null'], ['5', 'number'], ['"x"', 'string'], ['true', 'boolean']])('answers 400 for the JSON %s, a body that is JSON but no object, saying so', async (body, type) => {
    const res = await api().post('/schedulers').set('Authorization', AUTH).set('Content-Type', 'application/json').send(body);
    expect(res.status).toBe(400);
    expect(bodyOf(res).message).toBe(`the body must be a JSON object; got ${type}`);
    expect(t.store.writes).toEqual([]);
  });

  it('answers 413 as soon as the headers declare a body over the limit, before any of it is sent', async () => {
    const server = createHttpServer(t.management, { ...MANAGEMENT_TIMEOUTS, maxConnections: 0 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
    try {
      const answer = new Promise<string>((resolve) => socket.once('data', (c: Buffer) => resolve(c.toString('latin1'))));
      socket.write(`POST /schedulers HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Type: application/json\r\nContent-Length: ${MAX_BODY * 2}\r\n\r\n{`);
      expect(await answer).toMatch(/^HTTP\/1\.1 413 [\s\S]*request body is larger than the limit/);
      expect(t.store.writes).toEqual([]);
    } finally {
      socket.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it.each(['gzip', 'zstd'])('answers 400 saying the body could not be decompressed when its Content-Encoding (%s) does not match it', async (encoding) => {
    const server = createHttpServer(t.management, { ...MANAGEMENT_TIMEOUTS, maxConnections: 0 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
    try {
      const answer = new Promise<string>((resolve) => {
        let text = '';
        socket.on('data', (c: Buffer) => {
          text += c.toString('latin1');
          if (text.includes('}')) resolve(text);
        });
      });
      socket.write(`POST /schedulers HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Type: application/json\r\nContent-Encoding: ${encoding}\r\nContent-Length: 7\r\n\r\nnotgzip`);
      expect(await answer).toMatch(/^HTTP\/1\.1 400 [\s\S]*"the request body could not be decompressed as its Content-Encoding says; send it uncompressed, or compressed whole with gzip, deflate, br or zstd"/);
      expect(t.store.writes).toEqual([]);
    } finally {
      socket.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('answers 413 for a body over the limit', async () => {
    const res = await api().post('/schedulers').set('Authorization', AUTH).send({ ...validCreateBody(), game: 'x'.repeat(MAX_BODY + 10) });
    expect(res.status).toBe(413);
    expect(bodyOf(res).code).toBe(3);
    expect(bodyOf(res).message).toContain(String(MAX_BODY));
    expect(t.store.writes).toEqual([]);
  });
});

describe('POST /schedulers/{name} (new version)', () => {
  it('updates the spec and enqueues the operation of the new generation', async () => {
    const s = t.store.seedScheduler('tennis-eu', validSpec());
    const res = await api().post('/schedulers/tennis-eu').set('Authorization', AUTH).send(validCreateBody('ignored', { maxSurge: 3 }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ operationId: newVersionOperationId(s.metadata.uid ?? '', 2) });
    expect(t.store.schedulers.get('tennis-eu')?.spec.maxSurge).toBe(3);
    const op = t.store.operations.get(bodyOf(res).operationId!);
    expect(op?.spec).toMatchObject({ definitionName: 'create_new_scheduler_version', input: { scheduler: { ...validSpec({ maxSurge: 3 }), name: 'tennis-eu' } } });
  });

  it('answers 404 for an unknown scheduler', async () => {
    const res = await api().post('/schedulers/nope').set('Authorization', AUTH).send(validCreateBody());
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 5, message: 'scheduler nope not found', details: [] });
  });

  it('answers 400 (validation) and writes nothing', async () => {
    t.store.seedScheduler('tennis-eu', validSpec());
    const res = await api().post('/schedulers/tennis-eu').set('Authorization', AUTH).send({});
    expect(res.status).toBe(400);
    expect(bodyOf(res).code).toBe(3);
    expect(t.store.writes).toEqual([]);
  });

  it.each(['create_new_scheduler_version', 'switch_active_version'])('answers 400 (FailedPrecondition) while a %s operation is pending', async (definitionName) => {
    t.store.seedScheduler('tennis-eu', validSpec());
    t.store.seedOperation('op-1', { schedulerName: 'tennis-eu', definitionName });
    const res = await api().post('/schedulers/tennis-eu').set('Authorization', AUTH).send(validCreateBody('tennis-eu', { maxSurge: 3 }));
    expect(res.status).toBe(400);
    expect(bodyOf(res).code).toBe(9);
    expect(t.store.writes).toEqual([]);
  });

  it('is not blocked by a finished version operation', async () => {
    t.store.seedScheduler('tennis-eu', validSpec());
    t.store.seedOperation('op-1', { schedulerName: 'tennis-eu', definitionName: 'create_new_scheduler_version' }, { status: 'finished' });
    const res = await api().post('/schedulers/tennis-eu').set('Authorization', AUTH).send(validCreateBody('tennis-eu', { maxSurge: 3 }));
    expect(res.status).toBe(200);
  });

  it('answers 409 when the definition is unchanged', async () => {
    t.store.seedScheduler('tennis-eu', validSpec());
    const res = await api().post('/schedulers/tennis-eu').set('Authorization', AUTH).send(validCreateBody('tennis-eu'));
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ code: 6, message: 'no change found to scheduler tennis-eu', details: [] });
    expect(t.store.writes).toEqual([]);
  });

  it('retries after conflicts (the operator writes status often), then answers 409 (Aborted)', async () => {
    t.store.seedScheduler('tennis-eu', validSpec());
    t.store.conflictsToInject = 1;
    const ok = await api().post('/schedulers/tennis-eu').set('Authorization', AUTH).send(validCreateBody('tennis-eu', { maxSurge: 3 }));
    expect(ok.status).toBe(200);
    t.store.operations.clear();
    t.store.conflictsToInject = 5;
    const lost = await api().post('/schedulers/tennis-eu').set('Authorization', AUTH).send(validCreateBody('tennis-eu', { maxSurge: 4 }));
    expect(lost.status).toBe(409);
    expect(bodyOf(lost).code).toBe(10);
    expect(t.store.operations.size).toBe(0);
  });
});

describe('PATCH /schedulers/{name}', () => {
  it('merges fields and containers by index', async () => {
    t.store.seedScheduler('tennis-eu', validSpec());
    const res = await api().patch('/schedulers/tennis-eu').set('Authorization', AUTH).send({ roomsReplicas: 5, spec: { containers: [{ image: 'registry.example/game:2.0' }] } });
    expect(res.status).toBe(200);
    const spec = t.store.schedulers.get('tennis-eu')?.spec;
    expect(spec?.roomsReplicas).toBe(5);
    expect(spec?.spec.containers[0]).toMatchObject({ name: 'game', image: 'registry.example/game:2.0', ports: [{ name: 'game', protocol: 'udp', port: 7777 }] });
    expect(t.store.operations.get(bodyOf(res).operationId!)?.spec.definitionName).toBe('create_new_scheduler_version');
  });

  it('refuses a patch that sends a container\'s key twice, naming it, and leaves the scheduler as it was', async () => {
    t.store.seedScheduler('tennis-eu', validSpec());
    t.store.writes.length = 0;
    const res = await api().patch('/schedulers/tennis-eu').set('Authorization', AUTH).set('Content-Type', 'application/json')
      .send('{"spec":{"containers":[{"image":"registry.example/game:2.0","image":"registry.example/game:3.0"}]}}');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 3, message: `Validation Error:\nspec.containers[0].image: ${DUPLICATE_KEY}`, details: [{ field: 'spec.containers[0].image', message: DUPLICATE_KEY }] });
    expect(t.store.writes).toEqual([]);
    expect(t.store.schedulers.get('tennis-eu')?.spec).toEqual(validSpec());
  });

  it('builds on the active version when the spec\'s own version change was refused: maxSurge alone is a minor change, the refused image is dropped, the room count kept', async () => {
    const s = t.store.seedScheduler('tennis-eu', validSpec());
    // A kubectl edit (generation 2) whose create_new_scheduler_version failed validation.
    s.spec = { ...validSpec({ roomsReplicas: 4 }), spec: { ...validSpec().spec, containers: [{ ...validSpec().spec.containers[0]!, image: 'registry.example/game:broken' }] } };
    s.metadata.generation = 2;
    t.store.seedOperation(newVersionOperationId(s.metadata.uid ?? '', 2), { schedulerName: 'tennis-eu', definitionName: 'create_new_scheduler_version' }, { status: 'error' });
    const res = await api().patch('/schedulers/tennis-eu').set('Authorization', AUTH).send({ maxSurge: '50%' });
    expect(res.status).toBe(200);
    expect(t.store.schedulers.get('tennis-eu')?.spec).toEqual({ ...validSpec({ roomsReplicas: 4 }), maxSurge: '50%' });
    // A refusal of an older generation does not count: the spec as it stands is built on.
    const later = t.store.seedScheduler('tennis-us', validSpec());
    later.spec = { ...validSpec(), spec: { ...validSpec().spec, containers: [{ ...validSpec().spec.containers[0]!, image: 'registry.example/game:3.0' }] } };
    later.metadata.generation = 3;
    t.store.seedOperation(newVersionOperationId(later.metadata.uid ?? '', 2), { schedulerName: 'tennis-us', definitionName: 'create_new_scheduler_version' }, { status: 'error' });
    expect((await api().patch('/schedulers/tennis-us').set('Authorization', AUTH).send({ maxSurge: '50%' })).status).toBe(200);
    expect(t.store.schedulers.get('tennis-us')?.spec.spec.containers[0]?.image).toBe('registry.example/game:3.0');
  });

  it('builds on the active version when the spec\'s version was made but its switch was canceled: a PATCH drops the declined image, and the same definition sent again is tried again, not 409', async () => {
    const s = t.store.seedScheduler('tennis-eu', validSpec());
    const declined = { ...validSpec(), spec: { ...validSpec().spec, containers: [{ ...validSpec().spec.containers[0]!, image: 'registry.example/game:declined' }] } };
    s.spec = declined;
    s.metadata.generation = 2;
    const made = newVersionOperationId(s.metadata.uid ?? '', 2);
    t.store.seedOperation(made, { schedulerName: 'tennis-eu', definitionName: 'create_new_scheduler_version' }, { status: 'finished', executionHistory: [
      { createdAt: '2026-12-05T12:00:00Z', event: 'Created version v2.0.0' },
      { createdAt: '2026-12-05T12:00:00Z', event: 'enqueued switch active version operation with id: sw-1' },
    ] });
    t.store.seedOperation('sw-1', { schedulerName: 'tennis-eu', definitionName: 'switch_active_version', input: { newActiveVersion: 'v2.0.0' } }, { status: 'canceled' });
    // The same definition sent again: another attempt of the change, whose switch the user declined.
    const again = await api().post('/schedulers/tennis-eu').set('Authorization', AUTH).send({ ...validCreateBody('tennis-eu'), spec: declined.spec });
    expect([again.status, bodyOf(again).operationId]).toEqual([200, nextAttemptId(made)]);
    t.store.operations.delete(nextAttemptId(made));
    // Another change builds on what runs: the declined image is not rolled out with it.
    const res = await api().patch('/schedulers/tennis-eu').set('Authorization', AUTH).send({ maxSurge: '50%' });
    expect(res.status).toBe(200);
    expect(t.store.schedulers.get('tennis-eu')?.spec).toEqual({ ...validSpec(), maxSurge: '50%' });
  });

  it("answers a write an admission policy denies with 403 (code 7) naming the request and the policy's words, on every management write: one mapping", async () => {
    const denied = (message: string) => Object.assign(new Error('HTTP-Code: 403'), {
      code: 403, body: JSON.stringify({ kind: 'Status', code: 403, reason: 'Forbidden', message }),
    });
    const policy = "ValidatingAdmissionPolicy 'game-freeze' with binding 'game-freeze-all' denied request: no changes during the tournament";
    t.store.createScheduler = () => Promise.reject(denied(`schedulers.roomkeeper.io "tennis-eu" is forbidden: ${policy}`));
    const created = await api().post('/schedulers').set('Authorization', AUTH).send(validCreateBody('tennis-eu'));
    expect(created.status).toBe(403);
    expect(created.body).toMatchObject({ code: 7, details: [{ reason: 'KUBERNETES_ADMISSION_DENIED', request: 'create schedulers.roomkeeper.io', admission: "ValidatingAdmissionPolicy 'game-freeze' (binding 'game-freeze-all')", kubernetesReason: policy }] });
    expect(String(bodyOf(created).message)).toContain("refused the gateway's own request to create schedulers.roomkeeper.io: ValidatingAdmissionPolicy 'game-freeze' (binding 'game-freeze-all') denied it (" + policy + '): the request was not carried out');

    t.store.seedScheduler('tennis-eu', validSpec());
    t.store.createOperation = () => Promise.reject(denied(`operations.roomkeeper.io "op" is forbidden: ${policy}`));
    const added = await api().post('/schedulers/tennis-eu/add-rooms').set('Authorization', AUTH).send({ amount: 1 });
    expect(added.status).toBe(403);
    expect(added.body).toMatchObject({ code: 7, details: [{ reason: 'KUBERNETES_ADMISSION_DENIED', request: 'create operations.roomkeeper.io' }] });
  });

  it('takes one of two switches, or of a switch and a change, sent at once, and refuses the others with code 9: each waits for the one before it to be enqueued, and its guard sees it', async () => {
    t.store.seedScheduler('tennis-eu', validSpec());
    t.store.seedVersion('tennis-eu', 'v1.1.0', validSpec());
    // The guard's read of the operations and the enqueue take a while, as over the network: each
    // request's read would come before the other's operation is enqueued.
    const pause = () => new Promise((resolve) => setTimeout(resolve, 20));
    const list = t.store.listOperations.bind(t.store);
    t.store.listOperations = async (...args) => {
      await pause();
      return list(...args);
    };
    const create = t.store.createOperation.bind(t.store);
    t.store.createOperation = async (...args) => {
      await pause();
      return create(...args);
    };
    const put = (version: string) => api().put('/schedulers/tennis-eu').set('Authorization', AUTH).send({ version });
    const answers = await Promise.all([put('v1.0.0'), put('v1.1.0'), api().patch('/schedulers/tennis-eu').set('Authorization', AUTH).send({ maxSurge: '15' })]);
    // Whichever came first is taken (each request has a server of its own here).
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400, 400]);
    const first = String(bodyOf(answers.find((r) => r.status === 200)!).operationId);
    const taken = t.store.operations.get(first);
    expect([...t.store.operations.keys()]).toEqual([first]);
    for (const refused of answers.filter((r) => r.status === 400)) {
      expect(bodyOf(refused)).toMatchObject({ code: 9, message: `scheduler tennis-eu has an ongoing version operation (${String(taken?.spec.definitionName)} ${first} is pending); retry once it has finished (GET /schedulers/tennis-eu/operations), or cancel it (POST /schedulers/tennis-eu/operations/${first}/cancel)` });
    }
  });

  it('refuses a change that lost its write to another change of the spec (parallel requests, another replica, kubectl) with code 9, as if it had come a moment later; one that lost to a status write or to a move of the count alone is written', async () => {
    const s = t.store.seedScheduler('tennis-eu', validSpec());
    const write = t.store.updateSchedulerSpec.bind(t.store);
    // Another request's change lands between this one's read and its write; its operation is not enqueued yet.
    let concurrent: (() => void) | undefined = () => {
      s.spec = { ...validSpec(), maxSurge: '14' };
      s.metadata.generation = (s.metadata.generation ?? 1) + 1;
      s.metadata.resourceVersion = `${s.metadata.resourceVersion ?? ''}9`;
    };
    t.store.updateSchedulerSpec = (...args) => {
      concurrent?.();
      concurrent = undefined;
      return write(...args);
    };
    const lost = await api().patch('/schedulers/tennis-eu').set('Authorization', AUTH).send({ maxSurge: '15' });
    const pending = newVersionOperationId(s.metadata.uid ?? '', s.metadata.generation ?? 0);
    expect([lost.status, bodyOf(lost)]).toEqual([400, expect.objectContaining({ code: 9, message: `scheduler tennis-eu has an ongoing version operation (create_new_scheduler_version ${pending} is being enqueued, for a change written just before this one, generation ${String(s.metadata.generation)}); retry once it has finished (GET /schedulers/tennis-eu/operations), or cancel it (POST /schedulers/tennis-eu/operations/${pending}/cancel)` })]);
    expect(s.spec.maxSurge).toBe('14');
    // Once that change's operation finished, a change is written; a conflict with a status write alone is retried.
    t.store.seedOperation(pending, { schedulerName: 'tennis-eu', definitionName: 'create_new_scheduler_version' }, { status: 'finished' });
    t.store.conflictsToInject = 1;
    expect((await api().patch('/schedulers/tennis-eu').set('Authorization', AUTH).send({ maxSurge: '15' })).status).toBe(200);
    expect(s.spec.maxSurge).toBe('15');
    // Losing to a move of the count alone (an add-rooms, a kubectl scale) is no version change to wait
    // for: the change is written on it, and a count it sends replaces that one, as a later scale would.
    t.store.seedOperation(newVersionOperationId(s.metadata.uid ?? '', s.metadata.generation ?? 0), { schedulerName: 'tennis-eu', definitionName: 'create_new_scheduler_version' }, { status: 'finished' });
    concurrent = () => {
      s.spec = { ...s.spec, roomsReplicas: 7 };
      s.metadata.generation = (s.metadata.generation ?? 1) + 1;
    };
    expect((await api().patch('/schedulers/tennis-eu').set('Authorization', AUTH).send({ roomsReplicas: 0 })).status).toBe(200);
    expect([s.spec.roomsReplicas, s.spec.maxSurge]).toEqual([0, '15']);
  });

  it.each([
    ['an empty object', {}, ''],
    ['no body', undefined, ''],
    ['matchAllocation {} on a scheduler without one (its default, one match per room)', { matchAllocation: {} }, ''],
    ['allocation at its default TTL cap on a scheduler without one', { allocation: { maxTtlSeconds: 300 } }, ''],
    ['only unknown fields', { colour: 'red' }, ': PATCH ignores colour; not fields of a scheduler: colour (the fields are listed in GET /openapi.json)'],
    ['only game, which PATCH does not change', { game: 'squash' },
      ': PATCH ignores game; game is changed with the whole definition: POST /schedulers/tennis-eu (GET /schedulers/tennis-eu gives it), or kubectl edit rks tennis-eu'],
    ['only name, which the path gives', { name: 'tennis-us' },
      ': PATCH ignores name; the path names the scheduler, and a scheduler is never renamed: create one under the new name (POST /schedulers) and delete this one'],
    ['only fields sent as null', { spec: null, autoscaling: null },
      ': PATCH ignores spec, autoscaling; sent as null, which is read as not set (as Maestro reads it): spec, autoscaling'],
    ['only an empty list', { forwarders: [] },
      ': PATCH ignores forwarders; sent as an empty list, which is read as not set (as Maestro reads it): forwarders; '
      + 'to remove every item of a list, send the whole definition without them: POST /schedulers/tennis-eu (GET /schedulers/tennis-eu gives it)'],
    ['only empty lists inside fields (the containers, a container\'s command), as protojson emits them', { forwarders: [], spec: { containers: [{ command: [], environment: [] }] } },
      ': PATCH ignores forwarders, spec.containers[0].command, spec.containers[0].environment; sent as an empty list, which is read as not set (as Maestro reads it): forwarders, spec.containers[0].command, spec.containers[0].environment; '
      + 'to remove every item of a list, send the whole definition without them: POST /schedulers/tennis-eu (GET /schedulers/tennis-eu gives it)'],
    ['an empty containers list', { spec: { containers: [] } },
      ': PATCH ignores spec.containers; sent as an empty list, which is read as not set (as Maestro reads it): spec.containers; '
      + 'to remove every item of a list, send the whole definition without them: POST /schedulers/tennis-eu (GET /schedulers/tennis-eu gives it)'],
    ['an unknown field sent as an empty list or as null, which is no field of a scheduler whatever its value', { notAField: [], colour: null },
      ': PATCH ignores notAField, colour; not fields of a scheduler: notAField, colour (the fields are listed in GET /openapi.json)'],
    ['known fields (in either spelling) and unknown ones, each sent as an empty list or as null', { forwarders: [], not_a_field: [], max_surge: null, colour: null },
      ': PATCH ignores forwarders, not_a_field, max_surge, colour; sent as null, which is read as not set (as Maestro reads it): max_surge; '
      + 'sent as an empty list, which is read as not set (as Maestro reads it): forwarders; '
      + 'to remove every item of a list, send the whole definition without them: POST /schedulers/tennis-eu (GET /schedulers/tennis-eu gives it); '
      + 'not fields of a scheduler: not_a_field, colour (the fields are listed in GET /openapi.json)'],
  ])('answers 409 "no change found" for %s, naming the fields it ignored', async (_what, body, ignored) => {
    t.store.seedScheduler('tennis-eu', validSpec());
    const req = api().patch('/schedulers/tennis-eu').set('Authorization', AUTH);
    const res = body === undefined ? await req : await req.send(body);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ code: 6, message: `no change found to scheduler tennis-eu${ignored}`, details: [] });
    expect(t.store.writes).toEqual([]);
  });

  it('reads a field sent as null as not set, as Maestro (protojson) and kube-apiserver do: a Go client\'s nil maps, slices and pointers', async () => {
    const body = {
      ...validCreateBody('nulls'), autoscaling: null, matchAllocation: null, labels: null, annotations: null,
      forwarders: [{ name: 'f', enable: true, type: 'gRPC', address: '127.0.0.1:9000', options: { timeout: null, metadata: null } }],
      spec: { ...validSpec().spec, toleration: null, affinity: null, containers: [{ ...validSpec().spec.containers[0], command: null, ports: [{ name: 'game', protocol: 'udp', port: 7777, hostPortRange: null }] }] },
    };
    const created = await api().post('/schedulers').set('Authorization', AUTH).send(body);
    expect(created.status).toBe(200);
    const stored = t.store.schedulers.get('nulls')?.spec;
    expect(JSON.stringify(stored)).not.toContain('null');
    expect(stored).toMatchObject({ forwarders: [{ name: 'f' }], spec: { containers: [{ ports: [{ name: 'game', port: 7777 }] }] } });
    expect(stored?.autoscaling).toBeUndefined();
    expect(stored?.spec.containers[0]?.command).toBeUndefined();
    const patched = await api().patch('/schedulers/nulls').set('Authorization', AUTH).send({ maxSurge: '2', autoscaling: null, spec: { containers: null, toleration: null } });
    expect(patched.status).toBe(200);
    expect(t.store.schedulers.get('nulls')?.spec).toMatchObject({ maxSurge: '2', spec: { containers: [{ image: 'registry.example/game:1.0' }] } });
  });

  it('reads a list sent empty as not set, as Maestro (protojson) does, so a Go client that emits empty lists (EmitUnpopulated) changes only what it sets: forwarders, command, environment and ports are kept', async () => {
    const forwarder = { name: 'mm', enable: true, type: 'gRPC' as const, address: 'mm.example:9000' };
    t.store.seedScheduler('tennis-eu', validSpec({ forwarders: [forwarder] }));
    const res = await api().patch('/schedulers/tennis-eu').set('Authorization', AUTH)
      .send({ maxSurge: '20%', forwarders: [], annotations: {}, labels: {}, spec: { containers: [{ image: 'registry.example/game:2.0', command: [], environment: [], ports: [] }] } });
    expect(res.status).toBe(200);
    expect(t.store.schedulers.get('tennis-eu')?.spec).toEqual({
      ...validSpec({ forwarders: [forwarder], maxSurge: '20%' }),
      spec: { ...validSpec().spec, containers: [{ ...validSpec().spec.containers[0]!, image: 'registry.example/game:2.0' }] },
    });
  });

  it('reads a field sent as null as not set in the add-rooms, remove-rooms and switch bodies too', async () => {
    t.store.seedScheduler('nulls', validSpec());
    t.store.seedVersion('nulls', 'v1.1.0', validSpec());
    const removed = await api().post('/schedulers/nulls/remove-rooms').set('Authorization', AUTH).send({ roomsIds: ['nulls-abcde'], amount: null });
    expect(removed.status).toBe(200);
    expect(t.store.operations.get(bodyOf(removed).operationId!)?.spec.input).toEqual({ roomsIds: ['nulls-abcde'], reason: 'api' });
    const byAmount = await api().post('/schedulers/nulls/remove-rooms').set('Authorization', AUTH).send({ amount: 1, roomsIds: null });
    expect(t.store.operations.get(bodyOf(byAmount).operationId!)?.spec.input).toEqual({ amount: 1 });
    const noAmount = await api().post('/schedulers/nulls/add-rooms').set('Authorization', AUTH).send({ amount: null });
    expect(noAmount.body).toEqual({ code: 3, message: 'Validation Error:\namount: is a required field', details: [{ field: 'amount', message: 'is a required field' }] });
    const switched = await api().put('/schedulers/nulls').set('Authorization', AUTH).send({ version: 'v1.1.0', newActiveVersion: null });
    expect(switched.status).toBe(200);
    expect(t.store.operations.get(bodyOf(switched).operationId!)?.spec.input).toEqual({ newActiveVersion: 'v1.1.0' });
    expect(bodyOf(await api().put('/schedulers/nulls').set('Authorization', AUTH).send({ version: null })).details).toEqual([{ field: 'version', message: 'is a required field' }]);
  });

  it('validates the merged result', async () => {
    t.store.seedScheduler('tennis-eu', validSpec());
    const res = await api().patch('/schedulers/tennis-eu').set('Authorization', AUTH).send({ spec: { terminationGracePeriod: '100' } });
    expect(res.status).toBe(400);
    expect(bodyOf(res).details).toEqual([expect.objectContaining({ field: 'spec.terminationGracePeriod' })]);
    expect(t.store.writes).toEqual([]);
  });

  it('rejects a body of the wrong shape', async () => {
    t.store.seedScheduler('tennis-eu', validSpec());
    const res = await api().patch('/schedulers/tennis-eu').set('Authorization', AUTH).send({ spec: { containers: 'nope' } });
    expect(res.status).toBe(400);
  });

  it('sees its own version operation even when the operations cache lags', async () => {
    t.store.seedScheduler('tennis-eu', validSpec());
    t.store.listOperations = () => Promise.resolve([]);
    expect((await api().patch('/schedulers/tennis-eu').set('Authorization', AUTH).send({ roomsReplicas: 2 })).status).toBe(200);
    const second = await api().patch('/schedulers/tennis-eu').set('Authorization', AUTH).send({ roomsReplicas: 3 });
    expect(second.status).toBe(400);
    expect(bodyOf(second).code).toBe(9);
    for (const op of t.store.operations.values()) op.status = { status: 'finished' };
    expect((await api().patch('/schedulers/tennis-eu').set('Authorization', AUTH).send({ roomsReplicas: 3 })).status).toBe(200);
  });

  it('answers 404 for an unknown scheduler', async () => {
    const res = await api().patch('/schedulers/nope').set('Authorization', AUTH).send({ roomsReplicas: 2 });
    expect(res.status).toBe(404);
  });

  it('answers 400 (code 9) while a version operation is in progress', async () => {
    t.store.seedScheduler('tennis-eu', validSpec());
    t.store.seedOperation('op-1', { schedulerName: 'tennis-eu', definitionName: 'switch_active_version' }, { status: 'in_progress' });
    const res = await api().patch('/schedulers/tennis-eu').set('Authorization', AUTH).send({ roomsReplicas: 2 });
    expect(res.status).toBe(400);
    expect(bodyOf(res).code).toBe(9);
  });

  it('does not hold up a change for the version operation of an add-rooms or remove-rooms (a move of the count alone, and its switch), which no user asked for; a real one holds it up', async () => {
    t.store.seedScheduler('tennis-eu', validSpec());
    t.store.seedVersion('tennis-eu', 'v1.1.0', validSpec({ roomsReplicas: 7 }), '2026-01-02T00:00:00.000Z');
    t.store.seedOperation('count', { schedulerName: 'tennis-eu', definitionName: 'create_new_scheduler_version', input: { ...schedulerDefinitionInput('tennis-eu', validSpec({ roomsReplicas: 7 })) } }, { status: 'in_progress' });
    t.store.seedOperation('count-switch', { schedulerName: 'tennis-eu', definitionName: 'switch_active_version', source: 'operator', input: { newActiveVersion: 'v1.1.0' } }, { status: 'pending' });
    expect((await api().patch('/schedulers/tennis-eu').set('Authorization', AUTH).send({ roomsReplicas: 0 })).status).toBe(200);
    t.store.seedOperation('image', { schedulerName: 'tennis-eu', definitionName: 'create_new_scheduler_version', input: { ...schedulerDefinitionInput('tennis-eu', { ...validSpec(), maxSurge: '50%' }) } }, { status: 'pending' });
    const held = await api().patch('/schedulers/tennis-eu').set('Authorization', AUTH).send({ roomsReplicas: 1 });
    expect([held.status, bodyOf(held).code, bodyOf(held).message]).toEqual([400, 9, expect.stringContaining('create_new_scheduler_version image is pending')]);
  });

  it('tells a change that would not be taken its validation errors (code 3) while a version operation is in progress, as it would start nothing; only a valid one is told to wait (code 9)', async () => {
    t.store.seedScheduler('tennis-eu', validSpec());
    t.store.seedOperation('op-1', { schedulerName: 'tennis-eu', definitionName: 'create_new_scheduler_version' }, { status: 'in_progress' });
    // Valid as a PATCH body, invalid once merged: the appended container has no name.
    const patched = await api().patch('/schedulers/tennis-eu').set('Authorization', AUTH).send({ spec: { containers: [{}, { image: 'registry.example/sidecar:1.0' }] } });
    expect([patched.status, bodyOf(patched).code]).toEqual([400, 3]);
    expect(bodyOf(patched).details).toContainEqual(expect.objectContaining({ field: 'spec.containers[1].name' }));
    const { name: _name, ...definition } = validCreateBody('tennis-eu', { maxSurge: 3 });
    const versioned = await api().post('/schedulers/tennis-eu').set('Authorization', AUTH).send({ ...definition, roomsReplicas: -1 });
    expect([versioned.status, bodyOf(versioned).details]).toEqual([400, [{ field: 'roomsReplicas', message: 'should be greater than or equal to 0' }]]);
    const valid = await api().patch('/schedulers/tennis-eu').set('Authorization', AUTH).send({ roomsReplicas: 2 });
    expect([valid.status, bodyOf(valid).code]).toEqual([400, 9]);
    expect(t.store.writes).toEqual([]);
  });

  it('tells a change only the API server refuses (a CEL rule of the CRD) its validation errors while a version operation is in progress, from a dry run of the write that stores nothing; a dry run without a verdict (a conflict) leaves code 9', async () => {
    t.store.seedScheduler('tennis-eu', validSpec());
    const dryRuns: boolean[] = [];
    const update = t.store.updateSchedulerSpec.bind(t.store);
    t.store.updateSchedulerSpec = (current, spec, operationId, options) => {
      dryRuns.push(options?.dryRun === true);
      return update(current, spec, operationId, options);
    };
    t.store.specViolations = (spec) => ((spec.autoscaling?.min ?? 0) > (spec.autoscaling?.max ?? 0) ? [{ field: 'autoscaling.min', message: 'min must be less than or equal to max' }] : []);
    const minAboveMax = { autoscaling: { enabled: true, min: 5, max: 2, policy: { type: 'roomOccupancy', parameters: { roomOccupancy: { readyTarget: 0.5 } } } } };
    // No operation runs: the write itself is refused, and no dry run precedes it.
    const idle = await api().patch('/schedulers/tennis-eu').set('Authorization', AUTH).send(minAboveMax);
    expect([idle.status, bodyOf(idle).details]).toEqual([400, [{ field: 'autoscaling.min', message: 'min must be less than or equal to max' }]]);
    expect(dryRuns).toEqual([false]);

    t.store.seedOperation('op-1', { schedulerName: 'tennis-eu', definitionName: 'create_new_scheduler_version' }, { status: 'in_progress' });
    const busy = await api().patch('/schedulers/tennis-eu').set('Authorization', AUTH).send(minAboveMax);
    expect(busy.body).toEqual(idle.body);
    expect(dryRuns).toEqual([false, true]);
    const valid = await api().patch('/schedulers/tennis-eu').set('Authorization', AUTH).send({ roomsReplicas: 2 });
    expect([valid.status, bodyOf(valid).code]).toEqual([400, 9]);
    t.store.conflictsToInject = 1;
    const conflicted = await api().patch('/schedulers/tennis-eu').set('Authorization', AUTH).send(minAboveMax);
    expect([conflicted.status, bodyOf(conflicted).code]).toEqual([400, 9]);
    expect(dryRuns).toEqual([false, true, true, true]);
    expect(t.store.schedulers.get('tennis-eu')?.metadata.generation).toBe(1);
    expect(t.store.writes).toEqual([]);
  });
});

describe('PUT /schedulers/{name} (switch active version)', () => {
  it('answers 404 for a version the scheduler does not have, enqueuing nothing (Maestro lets the operation fail later), and enqueues the switch to one it has', async () => {
    t.store.seedScheduler('tennis-eu', validSpec());
    const missing = await api().put('/schedulers/tennis-eu').set('Authorization', AUTH).send({ version: 'v9.0.0' });
    expect([missing.status, missing.body]).toEqual([404, { code: 5, message: 'version v9.0.0 of scheduler tennis-eu not found; nothing was enqueued: GET /schedulers/tennis-eu/versions lists its versions', details: [] }]);
    expect(t.store.operations.size).toBe(0);
    t.store.seedVersion('tennis-eu', 'v2.0.0', { ...validSpec(), maxSurge: '3' });
    const res = await api().put('/schedulers/tennis-eu').set('Authorization', AUTH).send({ version: 'v2.0.0' });
    expect(res.status).toBe(200);
    expect(t.store.operations.get(bodyOf(res).operationId!)?.spec).toMatchObject({ definitionName: 'switch_active_version', input: { newActiveVersion: 'v2.0.0' } });
  });

  it('takes the version as newActiveVersion too, the operation input the spec names for the switch, and refuses a body whose two names disagree', async () => {
    t.store.seedScheduler('tennis-eu', validSpec());
    t.store.seedVersion('tennis-eu', 'v1.1.0', validSpec());
    const res = await api().put('/schedulers/tennis-eu').set('Authorization', AUTH).send({ newActiveVersion: 'v1.1.0' });
    expect(res.status).toBe(200);
    expect(t.store.operations.get(bodyOf(res).operationId!)?.spec).toMatchObject({ definitionName: 'switch_active_version', input: { newActiveVersion: 'v1.1.0' } });
    const bad = await api().put('/schedulers/tennis-eu').set('Authorization', AUTH).send({ newActiveVersion: 'v1.2' });
    expect(bad.body).toEqual({ code: 3, message: 'Validation Error:\nnewActiveVersion: must be a version such as "v1.2.0", each number of at most 9 digits', details: [{ field: 'newActiveVersion', message: 'must be a version such as "v1.2.0", each number of at most 9 digits' }] });
    const writes = t.store.writes.length;
    const both = await api().put('/schedulers/tennis-eu').set('Authorization', AUTH).send({ version: 'v1.1.0', newActiveVersion: 'v2.0.0' });
    expect(both.status).toBe(400);
    expect(both.body).toEqual({ code: 3, message: expect.stringContaining('newActiveVersion: is "v2.0.0" while version is "v1.1.0"') as unknown, details: [{ field: 'newActiveVersion', message: 'is "v2.0.0" while version is "v1.1.0"; send the version to make active once, as version (Maestro) or newActiveVersion' }] });
    expect(t.store.writes).toHaveLength(writes);
  });

  it.each(['../v1', 'v99999999999999999999.0.0', '1.2.0', 'v1.2', 'v01.2.0', 'v1.2.0-rc1'])('answers 400 naming version for %p, which cannot be a version Roomkeeper makes, and enqueues nothing', async (version) => {
    t.store.seedScheduler('tennis-eu', validSpec());
    const res = await api().put('/schedulers/tennis-eu').set('Authorization', AUTH).send({ version });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 3, message: 'Validation Error:\nversion: must be a version such as "v1.2.0", each number of at most 9 digits', details: [{ field: 'version', message: 'must be a version such as "v1.2.0", each number of at most 9 digits' }] });
    expect(t.store.writes).toEqual([]);
  });

  it.each([[{ version: 5 }, 'must be a string such as "v1.2.0"; got number'], [{ version: ['v1.0.0'] }, 'must be a string such as "v1.2.0"; got an array']])('answers 400 for %j naming the type, not a missing field', async (body, message) => {
    t.store.seedScheduler('tennis-eu', validSpec());
    const res = await api().put('/schedulers/tennis-eu').set('Authorization', AUTH).send(body);
    expect(res.status).toBe(400);
    expect(bodyOf(res).details).toEqual([{ field: 'version', message }]);
  });

  it.each([[{}], [{ version: 3 }], [{ version: '' }]])('answers 400 for %j', async (body) => {
    t.store.seedScheduler('tennis-eu', validSpec());
    const res = await api().put('/schedulers/tennis-eu').set('Authorization', AUTH).send(body);
    expect(res.status).toBe(400);
    expect(bodyOf(res).code).toBe(3);
    expect(t.store.writes).toEqual([]);
  });

  it('answers 400 (code 9) while a version operation is pending, and 404 for an unknown scheduler', async () => {
    t.store.seedScheduler('tennis-eu', validSpec());
    t.store.seedOperation('op-1', { schedulerName: 'tennis-eu', definitionName: 'create_new_scheduler_version' });
    const busy = await api().put('/schedulers/tennis-eu').set('Authorization', AUTH).send({ version: 'v1.0.0' });
    expect(busy.status).toBe(400);
    expect(bodyOf(busy).code).toBe(9);
    const missing = await api().put('/schedulers/nope').set('Authorization', AUTH).send({ version: 'v1.0.0' });
    expect(missing.status).toBe(404);
    expect(t.store.writes).toEqual([]);
  });
});

describe('DELETE /schedulers/{name}', () => {
  it('enqueues delete_scheduler, then deletes the Scheduler', async () => {
    const s = t.store.seedScheduler('tennis-eu', validSpec());
    const res = await api().delete('/schedulers/tennis-eu').set('Authorization', AUTH);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ operationId: deleteSchedulerOperationId(s.metadata.uid ?? '') });
    expect(t.store.writes.map((w) => `${w.kind}:${w.verb}`)).toEqual(['operation:create', 'scheduler:delete']);
  });

  it('asked again while the deletion runs: answers the attempt that runs, writes nothing', async () => {
    const s = t.store.seedScheduler('tennis-eu', validSpec());
    const first = deleteSchedulerOperationId(s.metadata.uid ?? '');
    s.metadata.deletionTimestamp = new Date('2026-01-01T00:00:00Z');
    t.store.seedOperation(first, { schedulerName: 'tennis-eu', definitionName: 'delete_scheduler' }, { status: 'in_progress' });
    const res = await api().delete('/schedulers/tennis-eu').set('Authorization', AUTH);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ operationId: first });
    expect(t.store.writes).toEqual([]);
  });

  it('asked again after its delete_scheduler was canceled: enqueues the next attempt (the operator\'s id and input) and answers it', async () => {
    const s = t.store.seedScheduler('tennis-eu', validSpec());
    const first = deleteSchedulerOperationId(s.metadata.uid ?? '');
    s.metadata.deletionTimestamp = new Date('2026-01-01T00:00:00Z');
    t.store.seedOperation(first, { schedulerName: 'tennis-eu', definitionName: 'delete_scheduler' }, { status: 'canceled', finishedAt: new Date().toISOString() });
    const res = await api().delete('/schedulers/tennis-eu').set('Authorization', AUTH);
    expect(res.status).toBe(200);
    const second = nextAttemptId(first);
    expect(res.body).toEqual({ operationId: second });
    expect(t.store.operations.get(second)?.spec).toMatchObject({
      definitionName: 'delete_scheduler', input: { attempt: 2, previousAttempt: first, attemptNote: `Attempt 2: attempt 1 (${first}) ended canceled` },
    });
    const again = await api().delete('/schedulers/tennis-eu').set('Authorization', AUTH);
    expect(again.body).toEqual({ operationId: second });
    expect(t.store.writes.map((w) => `${w.kind}:${w.verb}`)).toEqual(['operation:create']);
  });

  it('answers 404 with Maestro\'s message', async () => {
    const res = await api().delete('/schedulers/nope').set('Authorization', AUTH);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 5, message: 'no scheduler found, can not delete nonexistent scheduler: nope', details: [] });
  });

  it('answers 404 for a name Kubernetes cannot hold', async () => {
    const res = await api().delete('/schedulers/Not%20A%20Name').set('Authorization', AUTH);
    expect(res.status).toBe(404);
  });

  it('a scheduler being deleted (its finalizer holds it) takes no more changes or allocations: 404, nothing written', async () => {
    const s = t.store.seedScheduler('going', validSpec());
    s.metadata.deletionTimestamp = new Date('2026-01-01T00:00:00Z');
    const calls = [
      api().patch('/schedulers/going').send({ maxSurge: '50%' }),
      api().post('/schedulers/going').send({ ...validSpec(), name: 'going' }),
      api().put('/schedulers/going').send({ version: 'v1.0.0' }),
      api().post('/schedulers/going/add-rooms').send({ amount: 1 }),
      api().post('/schedulers/going/remove-rooms').send({ amount: 1 }),
      api().post('/scheduler/going/rooms/allocate').send({}),
    ];
    for (const call of calls) {
      const res = await call.set('Authorization', AUTH);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: 5, message: 'scheduler going is being deleted' });
    }
    expect(t.store.writes).toEqual([]);
  });
});

describe('add-rooms and remove-rooms', () => {
  beforeEach(() => {
    t.store.seedScheduler('tennis-eu', validSpec());
  });

  it('enqueues add_rooms', async () => {
    const res = await api().post('/schedulers/tennis-eu/add-rooms').set('Authorization', AUTH).send({ amount: 3 });
    expect(res.status).toBe(200);
    expect(t.store.operations.get(bodyOf(res).operationId!)?.spec).toMatchObject({ definitionName: 'add_rooms', input: { amount: 3 } });
  });

  it.each([[{}], [{ amount: 0 }], [{ amount: -1 }], [{ amount: 1.5 }], [{ amount: 'many' }], [{ amount: 10_001 }], [[1]]])('rejects add-rooms body %j', async (body) => {
    const res = await api().post('/schedulers/tennis-eu/add-rooms').set('Authorization', AUTH).send(body);
    expect(res.status).toBe(400);
    expect(bodyOf(res).code).toBe(3);
    expect(t.store.writes).toEqual([]);
  });

  it('enqueues remove_rooms by amount or by ids', async () => {
    const byAmount = await api().post('/schedulers/tennis-eu/remove-rooms').set('Authorization', AUTH).send({ amount: 2 });
    expect(t.store.operations.get(bodyOf(byAmount).operationId!)?.spec).toMatchObject({ definitionName: 'remove_rooms', input: { amount: 2 } });
    const byIds = await api().post('/schedulers/tennis-eu/remove-rooms').set('Authorization', AUTH).send({ roomsIds: ['a', 'b', 'a'] });
    expect(t.store.operations.get(bodyOf(byIds).operationId!)?.spec.input).toEqual({ roomsIds: ['a', 'b'], reason: 'api' });
  });

  it.each([[{}], [{ roomsIds: [] }], [{ roomsIds: [''] }], [{ roomsIds: 'a' }], [{ amount: 1, roomsIds: ['a'] }], [{ amount: 0 }]])('rejects remove-rooms body %j', async (body) => {
    const res = await api().post('/schedulers/tennis-eu/remove-rooms').set('Authorization', AUTH).send(body);
    expect(res.status).toBe(400);
    expect(t.store.writes).toEqual([]);
  });

  it('refuses (400) room ids that cannot be room names, naming each, and enqueues nothing; a well-formed id of no room is taken (skipped by the operation, as Maestro)', async () => {
    const res = await api().post('/schedulers/tennis-eu/remove-rooms').set('Authorization', AUTH).send({ roomsIds: ['a\u0000b', '%2F', 'x/y', 'UPPER', '../x'] });
    expect(res.status).toBe(400);
    expect(bodyOf(res).code).toBe(3);
    expect((bodyOf(res).details as { field: string }[]).map((d) => d.field)).toEqual(['roomsIds[0]', 'roomsIds[1]', 'roomsIds[2]', 'roomsIds[3]', 'roomsIds[4]']);
    expect(bodyOf(res).message).toMatch(/^Validation Error:\nroomsIds\[0\]: must be a room name/);
    expect(t.store.writes).toEqual([]);
    const ghost = await api().post('/schedulers/tennis-eu/remove-rooms').set('Authorization', AUTH).send({ roomsIds: ['tennis-eu-zzzzz'] });
    expect(ghost.status).toBe(200);
  });

  it('answers 404 for an unknown scheduler', async () => {
    expect((await api().post('/schedulers/nope/add-rooms').set('Authorization', AUTH).send({ amount: 1 })).status).toBe(404);
    expect((await api().post('/schedulers/nope/remove-rooms').set('Authorization', AUTH).send({ amount: 1 })).status).toBe(404);
    expect(t.store.writes).toEqual([]);
  });
});

describe('reads', () => {
  it('lists schedulers with filters', async () => {
    t.store.seedScheduler('a', validSpec({ game: 'chess' }));
    t.store.seedScheduler('b', validSpec(), { version: 'v1.1.0' });
    const all = await api().get('/schedulers').set('Authorization', AUTH);
    expect(bodyOf(all).schedulers!.map((s: { name: string }) => s.name)).toEqual(['a', 'b']);
    expect(bodyOf(all).schedulers![1]).toEqual({ name: 'b', game: 'tennis', state: 'in-sync', version: 'v1.1.0', portRange: { start: 40000, end: 60000 }, createdAt: '2026-01-01T00:00:00.000Z', maxSurge: '10%', roomsReplicas: 1, matchAllocation: { maxMatches: 1 } });
    expect(bodyOf(await api().get('/schedulers?game=chess').set('Authorization', AUTH)).schedulers).toHaveLength(1);
    expect(bodyOf(await api().get('/schedulers?version=v1.1.0').set('Authorization', AUTH)).schedulers).toHaveLength(1);
    expect((await api().get('/schedulers?name=zzz').set('Authorization', AUTH)).body).toEqual({ schedulers: [] });
    expect((await api().get('/schedulers?name=a&name=b').set('Authorization', AUTH)).status).toBe(400);
    // An empty filter is no filter, as in Maestro (a client that sends every parameter, some empty).
    expect(bodyOf(await api().get('/schedulers?game=&name=&version=').set('Authorization', AUTH)).schedulers!.map((s: { name: string }) => s.name)).toEqual(['a', 'b']);
    expect(bodyOf(await api().get('/schedulers/info?game=').set('Authorization', AUTH)).schedulers!.map((s: { name: string }) => s.name)).toEqual(['a', 'b']);
  });

  it('lists the fields of the active version, not of a change the spec holds that was refused, and the count in force', async () => {
    const s = t.store.seedScheduler('a', validSpec({ maxSurge: 1 }));
    s.spec = { ...s.spec, maxSurge: 5, portRange: { start: 30000, end: 31000 }, matchAllocation: { maxMatches: 3 }, roomsReplicas: 4 };
    expect(bodyOf(await api().get('/schedulers').set('Authorization', AUTH)).schedulers).toEqual([
      { name: 'a', game: 'tennis', state: 'in-sync', version: 'v1.0.0', portRange: { start: 40000, end: 60000 }, createdAt: '2026-01-01T00:00:00.000Z', maxSurge: '1', roomsReplicas: 4, matchAllocation: { maxMatches: 1 } },
    ]);
  });

  it('reports room counts per scheduler of a game, and how many of its rooms are marked silent', async () => {
    t.store.seedScheduler('a', validSpec({ autoscaling: { enabled: true, min: 1, max: 10, policy: { type: 'roomOccupancy', parameters: { roomOccupancy: { readyTarget: 0.5 } } } } }));
    t.store.seedRoom('a', 'r1', { status: 'ready', silentSince: '2026-01-01T00:00:00Z' });
    t.store.seedRoom('a', 'r2', { status: 'occupied' });
    t.store.seedRoom('a', 'r3', { status: 'unready' });
    t.store.seedRoom('a', 'r4', { status: 'terminating' });
    t.store.seedRoom('a', 'v', { status: 'ready' }, { validation: true });
    const res = await api().get('/schedulers/info?game=tennis').set('Authorization', AUTH);
    expect(res.body).toEqual({ schedulers: [{ name: 'a', game: 'tennis', state: 'in-sync', roomsReplicas: 1, roomsReady: 1, roomsOccupied: 1, roomsPending: 1, roomsTerminating: 1, roomsActive: 0, roomsSilent: 1, matchAllocation: { maxMatches: 1 }, runningMatches: 1, matchSlots: 2, autoscaling: { enabled: true, min: 1, max: 10, cooldown: 0 } }] });
    expect((await api().get('/schedulers/info?game=none').set('Authorization', AUTH)).body).toEqual({ schedulers: [] });
  });

  it('never reports in-sync for a spec generation the operator has not observed yet', async () => {
    const s = t.store.seedScheduler('a', validSpec());
    s.metadata.generation = 3;
    s.status = { ...s.status, state: 'in-sync', observedGeneration: 2 };
    const states = async () => [
      bodyOf(await api().get('/schedulers/a').set('Authorization', AUTH)).scheduler!.state,
      bodyOf(await api().get('/schedulers').set('Authorization', AUTH)).schedulers![0]!.state,
      bodyOf(await api().get('/schedulers/info?game=tennis').set('Authorization', AUTH)).schedulers![0]!.state,
    ];
    expect(await states()).toEqual(['pending-changes', 'pending-changes', 'pending-changes']);
    s.status = { ...s.status, state: 'on-error' };
    expect(await states()).toEqual(['pending-changes', 'pending-changes', 'pending-changes']);
    s.status = { ...s.status, state: 'terminating' };
    expect(await states()).toEqual(['terminating', 'terminating', 'terminating']);
    s.status = { ...s.status, state: 'in-sync', observedGeneration: 3 };
    expect(await states()).toEqual(['in-sync', 'in-sync', 'in-sync']);
  });

  it('returns the active version, or the one asked for', async () => {
    t.store.seedScheduler('a', validSpec(), { version: 'v1.1.0' });
    t.store.seedVersion('a', 'v1.0.0', validSpec({ maxSurge: 1 }));
    const active = await api().get('/schedulers/a').set('Authorization', AUTH);
    expect(active.status).toBe(200);
    expect(bodyOf(active).scheduler).toMatchObject({ name: 'a', maxSurge: '10%', spec: { version: 'v1.1.0' } });
    const old = await api().get('/schedulers/a?version=v1.0.0').set('Authorization', AUTH);
    expect(bodyOf(old).scheduler).toMatchObject({ maxSurge: '1', spec: { version: 'v1.0.0' } });
    expect((await api().get('/schedulers/a?version=v7.0.0').set('Authorization', AUTH)).body).toEqual({ code: 5, details: [],
      message: 'scheduler a version v7.0.0 not found: GET /schedulers/a/versions lists the versions it has (each switch deletes the oldest beyond ROOMKEEPER_VERSION_HISTORY_LIMIT, but for the active one, one rooms still run and the greatest of each major)' });
    const missing = await api().get('/schedulers/zzz').set('Authorization', AUTH);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ code: 5, message: 'scheduler zzz not found', details: [] });
  });

  it('shows the active version with the count in force (the spec\'s, as the list says), and a version asked for as it was made', async () => {
    const s = t.store.seedScheduler('a', validSpec({ roomsReplicas: 6 }), { version: 'v1.1.0' });
    // kubectl scale of a spec whose major change failed: the count applies, the version stays.
    s.spec = { ...s.spec, roomsReplicas: 7, spec: { ...s.spec.spec, terminationGracePeriod: '45s' } };
    const active = bodyOf(await api().get('/schedulers/a').set('Authorization', AUTH)).scheduler;
    expect(active).toMatchObject({ roomsReplicas: 7, spec: { version: 'v1.1.0', terminationGracePeriod: '100s' } });
    expect(bodyOf(await api().get('/schedulers').set('Authorization', AUTH)).schedulers).toMatchObject([{ name: 'a', roomsReplicas: 7 }]);
    expect(bodyOf(await api().get('/schedulers/a?version=v1.1.0').set('Authorization', AUTH)).scheduler).toMatchObject({ roomsReplicas: 6 });
  });

  it('shows spec.restartPolicy Never (Maestro\'s default; rooms are never restarted in place), for every version', async () => {
    t.store.seedScheduler('a', validSpec(), { version: 'v1.1.0' });
    t.store.seedVersion('a', 'v1.0.0', validSpec({ maxSurge: 1 }));
    const active = await api().get('/schedulers/a').set('Authorization', AUTH);
    expect(bodyOf(active).scheduler!.spec.restartPolicy).toBe('Never');
    const old = await api().get('/schedulers/a?version=v1.0.0').set('Authorization', AUTH);
    expect(bodyOf(old).scheduler!.spec.restartPolicy).toBe('Never');
  });

  it('shows a scheduler being created as v1.0.0 from its spec', async () => {
    await api().post('/schedulers').set('Authorization', AUTH).send(validCreateBody('fresh'));
    const res = await api().get('/schedulers/fresh').set('Authorization', AUTH);
    expect(bodyOf(res).scheduler).toMatchObject({ name: 'fresh', state: 'creating', spec: { version: 'v1.0.0' } });
  });

  it('answers for v1.0.0 of a scheduler being created, as GET shows it (Maestro writes v1.0.0 with the create): by ?version= and in the versions list', async () => {
    await api().post('/schedulers').set('Authorization', AUTH).send(validCreateBody('fresh'));
    const shown = (await api().get('/schedulers/fresh').set('Authorization', AUTH)).body as { scheduler: { createdAt: string } };
    const byVersion = await api().get('/schedulers/fresh?version=v1.0.0').set('Authorization', AUTH);
    expect(byVersion.status).toBe(200);
    expect(byVersion.body).toEqual(shown);
    expect((await api().get('/schedulers/fresh?version=v1.1.0').set('Authorization', AUTH)).status).toBe(404);
    const versions = await api().get('/schedulers/fresh/versions').set('Authorization', AUTH);
    expect(versions.body).toEqual({ versions: [{ version: 'v1.0.0', isActive: true, createdAt: shown.scheduler.createdAt }] });
    // The operator wrote the version, not yet the status that names it: still the active one.
    t.store.seedVersion('fresh', 'v1.0.0', validSpec(), '2026-01-01T00:00:00.000Z');
    expect((await api().get('/schedulers/fresh/versions').set('Authorization', AUTH)).body).toEqual({ versions: [{ version: 'v1.0.0', isActive: true, createdAt: '2026-01-01T00:00:00.000Z' }] });
  });

  it('lists no version of a scheduler whose creation failed (no version serves)', async () => {
    t.store.seedScheduler('failed', validSpec(), { state: 'on-error' });
    const s = t.store.schedulers.get('failed')!;
    delete s.status!.version;
    t.store.versions.clear();
    expect((await api().get('/schedulers/failed/versions').set('Authorization', AUTH)).body).toEqual({ versions: [] });
  });

  describe('the same definition sent again to a scheduler whose creation failed (no version)', () => {
    const failedCreate = (cause: string) => {
      const s = t.store.seedScheduler('failed', validSpec(), { state: 'on-error' });
      delete s.status!.version;
      const firstId = createSchedulerOperationId(s.metadata.uid!, 1);
      t.store.seedOperation(firstId, { schedulerName: 'failed', definitionName: 'create_scheduler' }, {
        status: 'error', finishedAt: '2026-01-01T00:00:00.000Z', executionHistory: [{ createdAt: '2026-01-01T00:00:00.000Z', event: `Operation execution failed: ${cause}` }],
      });
      return firstId;
    };

    it('enqueues the next create_scheduler attempt at once when the cluster refused the creation (a ResourceQuota), and answers its id', async () => {
      const firstId = failedCreate('room creation failed after 0/2 rooms: 403 Forbidden: pods "failed-x" is forbidden: exceeded quota: q, requested: pods=1, used: pods=0, limited: pods=0');
      const res = await api().post('/schedulers/failed').set('Authorization', AUTH).send({ name: 'failed', ...validSpec() });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ operationId: nextAttemptId(firstId) });
      const op = t.store.operations.get(nextAttemptId(firstId));
      expect(op?.spec).toMatchObject({ definitionName: 'create_scheduler', source: 'api', input: { attempt: 2, previousAttempt: firstId } });
    });

    it('answers 409 saying how to try the creation again when it failed for another reason (the definition\'s), writing nothing', async () => {
      failedCreate('422 Unprocessable Entity: Pod "failed-x" is invalid: spec.containers[0].image: Required value');
      const writes = t.store.writes.length;
      const res = await api().post('/schedulers/failed').set('Authorization', AUTH).send({ name: 'failed', ...validSpec() });
      expect(res.status).toBe(409);
      expect((res.body as { message: string }).message).toBe('no change found to scheduler failed: its creation failed (its Degraded condition says why) and no version was made; once the cause is fixed, delete it (DELETE /schedulers/failed) and create it again with this definition, or send a definition that changes a field');
      expect(t.store.writes).toHaveLength(writes);
    });
  });

  it('lists versions newest first', async () => {
    t.store.seedScheduler('a', validSpec(), { version: 'v1.1.0' });
    t.store.seedVersion('a', 'v1.1.0', validSpec(), '2026-01-02T00:00:00.000Z');
    t.store.seedVersion('a', 'v2.0.0', validSpec(), '2026-01-03T00:00:00.000Z');
    t.store.seedVersion('a', 'v1.0.0', validSpec(), '2026-01-01T00:00:00.000Z');
    const res = await api().get('/schedulers/a/versions').set('Authorization', AUTH);
    expect(res.body).toEqual({ versions: [
      { version: 'v2.0.0', isActive: false, createdAt: '2026-01-03T00:00:00.000Z' },
      { version: 'v1.1.0', isActive: true, createdAt: '2026-01-02T00:00:00.000Z' },
      { version: 'v1.0.0', isActive: false, createdAt: '2026-01-01T00:00:00.000Z' },
    ] });
    expect((await api().get('/schedulers/zzz/versions').set('Authorization', AUTH)).status).toBe(404);
  });
});

describe('operations', () => {
  beforeEach(() => {
    t.store.seedScheduler('a', validSpec());
    t.store.seedOperation('p-late', { schedulerName: 'a', enqueuedAt: '2026-01-01T00:00:03.000Z' });
    t.store.seedOperation('p-prio', { schedulerName: 'a', enqueuedAt: '2026-01-01T00:00:04.000Z', priority: true }, { status: 'pending' });
    t.store.seedOperation('p-early', { schedulerName: 'a', enqueuedAt: '2026-01-01T00:00:01.000Z' });
    t.store.seedOperation('running', { schedulerName: 'a', enqueuedAt: '2026-01-01T00:00:00.500Z' }, { status: 'in_progress', lease: { ttl: '2026-01-01T00:01:00.000Z' } });
    for (let i = 0; i < 20; i++) {
      t.store.seedOperation(`done-${String(i).padStart(2, '0')}`, { schedulerName: 'a', enqueuedAt: new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString() }, { status: i % 2 ? 'finished' : 'error', executionHistory: [{ createdAt: '2025-01-01T00:00:00Z', event: 'Starting operation' }] });
    }
    t.store.seedOperation('other', { schedulerName: 'b' }, { status: 'finished' });
  });

  it('lists the pending stage in queue order, unpaginated', async () => {
    const res = await api().get('/schedulers/a/operations?stage=pending').set('Authorization', AUTH);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ page: 1, pageSize: 3, total: 3 });
    expect(bodyOf(res).operations!.map((o: { id: string }) => o.id)).toEqual(['p-prio', 'p-early', 'p-late']);
    expect(bodyOf(res).operations![0]).toEqual({ id: 'p-prio', status: 'pending', definitionName: 'add_rooms', schedulerName: 'a', createdAt: '2026-01-01T00:00:04.000Z' });
  });

  it('shows the lease of active operations', async () => {
    const res = await api().get('/schedulers/a/operations?stage=active').set('Authorization', AUTH);
    expect(bodyOf(res).operations).toEqual([{ id: 'running', status: 'in_progress', definitionName: 'add_rooms', lease: { ttl: '2026-01-01T00:01:00.000Z' }, schedulerName: 'a', createdAt: '2026-01-01T00:00:00.500Z' }]);
  });

  it('paginates the final stage, newest first by default', async () => {
    const first = await api().get('/schedulers/a/operations?stage=final').set('Authorization', AUTH);
    expect(first.body).toMatchObject({ page: 1, pageSize: 15, total: 20 });
    expect(bodyOf(first).operations).toHaveLength(15);
    expect(bodyOf(first).operations![0]!.id).toBe('done-19');
    const asc = await api().get('/schedulers/a/operations?stage=final&page=2&perPage=5&orderBy=createdAt%20asc').set('Authorization', AUTH);
    expect(bodyOf(asc).operations!.map((o: { id: string }) => o.id)).toEqual(['done-05', 'done-06', 'done-07', 'done-08', 'done-09']);
    const empty = await api().get('/schedulers/a/operations?stage=final&page=3&perPage=10').set('Authorization', AUTH);
    expect(bodyOf(empty).operations).toEqual([]);
  });

  it.each([
    ['', 'invalid stage filter: (none given); stage must be pending, active or final'],
    ['?stage=later', 'invalid stage filter: later; stage must be pending, active or final'],
    ['?stage=final&page=0', 'page must be greater than 0 (up to 9007199254740991), but page was 0'],
    ['?stage=final&perPage=101', 'page size must be between 0 and 100, 0 excluded, but perPage was 101 (without perPage a page holds 15)'],
    ['?stage=final&perPage=0', 'page size must be between 0 and 100, 0 excluded, but perPage was 0 (without perPage a page holds 15)'],
    ['?stage=final&per_page=0', 'page size must be between 0 and 100, 0 excluded, but perPage was 0 (without perPage a page holds 15)'],
    ['?stage=final&page=x', 'page must be greater than 0 (up to 9007199254740991), but page was "x", not an integer'],
    ['?stage=final&perPage=1.5', 'page size must be between 0 and 100, 0 excluded, but perPage was "1.5", not an integer (without perPage a page holds 15)'],
    ['?stage=final&perPage=1000000000', 'page size must be between 0 and 100, 0 excluded, but perPage was 1000000000 (without perPage a page holds 15)'],
    ['?stage=final&perPage=-99999999999', 'page size must be between 0 and 100, 0 excluded, but perPage was -99999999999 (without perPage a page holds 15)'],
    ['?stage=final&page=99999999999999999999', 'page must be greater than 0 (up to 9007199254740991), but page was 99999999999999999999'],
    ['?stage=pending&page=1', 'there is no pagination filter implemented for pending stage, so leave page out: only stage=final is paged'],
    ['?stage=active&page=x&perPage=0', 'there is no pagination filter implemented for active stage, so leave page and perPage out: only stage=final is paged'],
    ['?stage=final&orderBy=name', 'invalid order by: name (use "createdAt asc" or "createdAt desc")'],
  ])('answers 400 for %s', async (query, message) => {
    const res = await api().get(`/schedulers/a/operations${query}`).set('Authorization', AUTH);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 3, message, details: [] });
  });

  it.each([
    ['/schedulers/a/operations?stage=final&stage=active', 'query parameter stage must be given once'],
    ['/schedulers/a/operations?stage[]=final', 'query parameter stage must be given once as stage=<value>; "stage[]" (a list or object in brackets) is not read'],
    ['/schedulers/a/operations?stage=final&perPage[0]=5', 'query parameter perPage must be given once as perPage=<value>; "perPage[0]" (a list or object in brackets) is not read'],
    ['/schedulers/a?version[x]=v9.9.9', 'query parameter version must be given once as version=<value>; "version[x]" (a list or object in brackets) is not read'],
    ['/schedulers?name[]=b', 'query parameter name must be given once as name=<value>; "name[]" (a list or object in brackets) is not read'],
    ['/schedulers/info?game[]=tennis', 'query parameter game must be given once as game=<value>; "game[]" (a list or object in brackets) is not read'],
  ])('answers 400 naming the parameter for %s, not the answer without its filter', async (path, message) => {
    const res = await api().get(path).set('Authorization', AUTH);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 3, message, details: [] });
  });

  it('lists nothing for an unknown scheduler', async () => {
    const res = await api().get('/schedulers/zzz/operations?stage=final').set('Authorization', AUTH);
    expect(res.body).toEqual({ page: 1, pageSize: 15, total: 0, operations: [] });
  });

  it('returns one operation with input and history, or 404', async () => {
    const res = await api().get('/schedulers/a/operations/done-01').set('Authorization', AUTH);
    expect(bodyOf(res).operation).toMatchObject({ id: 'done-01', status: 'finished', input: {}, executionHistory: [{ createdAt: '2025-01-01T00:00:00Z', event: 'Starting operation' }] });
    const wrongScheduler = await api().get('/schedulers/a/operations/other').set('Authorization', AUTH);
    expect(wrongScheduler.status).toBe(404);
    expect(bodyOf(wrongScheduler).message).toBe('operation other not found in scheduler a');
  });

  it('answers 404 saying so for an id too long to be an operation id, on a read and a cancel, writing nothing', async () => {
    const id = `${'a'.repeat(64)}${'b'.repeat(236)}`;
    const message = `operation id ${'a'.repeat(64)}… (300 characters) is too long to be an operation id, so scheduler a has no such operation: `
      + 'an operation id is the name of its Operation object, at most 253 characters of lowercase letters, digits, \'-\' and \'.\' (a DNS-1123 subdomain), '
      + 'such as the UUID the management API answers when it enqueues one (e.g. 0190c2d4-5e6f-7a8b-9c0d-1e2f3a4b5c6d) or the name given to one written with kubectl; GET /schedulers/a/operations?stage=final lists them';
    for (const res of [
      await api().get(`/schedulers/a/operations/${id}`).set('Authorization', AUTH),
      await api().post(`/schedulers/a/operations/${id}/cancel`).set('Authorization', AUTH),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ code: 5, message, details: [] });
    }
    // The longest id an object can have is still looked up (and not found here).
    const longest = await api().get(`/schedulers/a/operations/${'a'.repeat(253)}`).set('Authorization', AUTH);
    expect(longest.status).toBe(404);
    expect(bodyOf(longest).message).toBe(`operation ${'a'.repeat(253)} not found in scheduler a`);
    expect(t.store.writes).toEqual([]);
  });

  it('cancels a pending or active operation', async () => {
    const res = await api().post('/schedulers/a/operations/p-late/cancel').set('Authorization', AUTH);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    expect(t.store.operations.get('p-late')?.spec.cancelRequested).toBe(true);
    expect((await api().post('/schedulers/a/operations/running/cancel').set('Authorization', AUTH)).status).toBe(200);
  });

  it('answers 409 (Aborted) for a final operation and 404 for unknown ones, writing nothing', async () => {
    const final = await api().post('/schedulers/a/operations/done-01/cancel').set('Authorization', AUTH);
    expect(final.status).toBe(409);
    expect(final.body).toEqual({ code: 10, message: 'cannot cancel operation since status "finished" is a final status', details: [] });
    expect((await api().post('/schedulers/a/operations/zzz/cancel').set('Authorization', AUTH)).status).toBe(404);
    expect((await api().post('/schedulers/zzz/operations/p-late/cancel').set('Authorization', AUTH)).status).toBe(404);
    expect(t.store.writes).toEqual([]);
  });

  it('answers 409 when the operation ends between its read and the cancel (the API server refuses the write)', async () => {
    const read = t.store.getOperation.bind(t.store);
    t.store.getOperation = async (id) => {
      const op = await read(id);
      // The operator finishes it just after this read.
      const stored = t.store.operations.get(id);
      if (stored) stored.status = { ...stored.status, status: 'finished' };
      return op;
    };
    const res = await api().post('/schedulers/a/operations/running/cancel').set('Authorization', AUTH);
    expect(res.status).toBe(409);
    expect(bodyOf(res).message).toBe('cannot cancel operation since status "finished" is a final status');
    expect(t.store.operations.get('running')?.spec.cancelRequested).not.toBe(true);
  });
});

describe('metrics', () => {
  it('counts requests by route pattern', async () => {
    await api().get('/schedulers/abc').set('Authorization', AUTH);
    const text = (await api().get('/metrics')).text;
    expect(text).toMatch(/roomkeeper_http_requests_total\{api="management",method="GET",route="\/schedulers\/:schedulerName",status="404"\} 1/);
    expect(text).toContain('roomkeeper_http_request_duration_seconds_bucket');
  });
});

describe('every management route', () => {
  const concrete = (path: string) => path.replace(':schedulerName', 'tennis-eu').replace(':operationId', 'op-1');
  const withBody = MANAGEMENT_ROUTES.filter((r) => 'requestBody' in r);

  beforeEach(() => {
    t.store.seedScheduler('tennis-eu', validSpec());
    t.store.seedOperation('op-1', { schedulerName: 'tennis-eu' });
    t.store.writes.length = 0;
  });

  it.each(MANAGEMENT_ROUTES.map((r) => [r.method.toUpperCase(), r.path, r] as const))('%s %s answers 401 without credentials and writes nothing', async (_m, _p, route) => {
    const res = await api()[route.method](concrete(route.path)).send({ amount: 1, version: 'v1.0.0', roomsReplicas: 9 });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Basic realm="roomkeeper"/);
    expect(t.store.writes).toEqual([]);
  });

  it.each(MANAGEMENT_ROUTES.filter((r) => r.path.includes('/:')).map((r) => [r.method.toUpperCase(), r.path, r] as const))('%s %s answers 400 naming each path part that is not percent-encoded UTF-8 and what to send, and writes nothing', async (_m, _p, route) => {
    const res = await api()[route.method](route.path.replace(':schedulerName', '%C0%AF').replace(':operationId', '%E0%A4%A')).set('Authorization', AUTH).send({});
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 3, message: expect.stringContaining("the scheduler name in the path, '%C0%AF', is not percent-encoded UTF-8 and cannot be decoded: send each character") as unknown, details: [] });
    expect(bodyOf(res).message).toContain("a scheduler name is an RFC 1123 label: at most 63 lower-case letters, digits or '-'");
    if (route.path.includes(':operationId')) expect(bodyOf(res).message).toContain("; and the operation id in the path, '%E0%A4%A', is not percent-encoded UTF-8");
    if (route.path.includes(':operationId')) {
      const badId = await api()[route.method](route.path.replace(':schedulerName', 'tennis-eu').replace(':operationId', '%E0%A4%A')).set('Authorization', AUTH).send({});
      expect(badId.body).toMatchObject({ code: 3, message: expect.stringMatching(/^the operation id in the path, '%E0%A4%A', is not percent-encoded UTF-8 .*an operation id is the operationId a management call answered/) as unknown });
    }
    expect(t.store.writes).toEqual([]);
  });

  it('answers an undecodable scheduler name on the allocate fast path\'s route as Express does, naming it', async () => {
    const server = http.createServer(requestListener(t.management));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/scheduler/%C0%AF/rooms/allocate`, { method: 'POST', headers: { authorization: AUTH } });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ code: 3, message: expect.stringMatching(/^the scheduler name in the path, '%C0%AF', is not percent-encoded UTF-8/) as unknown, details: [] });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it.each(withBody.map((r) => [r.method.toUpperCase(), r.path, r] as const))('%s %s answers 413 for a body over the limit and writes nothing', async (_m, _p, route) => {
    const res = await api()[route.method](concrete(route.path)).set('Authorization', AUTH).send({ blob: 'z'.repeat(MAX_BODY + 1) });
    expect(res.status).toBe(413);
    expect(bodyOf(res).code).toBe(3);
    expect(t.store.writes).toEqual([]);
  });

  it.each(withBody.map((r) => [r.method.toUpperCase(), r.path, r] as const))('%s %s answers 400 for malformed JSON and writes nothing', async (_m, _p, route) => {
    const res = await api()[route.method](concrete(route.path)).set('Authorization', AUTH).set('Content-Type', 'application/json').send('{"a":');
    expect(res.status).toBe(400);
    expect(bodyOf(res).code).toBe(3);
    expect(t.store.writes).toEqual([]);
  });

  it.each(withBody.map((r) => [r.method.toUpperCase(), r.path, r] as const))('%s %s answers 400 naming a key sent twice, and writes nothing', async (_m, _p, route) => {
    const text = JSON.stringify({ ...validCreateBody(), amount: 1, version: 'v1.0.0' }).replace('"amount":1', '"amount":1,"amount":2');
    const res = await api()[route.method](concrete(route.path)).set('Authorization', AUTH).set('Content-Type', 'application/json').send(text);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 3, message: `Validation Error:\namount: ${DUPLICATE_KEY}`, details: [{ field: 'amount', message: DUPLICATE_KEY }] });
    expect(t.store.writes).toEqual([]);
  });

  // CSRF: a browser sends these three cross-site without a preflight; a body without a type too.
  it.each(withBody.flatMap((r) => ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', undefined].map((ct) => [r.method.toUpperCase(), r.path, String(ct), r, ct] as const)))('%s %s answers 415 for a JSON body sent as %s and writes nothing', async (_m, _p, _c, route, contentType) => {
    const body = JSON.stringify({ ...validCreateBody('csrf'), amount: 1, version: 'v1.0.0' });
    const req = api()[route.method](concrete(route.path)).set('Authorization', AUTH);
    // Without a type superagent would say form-urlencoded; a Buffer body goes as it is.
    const res = await (contentType ? req.set('Content-Type', contentType).send(body) : req.send(Buffer.from(body)));
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ code: 3, message: 'the request body must be JSON: send it with Content-Type: application/json', details: [] });
    expect(t.store.writes).toEqual([]);
  });

  it('reads bodies sent as application/json with parameters, or as application/<x>+json', async () => {
    const a = await api().post('/schedulers').set('Authorization', AUTH).set('Content-Type', 'Application/JSON; charset=utf-8').send(JSON.stringify(validCreateBody('a-json')));
    expect(a.status).toBe(200);
    const b = await api().post('/schedulers').set('Authorization', AUTH).set('Content-Type', 'application/merge-patch+json').send(JSON.stringify(validCreateBody('b-json')));
    expect(b.status).toBe(200);
  });

  it.each([...new Set(MANAGEMENT_ROUTES.map((r) => r.path))])('%s answers 501 for a method it does not serve', async (path) => {
    // OPTIONS is served nowhere (the other methods of /schedulers/info reach /schedulers/{name}, as in grpc-gateway).
    const res = await api().options(concrete(path)).set('Authorization', AUTH);
    expect(res.status).toBe(501);
    expect(res.body).toEqual({ code: 12, message: expect.stringMatching(/^Method Not Allowed: \/\S+ takes [A-Z]+( or [A-Z]+)*$/) as unknown, details: [] });
    expect(t.store.writes).toEqual([]);
  });
});

describe('the per-scheduler room limit (issue 12 M4)', () => {
  const limited = () => request(buildTestApps({ maxRoomsPerScheduler: 50 }).management);
  const fieldsOf = (res: request.Response) => (bodyOf(res).details as { field: string; message: string }[]);

  it.each([
    ['roomsReplicas', { roomsReplicas: 51 }],
    ['autoscaling.max', { autoscaling: { enabled: true, min: 1, max: 51, policy: { type: 'roomOccupancy', parameters: { roomOccupancy: { readyTarget: 0.5 } } } } }],
    ['autoscaling.min', { autoscaling: { enabled: true, min: 51, max: -1, policy: { type: 'roomOccupancy', parameters: { roomOccupancy: { readyTarget: 0.5 } } } } }],
  ])('refuses a create asking for more rooms than the limit, naming %s (400, code 3)', async (field, overrides) => {
    const res = await limited().post('/schedulers').set('Authorization', AUTH).send(validCreateBody('big', overrides as never));
    expect(res.status).toBe(400);
    expect(bodyOf(res).code).toBe(3);
    expect(fieldsOf(res)).toEqual([{ field, message: expect.stringMatching(/^must be at most 50, the most rooms one scheduler may have \(ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER\); got 51$/) as unknown }]);
  });

  it('accepts exactly the limit, and autoscaling.max -1 (read as the limit by the operator)', async () => {
    const app = buildTestApps({ maxRoomsPerScheduler: 50 });
    expect((await request(app.management).post('/schedulers').set('Authorization', AUTH).send(validCreateBody('at-limit', { roomsReplicas: 50 }))).status).toBe(200);
    const unbounded = validCreateBody('unbounded', { autoscaling: { enabled: true, min: 1, max: -1, policy: { type: 'roomOccupancy', parameters: { roomOccupancy: { readyTarget: 0.5 } } } } } as never);
    expect((await request(app.management).post('/schedulers').set('Authorization', AUTH).send(unbounded)).status).toBe(200);
  });

  it('refuses a new version, a patch and an add-rooms that pass the limit, and writes nothing', async () => {
    const app = buildTestApps({ maxRoomsPerScheduler: 50 });
    app.store.seedScheduler('tennis-eu', validSpec({ roomsReplicas: 45 }));
    const writes = app.store.writes.length;
    const patch = await request(app.management).patch('/schedulers/tennis-eu').set('Authorization', AUTH).send({ roomsReplicas: 60 });
    expect(patch.status).toBe(400);
    expect(fieldsOf(patch).map((d) => d.field)).toEqual(['roomsReplicas']);
    const version = await request(app.management).post('/schedulers/tennis-eu').set('Authorization', AUTH).send(validCreateBody('tennis-eu', { roomsReplicas: 1000 }));
    expect(version.status).toBe(400);
    expect(fieldsOf(version).map((d) => d.field)).toEqual(['roomsReplicas']);
    const add = await request(app.management).post('/schedulers/tennis-eu/add-rooms').set('Authorization', AUTH).send({ amount: 6 });
    expect(add.status).toBe(400);
    expect(fieldsOf(add)).toEqual([{ field: 'amount', message: 'would take roomsReplicas from 45 to 51, above 50, the most rooms one scheduler may have (ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER)' }]);
    expect(app.store.writes.length).toBe(writes);
    expect((await request(app.management).post('/schedulers/tennis-eu/add-rooms').set('Authorization', AUTH).send({ amount: 5 })).status).toBe(200);
  });

  it('checks an add-rooms against the count in force when the spec holds a refused change that enables autoscaling (the active version has none)', async () => {
    const app = buildTestApps({ maxRoomsPerScheduler: 50 });
    const s = app.store.seedScheduler('tennis-eu', validSpec({ roomsReplicas: 45 }));
    s.spec = { ...s.spec, autoscaling: { enabled: true, min: 1, max: 50, policy: { type: 'roomOccupancy', parameters: { roomOccupancy: { readyTarget: 0.5 } } } } };
    const writes = app.store.writes.length;
    const add = await request(app.management).post('/schedulers/tennis-eu/add-rooms').set('Authorization', AUTH).send({ amount: 6 });
    expect(add.status).toBe(400);
    expect(fieldsOf(add)).toEqual([{ field: 'amount', message: 'would take roomsReplicas from 45 to 51, above 50, the most rooms one scheduler may have (ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER)' }]);
    expect(app.store.writes.length).toBe(writes);
  });
});
