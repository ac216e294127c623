/**
 * What a ping answer says, and which allocation events it implies. Pure: the room feeds each
 * answer to `AllocationTracker.observe` and emits what comes back.
 *
 * Answer (issue 13): `{"success":true}` or
 * `{"success":true,"allocation":{"id":"...","metadata":{...},"expiresAt":"<RFC 3339>"}}`.
 */

export interface Allocation {
  id: string;
  metadata: Record<string, unknown>;
  /** When the allocation lapses unless the room reports `occupied` (RFC 3339), if the API says. */
  expiresAt?: string;
}

export interface PingAnswer {
  success: boolean;
  allocation?: Allocation;
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

/**
 * Turns successive ping answers into allocation events: `allocated` once per allocation id;
 * `allocationExpired` when an allocation the room was told about is no longer in the answers
 * while the room never reported `occupied` (the TTL ran out and Roomkeeper took the room back).
 */
export class AllocationTracker {
  private current: Allocation | undefined;
  private occupiedSinceAllocation = false;
  private readonly seen: string[] = [];

  /** The room reported `occupied`: the current allocation was taken up, not abandoned. */
  noteOccupied(): void {
    if (this.current) this.occupiedSinceAllocation = true;
  }

  observe(answer: PingAnswer): AllocationEvent[] {
    const events: AllocationEvent[] = [];
    const next = answer.allocation;
    if (this.current && next?.id !== this.current.id) {
      if (!this.occupiedSinceAllocation) events.push({ type: 'allocationExpired', allocation: this.current });
      this.current = undefined;
    }
    if (next && !this.seen.includes(next.id)) {
      this.seen.push(next.id);
      if (this.seen.length > REMEMBERED_IDS) this.seen.shift();
      events.push({ type: 'allocated', allocation: next });
    }
    if (next && this.current?.id !== next.id) {
      this.current = next;
      this.occupiedSinceAllocation = false;
    }
    return events;
  }
}
