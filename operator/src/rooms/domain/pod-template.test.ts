import { buildRoomPod, parseDurationSeconds, replacedByRoomkeeper, roomName, type RoomPodInput } from './pod-template';
import { seededRandom } from './test-rooms';
import type { SchedulerSpec } from './types';

const definition: SchedulerSpec = {
  game: 'tennis',
  maxSurge: '10%',
  roomsReplicas: 2,
  portRange: { start: 40000, end: 41000 },
  annotations: { 'example.com/team': 'blue' },
  labels: { tier: 'gold', 'roomkeeper.io/scheduler': 'spoofed' },
  spec: {
    terminationGracePeriod: '100s',
    toleration: 'game-nodes',
    affinity: 'game-node',
    containers: [
      {
        name: 'game',
        image: 'example.com/game:1.0',
        imagePullPolicy: 'IfNotPresent',
        command: ['/bin/game', '--port', '7777'],
        environment: [
          { name: 'MODE', value: 'ranked' },
          { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
          { name: 'API_KEY', valueFrom: { secretKeyRef: { name: 'game-secrets', key: 'api-key' } } },
          { name: 'ROOMKEEPER_ROOM_ID', value: 'someone-else' },
          { name: 'EMPTY' },
        ],
        requests: { memory: '64Mi', cpu: '100m' },
        limits: { memory: '128Mi', cpu: '200m' },
        ports: [{ name: 'game', protocol: 'udp', port: 7777 }, { name: 'admin', protocol: 'tcp', port: 8080 }],
      },
      { name: 'sidecar', image: 'example.com/sidecar:2' },
    ],
  },
};

const base: RoomPodInput = {
  schedulerName: 'tennis-eu',
  roomName: 'tennis-eu-ab12c',
  version: 'v1.2.0',
  definition,
  hostPorts: [[40001, 40002], []],
  roomsApiUrl: 'http://rooms.roomkeeper.svc:8080',
  roomToken: 'tok',
  maestroEnv: true,
};

describe('buildRoomPod', () => {
  it('builds the whole pod', () => {
    const pod = buildRoomPod({
      ...base,
      ownerRef: { apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', name: 'tennis-eu-ab12c', uid: 'u-1', controller: true },
    });
    const ours = [
      { name: 'ROOMKEEPER_SCHEDULER_NAME', value: 'tennis-eu' },
      { name: 'ROOMKEEPER_ROOM_ID', value: 'tennis-eu-ab12c' },
      { name: 'MAESTRO_SCHEDULER_NAME', value: 'tennis-eu' },
      { name: 'MAESTRO_ROOM_ID', value: 'tennis-eu-ab12c' },
      { name: 'ROOMKEEPER_ROOMS_API_URL', value: 'http://rooms.roomkeeper.svc:8080' },
      { name: 'ROOMKEEPER_ROOM_TOKEN', value: 'tok' },
    ];
    expect(pod).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'tennis-eu-ab12c',
        namespace: 'tennis-eu',
        labels: {
          tier: 'gold',
          'app.kubernetes.io/managed-by': 'roomkeeper',
          'roomkeeper.io/scheduler': 'tennis-eu',
          'roomkeeper.io/version': 'v1.2.0',
        },
        annotations: { 'cluster-autoscaler.kubernetes.io/safe-to-evict': 'false', 'example.com/team': 'blue' },
        ownerReferences: [{ apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', name: 'tennis-eu-ab12c', uid: 'u-1', controller: true }],
      },
      spec: {
        restartPolicy: 'Never',
        automountServiceAccountToken: false,
        securityContext: { seccompProfile: { type: 'RuntimeDefault' } },
        terminationGracePeriodSeconds: 100,
        tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'game-nodes', effect: 'NoSchedule' }],
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'game-node', operator: 'In', values: ['true'] }] }],
            },
          },
        },
        containers: [
          {
            name: 'game',
            image: 'example.com/game:1.0',
            imagePullPolicy: 'IfNotPresent',
            command: ['/bin/game', '--port', '7777'],
            env: [
              { name: 'MODE', value: 'ranked' },
              { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
              { name: 'API_KEY', valueFrom: { secretKeyRef: { name: 'game-secrets', key: 'api-key' } } },
              { name: 'EMPTY' },
              ...ours,
            ],
            resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } },
            ports: [
              { name: 'game', containerPort: 7777, hostPort: 40001, protocol: 'UDP' },
              { name: 'admin', containerPort: 8080, hostPort: 40002, protocol: 'TCP' },
            ],
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
          },
          { name: 'sidecar', image: 'example.com/sidecar:2', env: ours, securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } },
        ],
      },
    });
  });

  const variants: { name: string; input: Partial<RoomPodInput>; check: (pod: ReturnType<typeof buildRoomPod>) => void }[] = [
    {
      name: 'no Maestro names, no URL, no token',
      input: { maestroEnv: false, roomsApiUrl: undefined, roomToken: undefined },
      check: (pod) => expect(pod.spec?.containers[1]?.env?.map((e) => e.name)).toEqual(['ROOMKEEPER_SCHEDULER_NAME', 'ROOMKEEPER_ROOM_ID']),
    },
    {
      name: 'validation room label',
      input: { validation: true },
      check: (pod) => expect(pod.metadata?.labels?.['roomkeeper.io/validation-room']).toBe('true'),
    },
    {
      name: 'no validation label on a fleet room',
      input: {},
      check: (pod) => expect(pod.metadata?.labels).not.toHaveProperty('roomkeeper.io/validation-room'),
    },
    {
      name: 'a user safe-to-evict annotation wins',
      input: { definition: { ...definition, annotations: { 'cluster-autoscaler.kubernetes.io/safe-to-evict': 'true' } } },
      check: (pod) => expect(pod.metadata?.annotations).toEqual({ 'cluster-autoscaler.kubernetes.io/safe-to-evict': 'true' }),
    },
    {
      name: 'no toleration, affinity, labels or annotations when unset',
      input: { definition: { ...definition, labels: undefined, annotations: undefined, spec: { ...definition.spec, toleration: '', affinity: undefined } } },
      check: (pod) => {
        expect(pod.spec).not.toHaveProperty('tolerations');
        expect(pod.spec).not.toHaveProperty('affinity');
        expect(pod.metadata?.annotations).toEqual({ 'cluster-autoscaler.kubernetes.io/safe-to-evict': 'false' });
        expect(Object.keys(pod.metadata?.labels ?? {})).toEqual(['app.kubernetes.io/managed-by', 'roomkeeper.io/scheduler', 'roomkeeper.io/version']);
      },
    },
    {
      name: 'nodeSelector and priorityClassName as given, beside affinity; left out when empty',
      input: { definition: { ...definition, spec: { ...definition.spec, nodeSelector: { 'cloud.google.com/gke-nodepool': 'game-servers' }, priorityClassName: 'game-rooms' } } },
      check: (pod) => {
        expect(pod.spec?.nodeSelector).toEqual({ 'cloud.google.com/gke-nodepool': 'game-servers' });
        expect(pod.spec?.priorityClassName).toBe('game-rooms');
        expect(pod.spec?.affinity).toBeDefined();
        const plain = buildRoomPod({ ...base, definition: { ...definition, spec: { ...definition.spec, nodeSelector: {}, priorityClassName: '' } } });
        expect(plain.spec).not.toHaveProperty('nodeSelector');
        expect(plain.spec).not.toHaveProperty('priorityClassName');
      },
    },
    {
      name: 'imagePullSecrets as given, in their order; left out when empty or absent',
      input: { definition: { ...definition, spec: { ...definition.spec, imagePullSecrets: [{ name: 'registry-creds' }, { name: 'mirror.creds' }] } } },
      check: (pod) => {
        expect(pod.spec?.imagePullSecrets).toEqual([{ name: 'registry-creds' }, { name: 'mirror.creds' }]);
        const empty = buildRoomPod({ ...base, definition: { ...definition, spec: { ...definition.spec, imagePullSecrets: [] } } });
        expect(empty.spec).not.toHaveProperty('imagePullSecrets');
        const absent = buildRoomPod({ ...base, definition });
        expect(absent.spec).not.toHaveProperty('imagePullSecrets');
      },
    },
    {
      name: 'missing host ports leave hostPort out',
      input: { hostPorts: [] },
      check: (pod) => expect(pod.spec?.containers[0]?.ports).toEqual([
        { name: 'game', containerPort: 7777, protocol: 'UDP' },
        { name: 'admin', containerPort: 8080, protocol: 'TCP' },
      ]),
    },
    {
      name: 'a port without protocol is TCP',
      input: { definition: { ...definition, spec: { ...definition.spec, containers: [{ name: 'c', image: 'i', ports: [{ name: 'p', port: 1 } as never] }] } } },
      check: (pod) => expect(pod.spec?.containers[0]?.ports).toEqual([{ name: 'p', containerPort: 1, hostPort: 40001, protocol: 'TCP' }]),
    },
    {
      name: 'unreadable grace period is left to Kubernetes',
      input: { definition: { ...definition, spec: { ...definition.spec, terminationGracePeriod: 'soon' } } },
      check: (pod) => expect(pod.spec).not.toHaveProperty('terminationGracePeriodSeconds'),
    },
    {
      name: 'the key id of the token\'s secret as a label (issue 12 M3: rooms still on an old secret can be listed)',
      input: { roomTokenKeyId: 'a1b2c3d4e5f6' },
      check: (pod) => expect(pod.metadata?.labels?.['roomkeeper.io/room-token-key']).toBe('a1b2c3d4e5f6'),
    },
    {
      name: 'no key id label without a token',
      input: { roomToken: undefined, roomTokenKeyId: 'a1b2c3d4e5f6' },
      check: (pod) => expect(pod.metadata?.labels).not.toHaveProperty('roomkeeper.io/room-token-key'),
    },
    {
      name: 'a definition\'s label of a key Roomkeeper sets on some rooms only is on none: no room looks like a validation room or a room of another token',
      input: { roomToken: undefined, definition: { ...definition, labels: { tier: 'gold', 'roomkeeper.io/validation-room': 'true', 'roomkeeper.io/room-token-key': 'forged' } } },
      check: (pod) => {
        expect(pod.metadata?.labels).not.toHaveProperty('roomkeeper.io/validation-room');
        expect(pod.metadata?.labels).not.toHaveProperty('roomkeeper.io/room-token-key');
        expect(pod.metadata?.labels?.tier).toBe('gold');
      },
    },
    {
      name: 'runAsNonRoot when the operator requires it (issue 12 L5)',
      input: { runAsNonRoot: true },
      check: (pod) => expect(pod.spec?.securityContext).toEqual({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } }),
    },
    {
      name: 'NET_BIND_SERVICE, and only it, for a container listening below 1024 (issue 12 L5)',
      input: { definition: { ...definition, spec: { ...definition.spec, containers: [
        { name: 'web', image: 'i', ports: [{ name: 'http', protocol: 'tcp', port: 80 }, { name: 'game', protocol: 'udp', port: 7777 }] },
        { name: 'edge', image: 'i', ports: [{ name: 'x', protocol: 'tcp', port: 1024 }] },
      ] } } },
      check: (pod) => {
        expect(pod.spec?.containers[0]?.securityContext).toEqual({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } });
        expect(pod.spec?.containers[1]?.securityContext).toEqual({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
      },
    },
    {
      name: 'only the resources given',
      input: { definition: { ...definition, spec: { ...definition.spec, containers: [{ name: 'c', image: 'i', requests: { cpu: '1' } }] } } },
      check: (pod) => expect(pod.spec?.containers[0]?.resources).toEqual({ requests: { cpu: '1' } }),
    },
  ];
  it.each(variants)('$name', ({ input, check }) => {
    check(buildRoomPod({ ...base, ...input }));
  });

  it('does not share objects with its input', () => {
    const pod = buildRoomPod(base);
    pod.spec!.containers[0]!.command!.push('--mutated');
    pod.metadata!.labels!.tier = 'changed';
    expect(definition.spec.containers[0]!.command).toEqual(['/bin/game', '--port', '7777']);
    expect(definition.labels!.tier).toBe('gold');
  });
});

describe('parseDurationSeconds', () => {
  it.each([
    ['100s', 100],
    ['1m30s', 90],
    ['500ms', 1],
    ['1500ms', 2],
    ['1.1s', 2],
    ['2s', 2],
    ['1h', 3600],
    ['1.5h', 5400],
    ['2m', 120],
    ['0s', 1],
    ['+30s', 30],
    [' 45s ', 45],
    ['250us', 1],
    ['10ns', 1],
    ['.5m', 30],
    ['1h2m3s4ms', 3724],
    ['100', undefined],
    ['', undefined],
    ['-5s', undefined],
    ['5 s', undefined],
    ['5d', undefined],
    ['abc', undefined],
    ['s', undefined],
  ])('%j -> %j', (text, seconds) => {
    expect(parseDurationSeconds(text)).toBe(seconds);
  });
});

describe('roomName', () => {
  const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
  it.each([
    ['short', 'short'],
    ['a'.repeat(63), 'a'.repeat(52)],
    [`${'b'.repeat(51)}-xyz`, `${'b'.repeat(51)}-`],
  ])('%s keeps the prefix %s and stays a DNS-1123 label', (scheduler, prefix) => {
    const name = roomName(scheduler, seededRandom(42));
    expect(name.startsWith(`${prefix}-`)).toBe(true);
    expect(name).toHaveLength(prefix.length + 6);
    expect(name.length).toBeLessThanOrEqual(63);
    expect(name).toMatch(dns1123Label);
    expect(name.slice(-5)).toMatch(/^[a-z0-9]{5}$/);
  });

  it('is deterministic for a given random source and copes with edge values', () => {
    expect(roomName('s', seededRandom(1))).toBe(roomName('s', seededRandom(1)));
    expect(roomName('s', () => 0)).toBe('s-aaaaa');
    expect(roomName('s', () => 0.999999)).toBe('s-99999');
    expect(roomName('s', () => 1)).toBe('s-99999');
    expect(roomName('s', () => Number.NaN)).toBe('s-aaaaa');
  });
});

describe('replacedByRoomkeeper', () => {
  it('names each label and env of the definition that Roomkeeper\'s own replace, with the settings that decide the env', () => {
    const withEnv = (names: string[]) => ({ ...definition, spec: { ...definition.spec, containers: [{ name: 'game', image: 'i', environment: names.map((name) => ({ name, value: 'x' })) }] } });
    expect(replacedByRoomkeeper(definition, base)).toEqual(['label roomkeeper.io/scheduler', "container game's env ROOMKEEPER_ROOM_ID"]);
    const d = withEnv(['MAESTRO_ROOM_ID', 'ROOMKEEPER_ROOMS_API_URL', 'ROOMKEEPER_ROOM_TOKEN', 'MODE']);
    expect(replacedByRoomkeeper(d, base)).toEqual(['label roomkeeper.io/scheduler', "container game's env MAESTRO_ROOM_ID", "container game's env ROOMKEEPER_ROOMS_API_URL", "container game's env ROOMKEEPER_ROOM_TOKEN"]);
    // Not given by Roomkeeper (no Maestro env, no rooms API URL, no token): the definition's own are passed on.
    expect(replacedByRoomkeeper({ ...d, labels: {} }, { maestroEnv: false, roomsApiUrl: undefined, roomToken: undefined })).toEqual([]);
    expect(replacedByRoomkeeper({ ...definition, labels: { tier: 'gold' }, spec: { ...definition.spec, containers: [{ name: 'c', image: 'i' }] } }, base)).toEqual([]);
  });
});
