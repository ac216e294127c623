/**
 * What each controller watches and which keys an event enqueues, declared in one table (as
 * controller-runtime's builder: For, Owns, Watches with a map function). Pure: operator.ts feeds
 * every informer event through `keysFor`, with the caches' indexes a map function may read
 * (`WatchLookups`), and adds the keys to the named work queues while this replica leads. What an event does besides enqueueing (the runner's view of its own writes, the
 * room expectations, the forwarding of a deleted room) stays in operator.ts.
 */
import type * as k8s from '@kubernetes/client-node';
import type { GameRoom, Operation, PingDigest, Scheduler, SchedulerVersion } from '../../common/src/generated/resources';
import { SCHEDULER_LABEL } from '../../common/src/resources/labels';
import { isFinalOperationStatus } from '../../common/src/resources/operation-names';
import { nodeAvailabilityChanged } from './rooms/domain/node-availability';
import { nodeAddressMoved } from './rooms/domain/room-address';

export type EventType = 'add' | 'update' | 'delete';

/** The informers whose events reach the controllers, by the object they hold. */
export interface WatchedObjects {
  schedulers: Scheduler;
  schedulerversions: SchedulerVersion;
  operations: Operation;
  gamerooms: GameRoom;
  pods: k8s.V1Pod;
  pingdigests: PingDigest;
  namespaces: k8s.V1Namespace;
  nodes: k8s.V1Node;
}
export type WatchSource = keyof WatchedObjects;

/**
 * What a watch may read to map one event to the keys of other objects (controller-runtime's map
 * functions read the cache): indexes, so an event costs the objects it concerns, not a walk of a cache.
 */
export interface WatchLookups {
  /** The room pods the cache shows bound to a node. */
  podsOnNode(nodeName: string): readonly k8s.V1Pod[];
}

/** One informer event as a watch sees it: on an update, `before` is the object the cache held until then. */
export interface WatchEvent<T> {
  before?: T;
  lookups: WatchLookups;
}

/** The work queues, one a controller (the operation runner's is `operations`). */
export type QueueName = 'schedulers' | 'operations' | 'gamerooms' | 'health';

interface Watch<T> {
  /** The key (or keys) an event maps to; undefined: none. */
  key(type: EventType, obj: T, event: WatchEvent<T>): string | readonly string[] | undefined;
  /** Whether the key waits for the debounce (bursts of room changes become one health check). */
  debounced?(type: EventType, obj: T): boolean;
}

type Watches = { readonly [S in WatchSource]?: Watch<WatchedObjects[S]> };

export interface ControllerDeclaration {
  queue: QueueName;
  watches: Watches;
}

const nameOf = (_t: EventType, o: { metadata: { name?: string } }): string | undefined => o.metadata.name;
const schedulerOfOperation = (_t: EventType, op: Operation): string => op.spec.schedulerName;
/** A room lives in its scheduler's namespace, named as the scheduler. */
const namespaceOf = (_t: EventType, o: { metadata?: { namespace?: string } }): string | undefined => o.metadata?.namespace;
const schedulerLabelOf = (_t: EventType, ns: k8s.V1Namespace): string | undefined => ns.metadata?.labels?.[SCHEDULER_LABEL];
const always = (): boolean => true;
/** A room is named as its pod, in the pod's namespace. */
const roomOfPod = (p: k8s.V1Pod): string => `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`;

/** Every controller of the operator and what it watches. */
const CONTROLLERS: readonly ControllerDeclaration[] = [
  {
    // The scheduler controller: status, finalizer, owned namespace and versions, lifecycle operations.
    queue: 'schedulers',
    watches: {
      schedulers: { key: nameOf },
      operations: { key: schedulerOfOperation },
      // Room changes only move the status's room counts: a burst of them (a fleet being created)
      // is one status computation over the scheduler's rooms after the debounce, not one per event.
      gamerooms: { key: namespaceOf, debounced: always },
      // A scheduler's namespace or versions changed (kubectl delete included): rebuilt or protected.
      namespaces: { key: schedulerLabelOf },
      schedulerversions: { key: (_t, v) => v.spec.scheduler },
    },
  },
  {
    // The operation runner: one operation of a scheduler at a time.
    queue: 'operations',
    watches: {
      schedulers: { key: nameOf },
      operations: { key: schedulerOfOperation },
    },
  },
  {
    // The room status controller: a room's status from its pod.
    queue: 'gamerooms',
    watches: {
      // A deleted room is not reconciled: operator.ts tells its end (roomDeleted).
      gamerooms: { key: (t, r) => (t === 'delete' ? undefined : `${r.metadata.namespace as string}/${r.metadata.name as string}`) },
      pods: { key: (_t, p) => roomOfPod(p) },
      // A room's address is its node's (rooms/domain/room-address.ts): a node that came or whose
      // address moved brings back the rooms on it; a heartbeat, none.
      nodes: { key: (t, n, { before, lookups }) => (nodeAddressMoved(t, n, before) ? lookups.podsOnNode(n.metadata?.name ?? '').map(roomOfPod) : undefined) },
    },
  },
  {
    // The health check: desired count, expiry, autoscaling, rollouts.
    queue: 'health',
    watches: {
      schedulers: { key: nameOf, debounced: always },
      // A version's active flag: the health check holds while status.version names a version whose
      // SchedulerVersion does not say it is active (a switch's flags not in the cache yet).
      schedulerversions: { key: (_t, v) => v.spec.scheduler, debounced: always },
      // An operation that ended frees the queue for the health check's next decision (a rollout's
      // next batch): at once, not after the debounce meant for bursts of room changes.
      operations: { key: schedulerOfOperation, debounced: (t, op) => t === 'delete' || !isFinalOperationStatus(op.status?.status) },
      gamerooms: { key: namespaceOf, debounced: always },
      pingdigests: { key: namespaceOf, debounced: always },
      namespaces: { key: schedulerLabelOf, debounced: always },
      // Which nodes can take rooms is part of what a healing operation depends on (its
      // fingerprint): a node turning NotReady or Ready, cordoned or a Ready one deleted brings back
      // the schedulers with rooms on it, each once; a heartbeat, none.
      nodes: {
        key: (t, n, { before, lookups }) => (nodeAvailabilityChanged(t, n, before)
          ? [...new Set(lookups.podsOnNode(n.metadata?.name ?? '').flatMap((p) => namespaceOf(t, p) ?? []))]
          : undefined),
        debounced: always,
      },
    },
  },
];

export interface Enqueue {
  queue: QueueName;
  key: string;
  debounced: boolean;
}

/** The keys one informer event enqueues, controller by controller. */
export function keysFor<S extends WatchSource>(source: S, type: EventType, obj: WatchedObjects[S], event: WatchEvent<WatchedObjects[S]>, controllers: readonly ControllerDeclaration[] = CONTROLLERS): Enqueue[] {
  const out: Enqueue[] = [];
  for (const c of controllers) {
    const watch = c.watches[source];
    if (!watch) continue;
    const keys = watch.key(type, obj, event);
    if (!keys) continue;
    const debounced = watch.debounced?.(type, obj) ?? false;
    for (const key of typeof keys === 'string' ? [keys] : keys) out.push({ queue: c.queue, key, debounced });
  }
  return out;
}
