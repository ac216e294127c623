/**
 * Typed access to Roomkeeper's custom resources through client-node's CustomObjectsApi.
 * Thin on purpose: one method per call the operator or gateway makes, so the verbs each
 * component uses are visible in one place (the Helm chart's RBAC is checked against them).
 */
import type * as k8s from '@kubernetes/client-node';
import type { GameRoom, GameRoomList, Operation, OperationList, PingDigestList, Scheduler, SchedulerList, SchedulerVersion, SchedulerVersionList } from '../generated/resources';
import { PLURALS, ROOMKEEPER_API } from '../resources/api-group';
import { SCHEDULER_LABEL } from '../resources/labels';
import { JSON_PATCH, MERGE_PATCH } from './clients';

const { group, version } = ROOMKEEPER_API;

export interface DeletePreconditions { resourceVersion?: string; uid?: string }

export class RoomkeeperApi {
  constructor(private readonly custom: k8s.CustomObjectsApi) {}

  // Schedulers (cluster scope)
  listSchedulers(): Promise<SchedulerList> {
    return this.custom.listClusterCustomObject({ group, version, plural: PLURALS.Scheduler }) as Promise<SchedulerList>;
  }
  getScheduler(name: string): Promise<Scheduler> {
    return this.custom.getClusterCustomObject({ group, version, plural: PLURALS.Scheduler, name }) as Promise<Scheduler>;
  }
  createScheduler(body: Scheduler): Promise<Scheduler> {
    return this.custom.createClusterCustomObject({ group, version, plural: PLURALS.Scheduler, body }) as Promise<Scheduler>;
  }
  replaceScheduler(body: Scheduler): Promise<Scheduler> {
    const name = body.metadata.name as string;
    return this.custom.replaceClusterCustomObject({ group, version, plural: PLURALS.Scheduler, name, body }) as Promise<Scheduler>;
  }
  patchScheduler(name: string, patch: object): Promise<Scheduler> {
    return this.custom.patchClusterCustomObject({ group, version, plural: PLURALS.Scheduler, name, body: patch }, MERGE_PATCH) as Promise<Scheduler>;
  }
  /** A JSON Patch (RFC 6902): `test` operations make it conditional on what they test only. */
  jsonPatchScheduler(name: string, ops: readonly object[]): Promise<Scheduler> {
    return this.custom.patchClusterCustomObject({ group, version, plural: PLURALS.Scheduler, name, body: ops }, JSON_PATCH) as Promise<Scheduler>;
  }
  patchSchedulerStatus(name: string, patch: object): Promise<Scheduler> {
    return this.custom.patchClusterCustomObjectStatus({ group, version, plural: PLURALS.Scheduler, name, body: patch }, MERGE_PATCH) as Promise<Scheduler>;
  }
  /** A JSON Patch (RFC 6902) of the status: an append to a list without a resourceVersion. */
  jsonPatchSchedulerStatus(name: string, ops: readonly object[]): Promise<Scheduler> {
    return this.custom.patchClusterCustomObjectStatus({ group, version, plural: PLURALS.Scheduler, name, body: ops }, JSON_PATCH) as Promise<Scheduler>;
  }
  deleteScheduler(name: string): Promise<unknown> {
    return this.custom.deleteClusterCustomObject({ group, version, plural: PLURALS.Scheduler, name });
  }

  // SchedulerVersions (cluster scope)
  listSchedulerVersions(scheduler?: string): Promise<SchedulerVersionList> {
    return this.custom.listClusterCustomObject({
      group, version, plural: PLURALS.SchedulerVersion, labelSelector: scheduler ? `${SCHEDULER_LABEL}=${scheduler}` : undefined,
    }) as Promise<SchedulerVersionList>;
  }
  getSchedulerVersion(name: string): Promise<SchedulerVersion> {
    return this.custom.getClusterCustomObject({ group, version, plural: PLURALS.SchedulerVersion, name }) as Promise<SchedulerVersion>;
  }
  createSchedulerVersion(body: SchedulerVersion): Promise<SchedulerVersion> {
    return this.custom.createClusterCustomObject({ group, version, plural: PLURALS.SchedulerVersion, body }) as Promise<SchedulerVersion>;
  }
  patchSchedulerVersion(name: string, patch: object): Promise<SchedulerVersion> {
    return this.custom.patchClusterCustomObject({ group, version, plural: PLURALS.SchedulerVersion, name, body: patch }, MERGE_PATCH) as Promise<SchedulerVersion>;
  }
  patchSchedulerVersionStatus(name: string, patch: object): Promise<SchedulerVersion> {
    return this.custom.patchClusterCustomObjectStatus({ group, version, plural: PLURALS.SchedulerVersion, name, body: patch }, MERGE_PATCH) as Promise<SchedulerVersion>;
  }
  deleteSchedulerVersion(name: string): Promise<unknown> {
    return this.custom.deleteClusterCustomObject({ group, version, plural: PLURALS.SchedulerVersion, name });
  }

  // Operations (cluster scope)
  /**
   * Every operation, or a scheduler's: those whose `spec.schedulerName` names it, as the queue
   * reads them. Not by the scheduler label, though the operator labels every operation: an
   * Operation written with kubectl has no label until the leader has seen it (one created a
   * moment before its scheduler's deletion lists, or while no replica leads, would be missed and
   * outlive the scheduler), and a label is its writer's word (one naming another scheduler would
   * take that scheduler's operation in the deletion). v1.28 has no field selectors for custom
   * resources (`selectableFields` come in v1.30), so the spec is filtered here.
   */
  async listOperations(scheduler?: string): Promise<OperationList> {
    const list = await this.custom.listClusterCustomObject({ group, version, plural: PLURALS.Operation }) as OperationList;
    return scheduler === undefined ? list : { ...list, items: list.items.filter((o) => o.spec.schedulerName === scheduler) };
  }
  getOperation(name: string): Promise<Operation> {
    return this.custom.getClusterCustomObject({ group, version, plural: PLURALS.Operation, name }) as Promise<Operation>;
  }
  createOperation(body: Operation): Promise<Operation> {
    return this.custom.createClusterCustomObject({ group, version, plural: PLURALS.Operation, body }) as Promise<Operation>;
  }
  patchOperation(name: string, patch: object): Promise<Operation> {
    return this.custom.patchClusterCustomObject({ group, version, plural: PLURALS.Operation, name, body: patch }, MERGE_PATCH) as Promise<Operation>;
  }
  jsonPatchOperation(name: string, ops: readonly object[]): Promise<Operation> {
    return this.custom.patchClusterCustomObject({ group, version, plural: PLURALS.Operation, name, body: ops }, JSON_PATCH) as Promise<Operation>;
  }
  patchOperationStatus(name: string, patch: object): Promise<Operation> {
    return this.custom.patchClusterCustomObjectStatus({ group, version, plural: PLURALS.Operation, name, body: patch }, MERGE_PATCH) as Promise<Operation>;
  }
  deleteOperation(name: string): Promise<unknown> {
    return this.custom.deleteClusterCustomObject({ group, version, plural: PLURALS.Operation, name });
  }

  // PingDigests (namespaced: the scheduler's namespace; written by the gateway's KubernetesStore)
  listPingDigests(namespace: string): Promise<PingDigestList> {
    return this.custom.listNamespacedCustomObject({ group, version, plural: PLURALS.PingDigest, namespace }) as Promise<PingDigestList>;
  }
  /** Deletes the digest of a gateway replica that is gone (the operator; its preconditions keep one written since). */
  deletePingDigest(namespace: string, name: string, preconditions?: DeletePreconditions): Promise<unknown> {
    return this.custom.deleteNamespacedCustomObject({ group, version, plural: PLURALS.PingDigest, namespace, name, body: preconditions ? { preconditions } : {} });
  }

  // GameRooms (namespaced: the scheduler's namespace)
  listGameRooms(namespace?: string): Promise<GameRoomList> {
    return (namespace
      ? this.custom.listNamespacedCustomObject({ group, version, plural: PLURALS.GameRoom, namespace })
      : this.custom.listClusterCustomObject({ group, version, plural: PLURALS.GameRoom })) as Promise<GameRoomList>;
  }
  getGameRoom(namespace: string, name: string): Promise<GameRoom> {
    return this.custom.getNamespacedCustomObject({ group, version, plural: PLURALS.GameRoom, namespace, name }) as Promise<GameRoom>;
  }
  createGameRoom(body: GameRoom): Promise<GameRoom> {
    const namespace = body.metadata.namespace as string;
    return this.custom.createNamespacedCustomObject({ group, version, plural: PLURALS.GameRoom, namespace, body }) as Promise<GameRoom>;
  }
  /** A JSON Patch (RFC 6902) of a GameRoom's metadata or spec; `test` operations make it conditional. */
  jsonPatchGameRoom(namespace: string, name: string, ops: readonly object[]): Promise<GameRoom> {
    return this.custom.patchNamespacedCustomObject({ group, version, plural: PLURALS.GameRoom, namespace, name, body: ops }, JSON_PATCH) as Promise<GameRoom>;
  }
  patchGameRoomStatus(namespace: string, name: string, patch: object): Promise<GameRoom> {
    return this.custom.patchNamespacedCustomObjectStatus({ group, version, plural: PLURALS.GameRoom, namespace, name, body: patch }, MERGE_PATCH) as Promise<GameRoom>;
  }
  /** Deletes a room. Foreground propagation keeps the GameRoom (terminating) until its pod is gone. */
  deleteGameRoom(namespace: string, name: string, preconditions?: DeletePreconditions, propagationPolicy: 'Foreground' | 'Background' = 'Foreground'): Promise<unknown> {
    return this.custom.deleteNamespacedCustomObject({
      group, version, plural: PLURALS.GameRoom, namespace, name, propagationPolicy,
      body: { propagationPolicy, ...(preconditions ? { preconditions } : {}) },
    });
  }
}
