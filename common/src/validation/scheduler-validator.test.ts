import { schedulerPatchField, validateSchedulerCreateBody, validateSchedulerPatchBody, validateSchedulerSpec } from './scheduler-validator';
import type { FieldError } from './result';
import { VIOLATIONS_NAMED } from './schema-validator';

const IMAGE_WORDS = 'must not begin or end with whitespace, nor hold a control character (such as NUL or a newline)';
const TIMEOUT_WORDS = 'must be a whole number of milliseconds from 1 to 3600000: an integer such as 1000, or a string of digits such as "1000"; leave it out for 1000';
const HOST_PORT_WORDS = 'must be host:port: a DNS name, an IPv4 address or a bracketed IPv6 address, then ":" and a port from 1 to 65535, such as "matchmaker.games.svc:9000" (no scheme such as unix: or dns:)';

/**
 * A request body as JSON the tests edit, often into wrong types on purpose: each member a test
 * reaches into is typed as an object or list (optional where a test deletes it); every other member
 * (and so every leaf a test sets) is `unknown`. A test that removes `spec` itself sees the body as `Json`.
 */
interface Json { [key: string]: unknown }
interface Port extends Json { hostPortRange?: unknown }
interface Container extends Json {
  ports?: Port[];
  environment?: (Json & { valueFrom?: Json & { secretKeyRef?: Json } })[];
  requests?: Json;
  limits?: Json;
}
interface Body extends Json {
  portRange?: Json;
  forwarders?: (Json & { options: Json })[];
  autoscaling?: Json & { policy: Json & { parameters: Json & { roomOccupancy?: Json } } };
  annotations?: Json;
  labels?: Json;
  spec: Json & { containers: Container[] };
}

/** A valid POST /schedulers body in Maestro's documented shape. */
function validBody(): Body {
  return {
    name: 'scheduler-name-1',
    game: 'game-name',
    state: 'creating',
    maxSurge: '10%',
    roomsReplicas: 1,
    portRange: { start: 40000, end: 60000 },
    forwarders: [{ name: 'matchmaker', enable: true, type: 'gRPC', address: 'external-matchmaker.svc:80', options: { timeout: '1000', metadata: { roomType: 'red' } } }],
    autoscaling: { enabled: true, min: 1, max: 10, cooldown: 60, policy: { type: 'roomOccupancy', parameters: { roomOccupancy: { readyTarget: 0.5 } } } },
    annotations: { imageregistry: 'https://hub.docker.com/' },
    labels: { team: 'tennis' },
    spec: {
      terminationGracePeriod: '100s',
      containers: [
        {
          name: 'game-room',
          image: 'registry/game:1.2',
          imagePullPolicy: 'IfNotPresent',
          command: ['/start.sh'],
          environment: [
            { name: 'A', value: 'b' },
            { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
            { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'secrets', key: 'token' } } },
          ],
          requests: { memory: '100Mi', cpu: '100m' },
          limits: { memory: '200Mi', cpu: '200m' },
          ports: [{ name: 'port-name', protocol: 'tcp', port: 12345 }],
        },
      ],
      toleration: 'some-toleration',
      affinity: 'some-affinity',
    },
  };
}

function errorsOf(body: unknown): FieldError[] {
  const r = validateSchedulerCreateBody(body);
  return r.ok ? [] : r.errors;
}

describe('validateSchedulerCreateBody', () => {
  it('accepts a valid body, splits name from spec, prunes `state`, applies defaults', () => {
    const r = validateSchedulerCreateBody(validBody());
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.name).toBe('scheduler-name-1');
    expect(r.value.spec).not.toHaveProperty('name');
    expect(r.value.spec).not.toHaveProperty('state');
    expect(r.value.spec.autoscaling?.policy.parameters?.roomOccupancy?.downThreshold).toBe(0.99);
    expect(r.value.spec.game).toBe('game-name');
  });

  it('does not change its input', () => {
    const body = validBody();
    const before = JSON.stringify(body);
    validateSchedulerCreateBody(body);
    expect(JSON.stringify(body)).toBe(before);
  });

  it('drops unknown fields at any depth instead of failing', () => {
    const body = validBody();
    body.whatever = 1;
    body.spec.containers[0]!.unknown = { a: 1 };
    const r = validateSchedulerCreateBody(body);
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.value.spec).not.toHaveProperty('whatever');
      expect(r.value.spec.spec.containers[0]).not.toHaveProperty('unknown');
      expect(r.value.spec.forwarders?.[0]?.options?.metadata).toEqual({ roomType: 'red' });
    }
  });

  const good: Array<[string, (b: Body) => void]> = [
    ['hostPortRange on every port and no portRange', (b) => { delete b.portRange; b.spec.containers[0]!.ports![0]!.hostPortRange = { start: 10000, end: 20000 }; }],
    ['portRange from 1024, the lowest unprivileged port (issue 12 L5)', (b) => { b.portRange = { start: 1024, end: 1100 }; }],
    ['no ports at all and no portRange', (b) => { delete b.portRange; delete b.spec.containers[0]!.ports; }],
    ['maxSurge as an integer', (b) => { b.maxSurge = 3; }],
    ['maxSurge as a numeric string (Maestro sends strings)', (b) => { b.maxSurge = '3'; }],
    ['maxSurge "0%" (as Maestro)', (b) => { b.maxSurge = '0%'; }],
    ['roomsReplicas 0', (b) => { b.roomsReplicas = 0; }],
    ['protocol in upper case', (b) => { b.spec.containers[0]!.ports![0]!.protocol = 'UDP'; }],
    ['protocol sctp', (b) => { b.spec.containers[0]!.ports![0]!.protocol = 'sctp'; }],
    ['timeout as an integer', (b) => { b.forwarders![0]!.options.timeout = 500; }],
    ['no forwarders, autoscaling, annotations or labels', (b) => { delete b.forwarders; delete b.autoscaling; delete b.annotations; delete b.labels; }],
    ['unbounded autoscaling max -1', (b) => { b.autoscaling!.max = -1; b.autoscaling!.min = 5; }],
    ['fixedBuffer policy', (b) => { b.autoscaling!.policy = { type: 'fixedBuffer', parameters: { fixedBuffer: { amount: 3 } } }; }],
    ['fractional grace period', (b) => { b.spec.terminationGracePeriod = '0.5s'; }],
    ['compound grace period', (b) => { b.spec.terminationGracePeriod = '1m30s'; }],
    ['two containers', (b) => { b.spec.containers.push({ name: 'sidecar', image: 'busybox', ports: [{ name: 'udp', protocol: 'udp', port: 1 }] }); }],
    ['a 63-char name', (b) => { b.name = 'a'.repeat(63); }],
    ['quantities 0.5, 1e3, 1Gi', (b) => { b.spec.containers[0]!.requests = { cpu: '0.5', memory: '1e3' }; b.spec.containers[0]!.limits = { cpu: '1', memory: '1Gi' }; }],
  ];
  it.each(good)('accepts %s', (_name, change) => {
    const body = validBody();
    change(body);
    expect(errorsOf(body)).toEqual([]);
  });

  // Cross-field rules (CEL in crds/) are the API server's to judge: test/e2e/validation.test.ts
  // sends those cases through the gateway to the sandbox and to the real API server.
  const bad: Array<[string, (b: Body) => void, FieldError]> = [
    ['missing name', (b) => { delete b.name; }, { field: 'name', message: 'Required value' }],
    ['missing game', (b) => { delete b.game; }, { field: 'game', message: 'Required value' }],
    ['missing maxSurge', (b) => { delete b.maxSurge; }, { field: 'maxSurge', message: 'Required value' }],
    ['maxSurge boolean', (b) => { b.maxSurge = true; }, { field: 'maxSurge', message: 'must be of type integer or string; got boolean true' }],
    // An int-or-string's integer is an int32 on the API server: larger numbers are refused here, naming the field.
    ['maxSurge 1e308', (b) => { b.maxSurge = 1e308; }, { field: 'maxSurge', message: 'should be less than or equal to 2147483647' }],
    ['maxSurge 2^64', (b) => { b.maxSurge = 2 ** 64; }, { field: 'maxSurge', message: 'should be less than or equal to 2147483647' }],
    ['roomsReplicas 2^31 (an int32)', (b) => { b.roomsReplicas = 2 ** 31; }, { field: 'roomsReplicas', message: 'should be less than or equal to 2147483647' }],
    ['negative roomsReplicas', (b) => { b.roomsReplicas = -1; }, { field: 'roomsReplicas', message: 'should be greater than or equal to 0' }],
    ['roomsReplicas as a string that is not digits', (b) => { b.roomsReplicas = '1.5'; }, { field: 'roomsReplicas', message: 'must be of type integer; got string "1.5"' }],
    ['portRange end > 65535', (b) => { b.portRange!.end = 70000; }, { field: 'portRange.end', message: 'should be less than or equal to 65535' }],
    ['portRange without end', (b) => { delete b.portRange!.end; }, { field: 'portRange.end', message: 'Required value' }],
    // Issue 12 L5: host ports below 1024 are privileged on the node.
    ['portRange start 80', (b) => { b.portRange = { start: 80, end: 2000 }; }, { field: 'portRange.start', message: 'should be greater than or equal to 1024' }],
    ['portRange end 1023', (b) => { b.portRange = { start: 1000, end: 1023 }; }, { field: 'portRange.end', message: 'should be greater than or equal to 1024' }],
    ['hostPortRange start 1', (b) => { delete b.portRange; b.spec.containers[0]!.ports![0]!.hostPortRange = { start: 1, end: 2000 }; }, { field: 'spec.containers[0].ports[0].hostPortRange.start', message: 'should be greater than or equal to 1024' }],
    ['forwarder type http', (b) => { b.forwarders![0]!.type = 'http'; }, { field: 'forwarders[0].type', message: 'Unsupported value: "http": supported values: "gRPC"' }],
    // Maestro refuses an empty type; it is not read as not set (and so gRPC), as it has a default a GET would show.
    ['forwarder type ""', (b) => { b.forwarders![0]!.type = ''; }, { field: 'forwarders[0].type', message: 'Unsupported value: "": supported values: "gRPC"' }],
    ['forwarder without address', (b) => { delete b.forwarders![0]!.address; }, { field: 'forwarders[0].address', message: 'Required value' }],
    ['forwarder without name', (b) => { delete b.forwarders![0]!.name; }, { field: 'forwarders[0].name', message: 'Required value' }],
    // What is expected, in words (the CRD says it with a minimum, a maximum and a pattern; no CEL rule: see the CRD).
    ['forwarder timeout 0', (b) => { b.forwarders![0]!.options.timeout = 0; }, { field: 'forwarders[0].options.timeout', message: TIMEOUT_WORDS }],
    ['forwarder timeout "1s"', (b) => { b.forwarders![0]!.options.timeout = '1s'; }, { field: 'forwarders[0].options.timeout', message: TIMEOUT_WORDS }],
    ['forwarder timeout "0"', (b) => { b.forwarders![0]!.options.timeout = '0'; }, { field: 'forwarders[0].options.timeout', message: TIMEOUT_WORDS }],
    ['forwarder timeout 3600001', (b) => { b.forwarders![0]!.options.timeout = 3_600_001; }, { field: 'forwarders[0].options.timeout', message: TIMEOUT_WORDS }],
    ['forwarder address without a port', (b) => { b.forwarders![0]!.address = 'matchmaker'; }, { field: 'forwarders[0].address', message: HOST_PORT_WORDS }],
    ['forwarder address with a scheme', (b) => { b.forwarders![0]!.address = 'dns:///mm:9090'; }, { field: 'forwarders[0].address', message: HOST_PORT_WORDS }],
    ['autoscaling min 0', (b) => { b.autoscaling!.min = 0; }, { field: 'autoscaling.min', message: 'should be greater than or equal to 1' }],
    ['autoscaling max -2', (b) => { b.autoscaling!.max = -2; }, { field: 'autoscaling.max', message: 'should be greater than or equal to -1' }],
    ['autoscaling negative cooldown', (b) => { b.autoscaling!.cooldown = -1; }, { field: 'autoscaling.cooldown', message: 'should be greater than or equal to 0' }],
    ['unknown policy type', (b) => { b.autoscaling!.policy.type = 'magic'; }, { field: 'autoscaling.policy.type', message: 'Unsupported value: "magic": supported values: "roomOccupancy", "fixedBuffer"' }],
    ['readyTarget 1', (b) => { b.autoscaling!.policy.parameters.roomOccupancy!.readyTarget = 1; }, { field: 'autoscaling.policy.parameters.roomOccupancy.readyTarget', message: 'should be less than 1' }],
    ['readyTarget 0', (b) => { b.autoscaling!.policy.parameters.roomOccupancy!.readyTarget = 0; }, { field: 'autoscaling.policy.parameters.roomOccupancy.readyTarget', message: 'should be greater than 0' }],
    ['downThreshold 1.5', (b) => { b.autoscaling!.policy.parameters.roomOccupancy!.downThreshold = 1.5; }, { field: 'autoscaling.policy.parameters.roomOccupancy.downThreshold', message: 'should be less than 1' }],
    ['fixedBuffer amount 0', (b) => { b.autoscaling!.policy = { type: 'fixedBuffer', parameters: { fixedBuffer: { amount: 0 } } }; }, { field: 'autoscaling.policy.parameters.fixedBuffer.amount', message: 'should be greater than or equal to 1' }],
    ['matchAllocation maxMatches 36', (b) => { b.matchAllocation = { maxMatches: 36 }; }, { field: 'matchAllocation.maxMatches', message: 'should be less than or equal to 35' }],
    ['matchAllocation maxMatches 0', (b) => { b.matchAllocation = { maxMatches: 0 }; }, { field: 'matchAllocation.maxMatches', message: 'should be greater than or equal to 1' }],
    ['allocation maxTtlSeconds 0', (b) => { b.allocation = { maxTtlSeconds: 0 }; }, { field: 'allocation.maxTtlSeconds', message: 'should be greater than or equal to 1' }],
    ['annotation value not a string', (b) => { b.annotations!.a = 1; }, { field: 'annotations[a]', message: 'must be of type string; got number 1' }],
    ['label value with spaces', (b) => { b.labels!.team = 'a b'; }, { field: 'labels[team]', message: "must be a label value: letters, digits, '-', '_' or '.', starting and ending with a letter or digit" }],
    ['missing spec', (b) => { delete (b as Json).spec; }, { field: 'spec', message: 'Required value' }],
    ['null spec (null is read as not set, as protojson reads it: spec is then missing)', (b) => { (b as Json).spec = null; }, { field: 'spec', message: 'Required value' }],
    ['missing terminationGracePeriod', (b) => { delete b.spec.terminationGracePeriod; }, { field: 'spec.terminationGracePeriod', message: 'Required value' }],
    ['terminationGracePeriod without unit', (b) => { b.spec.terminationGracePeriod = '100'; }, { field: 'spec.terminationGracePeriod', message: 'must be a duration with a unit, such as "100s", with at most 7 digits before a unit' }],
    // No pod gets a grace its deletion cannot be dated with (the sandbox's deletion stalled on 3.6e23 s).
    ['terminationGracePeriod of 20 digits', (b) => { b.spec.terminationGracePeriod = '99999999999999999999h'; }, { field: 'spec.terminationGracePeriod', message: 'must be a duration with a unit, such as "100s", with at most 7 digits before a unit' }],
    ['empty containers', (b) => { b.spec.containers = []; }, { field: 'spec.containers', message: 'must not be empty' }],
    ['container name not RFC 1123', (b) => { b.spec.containers[0]!.name = 'Game_Room'; }, { field: 'spec.containers[0].name', message: "must be an RFC 1123 label: lower-case letters, digits or '-', starting and ending with a letter or digit" }],
    ['empty image', (b) => { b.spec.containers[0]!.image = ''; }, { field: 'spec.containers[0].image', message: 'must not be empty' }],
    ['bad imagePullPolicy', (b) => { b.spec.containers[0]!.imagePullPolicy = 'Sometimes'; }, { field: 'spec.containers[0].imagePullPolicy', message: 'Unsupported value: "Sometimes": supported values: "Always", "Never", "IfNotPresent"' }],
    ['command not strings', (b) => { b.spec.containers[0]!.command = [1]; }, { field: 'spec.containers[0].command[0]', message: 'must be of type string; got number 1' }],
    ['env without name', (b) => { delete b.spec.containers[0]!.environment![0]!.name; }, { field: 'spec.containers[0].environment[0].name', message: 'Required value' }],
    ['secretKeyRef without key', (b) => { delete b.spec.containers[0]!.environment![2]!.valueFrom!.secretKeyRef!.key; }, { field: 'spec.containers[0].environment[2].valueFrom.secretKeyRef.key', message: 'Required value' }],
    ['bad memory quantity', (b) => { b.spec.containers[0]!.requests!.memory = '100 megabytes'; }, { field: 'spec.containers[0].requests.memory', message: 'must be a Kubernetes quantity of at least 0, such as "100m", "0.5" or "512Mi"' }],
    ['bad cpu quantity', (b) => { b.spec.containers[0]!.limits!.cpu = 'fast'; }, { field: 'spec.containers[0].limits.cpu', message: 'must be a Kubernetes quantity of at least 0, such as "100m", "0.5" or "512Mi"' }],
    // kube-apiserver cannot decode a Pod with it (400: quantities must match '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$').
    ['cpu with a fractional exponent', (b) => { b.spec.containers[0]!.requests!.cpu = '1e1.5'; }, { field: 'spec.containers[0].requests.cpu', message: 'must be a Kubernetes quantity of at least 0, such as "100m", "0.5" or "512Mi"' }],
    ['port name of 16 chars', (b) => { b.spec.containers[0]!.ports![0]!.name = 'a'.repeat(16); }, { field: 'spec.containers[0].ports[0].name', message: 'Too long: may not be longer than 15' }],
    ['port without name', (b) => { delete b.spec.containers[0]!.ports![0]!.name; }, { field: 'spec.containers[0].ports[0].name', message: 'Required value' }],
    ['protocol http', (b) => { b.spec.containers[0]!.ports![0]!.protocol = 'http'; }, { field: 'spec.containers[0].ports[0].protocol', message: 'must be TCP, UDP or SCTP (in either case)' }],
    ['port 0', (b) => { b.spec.containers[0]!.ports![0]!.port = 0; }, { field: 'spec.containers[0].ports[0].port', message: 'should be greater than or equal to 1' }],
    ['port 65536', (b) => { b.spec.containers[0]!.ports![0]!.port = 65536; }, { field: 'spec.containers[0].ports[0].port', message: 'should be less than or equal to 65535' }],
    ['port 1.5', (b) => { b.spec.containers[0]!.ports![0]!.port = 1.5; }, { field: 'spec.containers[0].ports[0].port', message: 'must be of type integer; got number 1.5' }],
    // What kube-apiserver refuses in the Pod a room becomes is refused here, in the scheduler's own terms.
    ['negative memory request', (b) => { b.spec.containers[0]!.requests!.memory = '-1Mi'; }, { field: 'spec.containers[0].requests.memory', message: 'must be a Kubernetes quantity of at least 0, such as "100m", "0.5" or "512Mi"' }],
    ['image with a trailing space', (b) => { b.spec.containers[0]!.image = 'registry/game:1.2 '; }, { field: 'spec.containers[0].image', message: IMAGE_WORDS }],
    ['image with a NUL', (b) => { b.spec.containers[0]!.image = 'registry/game\u0000:1.2'; }, { field: 'spec.containers[0].image', message: IMAGE_WORDS }],
    ['image ending in a NUL', (b) => { b.spec.containers[0]!.image = 'registry/game:1.2\u0000'; }, { field: 'spec.containers[0].image', message: IMAGE_WORDS }],
    ['env name with a space', (b) => { b.spec.containers[0]!.environment![0]!.name = 'MY VAR'; }, { field: 'spec.containers[0].environment[0].name', message: "must be an environment variable name: letters, digits, '_', '-' or '.', not starting with a digit" }],
    ['env name starting with a digit', (b) => { b.spec.containers[0]!.environment![0]!.name = '1A'; }, { field: 'spec.containers[0].environment[0].name', message: "must be an environment variable name: letters, digits, '_', '-' or '.', not starting with a digit" }],
    ['unknown downward-API field', (b) => { b.spec.containers[0]!.environment![1]!.valueFrom = { fieldRef: { fieldPath: 'status.phase' } }; }, { field: 'spec.containers[0].environment[1].valueFrom.fieldRef.fieldPath', message: "must be a Pod field the downward API gives an environment variable: metadata.name, metadata.namespace, metadata.uid, metadata.labels['<key>'], metadata.annotations['<key>'], spec.nodeName, spec.serviceAccountName, status.hostIP, status.podIP or status.podIPs" }],
    ['secret name with upper case', (b) => { b.spec.containers[0]!.environment![2]!.valueFrom!.secretKeyRef!.name = 'Secrets'; }, { field: 'spec.containers[0].environment[2].valueFrom.secretKeyRef.name', message: "must be a DNS subdomain: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit" }],
    ['secret key with a slash', (b) => { b.spec.containers[0]!.environment![2]!.valueFrom!.secretKeyRef!.key = 'a/b'; }, { field: 'spec.containers[0].environment[2].valueFrom.secretKeyRef.key', message: "must be a Secret key: letters, digits, '-', '_' or '.'" }],
    ['port name with upper case', (b) => { b.spec.containers[0]!.ports![0]!.name = 'Game'; }, { field: 'spec.containers[0].ports[0].name', message: "must be an IANA service name: lower-case letters and digits, with single '-' between them" }],
    ['port name with a double hyphen', (b) => { b.spec.containers[0]!.ports![0]!.name = 'game--1'; }, { field: 'spec.containers[0].ports[0].name', message: "must be an IANA service name: lower-case letters and digits, with single '-' between them" }],
    ['toleration with a space', (b) => { b.spec.toleration = 'a b'; }, { field: 'spec.toleration', message: "must be a label value: letters, digits, '-', '_' or '.', starting and ending with a letter or digit" }],
    ['toleration of 64 chars', (b) => { b.spec.toleration = 'a'.repeat(64); }, { field: 'spec.toleration', message: 'Too long: may not be longer than 63' }],
    ['affinity with a space', (b) => { b.spec.affinity = 'node pool'; }, { field: 'spec.affinity', message: "must be empty or a qualified name (a label key): an optional DNS subdomain prefix and '/', then at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit" }],
    ['affinity name part of 64 chars', (b) => { b.spec.affinity = `example.com/${'a'.repeat(64)}`; }, { field: 'spec.affinity', message: "must be empty or a qualified name (a label key): an optional DNS subdomain prefix and '/', then at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit" }],
  ];
  it.each(bad)('rejects %s', (_name, change, expected) => {
    const body = validBody();
    change(body);
    expect(errorsOf(body)).toContainEqual(expected);
  });

  it('says of an empty image only that it must not be empty (it also fails the pattern against whitespace, which adds nothing)', () => {
    const body = validBody();
    body.spec.containers[0]!.image = '';
    expect(errorsOf(body)).toEqual([{ field: 'spec.containers[0].image', message: 'must not be empty' }]);
  });

  it('accepts the forms a Pod accepts at the edges of those rules', () => {
    const body = validBody();
    const c = body.spec.containers[0]!;
    c.environment = [
      { name: '_my.var-1', value: 'x' },
      { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app.kubernetes.io/name']" } } },
      { name: 'IPS', valueFrom: { fieldRef: { fieldPath: 'status.podIPs' } } },
      { name: 'KEY', valueFrom: { secretKeyRef: { name: 'game.secrets-1', key: '.tls_key-2' } } },
    ];
    c.ports = [{ name: 'game-1', protocol: 'udp', port: 7777 }, { name: '1a', protocol: 'tcp', port: 7778 }];
    c.requests = { memory: '+0', cpu: '1e-3' };
    // Empty, as GET shows a scheduler without them (a Maestro client posts back what it read).
    body.spec.toleration = '';
    body.spec.affinity = '';
    expect(errorsOf(body)).toEqual([]);
    body.spec.affinity = 'pools.example.com/game_Rooms.1';
    body.labels = { 'app.kubernetes.io/part-of': 'tennis' };
    expect(errorsOf(body)).toEqual([]);
  });

  // kube-apiserver refuses such a Pod, and no v1.28 CRD rule can compare quantities.
  it('refuses a request above its limit, in any unit, naming the request and the limit', () => {
    const body = validBody();
    body.spec.containers[0]!.requests = { cpu: '1500m', memory: '1.5Gi' };
    body.spec.containers[0]!.limits = { cpu: '1', memory: '1536Mi' };
    expect(errorsOf(body)).toEqual([{
      field: 'spec.containers[0].requests.cpu',
      message: 'must be less than or equal to the cpu limit "1" (spec.containers[0].limits.cpu): Kubernetes refuses a pod that requests more than its limit; lower the request or raise the limit',
    }]);
    body.spec.containers[0]!.requests = { cpu: '1000m', memory: '2e9' };
    body.spec.containers[0]!.limits = { cpu: '1', memory: '1Gi' };
    expect(errorsOf(body).map((e) => e.field)).toEqual(['spec.containers[0].requests.memory']);
  });

  it('refuses annotations above 256 KiB in all, which Kubernetes refuses on every room pod, naming the field; at the limit they pass', () => {
    const body = { ...validBody(), annotations: Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`k${i}`, 'x'.repeat(60_000)])) };
    expect(errorsOf(body)).toEqual([{ field: 'annotations', message: 'are 300010 bytes in all (keys and values), above the 262144 (256 KiB) Kubernetes takes on a pod: every room\'s pod would be refused; make them smaller' }]);
    // Four values of 65,534 bytes and four one-letter keys: 262,140 bytes, under the limit.
    body.annotations = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [String(i), 'x'.repeat(65_534)]));
    expect(errorsOf(body)).toEqual([]);
  });

  it('accepts a request equal to its limit in another unit, and a request or a limit alone', () => {
    const body = validBody();
    body.spec.containers[0]!.requests = { cpu: '1000m', memory: '1024Mi' };
    body.spec.containers[0]!.limits = { cpu: '1', memory: '1Gi' };
    expect(errorsOf(body)).toEqual([]);
    body.spec.containers[0]!.requests = { cpu: '64' };
    body.spec.containers[0]!.limits = { memory: '1Ki' };
    expect(errorsOf(body)).toEqual([]);
  });

  it('lists every violation at once', () => {
    const body = validBody();
    body.maxSurge = true;
    body.roomsReplicas = -1;
    body.spec.containers[0]!.ports![0]!.port = 0;
    body.spec.terminationGracePeriod = '100';
    expect(errorsOf(body).map((e) => e.field).sort()).toEqual(['maxSurge', 'roomsReplicas', 'spec.containers[0].ports[0].port', 'spec.terminationGracePeriod']);
  });

  it('names the first VIOLATIONS_NAMED violations and counts the rest, so a body of 60,000 bad labels gets a short answer', () => {
    const body = validBody();
    body.labels = Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${String(i)}`, '!']));
    const errors = errorsOf(body);
    expect(errors).toHaveLength(VIOLATIONS_NAMED + 1);
    expect(errors.slice(0, 2)).toEqual([
      { field: 'labels', message: 'Too many: must have at most 64 properties' },
      { field: 'labels[k0]', message: expect.stringMatching(/^must be a label value/) as string },
    ]);
    // 60,001 in all: the count of labels, then each label's value.
    expect(errors.at(-1)).toEqual({ field: '(body)', message: `and ${String(60_001 - VIOLATIONS_NAMED)} more violations, not named here (only the first ${String(VIOLATIONS_NAMED)} are); mend these and send it again` });
  });

  it('accepts Maestro snake_case names and leaves free-form maps alone', () => {
    const body = validBody();
    delete body.maxSurge;
    delete body.roomsReplicas;
    delete body.portRange;
    Object.assign(body, { max_surge: '2', rooms_replicas: 4, port_range: { start: 40000, end: 40002 } });
    body.spec.termination_grace_period = body.spec.terminationGracePeriod;
    delete body.spec.terminationGracePeriod;
    body.spec.containers[0]!.image_pull_policy = 'Always';
    delete body.spec.containers[0]!.imagePullPolicy;
    body.annotations = { some_key: 'v' };
    const r = validateSchedulerCreateBody(body);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.spec).toMatchObject({ maxSurge: '2', roomsReplicas: 4, portRange: { start: 40000, end: 40002 }, annotations: { some_key: 'v' } });
    expect(r.value.spec.spec.terminationGracePeriod).toBe('100s');
    expect(r.value.spec.spec.containers[0]?.imagePullPolicy).toBe('Always');
  });
});

describe('validateSchedulerSpec', () => {
  function validSpec(): Body {
    const { name: _name, ...spec } = validBody();
    return spec;
  }

  it('accepts the definition without name', () => {
    expect(validateSchedulerSpec(validSpec()).ok).toBe(true);
  });

  it('prefixes field paths for the Scheduler resource', () => {
    const spec = validSpec();
    spec.spec.containers[0]!.ports![0]!.name = '';
    delete spec.portRange;
    const r = validateSchedulerSpec(spec, { prefix: 'spec' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toEqual(expect.arrayContaining([
      { field: 'spec.spec.containers[0].ports[0].name', message: 'must not be empty' },
    ]));
  });

  it('names the Scheduler resource\'s fields of a request above its limit', () => {
    const spec = validSpec();
    spec.spec.containers[0]!.requests = { memory: '300Mi' };
    expect(validateSchedulerSpec(spec, { prefix: 'spec' })).toEqual({ ok: false, errors: [{
      field: 'spec.spec.containers[0].requests.memory',
      message: 'must be less than or equal to the memory limit "200Mi" (spec.spec.containers[0].limits.memory): Kubernetes refuses a pod that requests more than its limit; lower the request or raise the limit',
    }] });
  });

  it.each([[null, 'null'], [42, 'number 42'], ['x', 'string "x"'], [[], 'an array'], [[1, 2], 'an array'], [true, 'boolean true']])('rejects %p as a whole, naming what it got', (data, got) => {
    const r = validateSchedulerSpec(data);
    expect(r).toEqual({ ok: false, errors: [{ field: '', message: `must be of type object; got ${got}` }] });
  });

  it('never throws on random JSON', () => {
    let seed = 42;
    const rand = (): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const keys = ['game', 'maxSurge', 'spec', 'containers', 'ports', 'portRange', 'hostPortRange', 'start', 'end', 'autoscaling', 'policy', 'parameters', 'environment', 'valueFrom', 'name', 'timeout', 'forwarders', 'options', 'x'];
    const gen = (depth: number): unknown => {
      const r = rand();
      if (depth > 4 || r < 0.3) return [null, true, 0, -1, 1.5, 'x', '10%', '', 70000][Math.floor(rand() * 9)];
      if (r < 0.5) return Array.from({ length: Math.floor(rand() * 3) }, () => gen(depth + 1));
      const o: Record<string, unknown> = {};
      for (let i = 0; i < 1 + rand() * 4; i++) o[keys[Math.floor(rand() * keys.length)] as string] = gen(depth + 1);
      return o;
    };
    for (let i = 0; i < 2000; i++) {
      const data = gen(0);
      expect(() => validateSchedulerSpec(data)).not.toThrow();
      expect(() => validateSchedulerCreateBody(data)).not.toThrow();
      expect(() => validateSchedulerPatchBody(data)).not.toThrow();
    }
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(validateSchedulerSpec(cyclic)).toEqual({ ok: false, errors: [{ field: '', message: 'must be a JSON document' }] });
    expect(validateSchedulerSpec({ n: BigInt(1) }).ok).toBe(false);
  });
});

describe('validateSchedulerPatchBody', () => {
  it('accepts any subset of fields, with no defaults added', () => {
    const r = validateSchedulerPatchBody({ maxSurge: '20%' });
    expect(r).toEqual({ ok: true, value: { maxSurge: '20%' } });
    expect(validateSchedulerPatchBody({})).toEqual({ ok: true, value: {} });
  });

  it('drops game, which is not patchable (as in Maestro)', () => {
    expect(validateSchedulerPatchBody({ game: 'other', roomsReplicas: 3 })).toEqual({ ok: true, value: { roomsReplicas: 3 }, dropped: ['game'] });
  });

  it('accepts partial containers (merged by index) and partial autoscaling', () => {
    expect(validateSchedulerPatchBody({ spec: { containers: [{ image: 'game:2' }] }, autoscaling: { max: 20 } }).ok).toBe(true);
  });

  it('checks the types and ranges of the fields given', () => {
    const r = validateSchedulerPatchBody({ roomsReplicas: -1, spec: { containers: [{ image: '' }] }, forwarders: [{ name: 'f' }] }, { prefix: 'spec' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toEqual(expect.arrayContaining([
      { field: 'spec.roomsReplicas', message: 'should be greater than or equal to 0' },
      { field: 'spec.spec.containers[0].image', message: 'must not be empty' },
      { field: 'spec.forwarders[0].address', message: 'Required value' },
    ]));
  });
});

describe('schedulerPatchField', () => {
  it.each([
    ['maxSurge', 'maxSurge'], ['max_surge', 'maxSurge'], ['forwarders', 'forwarders'], ['rooms_replicas', 'roomsReplicas'],
    ['game', undefined], ['name', undefined], ['notAField', undefined], ['not_a_field', undefined],
  ])('names the PATCH field %s stands for: %s', (key, field) => {
    expect(schedulerPatchField(key)).toBe(field);
  });
});
