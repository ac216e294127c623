/**
 * What a kubelet would report for a pod at a given moment: a pure function of the pod's spec, the
 * behaviour of each container, when the pod was bound, and the clock. The kubelet writes the
 * result only when it differs from what it wrote last, and wakes up again at `nextChangeAtMs`.
 *
 * Timeline of one container (S = boundAt + startDelay, B = restart back-off):
 *   before S          waiting ContainerCreating           (pod Pending)
 *   normal            running from S, ready
 *   never-ready       running from S, not ready
 *   image-pull-failure  waiting ErrImagePull from S, ImagePullBackOff from S + B
 *   config error      waiting CreateContainerConfigError from S until the kubelet can create it
 *   exit after A      running [S, S + A), then terminated with the code; when the restart policy
 *                     restarts it, run k starts at S + k(A + B) and the gaps are CrashLoopBackOff
 *
 * The pod phase and conditions follow the kubelet's rules (`getPhase`, `generatePodReadyCondition`).
 */
import type { V1Container, V1Pod, V1PodCondition } from '@kubernetes/client-node';
import type { ContainerBehaviour } from './pod-behaviour';
import { fakeDigest } from './pod-fields';
import { rfc3339, toMillis } from '../../../common/src/kube/timestamps';

/** Plain JSON shapes with string timestamps, written with a merge patch. */
export interface ContainerStateBody {
  waiting?: { reason: string; message?: string };
  running?: { startedAt: string };
  terminated?: { exitCode: number; reason: string; startedAt?: string; finishedAt: string; containerID?: string };
}

export interface ContainerStatusBody {
  name: string;
  state: ContainerStateBody;
  lastState: ContainerStateBody;
  ready: boolean;
  started: boolean;
  restartCount: number;
  image: string;
  imageID: string;
  containerID?: string;
}

export interface PodConditionBody {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastProbeTime: null;
  lastTransitionTime: string;
  reason?: string;
  message?: string;
}

export interface PodStatusBody {
  phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed';
  conditions: PodConditionBody[];
  hostIP: string;
  hostIPs: { ip: string }[];
  podIP?: string;
  podIPs?: { ip: string }[];
  startTime: string;
  containerStatuses: ContainerStatusBody[];
  initContainerStatuses?: ContainerStatusBody[];
}

export interface PodStatusInput {
  pod: V1Pod;
  /** One per `spec.containers` entry, in order. */
  behaviours: readonly ContainerBehaviour[];
  boundAtMs: number;
  nowMs: number;
  startDelayMs: number;
  /** Back-off before a restart and before ImagePullBackOff; at least 1 ms. */
  backoffMs: number;
  hostIP: string;
  podIP: string;
  /** When set, the pod is being deleted and its containers were stopped at this moment. */
  stoppedAtMs?: number;
  /**
   * Containers that could not be created, with the kubelet's message (a Secret or ConfigMap they
   * read is missing: `container-config.ts`). While any is set no container starts: those wait
   * `CreateContainerConfigError`, the others `ContainerCreating`.
   */
  configErrors?: ReadonlyMap<string, string>;
}

export interface ComputedPodStatus {
  status: PodStatusBody;
  /** The next moment the status changes by itself, if any. */
  nextChangeAtMs?: number;
}

interface ContainerView {
  status: ContainerStatusBody;
  /** When the current state began, for condition transition times. */
  sinceMs: number;
  nextChangeAtMs?: number;
}

export function normalizedImage(image: string): string {
  const lastSlash = image.lastIndexOf('/');
  const hasTag = image.indexOf(':', lastSlash + 1) >= 0 || image.includes('@');
  const withTag = hasTag ? image : `${image}:latest`;
  const firstPart = withTag.split('/')[0] ?? '';
  if (!withTag.includes('/')) return `docker.io/library/${withTag}`;
  if (!firstPart.includes('.') && !firstPart.includes(':') && firstPart !== 'localhost') return `docker.io/${withTag}`;
  return withTag;
}

function imageIdOf(image: string): string {
  const repo = normalizedImage(image).replace(/[:@].*$/, '');
  return `${repo}@sha256:${fakeDigest(`image:${image}`)}`;
}

function containerIdOf(pod: V1Pod, name: string, run: number): string {
  return `containerd://${fakeDigest(`${pod.metadata?.uid ?? ''}/${name}/${run}`)}`;
}

function restarts(restartPolicy: string, exitCode: number): boolean {
  if (restartPolicy === 'Never') return false;
  if (restartPolicy === 'OnFailure') return exitCode !== 0;
  return true;
}

function exitReason(code: number): string {
  return code === 0 ? 'Completed' : 'Error';
}

function containerView(input: PodStatusInput, container: V1Container, behaviour: ContainerBehaviour): ContainerView {
  const { pod, nowMs, backoffMs } = input;
  const image = container.image ?? '';
  const startAt = input.boundAtMs + input.startDelayMs;
  const base = { name: container.name, image, imageID: '', lastState: {}, ready: false, started: false, restartCount: 0 };
  if (nowMs < startAt) {
    return { status: { ...base, state: { waiting: { reason: 'ContainerCreating' } } }, sinceMs: input.boundAtMs, nextChangeAtMs: startAt };
  }
  if (input.configErrors !== undefined && input.configErrors.size > 0) {
    const message = input.configErrors.get(container.name);
    const waiting = message === undefined ? { reason: 'ContainerCreating' } : { reason: 'CreateContainerConfigError', message };
    return { status: { ...base, state: { waiting } }, sinceMs: startAt };
  }
  const imageID = imageIdOf(image);
  switch (behaviour.kind) {
    case 'normal':
    case 'never-ready':
      return {
        status: {
          ...base, imageID, containerID: containerIdOf(pod, container.name, 0),
          state: { running: { startedAt: rfc3339(startAt) } },
          ready: behaviour.kind === 'normal', started: true,
        },
        sinceMs: startAt,
      };
    case 'image-pull-failure': {
      const ref = normalizedImage(image);
      if (nowMs < startAt + backoffMs) {
        const message = `rpc error: code = NotFound desc = failed to pull and unpack image "${ref}": failed to resolve reference "${ref}": ${ref}: not found`;
        return { status: { ...base, state: { waiting: { reason: 'ErrImagePull', message } } }, sinceMs: startAt, nextChangeAtMs: startAt + backoffMs };
      }
      return { status: { ...base, state: { waiting: { reason: 'ImagePullBackOff', message: `Back-off pulling image "${image}"` } } }, sinceMs: startAt + backoffMs };
    }
    case 'exit': {
      const restartPolicy = pod.spec?.restartPolicy ?? 'Always';
      const { afterMs, exitCode } = behaviour;
      const terminatedOf = (run: number, runStart: number) => ({
        exitCode, reason: exitReason(exitCode), startedAt: rfc3339(runStart), finishedAt: rfc3339(runStart + afterMs), containerID: containerIdOf(pod, container.name, run),
      });
      if (!restarts(restartPolicy, exitCode)) {
        if (nowMs < startAt + afterMs) {
          return {
            status: { ...base, imageID, containerID: containerIdOf(pod, container.name, 0), state: { running: { startedAt: rfc3339(startAt) } }, ready: true, started: true },
            sinceMs: startAt, nextChangeAtMs: startAt + afterMs,
          };
        }
        return {
          status: { ...base, imageID, containerID: containerIdOf(pod, container.name, 0), state: { terminated: terminatedOf(0, startAt) } },
          sinceMs: startAt + afterMs,
        };
      }
      const cycle = afterMs + backoffMs;
      const run = Math.floor((nowMs - startAt) / cycle);
      const runStart = startAt + run * cycle;
      const lastState = run > 0 ? { terminated: terminatedOf(run - 1, runStart - cycle) } : {};
      if (nowMs < runStart + afterMs) {
        return {
          status: {
            ...base, imageID, containerID: containerIdOf(pod, container.name, run), lastState, restartCount: run,
            state: { running: { startedAt: rfc3339(runStart) } }, ready: true, started: true,
          },
          sinceMs: runStart, nextChangeAtMs: runStart + afterMs,
        };
      }
      const backoffSeconds = Math.max(1, Math.round(backoffMs / 1000));
      const message = `back-off ${backoffSeconds}s restarting failed container=${container.name} pod=${pod.metadata?.name ?? ''}_${pod.metadata?.namespace ?? ''}(${pod.metadata?.uid ?? ''})`;
      return {
        status: {
          ...base, imageID, containerID: containerIdOf(pod, container.name, run), restartCount: run + 1,
          lastState: { terminated: terminatedOf(run, runStart) },
          state: { waiting: { reason: 'CrashLoopBackOff', message } },
        },
        sinceMs: runStart + afterMs, nextChangeAtMs: runStart + cycle,
      };
    }
  }
}

/** A container stopped because its pod is being deleted: it exits 0 on SIGTERM. */
function stoppedView(view: ContainerView, stoppedAtMs: number): ContainerView {
  const s = view.status;
  if (s.state.terminated) return { status: s, sinceMs: view.sinceMs };
  const startedAt = s.state.running?.startedAt;
  return {
    status: {
      ...s, ready: false, started: false,
      state: { terminated: { exitCode: 0, reason: 'Completed', ...(startedAt ? { startedAt } : {}), finishedAt: rfc3339(stoppedAtMs), ...(s.containerID ? { containerID: s.containerID } : {}) } },
    },
    sinceMs: stoppedAtMs,
  };
}

/** Conditions this kubelet writes; any other condition on the pod is kept as it is. */
const OWNED_CONDITIONS: ReadonlySet<string> = new Set(['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled']);

/** Why the pod's readiness gates hold it back, in the kubelet's words, or undefined. */
function readinessGateProblem(pod: V1Pod, conditions: readonly V1PodCondition[]): string | undefined {
  const missing: string[] = [];
  const notTrue: string[] = [];
  for (const gate of pod.spec?.readinessGates ?? []) {
    const c = conditions.find((x) => x.type === gate.conditionType);
    if (!c) missing.push(gate.conditionType);
    else if (c.status !== 'True') notTrue.push(gate.conditionType);
  }
  if (missing.length === 0 && notTrue.length === 0) return undefined;
  const parts = [
    ...missing.map((t) => `corresponding condition of pod readiness gate "${t}" does not exist.`),
    ...notTrue.map((t) => `the status of pod readiness gate "${t}" is not "True", but False`),
  ];
  return parts.join(', ');
}

function foreignConditionBody(c: V1PodCondition): PodConditionBody {
  const t = toMillis(c.lastTransitionTime);
  return {
    type: c.type, status: c.status === 'True' || c.status === 'False' ? c.status : 'Unknown', lastProbeTime: null,
    lastTransitionTime: rfc3339(t ?? 0),
    ...(c.reason ? { reason: c.reason } : {}), ...(c.message ? { message: c.message } : {}),
  };
}

/** The kubelet's `getPhase`. */
export function podPhaseOf(statuses: readonly ContainerStatusBody[], restartPolicy: string): PodStatusBody['phase'] {
  let waiting = 0, running = 0, stopped = 0, succeeded = 0;
  for (const s of statuses) {
    if (s.state.running) running++;
    else if (s.state.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.state.waiting) {
      if (s.lastState.terminated) stopped++;
      else waiting++;
    }
  }
  if (waiting > 0) return 'Pending';
  if (running > 0) return 'Running';
  if (stopped > 0) {
    if (restartPolicy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (restartPolicy === 'OnFailure') return 'Running';
    return 'Failed';
  }
  return 'Pending';
}

function condition(type: string, ok: boolean, sinceMs: number, reason?: string, message?: string): PodConditionBody {
  return {
    type, status: ok ? 'True' : 'False', lastProbeTime: null, lastTransitionTime: rfc3339(sinceMs),
    ...(reason ? { reason } : {}), ...(message ? { message } : {}),
  };
}

export function computePodStatus(input: PodStatusInput): ComputedPodStatus {
  const { pod, boundAtMs } = input;
  const containers = pod.spec?.containers ?? [];
  let views = containers.map((c, i) => containerView(input, c, input.behaviours[i] ?? { kind: 'normal' }));
  const deleting = input.stoppedAtMs !== undefined;
  if (input.stoppedAtMs !== undefined) {
    const at = input.stoppedAtMs;
    views = views.map((v) => stoppedView(v, at));
  }
  const statuses = views.map((v) => v.status);
  const restartPolicy = deleting ? 'Never' : pod.spec?.restartPolicy ?? 'Always';
  const phase = podPhaseOf(statuses, restartPolicy);
  const sinceMs = Math.max(boundAtMs, ...views.map((v) => v.sinceMs));
  const startAt = boundAtMs + input.startDelayMs;
  const unready = statuses.filter((s) => !s.ready).map((s) => s.name);
  const containersReady = phase === 'Running' && unready.length === 0;
  const foreign = (pod.status?.conditions ?? []).filter((c) => !OWNED_CONDITIONS.has(c.type));
  const gateProblem = readinessGateProblem(pod, foreign);
  const allReady = containersReady && gateProblem === undefined;
  let readyReason: string | undefined;
  let readyMessage: string | undefined;
  let containersReason: string | undefined;
  let containersMessage: string | undefined;
  if (phase === 'Succeeded') readyReason = containersReason = 'PodCompleted';
  else if (phase === 'Failed') readyReason = containersReason = 'PodFailed';
  else if (!containersReady) {
    readyReason = containersReason = 'ContainersNotReady';
    readyMessage = containersMessage = `containers with unready status: [${unready.join(' ')}]`;
  } else if (gateProblem !== undefined) {
    readyReason = 'ReadinessGatesNotReady';
    readyMessage = gateProblem;
  }
  const sandboxReady = input.nowMs >= startAt && !deleting;
  const conditions = [
    condition('PodReadyToStartContainers', sandboxReady, deleting ? sinceMs : sandboxReady ? startAt : boundAtMs),
    condition('Initialized', true, boundAtMs),
    condition('Ready', allReady, sinceMs, readyReason, readyMessage),
    condition('ContainersReady', containersReady, sinceMs, containersReason, containersMessage),
    condition('PodScheduled', true, boundAtMs),
    ...foreign.map(foreignConditionBody),
  ];
  const initContainers = pod.spec?.initContainers ?? [];
  const status: PodStatusBody = {
    phase,
    conditions,
    hostIP: input.hostIP,
    hostIPs: [{ ip: input.hostIP }],
    startTime: rfc3339(boundAtMs),
    containerStatuses: statuses,
  };
  if (input.nowMs >= startAt) {
    status.podIP = input.podIP;
    status.podIPs = [{ ip: input.podIP }];
  }
  if (initContainers.length > 0) {
    status.initContainerStatuses = initContainers.map((c) => ({
      name: c.name, image: c.image ?? '', imageID: imageIdOf(c.image ?? ''), containerID: containerIdOf(pod, c.name, 0),
      ready: true, started: false, restartCount: 0, lastState: {},
      state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: rfc3339(boundAtMs), finishedAt: rfc3339(boundAtMs) } },
    }));
  }
  const changes = deleting ? [] : views.map((v) => v.nextChangeAtMs).filter((t): t is number => t !== undefined);
  const nextChangeAtMs = changes.length > 0 ? Math.min(...changes) : undefined;
  return nextChangeAtMs === undefined ? { status } : { status, nextChangeAtMs };
}
