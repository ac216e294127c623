/** The management API's reads of schedulers: list, info, one definition, versions. */
import type { GameRoom, Scheduler, SchedulerVersion } from '../../../common/src/generated/resources';
import { countedStatus, openAllocation } from '../../../common/src/rooms/allocation';
import { isMarkedSilent, isServing, roomMatchCount, roomsMaxMatches } from '../../../common/src/rooms/room-status';
import { activeDefinition } from '../../../common/src/resources/scheduler-version';
import { NotFoundError } from '../errors';
import { activeVersionOf, schedulerCreatedAt, schedulerStateOf, schedulerSummaryView, schedulerView, toIsoString } from '../maestro-views';
import { cachedVersions, type RoomStore, type SchedulerStore } from '../store-ports';

export interface SchedulerQueriesDeps {
  schedulers: SchedulerStore;
  rooms: Pick<RoomStore, 'listRooms' | 'findVersion'>;
}

export interface SchedulerFilter {
  name?: string;
  game?: string;
  version?: string;
}

/** Semver-ish order of "vX.Y.Z" strings (unparsable ones sort first). */
function compareVersions(a: string, b: string): number {
  const parse = (v: string) => (/^v?(\d+)\.(\d+)\.(\d+)$/.exec(v) ?? []).slice(1).map(Number);
  const pa = parse(a);
  const pb = parse(b);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? -1) - (pb[i] ?? -1);
    if (d !== 0) return d;
  }
  return a.localeCompare(b);
}

/** Whether a value passes a list filter: an absent or empty filter lets every value through. */
function matches(filter: string | undefined, value: string | undefined): boolean {
  return filter === undefined || filter === '' || value === filter;
}

export class SchedulerQueries {
  constructor(private readonly deps: SchedulerQueriesDeps) {}

  /** GET /schedulers. An empty filter (`?game=`) filters nothing, as Maestro's (proto3 strings: empty is unset). */
  async list(filter: SchedulerFilter): Promise<{ schedulers: Record<string, unknown>[] }> {
    const all = await this.deps.schedulers.listSchedulers();
    const matching = all
      .filter((s) => matches(filter.name, s.metadata.name)
        && matches(filter.game, s.spec.game)
        && matches(filter.version, activeVersionOf(s)))
      .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
    return { schedulers: matching.map((s) => schedulerSummaryView(s, cachedVersions(this.deps.rooms))) };
  }

  /** GET /schedulers/info?game= (every scheduler without a game, or with an empty one, as Maestro). */
  async info(game: string | undefined): Promise<{ schedulers: Record<string, unknown>[] }> {
    const all = await this.deps.schedulers.listSchedulers();
    const matching = all
      .filter((s) => matches(game, s.spec.game))
      .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
    return { schedulers: matching.map((s) => this.infoOf(s)) };
  }

  /** GET /schedulers/{name}[?version=]: the active definition, or the version asked for. */
  async get(name: string, version: string | undefined): Promise<{ scheduler: Record<string, unknown> }> {
    const s = await this.deps.schedulers.getScheduler(name);
    if (!s) throw new NotFoundError(`scheduler ${name} not found`);
    const wanted = version ?? s.status?.version;
    if (wanted === undefined || (s.status?.version === undefined && wanted === activeVersionOf(s))) {
      // Still being created: the definition is the spec, shown as v1.0.0, asked for by that version or not.
      return { scheduler: schedulerView(s.spec, { name, state: schedulerStateOf(s), version: activeVersionOf(s), createdAt: schedulerCreatedAt(s) }) };
    }
    const snapshot = await this.deps.schedulers.getVersion(name, wanted);
    if (!snapshot) {
      if (version !== undefined) {
        throw new NotFoundError(`scheduler ${name} version ${version} not found: GET /schedulers/${name}/versions lists the versions it has `
          + '(each switch deletes the oldest beyond ROOMKEEPER_VERSION_HISTORY_LIMIT, but for the active one, one rooms still run and the greatest of each major)');
      }
      return { scheduler: schedulerView(s.spec, { name, state: schedulerStateOf(s), version: wanted, createdAt: schedulerCreatedAt(s) }) };
    }
    // Without ?version=, the scheduler as it runs: the active definition with the count in force,
    // the spec's (kept by the health check also when the change that set it was refused, as
    // `kubectl scale` of a spec holding a failed major), as GET /schedulers and /schedulers/info say.
    const definition = version === undefined ? { ...snapshot.spec.definition, roomsReplicas: s.spec.roomsReplicas } : snapshot.spec.definition;
    return { scheduler: schedulerView(definition, { name, state: schedulerStateOf(s), version: wanted, createdAt: schedulerCreatedAt(s) }) };
  }

  /** GET /schedulers/{name}/versions, newest first. */
  async versions(name: string): Promise<{ versions: { version: string; isActive: boolean; createdAt: string }[] }> {
    const s = await this.deps.schedulers.getScheduler(name);
    if (!s) throw new NotFoundError(`scheduler ${name} not found`);
    // v1.0.0 while the scheduler is being created, as GET shows it: Maestro's create writes v1.0.0 at once.
    const active = activeVersionOf(s);
    const list: SchedulerVersion[] = await this.deps.schedulers.listVersions(name);
    const sorted = [...list].sort((a, b) => {
      const byTime = toIsoString(b.metadata.creationTimestamp).localeCompare(toIsoString(a.metadata.creationTimestamp));
      return byTime !== 0 ? byTime : compareVersions(b.spec.version, a.spec.version);
    });
    const versions = sorted.map((v) => ({ version: v.spec.version, isActive: v.spec.version === active, createdAt: toIsoString(v.metadata.creationTimestamp) }));
    // Before the operator has written it; a scheduler whose creation failed has none (no version serves).
    if (versions.length === 0 && s.status?.version === undefined && schedulerStateOf(s) === 'creating') {
      versions.push({ version: active, isActive: true, createdAt: schedulerCreatedAt(s) });
    }
    return { versions };
  }

  private infoOf(s: Scheduler): Record<string, unknown> {
    const name = s.metadata.name ?? '';
    const maxMatches = roomsMaxMatches(s, cachedVersions(this.deps.rooms));
    const counts = countRooms(this.deps.rooms.listRooms(name), maxMatches);
    // The autoscaling in force (the active version's, not a refused change's) and the count in force (the spec's).
    const a = activeDefinition(s, cachedVersions(this.deps.rooms)).autoscaling;
    return {
      name,
      game: s.spec.game,
      state: schedulerStateOf(s),
      roomsReplicas: s.spec.roomsReplicas ?? 0,
      roomsReady: counts.ready,
      roomsOccupied: counts.occupied,
      roomsPending: counts.pending,
      roomsTerminating: counts.terminating,
      // Match capacity (multi-match rooms; a single-match room is one slot): not in Maestro's SchedulerInfo.
      roomsActive: counts.active,
      // Rooms marked silent (counted in their status too): not allocated until they ping again. Not in Maestro's SchedulerInfo.
      roomsSilent: counts.silent,
      matchAllocation: { maxMatches },
      runningMatches: counts.matches,
      matchSlots: counts.matchSlots,
      ...(a ? { autoscaling: { enabled: a.enabled ?? false, min: a.min, max: a.max, cooldown: a.cooldown ?? 0 } } : {}),
    };
  }
}

export interface InfoCounts { ready: number; occupied: number; active: number; pending: number; terminating: number; matches: number; matchSlots: number; silent: number }

/**
 * Rooms by the statuses SchedulerInfo reports (validation rooms are not counted; unready counts as
 * pending; allocated counts as occupied: taken by a matchmaker, its match not reported yet, as
 * autoscaling counts it, and so does an active room holding an open allocation, which the allocate
 * API offers no slot until its match is reported (`countedStatus`); a room being deleted as
 * terminating), and the match capacity: running matches (open allocations counted as running) and
 * the slots of the serving rooms.
 */
export function countRooms(rooms: readonly GameRoom[], maxMatches = 1): InfoCounts {
  const out = { ready: 0, occupied: 0, active: 0, pending: 0, terminating: 0, matches: 0, matchSlots: 0, silent: 0 };
  for (const r of rooms) {
    if (r.spec.validation === true) continue;
    const status = r.metadata.deletionTimestamp ? 'terminating' : countedStatus(r.status);
    if (status !== 'terminating' && isMarkedSilent(r)) out.silent++;
    out.matches += roomMatchCount({ status, runningMatches: r.status?.runningMatches, allocationOpen: openAllocation(r.status) !== undefined }, maxMatches);
    if (isServing(status)) out.matchSlots += maxMatches;
    switch (status ?? 'pending') {
      case 'ready': out.ready++; break;
      case 'allocated':
      case 'occupied': out.occupied++; break;
      case 'active': out.active++; break;
      case 'pending':
      case 'unready': out.pending++; break;
      case 'terminating': out.terminating++; break;
      default: break;
    }
  }
  return out;
}
