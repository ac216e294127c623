/**
 * The operator's caches: one list+watch informer per kind it reads, built in one place, for
 * `startOperator` and for the controller tests that run one controller on the real caches.
 * What an event does is the caller's (`on`, by watch source).
 */
import type * as k8s from '@kubernetes/client-node';
import type { GameRoom, Operation, PingDigest, Scheduler, SchedulerVersion } from '../../common/src/generated/resources';
import type { CrdKind } from '../../common/src/generated/schemas';
import type { KubeClients } from '../../common/src/kube/clients';
import { ResilientInformer, type Indexer, type ListPage } from '../../common/src/kube/informer';
import { slimNode } from '../../common/src/kube/slim-node';
import { slimPod } from '../../common/src/kube/slim-pod';
import type { Logger } from '../../common/src/logger';
import type { MetricsRegistry } from '../../common/src/metrics';
import { collectionPath, PLURALS, ROOMKEEPER_API } from '../../common/src/resources/api-group';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../../common/src/resources/labels';
import type { EventType, WatchedObjects, WatchLookups, WatchSource } from './controller-watches';
import type { Cache, Caches } from './deps';

/** What each watched informer's events do (`before`: on an update, the object the cache held). */
export type InformerHandlers = { readonly [S in WatchSource]: (type: EventType, obj: WatchedObjects[S], before?: WatchedObjects[S]) => void };

/** One informer for each cache the controllers read (deps.ts `Caches`). */
export type OperatorInformers = {
  [K in keyof Caches]: Caches[K] extends Cache<infer T extends k8s.KubernetesObject> ? ResilientInformer<T> : never;
};

/**
 * The slim pod, plus the deletion grace period: the API server dates a graceful deletion at the
 * END of the grace period, so when the deletion started is deletionTimestamp minus
 * deletionGracePeriodSeconds (rooms/room-manager.ts `deletionStartedAt`).
 */
function roomPod(pod: k8s.V1Pod): k8s.V1Pod {
  const slim = slimPod(pod);
  const grace = pod.metadata?.deletionGracePeriodSeconds;
  const metadata: k8s.V1ObjectMeta = slim.metadata ?? {};
  return grace === undefined ? slim : { ...slim, metadata: { ...metadata, deletionGracePeriodSeconds: grace } };
}

/** The pods cache's index of room pods by the node they are bound to (`spec.nodeName`; none before). */
const PODS_BY_NODE = 'node';

/** The indexes a watch reads to map an event to keys (controller-watches.ts). */
export function watchLookups(informers: OperatorInformers): WatchLookups {
  return { podsOnNode: (nodeName) => informers.pods.byIndex(PODS_BY_NODE, nodeName) };
}

/**
 * The custom resources the operator watches: all but AllocationClaims, which only the gateway uses
 * (for the length of one allocate request). Spelled out so test/rbac derives no right on them.
 */
type WatchedKind = Exclude<CrdKind, 'AllocationClaim'>;

/** The informers, not started (`start()` each). */
export function createOperatorInformers(clients: KubeClients, opts: { logger: Logger; metrics?: MetricsRegistry; on: InformerHandlers }): OperatorInformers {
  const { kc, custom, core } = clients;
  const { logger, metrics, on } = opts;
  const informer = <T extends k8s.KubernetesObject>(name: string, path: string, list: (page?: ListPage) => Promise<k8s.KubernetesListObject<T>>, onEvent: (type: EventType, obj: T, before?: T) => void, labelSelector?: string, transform?: (obj: T) => T, indexers?: Record<string, Indexer<T>>) =>
    new ResilientInformer<T>({ kc, path, list, name, logger, onEvent, labelSelector, transform, indexers, metrics, access: clients.access });
  const managed = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`;
  const listAll = <T extends k8s.KubernetesObject>(kind: WatchedKind) => (page?: ListPage) =>
    custom.listClusterCustomObject({ ...ROOMKEEPER_API, plural: PLURALS[kind], ...page }) as Promise<k8s.KubernetesListObject<T>>;
  const crdInformer = <T extends k8s.KubernetesObject>(kind: WatchedKind, onEvent: (type: EventType, obj: T) => void) =>
    informer<T>(PLURALS[kind], collectionPath(kind), listAll<T>(kind), onEvent);
  return {
    schedulers: crdInformer<Scheduler>('Scheduler', on.schedulers),
    versions: crdInformer<SchedulerVersion>('SchedulerVersion', on.schedulerversions),
    operations: crdInformer<Operation>('Operation', on.operations),
    rooms: crdInformer<GameRoom>('GameRoom', on.gamerooms),
    pods: informer<k8s.V1Pod>('pods', '/api/v1/pods',
      (page) => core.listPodForAllNamespaces({ labelSelector: managed, ...page }), on.pods, managed, roomPod,
      { [PODS_BY_NODE]: (pod) => pod.spec?.nodeName || undefined }),
    nodes: informer<k8s.V1Node>('nodes', '/api/v1/nodes', (page) => core.listNode({ ...page }), on.nodes, undefined, slimNode),
    digests: crdInformer<PingDigest>('PingDigest', on.pingdigests),
    namespaces: informer<k8s.V1Namespace>('namespaces', '/api/v1/namespaces',
      (page) => core.listNamespace({ labelSelector: managed, ...page }), on.namespaces, managed),
  };
}
