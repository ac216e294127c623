/**
 * The input of each operation definition, declared once: its type, its parser and its bounds.
 * The management API parses request bodies with it before it enqueues (api-gateway
 * use-cases/scheduler-commands.ts), and the operator's executors parse the stored input with it
 * before they act (operator/src/operations/definitions/), so an input the edge accepts is one the
 * executor runs, and an Operation made with kubectl is held to the same rules.
 *
 * Room ids have one spelling in what Roomkeeper writes: `roomsIds` (Maestro's JSON name). On read,
 * `rooms_ids` (Maestro's proto field name, which its HTTP gateway accepts too) and `roomIds` (an
 * older spelling the executor read, which Operation objects made with kubectl may carry) are
 * read as `roomsIds`.
 */
import type { SchedulerSpec } from '../generated/resources';
import { isRecord } from '../json/is-record';
import { jsonTypeName } from '../json/json-type';
import { isDnsSubdomain } from '../kube/object-names';
import { OperationDefinition, type OperationDefinitionName } from '../resources/operation-names';
import { NOT_A_VERSION, parseVersion } from '../resources/scheduler-version';
import { joinIndex } from '../validation/field-path';
import { failed, ok, type FieldError, type Result } from '../validation/result';
import { validateSchedulerSpec } from '../validation/scheduler-validator';

/** Most rooms one add-rooms or remove-rooms request may ask for. */
export const MAX_ROOMS_PER_REQUEST = 10_000;
/** Most room ids one remove-rooms request may list. */
export const MAX_ROOM_IDS_PER_REQUEST = 1_000;
/** Most characters of a version name in a switch. */
const MAX_VERSION_LENGTH = 64;
/** Most characters of a room id (a Kubernetes object name). */
export const MAX_ROOM_ID_LENGTH = 253;
/** What an id that cannot be a room's is told: a GameRoom's name is a DNS-1123 subdomain. */
export const ROOM_ID_MESSAGE = `must be a room name: at most ${MAX_ROOM_ID_LENGTH} lower-case letters, digits, '-' or '.', starting and ending with a letter or digit`;

/** How much one operation may ask for. */
export interface InputBounds {
  /** Most rooms an `amount` may name. */
  maxAmount: number;
  /** Most room ids a `roomsIds` may list. */
  maxRoomIds: number;
}

/** What one management API request may ask for. */
export const REQUEST_BOUNDS: InputBounds = { maxAmount: MAX_ROOMS_PER_REQUEST, maxRoomIds: MAX_ROOM_IDS_PER_REQUEST };

/** Fields any operation may carry: another attempt of an operation that got stuck says why it runs. */
export interface AttemptInput {
  attempt?: number;
  previousAttempt?: string;
  /** Written as the first line of the attempt's history. */
  attemptNote?: string;
}

/**
 * create_scheduler and create_new_scheduler_version: the whole definition, with the scheduler's
 * name (as the spec says). Absent, the executor takes the Scheduler's spec.
 */
export interface SchedulerDefinitionInput extends AttemptInput {
  scheduler?: SchedulerSpec & { name: string };
  /** create_new_scheduler_version: the id of the change's first attempt (the version it made is kept). */
  firstAttempt?: string;
  /**
   * create_new_scheduler_version of a change through the HTTP API that moved roomsReplicas: the
   * count it replaced. The count is in force once written, whatever becomes of the version: a
   * refused change's history says so, and how to go back.
   */
  countBefore?: number;
}

export interface AddRoomsInput extends AttemptInput {
  amount: number;
  /** Why the rooms are added (the health check's account, for the history). */
  reason?: string;
}

export interface RemoveRoomsByAmountInput extends AttemptInput {
  amount: number;
  /** A RemoveRoomsReason (`api` when a user asked). */
  reason?: string;
  /**
   * A scale-down's account of the rooms it keeps above the desired count (rooms with players or a
   * matchmaker's claim are never removed by amount), as the health check saw the fleet; told in
   * the history after the count removed.
   */
  kept?: string;
}

export interface RemoveRoomsByIdsInput extends AttemptInput {
  roomsIds: string[];
  /** A RemoveRoomsReason (`api` when a user asked). */
  reason?: string;
  /** A rollout's removal: each room's resourceVersion when it was chosen (a room changed since is kept). */
  resourceVersions?: Record<string, string>;
  /**
   * A rollout's floor: a serving room (ready, allocated, active, occupied) is removed only while
   * more than this many rooms of the scheduler serve, as the operator's cache shows when the
   * operation runs. The decision may be older than the fleet (an outage in between).
   */
  keepServing?: number;
  /** `<room>: <why>` lines, told in each room's deletion Event. */
  details?: string[];
}

export type RemoveRoomsInput = RemoveRoomsByAmountInput | RemoveRoomsByIdsInput;

export interface SwitchActiveVersionInput extends AttemptInput {
  newActiveVersion: string;
}

export type DeleteSchedulerInput = AttemptInput;

/** The input type of each definition. */
export interface OperationInputs {
  [OperationDefinition.CreateScheduler]: SchedulerDefinitionInput;
  [OperationDefinition.CreateNewSchedulerVersion]: SchedulerDefinitionInput;
  [OperationDefinition.SwitchActiveVersion]: SwitchActiveVersionInput;
  [OperationDefinition.AddRooms]: AddRoomsInput;
  [OperationDefinition.RemoveRooms]: RemoveRoomsInput;
  [OperationDefinition.DeleteScheduler]: DeleteSchedulerInput;
}

type Parser<T> = (input: unknown, bounds: InputBounds) => Result<T>;

/** The parser of each definition's input: operation name -> input type, validator and bounds. */
export const OPERATION_INPUTS: { readonly [D in OperationDefinitionName]: Parser<OperationInputs[D]> } = {
  [OperationDefinition.CreateScheduler]: (input) => parseSchedulerDefinitionInput(input),
  [OperationDefinition.CreateNewSchedulerVersion]: (input) => parseSchedulerDefinitionInput(input),
  [OperationDefinition.SwitchActiveVersion]: (input) => parseSwitchActiveVersionInput(input),
  [OperationDefinition.AddRooms]: (input, bounds) => parseAddRoomsInput(input, bounds),
  [OperationDefinition.RemoveRooms]: (input, bounds) => parseRemoveRoomsInput(input, bounds),
  [OperationDefinition.DeleteScheduler]: (input) => (isRecord(input) ? ok(attemptFields(input)) : failed([notAnObject])),
};

/** Parses the input of a known definition. */
export function parseOperationInput<D extends OperationDefinitionName>(definition: D, input: unknown, bounds: InputBounds): Result<OperationInputs[D]> {
  const parse: Parser<OperationInputs[D]> = OPERATION_INPUTS[definition];
  return parse(input, bounds);
}

/** `input.amount must be ...; input.roomsIds ...`: a failed parse as one line (an executor's error). */
export function describeInputErrors(errors: readonly FieldError[]): string {
  return errors.map((e) => `input${e.field === '' ? '' : `.${e.field}`} ${e.message}`).join('; ');
}

export function parseAddRoomsInput(input: unknown, bounds: InputBounds): Result<AddRoomsInput> {
  const body: Record<string, unknown> = isRecord(input) ? input : {};
  const amount = amountOf(body.amount, bounds);
  if (amount === undefined) return failed([{ field: 'amount', message: 'is a required field' }]);
  if (typeof amount === 'string') return failed([{ field: 'amount', message: amount }]);
  return ok({ ...attemptFields(body), amount, ...(typeof body.reason === 'string' ? { reason: body.reason } : {}) });
}

export function parseRemoveRoomsInput(input: unknown, bounds: InputBounds): Result<RemoveRoomsInput> {
  if (!isRecord(input)) return failed([notAnObject]);
  const ids = input.roomsIds ?? input.rooms_ids ?? input.roomIds;
  const reason = typeof input.reason === 'string' ? { reason: input.reason } : {};
  if (input.amount !== undefined && ids !== undefined) return failed([{ field: 'amount', message: 'give either amount or roomsIds, not both' }]);
  if (ids !== undefined) {
    const problems = roomIdsProblems(ids, bounds);
    if (problems.length > 0) return failed(problems);
    const roomsIds = [...new Set(ids as string[])];
    const versions = input.resourceVersions;
    const given = input.details;
    const resourceVersions = isRecord(versions)
      ? { resourceVersions: Object.fromEntries(Object.entries(versions).filter((e): e is [string, string] => typeof e[1] === 'string')) }
      : {};
    const details = Array.isArray(given) ? { details: given.filter((d): d is string => typeof d === 'string') } : {};
    const floor = input.keepServing;
    const keepServing = typeof floor === 'number' && Number.isSafeInteger(floor) && floor >= 0 ? { keepServing: floor } : {};
    return ok({ ...attemptFields(input), roomsIds, ...reason, ...resourceVersions, ...keepServing, ...details });
  }
  const amount = amountOf(input.amount, bounds);
  if (amount === undefined) return failed([{ field: 'amount', message: 'is a required field (or give roomsIds)' }]);
  if (typeof amount === 'string') return failed([{ field: 'amount', message: amount }]);
  const kept = typeof input.kept === 'string' && input.kept !== '' ? { kept: input.kept } : {};
  return ok({ ...attemptFields(input), amount, ...reason, ...kept });
}

/**
 * `newActiveVersion`; read also as `version` (a name, or a SchedulerVersion-like `{spec: {version}}`),
 * spellings Operation objects made with kubectl may carry.
 */
export function parseSwitchActiveVersionInput(input: unknown): Result<SwitchActiveVersionInput> {
  const body: Record<string, unknown> = isRecord(input) ? input : {};
  const legacy = body.version;
  const legacySpec = isRecord(legacy) ? legacy.spec : undefined;
  const version = body.newActiveVersion !== undefined ? body.newActiveVersion : isRecord(legacySpec) ? legacySpec.version : legacy;
  if (version !== undefined && typeof version !== 'string') return failed([{ field: 'newActiveVersion', message: `must be a string such as "v1.2.0"; got ${jsonTypeName(version)}` }]);
  if (version === undefined || version.trim() === '') return failed([{ field: 'newActiveVersion', message: 'is a required field' }]);
  if (version.length > MAX_VERSION_LENGTH) return failed([{ field: 'newActiveVersion', message: `must be at most ${MAX_VERSION_LENGTH} characters` }]);
  // A well-formed version that does not exist is taken: the operation fails on it, as in Maestro.
  if (!parseVersion(version)) return failed([{ field: 'newActiveVersion', message: NOT_A_VERSION }]);
  return ok({ ...attemptFields(body), newActiveVersion: version });
}

/**
 * The definition a create or new-version operation carries, held to the Scheduler schema (the
 * validator compiled from crds/): the API server judged the Scheduler's spec, but never this copy,
 * which an Operation written with kubectl may carry in any shape (the executor failed on it with
 * "Cannot read properties of undefined (reading 'flatMap')"). Only the schema, as the API server
 * judges a Scheduler: a definition it accepts whose requests pass its limits fails where its room
 * is made, naming the Scheduler's field, for a kubectl edit of the Scheduler and an Operation alike.
 */
function parseSchedulerDefinitionInput(input: unknown): Result<SchedulerDefinitionInput> {
  if (!isRecord(input)) return failed([notAnObject]);
  const s = input.scheduler;
  if (s !== undefined && !isRecord(s)) return failed([{ field: 'scheduler', message: 'must be the scheduler\'s definition (an object)' }]);
  if (s !== undefined) {
    const { name: _name, ...spec } = s;
    const checked = validateSchedulerSpec(spec, { prefix: 'scheduler', acceptSnakeCase: false, schemaOnly: true });
    if (!checked.ok) return checked;
  }
  return ok({
    ...attemptFields(input),
    ...(s !== undefined ? { scheduler: s as unknown as NonNullable<SchedulerDefinitionInput['scheduler']> } : {}),
    ...(typeof input.firstAttempt === 'string' ? { firstAttempt: input.firstAttempt } : {}),
    ...(Number.isSafeInteger(input.countBefore) && (input.countBefore as number) >= 0 ? { countBefore: input.countBefore as number } : {}),
  });
}

/** The input of a create or new-version operation for a definition. */
export function schedulerDefinitionInput(name: string, spec: SchedulerSpec): SchedulerDefinitionInput {
  return { scheduler: { ...spec, name } };
}

/** The Scheduler spec of a definition input (without the name), if it carries one. */
export function specOfDefinitionInput(input: SchedulerDefinitionInput): SchedulerSpec | undefined {
  if (!input.scheduler) return undefined;
  const { name: _name, ...spec } = input.scheduler;
  return spec;
}

const notAnObject: FieldError = { field: '', message: 'must be a JSON object' };

function attemptFields(input: Record<string, unknown>): AttemptInput {
  return {
    ...(typeof input.attempt === 'number' ? { attempt: input.attempt } : {}),
    ...(typeof input.previousAttempt === 'string' ? { previousAttempt: input.previousAttempt } : {}),
    ...(typeof input.attemptNote === 'string' ? { attemptNote: input.attemptNote } : {}),
  };
}

/** The amount, a problem with it (a string), or undefined when absent. A string of digits is read as a number. */
function amountOf(amount: unknown, bounds: InputBounds): number | string | undefined {
  if (amount === undefined) return undefined;
  const n = typeof amount === 'string' && /^\d{1,9}$/.test(amount) ? Number(amount) : amount;
  if (typeof n !== 'number' || !Number.isInteger(n)) return 'must be an integer';
  if (n < 1 || n > bounds.maxAmount) return `must be between 1 and ${bounds.maxAmount}`;
  return n;
}

/** Each id that cannot be a room's is named (`roomsIds[2]`): removing it could only skip it. */
function roomIdsProblems(ids: unknown, bounds: InputBounds): FieldError[] {
  if (!Array.isArray(ids) || ids.length === 0) return [{ field: 'roomsIds', message: 'must be a non-empty list of room ids' }];
  if (ids.length > bounds.maxRoomIds) return [{ field: 'roomsIds', message: `must list at most ${bounds.maxRoomIds} room ids` }];
  return ids.flatMap((id: unknown, i) => {
    if (typeof id !== 'string') return [{ field: joinIndex('roomsIds', i), message: `must be a room name (a string); got ${jsonTypeName(id)}` }];
    return isDnsSubdomain(id) ? [] : [{ field: joinIndex('roomsIds', i), message: ROOM_ID_MESSAGE }];
  });
}
