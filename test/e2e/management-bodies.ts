/**
 * The management API's JSON answers as the end-to-end and chaos suites read them: Maestro's messages
 * (maestro-behaviour.md section 1.2) as api-gateway/src/maestro-views.ts shapes them, with only the
 * fields the suites read spelled out. Types only: a suite casts the body it parsed to the answer it
 * expects and then asserts on the values; an answer that may be an error is cast to a Partial.
 */

/** The answer of a request that enqueues an operation (create, add/remove rooms, a new version, a switch). */
export interface OperationEnqueued {
  operationId: string;
}

/** A container of a scheduler's spec, as shown and as sent back in a new version. */
export interface ContainerMessage {
  name: string;
  image: string;
  [field: string]: unknown;
}

/** Maestro's `Scheduler` message; what a suite does not read travels as it came. */
export interface SchedulerMessage {
  name: string;
  state: string;
  createdAt: string;
  roomsReplicas: number;
  spec: { version?: string; containers: ContainerMessage[]; [field: string]: unknown };
  [field: string]: unknown;
}

/** GET /schedulers/{name}. */
export interface SchedulerAnswer {
  scheduler: SchedulerMessage;
}

/** GET /schedulers/info: one summary per scheduler of the game. */
export interface SchedulersInfoAnswer {
  schedulers: { name: string; roomsReady: number; [field: string]: unknown }[];
}

/** GET /schedulers/{name}/versions. */
export interface VersionsAnswer {
  versions: { version: string; isActive: boolean }[];
}

/** Maestro's `ListOperationItem`, as GET /schedulers/{name}/operations?stage=... lists it; `lease` only while in progress. */
export interface OperationItem {
  id: string;
  definitionName: string;
  status: string;
  lease?: { ttl: string };
  [field: string]: unknown;
}

/** Maestro's `Operation`: the list item plus its input and execution history. */
export interface OperationMessage extends OperationItem {
  input: Record<string, unknown>;
  executionHistory: { event: string }[];
}

/** GET /schedulers/{name}/operations?stage=... */
export interface OperationsAnswer {
  operations: OperationItem[];
}

/** GET /schedulers/{name}/operations/{id}. */
export interface OperationAnswer {
  operation: OperationMessage;
}
