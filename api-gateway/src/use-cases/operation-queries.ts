/** The management API's reads of operations (list by stage, get one) and cancellation. */
import type { Operation, Scheduler } from '../../../common/src/generated/resources';
import { isFinalOperationStatus, operationStatusOf } from '../../../common/src/resources/operation-names';
import { AbortedError, InputError, NotFoundError, StoreInvalidError } from '../errors';
import { operationCreatedAt, operationItemView, operationView } from '../maestro-views';
import { compareQueueOrder, ofEarlierScheduler } from '../../../common/src/operations/queue-order';
import type { OperationStore, RoomStore, SchedulerStore } from '../store-ports';
import { refusedAs, roomkeeperRequest } from '../adapters/kube-refusal';
import { clipped } from '../../../common/src/text/clipped';

export type OperationStage = 'pending' | 'active' | 'final';

export interface ListOperationsQuery {
  stage?: string;
  page?: string;
  perPage?: string;
  orderBy?: string;
}

export interface OperationPage {
  page: number;
  pageSize: number;
  total: number;
  operations: Record<string, unknown>[];
}

const STAGE_STATUSES: Record<OperationStage, readonly string[]> = {
  pending: ['pending'],
  active: ['in_progress'],
  final: ['finished', 'error', 'canceled', 'evicted'],
};

const DEFAULT_PER_PAGE = 15;
const MAX_PER_PAGE = 100;

/**
 * The paging fields of a list, each with its rule in one sentence that begins with Maestro's own
 * words (maestro-behaviour.md: "page must be greater than 0", "page size must be between 0 and
 * 100"), which clients may match, and goes on to the value sent.
 */
const PAGING_RULES = {
  page: { min: 1, max: Number.MAX_SAFE_INTEGER, rule: `page must be greater than 0 (up to ${Number.MAX_SAFE_INTEGER})`, after: '' },
  perPage: { min: 1, max: MAX_PER_PAGE, rule: `page size must be between 0 and ${MAX_PER_PAGE}, 0 excluded`, after: ` (without perPage a page holds ${DEFAULT_PER_PAGE})` },
} as const;

/** A paging field's value, or an InputError naming the field, the value sent and the range. */
function parsePaging(raw: string | undefined, field: keyof typeof PAGING_RULES): number | undefined {
  if (raw === undefined) return undefined;
  const { min, max, rule, after } = PAGING_RULES[field];
  const text = raw.trim();
  const value = /^-?\d+$/.test(text) ? Number(text) : undefined;
  if (value !== undefined && value >= min && value <= max) return value;
  const shown = value === undefined ? `${JSON.stringify(raw.slice(0, 32))}, not an integer` : text.slice(0, 32);
  throw new InputError(`${rule}, but ${field} was ${shown}${after}`);
}

export class OperationQueries {
  constructor(private readonly deps: { operations: OperationStore; schedulers: SchedulerStore; rooms: Pick<RoomStore, 'findScheduler'> }) {}

  /** GET /schedulers/{name}/operations */
  async list(schedulerName: string, query: ListOperationsQuery): Promise<OperationPage> {
    const stage = query.stage;
    if (stage !== 'pending' && stage !== 'active' && stage !== 'final') {
      // Maestro's words first (clients may match them), then what is accepted.
      throw new InputError(`invalid stage filter: ${stage ? clipped(stage) : '(none given)'}; stage must be pending, active or final`);
    }
    const descending = parseOrderBy(query.orderBy);
    if (stage !== 'final' && (query.page !== undefined || query.perPage !== undefined)) {
      const sent = (['page', 'perPage'] as const).filter((f) => query[f] !== undefined);
      throw new InputError(`there is no pagination filter implemented for ${stage} stage, so leave ${sent.join(' and ')} out: only stage=final is paged`);
    }
    const page = parsePaging(query.page, 'page');
    const perPage = parsePaging(query.perPage, 'perPage');

    const all = this.ofThisScheduler(schedulerName, await this.deps.operations.listOperations(schedulerName));
    const inStage = all.filter((op) => STAGE_STATUSES[stage].includes(operationStatusOf(op)));
    if (stage === 'pending') {
      inStage.sort(compareQueueOrder); // the order the operator runs them in
      return { page: 1, pageSize: inStage.length, total: inStage.length, operations: inStage.map(operationItemView) };
    }
    inStage.sort((a, b) => {
      const byTime = operationCreatedAt(a).localeCompare(operationCreatedAt(b)) || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
      return descending ? -byTime : byTime;
    });
    if (stage === 'active') {
      return { page: 1, pageSize: inStage.length, total: inStage.length, operations: inStage.map(operationItemView) };
    }
    const p = page ?? 1;
    const size = perPage ?? DEFAULT_PER_PAGE;
    const slice = inStage.slice((p - 1) * size, p * size);
    return { page: p, pageSize: size, total: inStage.length, operations: slice.map(operationItemView) };
  }

  /** GET /schedulers/{name}/operations/{id} */
  async get(schedulerName: string, id: string): Promise<{ operation: Record<string, unknown> }> {
    return { operation: operationView(await this.mustFind(schedulerName, id)) };
  }

  /**
   * POST /schedulers/{name}/operations/{id}/cancel. Maestro answers 500 for a missing scheduler or
   * operation; Roomkeeper answers 404, which says what happened.
   */
  async cancel(schedulerName: string, id: string): Promise<Record<string, never>> {
    const scheduler = await this.deps.schedulers.getScheduler(schedulerName);
    if (!scheduler) throw new NotFoundError(`scheduler ${schedulerName} not found`);
    const op = await this.mustFind(schedulerName, id, scheduler);
    this.refuseIfEnded(op);
    if (op.spec.cancelRequested !== true) {
      try {
        await this.deps.operations.requestCancel(id).catch(refusedAs(roomkeeperRequest('patch', 'Operation')));
      } catch (err) {
        // The operation ended since it was read: the API server refuses a cancel of an ended one.
        if (err instanceof StoreInvalidError) this.refuseIfEnded(await this.mustFind(schedulerName, id, scheduler));
        throw err;
      }
    }
    return {};
  }

  private refuseIfEnded(op: Operation): void {
    const status = op.status?.status;
    if (isFinalOperationStatus(status)) {
      throw new AbortedError(`cannot cancel operation since status "${String(status)}" is a final status`);
    }
  }

  private async mustFind(schedulerName: string, id: string, scheduler?: Scheduler): Promise<Operation> {
    const op = await this.deps.operations.getOperation(id);
    const [found] = op?.spec.schedulerName === schedulerName ? this.ofThisScheduler(schedulerName, [op], scheduler) : [];
    if (!found) throw new NotFoundError(`operation ${id} not found in scheduler ${schedulerName}`);
    return found;
  }

  /**
   * Without the operations of an earlier scheduler of this name (deleted, then created again),
   * which the operator prunes once the new one's queue is idle. With no scheduler of this name,
   * its deletion's history stays readable.
   */
  private ofThisScheduler(schedulerName: string, ops: Operation[], known?: Scheduler): Operation[] {
    // The cache's: a scheduler's creationTimestamp never changes, and a list served from the
    // caches does not wait on the API server.
    const scheduler = known ?? this.deps.rooms.findScheduler(schedulerName);
    return scheduler ? ops.filter((op) => !ofEarlierScheduler(op, scheduler)) : ops;
  }
}

/** `createdAt`, `createdAt asc` or `createdAt desc` (default desc); true for descending. */
function parseOrderBy(raw: string | undefined): boolean {
  if (raw === undefined || raw.trim() === '') return true;
  const m = /^\s*createdAt(?:\s+(asc|desc))?\s*$/i.exec(raw);
  if (!m) throw new InputError(`invalid order by: ${clipped(raw)} (use "createdAt asc" or "createdAt desc")`);
  return (m[1] ?? 'desc').toLowerCase() === 'desc';
}
