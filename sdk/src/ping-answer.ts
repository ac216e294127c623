/**
 * What a ping answer says, and which allocation events it implies. Pure: the room feeds each
 * answer to `AllocationTracker.observe` and emits what comes back.
 *
 * Answer (issue 13): `{"success":true}` or
 * `{"success":true,"allocation":{"id":"...","metadata":{...},"expiresAt":"<RFC 3339>"}}`; a ping
 * not recorded is `{"success":false,"message":"<why, and what to do>"}` (Maestro: no `message`), with
 * `"roomGone":true` when no ping of the room will be recorded again (Roomkeeper only).
 */

export interface Allocation {
  id: string;
  metadata: Record<string, unknown>;
  /**
   * When the allocation lapses unless the room takes it up (RFC 3339). Roomkeeper's gateway always
   * sends it; it is optional only so that an answer without it (an older gateway) is still read.
   */
  expiresAt?: string;
}

export interface PingAnswer {
  success: boolean;
  allocation?: Allocation;
  /** Why a ping was not recorded (`success: false`), as Roomkeeper's rooms API says it. */
  message?: string;
  /** With `success: false` only: the room is gone, and no ping of it will be recorded again. */
  roomGone?: true;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Parses an answer body; undefined when it is not a JSON object with a boolean `success`. */
export function parsePingAnswer(body: string): PingAnswer | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (!isRecord(json) || typeof json.success !== 'boolean') return undefined;
  const answer: PingAnswer = { success: json.success };
  if (typeof json.message === 'string' && json.message !== '') answer.message = json.message;
  if (!json.success && json.roomGone === true) answer.roomGone = true;
  const a = json.allocation;
  if (isRecord(a) && typeof a.id === 'string' && a.id !== '') {
    answer.allocation = {
      id: a.id,
      metadata: isRecord(a.metadata) ? a.metadata : {},
      ...(typeof a.expiresAt === 'string' ? { expiresAt: a.expiresAt } : {}),
    };
  }
  return answer;
}

export type AllocationEvent =
  | { type: 'allocated'; allocation: Allocation }
  | { type: 'allocationExpired'; allocation: Allocation };

/** Ids remembered to report each allocation once, however many answers repeat it. */
const REMEMBERED_IDS = 256;

/** What one ping reported: its status and, in a multi-match room, how many matches run. */
export interface ReportedLoad {
  status: string;
  runningMatches?: number;
}

/**
 * The matches a ping reports, as the rooms API counts them: `runningMatches`, and an `occupied`
 * ping without one (or with 0) as one match (Maestro's rule).
 */
export function reportedMatches(report: ReportedLoad): number {
  const n = report.runningMatches ?? 0;
  return report.status === 'occupied' && n === 0 ? 1 : n;
}

/**
 * Turns successive ping answers into allocation events: `allocated` once per allocation id;
 * `allocationExpired` when an allocation the room was told about is no longer in the answers
 * while the room never took it up (the TTL ran out and Roomkeeper took the room back).
 *
 * The room takes an allocation up as the rooms API decides it: by reporting more matches than it
 * had when allocated, or than the fewest it reported since (`occupied` from `ready`, or
 * `runningMatches` going up in a multi-match room, also after a match ended before the allocated one started).
 * The match count before the allocation is the one of the last acknowledged ping before the answer
 * that first carried it; so an allocation first heard of in the answer to the very ping that took
 * it up (a room whose players came before its next ping) counts as taken up too.
 */
export class AllocationTracker {
  private current: Allocation | undefined;
  private takenUp = false;
  /** Matches the room had reported when the current allocation was made. */
  private matchesAtAllocation = 0;
  /** Matches of the last acknowledged ping. */
  private acknowledgedMatches = 0;
  private readonly seen: string[] = [];

  /** The current allocation's id once the room took it up (its pings name it then), else undefined. */
  takenId(): string | undefined {
    return this.current && this.takenUp ? this.current.id : undefined;
  }

  /** The game server says it started the match of allocation `id`: true when that is the current one. */
  take(id: string): boolean {
    if (this.current?.id !== id) return false;
    this.takenUp = true;
    return true;
  }

  /** The room reported `occupied`: the current allocation was taken up, not abandoned. */
  noteOccupied(): void {
    if (this.current) this.takenUp = true;
  }

  /**
   * The room reports `matches` running matches: more than when allocated takes the allocation up;
   * fewer (a match ended before the allocated one started) lowers the count it is judged from, as
   * the rooms API does.
   */
  noteMatches(matches: number): void {
    if (!this.current || this.takenUp) return;
    if (matches > this.matchesAtAllocation) this.takenUp = true;
    else this.matchesAtAllocation = matches;
  }

  /** `reported`: what the ping this answer acknowledges said (absent: taken as no change). */
  observe(answer: PingAnswer, reported?: ReportedLoad): AllocationEvent[] {
    const matches = reported ? reportedMatches(reported) : this.acknowledgedMatches;
    this.noteMatches(matches);
    const events: AllocationEvent[] = [];
    const next = answer.allocation;
    if (this.current && next?.id !== this.current.id) {
      if (!this.takenUp) events.push({ type: 'allocationExpired', allocation: this.current });
      this.current = undefined;
    }
    if (next && !this.seen.includes(next.id)) {
      this.seen.push(next.id);
      if (this.seen.length > REMEMBERED_IDS) this.seen.shift();
      events.push({ type: 'allocated', allocation: next });
    }
    if (next && this.current?.id !== next.id) {
      this.current = next;
      this.matchesAtAllocation = Math.min(this.acknowledgedMatches, matches);
      this.takenUp = matches > this.acknowledgedMatches;
    }
    this.acknowledgedMatches = matches;
    return events;
  }
}
