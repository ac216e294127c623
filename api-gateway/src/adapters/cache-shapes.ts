/**
 * What the gateway's caches keep of each object: only the fields the gateway reads from a cached
 * object (the informer's `transform`). Whatever must be whole is read by a direct GET instead
 * (`getOperation`, `getRoom`, `getScheduler`), never from these caches.
 *
 * GameRoom readers: the ping path (`RoomReports`, `PingRecorder`: status, running matches, the
 * timestamp of the ping they came with and when it reached a gateway (`lastPingAt`), instance
 * status, allocation, host and ports for forwarding, spec.validation, the operator's silence mark), allocation
 * (`chooseCandidates`, `isAllocatable`, `answerOf`: labels and spec.version for selectors,
 * deletionTimestamp, resourceVersion for the compare-and-swap, the allocation and the earlier
 * allocations for replays and for the next allocation's write of them),
 * `countRooms` (SchedulerInfo) and the chaos tests' cache comparison (name, namespace,
 * resourceVersion). Dropped: uid, generation, creationTimestamp, annotations, finalizers,
 * ownerReferences, createdAt, reason, metadata, a port's containerPort.
 *
 * Operation readers: the operations list (`operationItemView`: name, status, lease ttl,
 * definitionName, schedulerName, enqueuedAt or creationTimestamp, `queueOrder`: priority) and
 * `isOngoing` (input.newActiveVersion). Dropped: the rest of the input (a removal's room ids) and
 * the execution history; `GET /operations/{id}` reads the whole operation from the API server.
 */
import type { GameRoom, GameRoomStatus, Operation } from '../../../common/src/generated/resources';

/** The GameRoom fields the gateway reads from its cache. */
export function slimGameRoom(room: GameRoom): GameRoom {
  const m = room.metadata;
  const s = room.status;
  return {
    apiVersion: room.apiVersion,
    kind: room.kind,
    metadata: {
      name: m.name, namespace: m.namespace, resourceVersion: m.resourceVersion, labels: m.labels,
      ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
    },
    spec: room.spec,
    ...(s ? { status: slimRoomStatus(s) } : {}),
  };
}

function slimRoomStatus(s: GameRoomStatus): GameRoomStatus {
  return {
    status: s.status,
    pingStatus: s.pingStatus,
    runningMatches: s.runningMatches,
    ...(s.pingTimestamp !== undefined ? { pingTimestamp: s.pingTimestamp } : {}),
    ...(s.lastPingAt !== undefined ? { lastPingAt: s.lastPingAt } : {}),
    ...(s.silentSince !== undefined ? { silentSince: s.silentSince } : {}),
    instanceStatus: s.instanceStatus,
    host: s.host,
    ...(s.ports ? { ports: s.ports.map((p) => ({ name: p.name, protocol: p.protocol, port: p.port })) } : {}),
    ...(s.allocation ? { allocation: s.allocation } : {}),
    // Whole: a replay looks ids up in it, and the next allocation writes it back with one more entry.
    ...(s.previousAllocations ? { previousAllocations: s.previousAllocations } : {}),
  };
}

/** The Operation fields the gateway reads from its cache. */
export function slimOperation(op: Operation): Operation {
  const m = op.metadata;
  const newActiveVersion = op.spec.input?.newActiveVersion;
  const ttl = op.status?.lease?.ttl;
  return {
    apiVersion: op.apiVersion,
    kind: op.kind,
    metadata: { name: m.name, resourceVersion: m.resourceVersion, creationTimestamp: m.creationTimestamp },
    spec: {
      schedulerName: op.spec.schedulerName,
      definitionName: op.spec.definitionName,
      enqueuedAt: op.spec.enqueuedAt,
      ...(op.spec.priority !== undefined ? { priority: op.spec.priority } : {}),
      ...(op.spec.cancelRequested !== undefined ? { cancelRequested: op.spec.cancelRequested } : {}),
      ...(newActiveVersion !== undefined ? { input: { newActiveVersion } } : {}),
    },
    ...(op.status ? { status: { status: op.status.status, ...(ttl !== undefined ? { lease: { ttl } } : {}) } } : {}),
  };
}
