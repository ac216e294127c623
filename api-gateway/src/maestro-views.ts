/**
 * How resources are shown on the management API: Maestro's response messages
 * (maestro-behaviour.md section 1.2), camelCase, zero values emitted, int64 as strings.
 */
import type { Autoscaling, Container, Forwarder, Operation, Scheduler, SchedulerSpec } from '../../common/src/generated/resources';

import { forwarderTimeoutMs, isForwarderEnabled } from '../../common/src/forwarding/forwarder-options';
import { toIsoString } from '../../common/src/kube/timestamps';
import { jsonDepthExceeds } from '../../common/src/json/json-depth';
import { MAX_JSON_DEPTH } from './json-body-limits';
import { operationStatusOf } from '../../common/src/resources/operation-names';
import { maxMatchesOf } from '../../common/src/rooms/room-status';
import { activeDefinition, type FindVersion } from '../../common/src/resources/scheduler-version';

export { toIsoString };

export function schedulerCreatedAt(s: Scheduler): string {
  return s.status?.createdAt ?? toIsoString(s.metadata.creationTimestamp);
}

/** The version a scheduler shows: the active one, or v1.0.0 while it is being created. */
export function activeVersionOf(s: Scheduler): string {
  return s.status?.version ?? 'v1.0.0';
}

/**
 * The scheduler's state as its status reports it, unless the status predates the spec: a spec
 * generation the operator has not observed yet is a change still to be versioned, so a status
 * written for an older generation cannot be `in-sync` (or `on-error`) any more.
 */
export function schedulerStateOf(s: Scheduler): string {
  const state = s.status?.state ?? 'creating';
  const observed = s.status?.observedGeneration;
  const stale = observed !== undefined && (s.metadata.generation ?? 1) > observed;
  return stale && (state === 'in-sync' || state === 'on-error') ? 'pending-changes' : state;
}

function containerView(c: Container): Record<string, unknown> {
  return {
    name: c.name,
    image: c.image,
    imagePullPolicy: c.imagePullPolicy ?? '',
    command: c.command ?? [],
    environment: c.environment ?? [],
    requests: { memory: c.requests?.memory ?? '', cpu: c.requests?.cpu ?? '' },
    limits: { memory: c.limits?.memory ?? '', cpu: c.limits?.cpu ?? '' },
    ports: (c.ports ?? []).map((p) => ({
      name: p.name,
      protocol: p.protocol,
      port: p.port,
      hostPort: 0,
      ...(p.hostPortRange ? { hostPortRange: p.hostPortRange } : {}),
    })),
  };
}

function forwarderView(f: Forwarder): Record<string, unknown> {
  return {
    name: f.name,
    enable: isForwarderEnabled(f),
    type: f.type ?? 'gRPC',
    address: f.address,
    options: {
      // The deadline that applies: Maestro shows "0" for a forwarder without one (and refuses "0"
      // on a POST), while 1000 ms applies in both; so a GET answer POSTed back is accepted.
      timeout: String(forwarderTimeoutMs(f)),
      metadata: f.options?.metadata ?? {},
    },
  };
}

function autoscalingView(a: Autoscaling): Record<string, unknown> {
  return { enabled: a.enabled ?? false, min: a.min, max: a.max, cooldown: a.cooldown ?? 0, policy: a.policy };
}

/** Maestro's `matchAllocation`, shown for every scheduler: `{maxMatches: 1}` (one match a room) when the definition leaves it out, as Maestro defaults it. */
function matchAllocationView(spec: SchedulerSpec): { maxMatches: number } {
  return { maxMatches: maxMatchesOf(spec) };
}

export interface SchedulerViewMeta {
  name: string;
  state: string;
  version: string;
  createdAt: string;
}

/** Maestro's `Scheduler` message for one definition. */
export function schedulerView(spec: SchedulerSpec, meta: SchedulerViewMeta): Record<string, unknown> {
  return {
    name: meta.name,
    game: spec.game,
    state: meta.state,
    ...(spec.portRange ? { portRange: spec.portRange } : {}),
    createdAt: meta.createdAt,
    maxSurge: String(spec.maxSurge),
    roomsReplicas: spec.roomsReplicas ?? 0,
    spec: {
      version: meta.version,
      terminationGracePeriod: spec.spec.terminationGracePeriod,
      containers: spec.spec.containers.map(containerView),
      toleration: spec.spec.toleration ?? '',
      affinity: spec.spec.affinity ?? '',
      // Not in Maestro's Spec: shown only when set, so a Maestro client sees Maestro's fields alone.
      ...(spec.spec.nodeSelector && Object.keys(spec.spec.nodeSelector).length > 0 ? { nodeSelector: spec.spec.nodeSelector } : {}),
      ...(spec.spec.priorityClassName ? { priorityClassName: spec.spec.priorityClassName } : {}),
      ...(spec.spec.imagePullSecrets && spec.spec.imagePullSecrets.length > 0 ? { imagePullSecrets: spec.spec.imagePullSecrets } : {}),
      // Maestro's default, and the only policy Roomkeeper runs: a room that crashed is an error
      // room, replaced by the health check (operator/src/rooms/domain/pod-template.ts).
      restartPolicy: 'Never',
    },
    ...(spec.autoscaling ? { autoscaling: autoscalingView(spec.autoscaling) } : {}),
    forwarders: (spec.forwarders ?? []).map(forwarderView),
    annotations: spec.annotations ?? {},
    labels: spec.labels ?? {},
    matchAllocation: matchAllocationView(spec),
    ...(spec.allocation ? { allocation: spec.allocation } : {}),
  };
}

/**
 * Maestro's `SchedulerWithoutSpec`, as listed by GET /schedulers: the fields of the version it
 * names (the active one), not those of a change the spec holds that was refused or is still being
 * validated; roomsReplicas is the count in force, the spec's (the scale subresource's replicas).
 */
export function schedulerSummaryView(s: Scheduler, findVersion: FindVersion): Record<string, unknown> {
  const active = activeDefinition(s, findVersion);
  return {
    name: s.metadata.name ?? '',
    game: s.spec.game,
    state: schedulerStateOf(s),
    version: activeVersionOf(s),
    ...(active.portRange ? { portRange: active.portRange } : {}),
    createdAt: schedulerCreatedAt(s),
    maxSurge: String(active.maxSurge),
    roomsReplicas: s.spec.roomsReplicas ?? 0,
    matchAllocation: matchAllocationView(active),
  };
}

export function operationCreatedAt(op: Operation): string {
  return op.spec.enqueuedAt || toIsoString(op.metadata.creationTimestamp);
}

/** Maestro's `ListOperationItem`; `lease` only while the operation is in progress. */
export function operationItemView(op: Operation): Record<string, unknown> {
  const status = operationStatusOf(op);
  const ttl = op.status?.lease?.ttl;
  return {
    id: op.metadata.name ?? '',
    status,
    definitionName: op.spec.definitionName,
    ...(status === 'in_progress' && ttl ? { lease: { ttl } } : {}),
    schedulerName: op.spec.schedulerName,
    createdAt: operationCreatedAt(op),
  };
}

/**
 * Maestro's `Operation`: the list item plus input and execution history. An input nested deeper
 * than any request may be (only an Operation written past the gateway has one; kube-apiserver keeps
 * up to 10,000 levels) is not shown: writing it out would overflow the stack, a 500 for every GET.
 */
export function operationView(op: Operation): Record<string, unknown> {
  const input = op.spec.input ?? {};
  return {
    ...operationItemView(op),
    input: jsonDepthExceeds(input, MAX_JSON_DEPTH)
      ? { notShown: `the input nests deeper than ${MAX_JSON_DEPTH} levels, deeper than any operation's input, and is not shown here` }
      : input,
    executionHistory: op.status?.executionHistory ?? [],
  };
}
