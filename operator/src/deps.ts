/**
 * What the operator's parts need from the outside world, as narrow interfaces. Only `main.ts`
 * and `operator.ts` build the real ones; tests may pass their own.
 */
import type * as k8s from '@kubernetes/client-node';
import type { GameRoom, Operation, PingDigest, Scheduler, SchedulerVersion } from '../../common/src/generated/resources';
import type { Config } from '../../common/src/config';
import type { KubeEvent } from '../../common/src/kube/event-recorder';
import type { RoomkeeperApi } from '../../common/src/kube/roomkeeper-api';
import type { Logger } from '../../common/src/logger';
import type { MetricsRegistry } from '../../common/src/metrics';
import type { RoomExpectations } from './rooms/expectations';
import type { RoomFailures } from './rooms/room-failures';
import type { Clock } from '../../common/src/runtime/clock';
import { versionObjectName, type FindVersion } from '../../common/src/resources/scheduler-version';

export interface Cache<T> {
  list(namespace?: string): readonly T[];
  get(name: string, namespace?: string): T | undefined;
}

export interface Caches {
  schedulers: Cache<Scheduler>;
  versions: Cache<SchedulerVersion>;
  operations: Cache<Operation>;
  rooms: Cache<GameRoom>;
  pods: Cache<k8s.V1Pod>;
  nodes: Cache<k8s.V1Node>;
  /** Ping digests written by gateway replicas (PingDigest custom resources). */
  digests: Cache<PingDigest>;
  /** The schedulers' namespaces (labelled app.kubernetes.io/managed-by=roomkeeper). */
  namespaces: Cache<k8s.V1Namespace>;
}

/** Finds a scheduler's version in the versions cache (no API call). */
export function cachedVersions(caches: Pick<Caches, 'versions'>): FindVersion {
  return (schedulerName, version) => caches.versions.get(versionObjectName(schedulerName, version));
}

/** A scheduler's SchedulerVersions from the cache (a walk over every version: not per room or per ping). */
export function cachedVersionsOf(caches: Pick<Caches, 'versions'>, schedulerName: string): SchedulerVersion[] {
  return caches.versions.list().filter((v) => v.spec.scheduler === schedulerName);
}

/** A room as the forwarder needs it. */
export interface ForwardedRoom {
  game: string;
  schedulerName: string;
  roomId: string;
  host: string;
  ports: { name: string; protocol: string; port: number }[];
  validation?: boolean;
}

export interface ForwarderConfigLike {
  name: string;
  enable?: boolean;
  type?: string;
  address: string;
  options?: { timeout?: number | string; metadata?: Record<string, unknown> };
}

/**
 * The part of the gRPC forwarder the operator uses: the `terminated` status of a deleted room, and
 * the status changes an allocation makes without a ping (`occupied` when a ready room is
 * allocated, `ready` when its allocation's TTL ends).
 */
export interface StatusForwarder {
  forwardStatus(forwarders: ForwarderConfigLike[], room: ForwardedRoom, status: 'terminated' | 'ready' | 'occupied', metadata?: Record<string, unknown>): Promise<unknown>;
}

export interface OperatorDeps {
  api: RoomkeeperApi;
  core: k8s.CoreV1Api;
  caches: Caches;
  config: Config;
  logger: Logger;
  metrics: MetricsRegistry;
  identity: string;
  /** Room writes the caches have not shown yet (the health check waits for them). */
  expectations?: RoomExpectations;
  /** Rooms this replica saw fail, counted and kept for the churn rule. Absent: none recorded (unit tests). */
  roomFailures?: RoomFailures;
  now: Clock;
  /** The random source of room names and host ports (default Math.random; tests force collisions). */
  random?: () => number;
  forwarder?: StatusForwarder;
  /** Kubernetes Events for `kubectl describe` (aggregated; never throws). Absent: none (unit tests). */
  events?: { record(event: KubeEvent): void };
  /**
   * Whether the caches that room expiry reads are current, and since when (leadership gained,
   * caches listed or reconnected after an error). Absent: always current (unit tests).
   */
  sight?: () => { impaired: boolean; since: number };
  /**
   * The sight of the caches a rollout's floor counts on (rooms and pods): whether one is impaired,
   * and when the last of them regained sight after losing it (0: never lost).
   */
  floorSight?: () => { impaired: boolean; recoveredAt: number };
  /**
   * The caches whose last list or watch failed and have not been current since (an API server
   * back from an outage, before they relist): the health check decides nothing on them meanwhile.
   * Absent: all current (unit tests).
   */
  staleCaches?: () => string[];
}
