/**
 * The Pod of one game room, built from a scheduler definition (spec "Spec"/"Container"/"Port",
 * DESIGN.md "Brand and names", Maestro §8 "Pod shape"). Pure: names, ports and token are inputs.
 *
 * Decisions:
 * - Labels: the scheduler's `labels`, then ours (managed-by, scheduler, version, validation room,
 *   and the key id of the room token's secret), which win, because the operator selects its pods by
 *   them; a definition's label of one of those keys is dropped also from rooms that do not carry it
 *   (with a validation-room label, every pod would look like a validation room to `kubectl get -l`
 *   and to the orphaned-pod account). The operation that versions such a definition says so in its
 *   history (replacedByRoomkeeper).
 * - Annotations: `cluster-autoscaler.kubernetes.io/safe-to-evict: "false"`, then the scheduler's
 *   `annotations`, which win. Maestro sets "true"; we protect rooms with players (DESIGN.md), as
 *   Agones does by default, and a user who prefers Maestro's behaviour sets the annotation to "true".
 * - Env: the user's variables, then ours (`ROOMKEEPER_SCHEDULER_NAME`, `ROOMKEEPER_ROOM_ID`,
 *   `MAESTRO_*` when `maestroEnv`, `ROOMKEEPER_ROOMS_API_URL`, `ROOMKEEPER_ROOM_TOKEN` when given).
 *   Ours win: a user variable of the same name is dropped, so a room can never ping as another.
 * - `restartPolicy: Never`: a crashed room is an error room, replaced by the health controller.
 * - `terminationGracePeriodSeconds`: the definition's Go-style duration, rounded up, at least 1;
 *   left out (Kubernetes default, 30 s) when it cannot be read, which validation prevents.
 * - Toleration `dedicated=<toleration>:NoSchedule`; affinity: required node label `<affinity>` In
 *   ["true"] (both as Maestro, both only when set). `nodeSelector`, `priorityClassName` and
 *   `imagePullSecrets` (not in Maestro) as given, only when set (the last: Secrets in the
 *   scheduler's namespace, the pod's, for images from a private registry).
 * - Containers exactly as given; ports get `hostPort` from `hostPorts[container][port]` and the
 *   protocol upper-cased (the spec's examples write `udp`; Kubernetes wants `UDP`), TCP if absent.
 * - Security defaults (issue 12, L5), what the Pod Security Standard `restricted` asks for as far
 *   as a game server built for Maestro can run with it: no service-account token
 *   (`automountServiceAccountToken: false`; a room never calls the Kubernetes API), seccomp
 *   `RuntimeDefault`, and per container `allowPrivilegeEscalation: false` and every capability
 *   dropped, except `NET_BIND_SERVICE` for a container that listens on a port below 1024 (the one
 *   capability `restricted` allows adding). `runAsNonRoot` only with `runAsNonRoot` set
 *   (ROOMKEEPER_ROOM_RUN_AS_NON_ROOT): an image that runs as root would never start with it. The
 *   scheduler spec has no securityContext field, so a scheduler cannot override these.
 */
import type {
  V1Affinity, V1Container, V1ContainerPort, V1EnvVar, V1OwnerReference, V1Pod, V1ResourceRequirements, V1Toleration,
} from '@kubernetes/client-node';
import {
  MANAGED_BY_LABEL, MANAGED_BY_VALUE, SAFE_TO_EVICT_ANNOTATION, SCHEDULER_LABEL, VALIDATION_ROOM_LABEL, VERSION_LABEL,
} from '../../../../common/src/resources/labels';
import { RoomEnv } from '../../../../common/src/rooms/room-env';
import { ROOM_TOKEN_KEY_LABEL } from '../../../../common/src/rooms/room-token';
import type { Container, SchedulerSpec } from './types';

/** The taint key rooms tolerate (`dedicated=<toleration>:NoSchedule`), as Maestro. */
const TOLERATION_KEY = 'dedicated';

export interface RoomPodInput {
  schedulerName: string;
  /** The room id; also the Pod's and GameRoom's name. */
  roomName: string;
  /** The scheduler version the room is made from, e.g. `v1.2.0`. */
  version: string;
  /** The scheduler definition of that version (Scheduler.spec). */
  definition: Pick<SchedulerSpec, 'spec' | 'annotations' | 'labels'> & Partial<SchedulerSpec>;
  /** Host ports per container, per port (host-ports.ts); a missing entry means no host port. */
  hostPorts: number[][];
  roomsApiUrl?: string;
  roomToken?: string;
  /** Also set `MAESTRO_SCHEDULER_NAME` and `MAESTRO_ROOM_ID` (DESIGN.md: on by default). */
  maestroEnv: boolean;
  /** Usually the GameRoom, so deleting the GameRoom deletes the Pod. */
  ownerRef?: V1OwnerReference;
  /** A validation room of a new version. */
  validation?: boolean;
  /** Key id of the secret `roomToken` was made with (a label, to find rooms on an old secret). */
  roomTokenKeyId?: string;
  /** Require a non-root user (`runAsNonRoot: true`); images that run as root then fail to start. */
  runAsNonRoot?: boolean;
}

/** Container ports below this need NET_BIND_SERVICE (the Linux default of ip_unprivileged_port_start). */
const PRIVILEGED_PORT_LIMIT = 1024;

/**
 * The label keys Roomkeeper sets on room pods, by which it finds them (its validation and token
 * labels only on some rooms): a definition's own label of one of these keys is never put on a pod.
 */
const ROOM_POD_LABEL_KEYS: ReadonlySet<string> = new Set([MANAGED_BY_LABEL, SCHEDULER_LABEL, VERSION_LABEL, VALIDATION_ROOM_LABEL, ROOM_TOKEN_KEY_LABEL]);

function withoutKeys(values: Record<string, string> | undefined, keys: ReadonlySet<string>): Record<string, string> {
  return Object.fromEntries(Object.entries(values ?? {}).filter(([k]) => !keys.has(k)));
}

/**
 * What of a definition Roomkeeper's own labels and environment replace on its rooms (see the
 * decisions above), for the history of the operation that versions it: empty when nothing is.
 */
export function replacedByRoomkeeper(
  definition: Pick<SchedulerSpec, 'spec' | 'labels'>, ours: Pick<RoomPodInput, 'maestroEnv' | 'roomsApiUrl' | 'roomToken'>,
): string[] {
  const envNames = new Set(roomkeeperEnv({ schedulerName: '', roomName: '', ...ours }).map((e) => e.name));
  const labels = Object.keys(definition.labels ?? {}).filter((k) => ROOM_POD_LABEL_KEYS.has(k)).map((k) => `label ${k}`);
  const env = definition.spec.containers.flatMap((c) => (c.environment ?? [])
    .filter((e) => envNames.has(e.name)).map((e) => `container ${c.name}'s env ${e.name}`));
  return [...labels, ...env];
}

/** The Pod of one room. */
export function buildRoomPod(input: RoomPodInput): V1Pod {
  const { definition } = input;
  const roomSpec = definition.spec;
  const labels: Record<string, string> = {
    ...withoutKeys(definition.labels, ROOM_POD_LABEL_KEYS),
    [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
    [SCHEDULER_LABEL]: input.schedulerName,
    [VERSION_LABEL]: input.version,
    ...(input.validation ? { [VALIDATION_ROOM_LABEL]: 'true' } : {}),
    ...(input.roomToken && input.roomTokenKeyId ? { [ROOM_TOKEN_KEY_LABEL]: input.roomTokenKeyId } : {}),
  };
  const annotations: Record<string, string> = { [SAFE_TO_EVICT_ANNOTATION]: 'false', ...definition.annotations };
  const ourEnv = roomkeeperEnv(input);
  const grace = parseDurationSeconds(roomSpec.terminationGracePeriod);

  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: input.roomName,
      namespace: input.schedulerName,
      labels,
      annotations,
      ...(input.ownerRef ? { ownerReferences: [input.ownerRef] } : {}),
    },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      securityContext: { ...(input.runAsNonRoot ? { runAsNonRoot: true } : {}), seccompProfile: { type: 'RuntimeDefault' } },
      ...(grace === undefined ? {} : { terminationGracePeriodSeconds: grace }),
      containers: roomSpec.containers.map((c, i) => toContainer(c, input.hostPorts[i] ?? [], ourEnv)),
      ...(roomSpec.toleration ? { tolerations: [toleration(roomSpec.toleration)] } : {}),
      ...(roomSpec.affinity ? { affinity: affinity(roomSpec.affinity) } : {}),
      ...(roomSpec.nodeSelector && Object.keys(roomSpec.nodeSelector).length > 0 ? { nodeSelector: { ...roomSpec.nodeSelector } } : {}),
      ...(roomSpec.priorityClassName ? { priorityClassName: roomSpec.priorityClassName } : {}),
      ...(roomSpec.imagePullSecrets && roomSpec.imagePullSecrets.length > 0 ? { imagePullSecrets: roomSpec.imagePullSecrets.map((s) => ({ name: s.name })) } : {}),
    },
  };
}

/** The environment Roomkeeper gives every container of a room. */
function roomkeeperEnv(input: Pick<RoomPodInput, 'schedulerName' | 'roomName' | 'maestroEnv' | 'roomsApiUrl' | 'roomToken'>): V1EnvVar[] {
  const env: V1EnvVar[] = [
    { name: RoomEnv.SchedulerName, value: input.schedulerName },
    { name: RoomEnv.RoomId, value: input.roomName },
  ];
  if (input.maestroEnv) {
    env.push({ name: RoomEnv.MaestroSchedulerName, value: input.schedulerName }, { name: RoomEnv.MaestroRoomId, value: input.roomName });
  }
  if (input.roomsApiUrl) env.push({ name: RoomEnv.RoomsApiUrl, value: input.roomsApiUrl });
  if (input.roomToken) env.push({ name: RoomEnv.RoomToken, value: input.roomToken });
  return env;
}

function toContainer(c: Container, hostPorts: readonly number[], ourEnv: readonly V1EnvVar[]): V1Container {
  const ours = new Set(ourEnv.map((e) => e.name));
  const userEnv = (c.environment ?? []).filter((e) => !ours.has(e.name)).map(toEnvVar);
  const resources = toResources(c);
  const ports = (c.ports ?? []).map((p, i): V1ContainerPort => {
    const hostPort = hostPorts[i];
    return {
      name: p.name,
      containerPort: p.port,
      ...(hostPort === undefined ? {} : { hostPort }),
      protocol: (p.protocol || 'TCP').toUpperCase(),
    };
  });
  return {
    name: c.name,
    image: c.image,
    ...(c.imagePullPolicy ? { imagePullPolicy: c.imagePullPolicy } : {}),
    ...(c.command ? { command: [...c.command] } : {}),
    env: [...userEnv, ...ourEnv.map((e) => ({ ...e }))],
    ...(resources ? { resources } : {}),
    ...(ports.length > 0 ? { ports } : {}),
    securityContext: {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'], ...(ports.some((p) => p.containerPort < PRIVILEGED_PORT_LIMIT) ? { add: ['NET_BIND_SERVICE'] } : {}) },
    },
  };
}

/** The three forms of the spec's EnvironmentVariable: value, fieldRef, secretKeyRef. */
function toEnvVar(e: NonNullable<Container['environment']>[number]): V1EnvVar {
  const fieldRef = e.valueFrom?.fieldRef;
  const secretKeyRef = e.valueFrom?.secretKeyRef;
  if (fieldRef) return { name: e.name, valueFrom: { fieldRef: { fieldPath: fieldRef.fieldPath } } };
  if (secretKeyRef) return { name: e.name, valueFrom: { secretKeyRef: { name: secretKeyRef.name, key: secretKeyRef.key } } };
  return e.value === undefined ? { name: e.name } : { name: e.name, value: e.value };
}

function toResources(c: Container): V1ResourceRequirements | undefined {
  const requests = quantities(c.requests);
  const limits = quantities(c.limits);
  if (!requests && !limits) return undefined;
  return { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) };
}

function quantities(q: Container['requests']): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  if (q?.cpu) out.cpu = q.cpu;
  if (q?.memory) out.memory = q.memory;
  return Object.keys(out).length > 0 ? out : undefined;
}

function toleration(value: string): V1Toleration {
  return { key: TOLERATION_KEY, operator: 'Equal', value, effect: 'NoSchedule' };
}

function affinity(label: string): V1Affinity {
  return {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: label, operator: 'In', values: ['true'] }] }],
      },
    },
  };
}

const UNIT_NS: Readonly<Record<string, number>> = {
  ns: 1, us: 1e3, 'µs': 1e3, 'μs': 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9,
};

/**
 * A Go-style duration ("100s", "1m30s", "500ms", "1.5h") in whole seconds, rounded up and at
 * least 1 (a grace period of 0 would kill rooms at once). Undefined when the text is not a
 * duration with units, or is negative.
 */
export function parseDurationSeconds(text: string): number | undefined {
  const s = text.trim().replace(/^\+/, '');
  if (s === '' || !/^((\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$/.test(s)) return undefined;
  let totalNs = 0;
  for (const match of s.matchAll(/(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) {
    const unit = UNIT_NS[match[2] ?? ''];
    if (unit === undefined) return undefined;
    totalNs += Number(match[1]) * unit;
  }
  if (!Number.isFinite(totalNs)) return undefined;
  // Round in nanoseconds first so 1.1s is not 1.1000000000000000888s -> 2 s by float error.
  return Math.max(1, Math.ceil(Math.round(totalNs) / 1e9));
}

const NAME_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** Longest scheduler prefix kept in a room name: 52 + "-" + 5 = 58 <= 63 (a DNS-1123 label). */
const ROOM_NAME_PREFIX_MAX = 52;

/** A new room's name: `<scheduler[:52]>-<5 lowercase letters or digits>`; `random` returns [0, 1). */
export function roomName(schedulerName: string, random: () => number): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) {
    const r = random();
    const idx = Number.isFinite(r) ? Math.min(NAME_ALPHABET.length - 1, Math.max(0, Math.floor(r * NAME_ALPHABET.length))) : 0;
    suffix += NAME_ALPHABET[idx] ?? 'a';
  }
  return `${schedulerName.slice(0, ROOM_NAME_PREFIX_MAX)}-${suffix}`;
}
