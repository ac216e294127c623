/**
 * Cross-field rules live only in crds/ (CEL `x-kubernetes-validations`) and only the API server
 * evaluates them. Through the gateway, each refused body answers Maestro's validation error
 * (400, code 3, one detail per cause with the body's field path and the rule's message) and
 * writes nothing. On the sandbox by default; on a real API server through E2E_KUBECONFIG (the
 * real tier runs this file against kube-apiserver v1.28).
 */
import type { ErrorBody } from '../../api-gateway/src/errors';
import { schedulerObject, startStack, type Stack } from '../support/stack';

interface Range { start: number; end: number }
interface Container { ports: { hostPortRange?: Range }[]; environment?: unknown[]; [field: string]: unknown }
/** A scheduler definition (Scheduler's spec), typed as far as the cases below change it. */
interface Definition {
  maxSurge?: unknown;
  portRange?: Range;
  autoscaling?: unknown;
  spec: { terminationGracePeriod?: unknown; containers: Container[]; [field: string]: unknown };
  [field: string]: unknown;
}
/** A create body: the definition and its name. */
interface Body extends Definition { name: string }

function body(name: string): Body {
  return { name, ...(schedulerObject(name) as { spec: Definition }).spec };
}

async function call(stack: Stack, method: string, path: string, payload: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${stack.managementUrl!}${path}`, {
    method, headers: { authorization: stack.authHeader, 'content-type': 'application/json' }, body: JSON.stringify(payload),
  });
  return { status: res.status, body: await res.json() };
}

const post = (stack: Stack, payload: unknown) => call(stack, 'POST', '/schedulers', payload);

/** The rule's message names the value it refused (the API server shows only the type, or nothing, there). */
const RFC1123 = (name: string) => `name "${name}" is not accepted: it must be an RFC 1123 label, at most 63 lower-case letters, digits or hyphens, starting and ending with a letter or digit`;
const MAX_SURGE = (value: string) => `maxSurge ${value} is not accepted: use an integer >= 1, a numeric string such as "3" or a percentage such as "10%"`;
const KUBERNETES_NAMESPACE = "name must not be 'default' or start with 'kube-': a scheduler's rooms live in the namespace of its name, and those are Kubernetes' own namespaces; choose another name";
const cases: Array<[string, (b: Body) => void, { field: string; message: string }]> = [
  ['name not RFC 1123', (b) => { b.name = 'bad-name-'; }, { field: 'name', message: RFC1123('bad-name-') }],
  ['name of 64 chars', (b) => { b.name = `v${'a'.repeat(63)}`; }, { field: 'name', message: RFC1123(`v${'a'.repeat(63)}`) }],
  ['name info', (b) => { b.name = 'info'; }, { field: 'name', message: "name must not be 'info' (reserved by GET /schedulers/info)" }],
  ['name default', (b) => { b.name = 'default'; }, { field: 'name', message: KUBERNETES_NAMESPACE }],
  ['name kube-system', (b) => { b.name = 'kube-system'; }, { field: 'name', message: KUBERNETES_NAMESPACE }],
  ['maxSurge 0', (b) => { b.maxSurge = 0; }, { field: 'maxSurge', message: MAX_SURGE('0') }],
  ['maxSurge "lots"', (b) => { b.maxSurge = 'lots'; }, { field: 'maxSurge', message: MAX_SURGE('"lots"') }],
  ['maxSurge "-5%"', (b) => { b.maxSurge = '-5%'; }, { field: 'maxSurge', message: MAX_SURGE('"-5%"') }],
  ['portRange start >= end', (b) => { b.portRange = { start: 50000, end: 50000 }; }, { field: 'portRange.start', message: 'start must be less than end' }],
  ['portRange and hostPortRange', (b) => { b.spec.containers[0]!.ports[0]!.hostPortRange = { start: 10000, end: 20000 }; }, { field: 'portRange', message: 'portRange and hostPortRange are mutually exclusive: no container port may set hostPortRange when portRange is set' }],
  ['neither portRange nor hostPortRange', (b) => { delete b.portRange; }, { field: 'spec.containers', message: 'every container port must set hostPortRange when portRange is not set' }],
  ['hostPortRange start >= end', (b) => { delete b.portRange; b.spec.containers[0]!.ports[0]!.hostPortRange = { start: 3000, end: 2000 }; }, { field: 'spec.containers[0].ports[0].hostPortRange.start', message: 'start must be less than end' }],
  ['autoscaling min > max', (b) => { b.autoscaling = { enabled: true, min: 11, max: 10, policy: { type: 'roomOccupancy', parameters: { roomOccupancy: { readyTarget: 0.5 } } } }; }, { field: 'autoscaling.min', message: 'min must be less than or equal to max' }],
  ['roomOccupancy without its parameters', (b) => { b.autoscaling = { enabled: true, min: 1, max: 10, policy: { type: 'roomOccupancy', parameters: {} } }; }, { field: 'autoscaling.policy.parameters', message: 'parameters.roomOccupancy is required when the policy type is roomOccupancy' }],
  ['fixedBuffer without its parameters', (b) => { b.autoscaling = { enabled: true, min: 1, max: 10, policy: { type: 'fixedBuffer', parameters: { roomOccupancy: { readyTarget: 0.5 } } } }; }, { field: 'autoscaling.policy.parameters', message: 'parameters.fixedBuffer is required when the policy type is fixedBuffer' }],
  ['terminationGracePeriod 0s', (b) => { b.spec.terminationGracePeriod = '0s'; }, { field: 'spec.terminationGracePeriod', message: 'terminationGracePeriod "0s" must be greater than 0, such as "30s"' }],
  ['duplicate container names', (b) => { b.spec.containers.push({ ...b.spec.containers[0]!, ports: [] }); }, { field: 'spec.containers', message: 'container names must be unique' }],
  ['env with value and valueFrom', (b) => { b.spec.containers[0]!.environment = [{ name: 'A', value: 'x', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }]; }, { field: 'spec.containers[0].environment[0]', message: 'exactly one of value or valueFrom must be set' }],
  ['env with neither value nor valueFrom', (b) => { b.spec.containers[0]!.environment = [{ name: 'A' }]; }, { field: 'spec.containers[0].environment[0]', message: 'exactly one of value or valueFrom must be set' }],
  // What kube-apiserver would refuse in the room's Pod (test/real-apiserver/differential.test.ts shows it does).
  ['port name without a letter', (b) => { (b.spec.containers[0]!.ports[0] as { name?: string }).name = '123'; }, { field: 'spec.containers[0].ports[0].name', message: 'port name "123" must contain at least one letter (an IANA service name such as "game")' }],
  ['two forwarders of one name', (b) => { b.forwarders = [{ name: 'fw', address: 'fw.example:9000' }, { name: 'fw', address: 'fw2.example:9000' }]; }, { field: 'forwarders', message: 'forwarder names must be unique' }],
  ['forwarder port above 65535', (b) => { b.forwarders = [{ name: 'fw', address: 'fw.example:99999' }]; }, { field: 'forwarders[0].address', message: 'must be host:port: a DNS name' }],
  ['two ports of one name', (b) => { b.spec.containers[0]!.ports.push({ ...b.spec.containers[0]!.ports[0]!, port: 7778 } as never); }, { field: 'spec.containers[0].ports', message: 'port names must be unique within a container' }],
  ['label key with a space', (b) => { b.labels = { 'a b': 'x' }; }, { field: 'labels', message: 'label keys must be qualified names' }],
  ['annotation key with a slash too many', (b) => { b.annotations = { 'a/b/c': 'x' }; }, { field: 'annotations', message: 'annotation keys must be qualified names' }],
  // kube-apiserver refuses a pod whose label key has a prefix over 253 characters, under the 317 of a whole key.
  ['label key with a prefix of 254 characters', (b) => { b.labels = { [`${'a'.repeat(254)}/k`]: 'x' }; }, { field: 'labels', message: 'label keys must be qualified names' }],
  ['affinity with a prefix of 254 characters', (b) => { b.spec.affinity = `${'a'.repeat(254)}/k`; }, { field: 'spec.affinity', message: "the prefix of affinity (before '/') must be at most 253 characters, as a label key's" }],
  ['valueFrom with both refs', (b) => { b.spec.containers[0]!.environment = [{ name: 'A', valueFrom: { fieldRef: { fieldPath: 'status.podIP' }, secretKeyRef: { name: 'a', key: 'b' } } }]; }, { field: 'spec.containers[0].environment[0].valueFrom', message: 'exactly one of fieldRef or secretKeyRef must be set' }],
];

describe('cross-field validation by the API server, through the gateway', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ external: true, simulation: false, operators: 0 });
  });
  afterAll(async () => {
    await stack.stop();
  });

  it.each(cases)('refuses %s with the field and the rule\'s message, and writes nothing', async (_what, change, expected) => {
    const payload = body('validation-case');
    change(payload);
    const res = await post(stack, payload);
    expect(res.status).toBe(400);
    const refused = res.body as ErrorBody;
    expect(refused.code).toBe(3);
    expect(refused.message).toMatch(/^Validation Error:\n/);
    expect(refused.details).toContainEqual(expect.objectContaining({ field: expected.field, message: expect.stringContaining(expected.message) as unknown }));
    expect(refused.message).toContain(expected.message);
    // A CEL rule's message reads alone: not after the API server's type name (empty for
    // int-or-string fields such as maxSurge), which names no value the user sent.
    for (const detail of refused.details as Array<{ message?: string }>) expect(detail.message).not.toMatch(/^Invalid value: "[a-z]*": /);
    const names = (await stack.api.listSchedulers()).items.map((s) => s.metadata.name);
    expect(names).not.toContain(payload.name);
  });

  it('refuses a change that breaks a CEL rule with its validation error (400, code 3, the field) also while a version operation runs, not code 9 (waiting would not make it valid), and writes nothing', async () => {
    const name = 'validation-busy';
    expect((await post(stack, body(name))).status).toBe(200);
    // No operator runs here: the version operation this change enqueues stays pending.
    expect((await call(stack, 'PATCH', `/schedulers/${name}`, { roomsReplicas: 4 })).status).toBe(200);
    const before = await stack.api.getScheduler(name);
    const operations = async () => (await stack.api.listOperations(name)).items.map((op) => op.metadata.name).sort();
    const operationsBefore = await operations();
    const autoscaling = { enabled: true, min: 5, max: 2, policy: { type: 'roomOccupancy', parameters: { roomOccupancy: { readyTarget: 0.5 } } } };
    const { name: _name, ...twoOfOneName } = body(name);
    twoOfOneName.spec.containers.push({ ...twoOfOneName.spec.containers[0]!, ports: [] });
    const refusals: Array<[string, string, unknown, { field: string; message: string }]> = [
      ['PATCH', `/schedulers/${name}`, { autoscaling }, { field: 'autoscaling.min', message: 'min must be less than or equal to max' }],
      ['POST', `/schedulers/${name}`, twoOfOneName, { field: 'spec.containers', message: 'container names must be unique' }],
    ];
    for (const [method, path, payload, expected] of refusals) {
      const res = await call(stack, method, path, payload);
      expect(res.status).toBe(400);
      const refused = res.body as ErrorBody;
      expect(refused.code).toBe(3);
      expect(refused.details).toContainEqual({ field: expected.field, message: expect.stringContaining(expected.message) as unknown });
    }
    // A valid change is told to wait: the operation still runs.
    const valid = await call(stack, 'PATCH', `/schedulers/${name}`, { roomsReplicas: 5 });
    expect([valid.status, (valid.body as ErrorBody).code]).toEqual([400, 9]);
    const after = await stack.api.getScheduler(name);
    expect([after.metadata.generation, after.metadata.resourceVersion, after.spec]).toEqual([before.metadata.generation, before.metadata.resourceVersion, before.spec]);
    expect(await operations()).toEqual(operationsBefore);
  });

  it('refuses, past the gateway (kubectl), a terminationGracePeriod of more than 7 digits before a unit: the CRD\'s pattern, naming the field', async () => {
    const object = schedulerObject('validation-grace', {}) as { spec: { spec: { terminationGracePeriod: string } } };
    object.spec.spec.terminationGracePeriod = '99999999999999999999h';
    const refused = await stack.api.createScheduler(object as never).then(() => undefined, (err: unknown) => err as { code?: number; body?: unknown });
    expect(refused?.code).toBe(422);
    expect(JSON.stringify(refused?.body)).toContain('spec.spec.terminationGracePeriod');
    expect((await stack.api.listSchedulers()).items.map((s) => s.metadata.name)).not.toContain('validation-grace');
  });

  it('refuses, past the gateway (kubectl), a forwarder type sent empty: the CRD\'s enum takes gRPC only, and its default fills only a type not sent', async () => {
    const object = schedulerObject('validation-fw-type', {}) as { spec: { forwarders?: unknown[] } };
    object.spec.forwarders = [{ name: 'fw', enable: true, type: '', address: 'fw.example:9000' }];
    const refused = await stack.api.createScheduler(object as never).then(() => undefined, (err: unknown) => err as { code?: number; body?: unknown });
    expect(refused?.code).toBe(422);
    const status = (typeof refused?.body === 'string' ? JSON.parse(refused.body) : refused?.body) as { details?: { causes?: unknown[] } };
    expect(status.details?.causes).toContainEqual({ reason: 'FieldValueNotSupported', field: 'spec.forwarders[0].type', message: 'Unsupported value: "": supported values: "gRPC"' });
    expect((await stack.api.listSchedulers()).items.map((s) => s.metadata.name)).not.toContain('validation-fw-type');
  });

  it('accepts the same body when it breaks no rule', async () => {
    const res = await post(stack, body('validation-ok'));
    expect(res.status).toBe(200);
    expect((await stack.api.getScheduler('validation-ok')).metadata.name).toBe('validation-ok');
  });

  it('refuses a body that sends a key twice, naming its path, and the API server\'s Scheduler stays as it was (a create is not made, a patch not applied)', async () => {
    const send = async (method: string, path: string, text: string) => {
      const res = await fetch(`${stack.managementUrl!}${path}`, { method, headers: { authorization: stack.authHeader, 'content-type': 'application/json' }, body: text });
      return { status: res.status, body: (await res.json()) as ErrorBody };
    };
    const twice = JSON.stringify(body('validation-twice')).replace('"image":', '"image":"registry.example/other:9.9","image":');
    const create = await send('POST', '/schedulers', twice);
    expect(create.status).toBe(400);
    expect(create.body.details).toEqual([{ field: 'spec.containers[0].image', message: expect.stringContaining('send each key once') as unknown }]);
    expect((await stack.api.listSchedulers()).items.map((s) => s.metadata.name)).not.toContain('validation-twice');

    expect((await post(stack, body('validation-twice'))).status).toBe(200);
    const before = await stack.api.getScheduler('validation-twice');
    const patch = await send('PATCH', '/schedulers/validation-twice', '{"roomsReplicas":3,"roomsReplicas":0}');
    expect(patch.status).toBe(400);
    expect(patch.body).toMatchObject({ code: 3, message: expect.stringMatching(/^Validation Error:\nroomsReplicas: duplicate key: .*send each key once/) as unknown });
    const after = await stack.api.getScheduler('validation-twice');
    expect([after.metadata.generation, after.spec]).toEqual([before.metadata.generation, before.spec]);
  });

  it('takes fields sent as null as not set, as Maestro (protojson) does and as the API server does for the same Scheduler written with kubectl', async () => {
    // What a Go client sends for the nil maps, slices and pointers it leaves out.
    const withNulls = (b: Body): Body => {
      const c = b.spec.containers[0]!;
      return {
        ...b, autoscaling: null, matchAllocation: null, labels: null, annotations: null,
        forwarders: [{ name: 'fw', enable: false, type: 'gRPC', address: 'fw.example:9000', options: { timeout: 500, metadata: null } }],
        spec: { ...b.spec, toleration: null, affinity: null, containers: [{ ...c, command: null, ports: c.ports.map((p) => ({ ...p, hostPortRange: null })) as never }] },
      };
    };
    const res = await post(stack, withNulls(body('validation-nulls')));
    expect(res.status).toBe(200);
    const { name: _name, ...definition } = withNulls(body('validation-nulls-kubectl'));
    await stack.api.createScheduler({ apiVersion: 'roomkeeper.io/v1', kind: 'Scheduler', metadata: { name: 'validation-nulls-kubectl' }, spec: definition } as never);
    const [viaHttp, viaKubectl] = await Promise.all([stack.api.getScheduler('validation-nulls'), stack.api.getScheduler('validation-nulls-kubectl')]);
    expect(JSON.stringify(viaHttp.spec)).not.toContain('null');
    expect(viaHttp.spec).toEqual(viaKubectl.spec);
    expect(viaHttp.spec.forwarders?.[0]?.options?.timeout).toBe(500);
  });

  it('refuses a change of a GameRoom\'s spec (kubectl), naming the rule, and keeps its metadata writable', async () => {
    // A room's spec is what the operator made it from: moved to another scheduler or version by
    // hand, the operator kept removing it from the scheduler whose namespace holds it (a fuzz run).
    const namespace = 'validation-room';
    await stack.core.createNamespace({ body: { metadata: { name: namespace } } });
    try {
      const room = await stack.api.createGameRoom({ apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name: 'room-1', namespace }, spec: { scheduler: namespace, version: 'v1.0.0' } });
      for (const change of [{ op: 'replace', path: '/spec/scheduler', value: 'another' }, { op: 'replace', path: '/spec/version', value: 'v9.9.9' }]) {
        const refused = await stack.api.jsonPatchGameRoom(namespace, 'room-1', [change]).then(() => undefined, (err: unknown) => err as { code?: number; body?: unknown });
        expect(refused?.code).toBe(422);
        expect(JSON.stringify(refused?.body)).toContain("a GameRoom's spec is immutable");
      }
      expect((await stack.api.getGameRoom(namespace, 'room-1')).spec).toEqual(room.spec);
      const labelled = await stack.api.jsonPatchGameRoom(namespace, 'room-1', [{ op: 'add', path: '/metadata/labels', value: { 'validation-test': 'yes' } }]);
      expect(labelled.metadata.labels?.['validation-test']).toBe('yes');
    } finally {
      await stack.core.deleteNamespace({ name: namespace });
    }
  });
});
