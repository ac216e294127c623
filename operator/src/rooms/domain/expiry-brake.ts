/**
 * The brake on mass expiry (like the node lifecycle controller of kube-controller-manager, which
 * stops evicting when a whole zone looks unhealthy at once): when most rooms look dead together,
 * or the operator has only just come to see the cluster (leadership gained, a cache re-listed or
 * reconnected after an error), the likelier fault is its own sight. Then it expires nothing on
 * the init or ping timeouts and decides again on fresh data. Rooms stuck terminating are not held:
 * their expiry does not depend on pings.
 *
 * "Together" is judged on the rooms silent for more than half their timeout, not only on those
 * expiring at this check: when pings stop reaching the operator for the whole fleet, the rooms
 * cross their timeout spread over a ping interval and a digest flush, a few checks' worth, so no
 * single check sees most of them expire, while every one of them has long been silent.
 *
 * A wide silence is only held while nothing shows that pings do reach the operator (as the node
 * lifecycle controller stops evicting only in a full disruption). A gateway digest flushed within
 * the last half ping timeout, for any scheduler, carries pings heard since its last flush; when
 * such flushes have been seen without a gap for a whole ping timeout (`PingFlow`), and the rooms of
 * the other schedulers are mostly heard (no wider silence than this one's share there: a gateway
 * too busy to hear pings would silence them too), every live room has had the time to be heard, so
 * the rooms still silent are silent themselves (game servers that hang): held, they would never be
 * replaced, and matchmakers would be given them. Right after gateways come back from an outage
 * that flow is not yet a ping timeout old, and a cluster with no other rooms proves nothing: the
 * brake holds.
 */
import { counted } from '../../../../common/src/text/counted';

export interface ExpiryBrakeInput {
  /** Rooms that would expire now on the init or ping timeout. */
  expiring: number;
  /**
   * Rooms that would expire on the init or ping timeout were those timeouts half as long: the
   * rooms silent for more than half their timeout, `expiring` included.
   */
  silent: number;
  /** The scheduler's rooms (validation rooms excluded). */
  fleet: number;
  now: number;
  /** Since when the operator's sight is fresh: leadership gained, caches listed or reconnected. */
  sightSince: number;
  /** Whether a cache that expiry reads is failing right now. */
  sightImpaired: boolean;
  /** How long fresh sight must last before rooms may expire. */
  graceMs: number;
  /** A share of the fleet (0..1) and a count that `silent` must both exceed to call it mass expiry. */
  share: number;
  min: number;
  /** Since when pings have been seen reaching the operator without a gap (`PingFlow`); undefined: they are not now. */
  pingsFlowingSince?: number;
  /** How long that flow must have lasted to prove the silent rooms silent: the ping timeout. */
  pingTimeoutMs?: number;
  /**
   * The share (0..1) of the other schedulers' rooms that have pinged and were heard within half
   * their timeout; undefined when they have none. Asked only for a wide silence while pings flow.
   */
  othersHeardShare?: () => number | undefined;
}

/**
 * Whether pings reach the operator, level-based on what the gateways' digests show at each look:
 * a digest of any scheduler flushed within the last half ping timeout. `since` is the first look
 * of the current unbroken run of such looks (undefined when the last look found none).
 */
export class PingFlow {
  private since: number | undefined;

  /** `lastFlush`: when a gateway last flushed a digest (undefined: none in the cache). */
  look(now: number, lastFlush: number | undefined, pingTimeoutMs: number): number | undefined {
    const flowing = lastFlush !== undefined && now - lastFlush <= pingTimeoutMs / 2;
    this.since = flowing ? this.since ?? now : undefined;
    return this.since;
  }
}

export type ExpiryBrake =
  | { hold: false }
  | { hold: true; reason: 'sight-impaired' | 'fresh-sight' | 'mass-expiry'; message: string; retryAfterMs: number };

export function expiryBrake(input: ExpiryBrakeInput): ExpiryBrake {
  if (input.expiring === 0) return { hold: false };
  if (input.sightImpaired) {
    return { hold: true, reason: 'sight-impaired', retryAfterMs: 1000, message: `${counted(input.expiring, 'room')} ${input.expiring === 1 ? 'looks' : 'look'} expired, but the operator's room caches cannot reach the API server; no room is expired until they can` };
  }
  const freshFor = input.now - input.sightSince;
  if (freshFor < input.graceMs) {
    const left = input.graceMs - freshFor;
    return { hold: true, reason: 'fresh-sight', retryAfterMs: left, message: `${counted(input.expiring, 'room')} ${input.expiring === 1 ? 'looks' : 'look'} expired, but the operator has seen the cluster for only ${Math.round(freshFor / 1000)} s (leadership gained or caches reconnected); expiry waits ${Math.ceil(left / 1000)} s more for fresh pings` };
  }
  // `expiring` may count validation rooms, which `silent` and `fleet` leave out.
  const silent = Math.max(input.silent, input.expiring);
  if (silent > input.min && silent > input.share * input.fleet) {
    if (input.pingsFlowingSince !== undefined && input.pingTimeoutMs !== undefined && input.now - input.pingsFlowingSince >= input.pingTimeoutMs) {
      const heard = input.othersHeardShare?.();
      if (heard !== undefined && 1 - heard <= input.share) return { hold: false };
    }
    return {
      hold: true, reason: 'mass-expiry', retryAfterMs: input.graceMs,
      message: `${counted(input.expiring, 'room')} would expire now, and ${silent} of ${input.fleet} have been silent for more than half their timeout (more than ${Math.round(input.share * 100)} % and more than ${input.min}); a silence this wide, unless pings have been seen reaching the operator for a whole ping timeout (a gateway digest of any scheduler flushed every half ping timeout) while the other schedulers' rooms are mostly heard, more likely means pings are not reaching the operator (gateway or caches) than that the rooms died, so none is expired now`,
    };
  }
  return { hold: false };
}
