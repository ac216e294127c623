/**
 * Deletes the AllocationClaims this gateway replica keeps for a while after their try wrote a room
 * (RoomAllocations.allocateWithId), in batches instead of one request each: every claim carries the
 * replica and the second it was created in as labels, and once every claim of that replica, second
 * and namespace is released and its time to keep is over, one deletecollection removes them all.
 * A claim kept here is not deleted sooner, also when the gateway stops (`stop` waits for it).
 */
import type { Logger } from '../../../common/src/logger';

export const CLAIM_REPLICA_LABEL = 'roomkeeper.io/claim-replica';
export const CLAIM_SECOND_LABEL = 'roomkeeper.io/claim-second';

/** Most seconds named in one deletecollection's label selector. */
const SECONDS_PER_SWEEP = 50;

interface Second {
  namespace: string;
  second: string;
  /** Claims of that second not released yet. */
  open: number;
  /** Kept claims among the released ones: the second is swept only if there are any. */
  kept: number;
  /** When the last kept claim's time is over (ms since the epoch). */
  due: number;
}

export interface ClaimSweeperOptions {
  /** The replica's label value (see `replicaLabelValue`). */
  replica: string;
  /** One deletecollection of the namespace's AllocationClaims matching the label selector. */
  deleteCollection: (namespace: string, labelSelector: string) => Promise<void>;
  logger: Logger;
  intervalMs?: number;
  now?: () => number;
}

export class ClaimSweeper {
  private readonly seconds = new Map<string, Second>();
  /** Open claims by uid: the key of their second. */
  private readonly open = new Map<string, string>();
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  private timedSweeps = 0;

  constructor(private readonly opts: ClaimSweeperOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** How many timed sweeps have ended (a sweep with nothing due deletes nothing). */
  get sweeps(): number {
    return this.timedSweeps;
  }

  /** The labels of a claim about to be created now. */
  labels(): Record<string, string> {
    return { [CLAIM_REPLICA_LABEL]: this.opts.replica, [CLAIM_SECOND_LABEL]: String(Math.floor(this.now() / 1000)) };
  }

  /** A claim was created with `labels` (its second) in `namespace`. */
  opened(namespace: string, uid: string, second: string): void {
    const key = `${namespace}\u0000${second}`;
    let entry = this.seconds.get(key);
    if (!entry) this.seconds.set(key, (entry = { namespace, second, open: 0, kept: 0, due: 0 }));
    entry.open++;
    this.open.set(uid, key);
    this.schedule();
  }

  /**
   * The try of a claim this replica created is over. With `keepMs`, the sweeper deletes it that much
   * later (true); without, or for a claim it does not know, the caller deletes it now (false).
   */
  released(uid: string, keepMs: number): boolean {
    const key = this.open.get(uid);
    const entry = key === undefined ? undefined : this.seconds.get(key);
    if (!entry || key === undefined) return false;
    this.open.delete(uid);
    entry.open--;
    if (keepMs > 0) {
      entry.kept++;
      entry.due = Math.max(entry.due, this.now() + keepMs);
      return true;
    }
    if (entry.open === 0 && entry.kept === 0) this.seconds.delete(key);
    return false;
  }

  /** Deletes every kept claim once its time is over (in-flight tries are done by then). */
  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.sweeping;
    const last = Math.max(0, ...[...this.seconds.values()].map((s) => s.due));
    const wait = last - this.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    await this.sweep(true);
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.sweeping = this.sweep(false).finally(() => {
        this.sweeping = undefined;
        this.timedSweeps++;
        if (this.seconds.size > 0) this.schedule();
      });
    }, this.opts.intervalMs ?? 1000);
    this.timer.unref();
  }

  private async sweep(all: boolean): Promise<void> {
    const now = this.now();
    const byNamespace = new Map<string, Second[]>();
    for (const entry of this.seconds.values()) {
      if (entry.kept === 0 || (!all && (entry.open > 0 || entry.due > now))) continue;
      const list = byNamespace.get(entry.namespace) ?? [];
      list.push(entry);
      byNamespace.set(entry.namespace, list);
    }
    for (const [namespace, entries] of byNamespace) {
      for (let i = 0; i < entries.length; i += SECONDS_PER_SWEEP) {
        const batch = entries.slice(i, i + SECONDS_PER_SWEEP);
        const selector = `${CLAIM_REPLICA_LABEL}=${this.opts.replica},${CLAIM_SECOND_LABEL} in (${batch.map((e) => e.second).join(',')})`;
        try {
          await this.opts.deleteCollection(namespace, selector);
          for (const e of batch) {
            if (e.open === 0) this.seconds.delete(`${e.namespace}\u0000${e.second}`);
            else e.kept = 0;
          }
        } catch (err) {
          // Kept for the next sweep; a namespace deleted meanwhile took its claims with it.
          this.opts.logger.warn('could not delete kept AllocationClaims; trying again at the next sweep', { namespace, seconds: batch.length, error: String(err) });
          if (all) for (const e of batch) this.seconds.delete(`${e.namespace}\u0000${e.second}`);
        }
      }
    }
  }
}
