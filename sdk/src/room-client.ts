/**
 * A game room's connection to Roomkeeper's rooms API: the ping loop, status changes that resolve
 * when acknowledged, allocation events from ping answers, room and player events, and an opt-in
 * graceful shutdown on SIGTERM.
 *
 * Decisions (legal transitions, jitter, backoff, allocation events) are pure functions in
 * lifecycle.ts, timing.ts and ping-answer.ts; this class only sends requests and arms timers.
 * Every timer of the loop is unref'd: the SDK never keeps a process alive on its own. Only while a
 * status change is unacknowledged (its promise pending) does one ref'd handle keep the process
 * alive, so that `await room.ready()` outlasts a rooms API that is down; it goes with the last
 * acknowledgement.
 */
import { EventEmitter } from 'node:events';
import { readRoomConfig, roomUrl, type RoomConfig } from './config.js';
import { ClosedError, IllegalTransitionError, RoomGoneError, RoomsApiError, SupersededError } from './errors.js';
import { acceptsRunningMatches, isLegalTransition, MAX_RUNNING_MATCHES, RUNNING_MATCHES_REPORT, transitionAdvice, type ReportedStatus, type RoomStatus } from './lifecycle.js';
import { AllocationTracker, parsePingAnswer, reportedMatches, type Allocation, type PingAnswer } from './ping-answer.js';
import { backoffDelay, DEFAULT_BACKOFF, DEFAULT_SHUTDOWN_BUDGET_MS, drainShare, jitteredInterval, retryAfterMs, type BackoffPolicy } from './timing.js';
import { failureText, NoAnswerError, Transport, type FetchLike, type HttpAnswer } from './transport.js';

export interface RoomClientOptions {
  /** Default: `readRoomConfig(process.env)`. */
  config?: RoomConfig;
  /** Default: the config's `pingIntervalMs`. */
  pingIntervalMs?: number;
  /** Deadline of one ping; also what a shutdown keeps of its budget for the `terminated` ping (`drainShare`). Default 5000 ms. */
  requestTimeoutMs?: number;
  /**
   * Deadline of one room or player event. The rooms API answers an event once the scheduler's
   * forwarders took it or their `options.timeout` passed, so keep it above those. Default
   * `requestTimeoutMs`.
   */
  eventTimeoutMs?: number;
  /** Retry delays after failed pings (see `backoffDelay`). Default base 500 ms, cap 10 s (`DEFAULT_BACKOFF`). */
  backoff?: BackoffPolicy;
  /** `unhealthy` is emitted after this many consecutive failed pings. Default 3. */
  unhealthyAfter?: number;
  /** Default: the global `fetch`. */
  fetch?: FetchLike;
  /** Default: `Math.random`. */
  random?: () => number;
  /** Default: `Date.now`. */
  now?: () => number;
}

export interface PingFailure {
  /** What went wrong, e.g. `HTTP 401: ...`, `connect ECONNREFUSED ...`. */
  reason: string;
  consecutiveFailures: number;
  /** When the SDK tries again. */
  retryInMs: number;
}

export interface ShutdownResult {
  signal: string;
  /** `completed`: the drain hook finished; `timedOut`: the budget ran out first; `failed`: it threw. */
  drain: 'completed' | 'timedOut' | 'failed' | 'none';
  /** Whether the rooms API acknowledged the `terminated` ping. */
  terminatedAcknowledged: boolean;
  /** Present when the rooms API said the room is gone (see the `gone` event): nothing was left to acknowledge. */
  roomGone?: true;
}

/** What a room or player event's answer says. */
export interface EventAnswer {
  success: boolean;
  message?: string;
  /** The room is gone (the `gone` event was emitted); with `success: false` only. */
  roomGone?: true;
}

export interface RoomClientEvents {
  allocated: [allocation: Allocation];
  allocationExpired: [allocation: Allocation];
  pingFailed: [failure: PingFailure];
  unhealthy: [failure: PingFailure];
  healthy: [];
  shutdown: [result: ShutdownResult];
  /**
   * The rooms API said the room is gone (`"roomGone": true`): no ping of it will be recorded again.
   * `message` is the rooms API's. The loop has stopped; finish or hand over the room's matches and
   * exit. Emitted once.
   */
  gone: [message: string];
}

/** Where signals come from (the process by default; tests pass an EventEmitter). */
export interface SignalSource {
  on(signal: string, listener: () => void): unknown;
  off(signal: string, listener: () => void): unknown;
}

export interface SignalHandlerOptions {
  /**
   * Called after the `terminating` ping is sent; the signal aborts when the drain's share of the
   * budget runs out (`drainShare`: the budget less one request deadline, at most a fifth of it).
   */
  drain?: (signal: AbortSignal) => Promise<void> | void;
  /**
   * Bounds the whole shutdown, from the signal to the `shutdown` event: the drain hook and the
   * `terminating` and `terminated` acknowledgements. Default 25 s (under Kubernetes' default 30 s
   * grace period).
   */
  drainBudgetMs?: number;
  signals?: readonly string[];
  source?: SignalSource;
}

interface Waiter {
  version: number;
  status: ReportedStatus;
  resolve: () => void;
  reject: (err: Error) => void;
}

interface Snapshot {
  version: number;
  status: ReportedStatus;
  runningMatches: number | undefined;
  /** The allocation the room took up, named in the ping (`allocationId`). */
  takes: string | undefined;
}

export class RoomClient extends EventEmitter<RoomClientEvents> {
  readonly config: RoomConfig;
  private readonly transport: Transport;
  private readonly intervalMs: number;
  private readonly requestTimeoutMs: number;
  private readonly eventTimeoutMs: number;
  private readonly backoff: BackoffPolicy;
  private readonly unhealthyAfter: number;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly allocations = new AllocationTracker();

  private statusValue: RoomStatus = 'starting';
  private runningMatches: number | undefined;
  private version = 0;
  private waiters: Waiter[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Ref'd while a status change is unacknowledged: keeps the process alive for its acknowledgement. */
  private keepAlive: ReturnType<typeof setInterval> | undefined;
  private inFlight = false;
  /** Aborts the ping in flight, for a status change to be sent at once instead. */
  private abandonPing: AbortController | undefined;
  /** The version the ping in flight reports, and the latest one acknowledged. */
  private inFlightVersion = 0;
  private acknowledgedVersion = 0;
  /** The rooms API's message when it said the room is gone; then nothing more is sent. */
  private goneReason: string | undefined;
  private sendAgain = false;
  private failures = 0;
  private unhealthyReported = false;
  private started = false;
  private closed = false;
  private finished = false;
  private uninstallSignals: (() => void) | undefined;
  /** The acknowledgement of `terminated()`, once it was asked for (a later SIGTERM waits on it). */
  private terminatedAck: Promise<void> | undefined;

  constructor(options: RoomClientOptions = {}) {
    super();
    this.config = options.config ?? readRoomConfig();
    this.intervalMs = options.pingIntervalMs ?? this.config.pingIntervalMs;
    this.backoff = options.backoff ?? DEFAULT_BACKOFF;
    this.unhealthyAfter = Math.max(1, options.unhealthyAfter ?? 3);
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
    const fetchImpl: FetchLike = options.fetch ?? ((url, init) => fetch(url, init));
    this.requestTimeoutMs = options.requestTimeoutMs ?? 5000;
    this.eventTimeoutMs = options.eventTimeoutMs ?? this.requestTimeoutMs;
    this.transport = new Transport({ fetch: fetchImpl, timeoutMs: this.requestTimeoutMs, ...(this.config.token ? { token: this.config.token } : {}) });
  }

  /** The last status asked for (`starting` before the first). */
  get status(): RoomStatus {
    return this.statusValue;
  }

  /** Consecutive failed pings (0 after a success). */
  get consecutiveFailures(): number {
    return this.failures;
  }

  /**
   * Starts the ping loop; calling it again does nothing. Nothing is sent before the first status
   * (`ready()` etc., which also start the loop).
   */
  start(): this {
    if (this.started || this.closed) return this;
    this.started = true;
    if (this.statusValue !== 'starting') this.pingNow();
    return this;
  }

  /**
   * The room can take players. Resolves when the rooms API acknowledged it. It changes no
   * running-matches count: after `setRunningMatches(n)` the pings say `ready` with that `n`, and in
   * a multi-match scheduler the count, not the status, decides whether the room is free; call
   * `ready()` and `setRunningMatches(0)` when its matches are over (an `occupied` ping counts at
   * least one match, as in Maestro).
   */
  ready(): Promise<void> {
    return this.transition('ready');
  }

  /** The room is running a match. Like `ready()`, it keeps the running-matches count last set. */
  occupied(): Promise<void> {
    return this.transition('occupied');
  }

  /**
   * The room is shutting down; after this only `terminated()` is allowed. Resolves at once, sending
   * nothing, once the room is gone (the `gone` event), as does `terminated()`.
   */
  terminating(): Promise<void> {
    return this.transition('terminating');
  }

  /** The room is done; the last ping. After its acknowledgement the loop stops. */
  terminated(): Promise<void> {
    const acked = this.transition('terminated');
    if (this.statusValue === 'terminated') this.terminatedAck ??= acked;
    return acked;
  }

  /**
   * Reports how many matches run (multi-match rooms): sent at once with the current status and with
   * every later ping; resolves when the rooms API acknowledged it. Only after `ready()` or
   * `occupied()`: before the first status it rejects with `IllegalTransitionError`, sending nothing.
   * A terminating room (draining) may report its matches ending, a count no higher than the last:
   * forwarders hear of it with the `terminating` ping; a higher count is refused.
   */
  setRunningMatches(n: number): Promise<void> {
    if (this.closed) return Promise.reject(new ClosedError());
    if (this.goneReason !== undefined) return Promise.reject(new RoomGoneError(this.goneReason));
    if (!Number.isInteger(n) || n < 0 || n > MAX_RUNNING_MATCHES) {
      return Promise.reject(new RangeError(`runningMatches must be an integer between 0 and ${MAX_RUNNING_MATCHES}, got ${n}`));
    }
    const status = this.statusValue;
    const draining = status === 'terminating' && n <= (this.runningMatches ?? 0);
    if (!acceptsRunningMatches(status) && !draining) {
      return Promise.reject(new IllegalTransitionError(status, RUNNING_MATCHES_REPORT, transitionAdvice(status, RUNNING_MATCHES_REPORT)));
    }
    this.runningMatches = n;
    // A match reported while an allocation waits takes it up, as `occupied()` does.
    this.allocations.noteMatches(reportedMatches({ status, runningMatches: n }));
    return this.change(status);
  }

  /**
   * Says that the match of allocation `id` (an `allocated` event's) has started: the room's pings
   * name it (`allocationId`) until Roomkeeper ends it, so that it is taken up whatever the running
   * matches say. A multi-match room needs this when one of its matches ended as the allocated one
   * began, as its count did not rise then; `occupied()` or a higher `setRunningMatches(n)` take an
   * allocation up by themselves (and their pings name it too). Resolves when a ping naming it was
   * acknowledged; rejects with a RangeError, sending nothing, when `id` is not the allocation the
   * room holds (never told, or already ended).
   */
  takeAllocation(id: string): Promise<void> {
    if (this.closed) return Promise.reject(new ClosedError());
    if (this.goneReason !== undefined) return Promise.reject(new RoomGoneError(this.goneReason));
    const status = this.statusValue;
    if (status === 'starting' || !this.allocations.take(id)) return Promise.reject(new RangeError(`allocation ${id} is not the one this room holds: it was never told in a ping answer, or it has ended`));
    return this.change(status);
  }

  /**
   * Sends a room event (forwarded to the scheduler's forwarders). One attempt. An answer with
   * `roomGone` also ends the room as a ping's would (the `gone` event).
   */
  roomEvent(event: string, metadata: Record<string, unknown> = {}): Promise<EventAnswer> {
    if (event === '' || event.length > 256) return Promise.reject(new RangeError('event must be a non-empty string of at most 256 characters'));
    return this.postEvent('roomevent', { event, timestamp: this.unixNow(), metadata });
  }

  /** Sends a player event (`playerJoin` / `playerLeft`). One attempt. */
  playerEvent(event: 'playerJoin' | 'playerLeft', playerId: string, metadata: Record<string, unknown> = {}): Promise<EventAnswer> {
    if (playerId === '') return Promise.reject(new RangeError('playerId must not be empty'));
    return this.postEvent('playerevent', { event, timestamp: this.unixNow(), metadata: { ...metadata, playerId } });
  }

  /**
   * Opt-in graceful shutdown: on the first SIGTERM (or `signals`) an immediate `terminating` ping,
   * then `drain`, then a `terminated` ping (retried until acknowledged); then the `shutdown` event,
   * all within `drainBudgetMs`. The process is never exited: listen to `shutdown` and exit when
   * you are done. Installing a SIGTERM listener replaces Node's default exit on SIGTERM. Returns a
   * function that uninstalls.
   */
  installSignalHandlers(options: SignalHandlerOptions = {}): () => void {
    this.uninstallSignals?.();
    const source = options.source ?? process;
    const signals = options.signals ?? ['SIGTERM'];
    let handling = false;
    const listeners = signals.map((signal) => {
      const listener = (): void => {
        if (handling) return;
        handling = true;
        void this.shutdown(signal, options).then((result) => this.emit('shutdown', result));
      };
      source.on(signal, listener);
      return [signal, listener] as const;
    });
    const uninstall = (): void => {
      for (const [signal, listener] of listeners) source.off(signal, listener);
      if (this.uninstallSignals === uninstall) this.uninstallSignals = undefined;
    };
    this.uninstallSignals = uninstall;
    return uninstall;
  }

  /** Stops everything: clears timers, aborts requests, rejects pending changes. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.clearTimer();
    this.uninstallSignals?.();
    this.transport.abortAll(new ClosedError());
    this.settleWaiters((w) => w.reject(new ClosedError()));
  }

  private transition(to: ReportedStatus): Promise<void> {
    if (this.closed) return Promise.reject(new ClosedError());
    if (this.goneReason !== undefined) return settledAfterGone(to, this.goneReason);
    if (!isLegalTransition(this.statusValue, to)) return Promise.reject(new IllegalTransitionError(this.statusValue, to, transitionAdvice(this.statusValue, to)));
    if (to === 'occupied') this.allocations.noteOccupied();
    return this.change(to);
  }

  private change(status: ReportedStatus): Promise<void> {
    this.statusValue = status;
    this.version++;
    const version = this.version;
    const acked = new Promise<void>((resolve, reject) => this.waiters.push({ version, status, resolve, reject }));
    this.holdProcessWhileAwaited();
    this.started = true;
    this.pingNow();
    return acked;
  }

  /**
   * Sends a ping at once. A plain ping in flight (one reporting nothing unacknowledged) is abandoned
   * (aborted) for it; a change in flight is let finish, within its request deadline, and this one
   * follows at once: were each change to abort the one before, a game server changing faster than
   * the rooms API answers would never be acknowledged.
   */
  private pingNow(): void {
    this.clearTimer();
    if (this.inFlight) {
      this.sendAgain = true;
      if (this.inFlightVersion <= this.acknowledgedVersion) this.abandonPing?.abort(new AbandonedPingError());
    } else {
      void this.ping();
    }
  }

  /** Settles and forgets every pending change. */
  private settleWaiters(settle: (w: Waiter) => void): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) settle(w);
    this.holdProcessWhileAwaited();
  }

  /** A ref'd handle while a change is unacknowledged, none otherwise (the loop's timers are unref'd). */
  private holdProcessWhileAwaited(): void {
    const awaited = this.waiters.length > 0;
    if (awaited && this.keepAlive === undefined) {
      this.keepAlive = setInterval(() => undefined, KEEP_ALIVE_TICK_MS);
    } else if (!awaited && this.keepAlive !== undefined) {
      clearInterval(this.keepAlive);
      this.keepAlive = undefined;
    }
  }

  /** The rooms API said the room is gone: stop, settle what waits, tell the game server once. */
  private roomGone(reason: string): void {
    if (this.goneReason !== undefined || this.closed) return;
    this.goneReason = reason;
    this.clearTimer();
    this.abandonPing?.abort(new AbandonedPingError());
    this.settleWaiters((w) => {
      void settledAfterGone(w.status, reason).then(w.resolve, w.reject);
    });
    this.emit('gone', reason);
  }

  private schedule(delayMs: number): void {
    this.clearTimer();
    if (this.isOver()) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.inFlight) this.sendAgain = true;
      else void this.ping();
    }, delayMs);
    this.timer.unref();
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Closed, finished or gone: no more pings. Read through a call, as a pending ping may see it change. */
  private isOver(): boolean {
    return this.closed || this.finished || this.goneReason !== undefined;
  }

  private async ping(): Promise<void> {
    if (this.isOver() || this.statusValue === 'starting') return;
    const snap: Snapshot = { version: this.version, status: this.statusValue, runningMatches: this.runningMatches, takes: this.allocations.takenId() };
    this.inFlight = true;
    this.inFlightVersion = snap.version;
    const abandon = new AbortController();
    this.abandonPing = abandon;
    let outcome: PingOutcome | 'abandoned';
    try {
      const res = await this.transport.send('PUT', roomUrl(this.config, 'ping'), {
        status: snap.status, timestamp: this.unixNow(), ...(snap.runningMatches !== undefined ? { runningMatches: snap.runningMatches } : {}),
        ...(snap.takes !== undefined ? { allocationId: snap.takes } : {}),
      }, undefined, abandon.signal);
      outcome = pingOutcome(res, this.now());
    } catch (err) {
      outcome = err instanceof AbandonedPingError ? 'abandoned' : { reason: failureText(err) };
    } finally {
      this.inFlight = false;
      this.abandonPing = undefined;
    }
    if (this.closed) return;
    // An abandoned ping is neither answer nor failure: the one that replaces it is sent next.
    if (outcome !== 'abandoned') this.learn(snap, outcome);
    if (this.sendAgain && !this.isOver()) {
      this.sendAgain = false;
      this.pingNow();
    }
  }

  private learn(snap: Snapshot, outcome: PingOutcome): void {
    if ('answer' in outcome) this.acknowledged(snap, outcome.answer);
    else if ('gone' in outcome) this.roomGone(outcome.gone);
    else this.failed(outcome.reason, outcome.retryAfterMs);
  }

  private acknowledged(snap: Snapshot, answer: PingAnswer): void {
    this.failures = 0;
    this.acknowledgedVersion = Math.max(this.acknowledgedVersion, snap.version);
    if (this.unhealthyReported) {
      this.unhealthyReported = false;
      this.emit('healthy');
    }
    const done = this.waiters.filter((w) => w.version <= snap.version);
    this.waiters = this.waiters.filter((w) => w.version > snap.version);
    this.holdProcessWhileAwaited();
    for (const w of done) {
      if (w.status === snap.status) w.resolve();
      else w.reject(new SupersededError(w.status, snap.status));
    }
    for (const event of this.allocations.observe(answer, { status: snap.status, runningMatches: snap.runningMatches })) this.emit(event.type, event.allocation);
    if (snap.status === 'terminated' && snap.version === this.version) {
      this.finished = true;
      this.clearTimer();
      return;
    }
    this.schedule(jitteredInterval(this.intervalMs, this.random()));
  }

  /** `retryAfterMs`: what the answer's Retry-After asked for, honoured up to the backoff's cap. */
  private failed(reason: string, retryAfterMs = 0): void {
    this.failures++;
    const backoff = backoffDelay(this.failures, this.backoff, this.intervalMs, this.random());
    const failure: PingFailure = { reason, consecutiveFailures: this.failures, retryInMs: Math.max(backoff, Math.min(retryAfterMs, this.backoff.capMs)) };
    this.emit('pingFailed', failure);
    if (this.failures >= this.unhealthyAfter && !this.unhealthyReported) {
      this.unhealthyReported = true;
      this.emit('unhealthy', failure);
    }
    this.schedule(failure.retryInMs);
  }

  /**
   * The whole sequence ends within the budget: the drain gets its share (`drainShare`), the
   * `terminating` and `terminated` acknowledgements what is left of the budget, however the rooms
   * API answers. Unacknowledged pings are retried by the loop meanwhile.
   */
  private async shutdown(signal: string, options: SignalHandlerOptions): Promise<ShutdownResult> {
    const budgetMs = options.drainBudgetMs ?? DEFAULT_SHUTDOWN_BUDGET_MS;
    const budget = deadline(budgetMs);
    try {
      const terminating = this.transition('terminating').then(() => true, () => false);
      let drain: ShutdownResult['drain'] = 'none';
      if (options.drain) {
        const drainMs = drainShare(budgetMs, this.requestTimeoutMs);
        const controller = new AbortController();
        const hook = options.drain;
        drain = await withDeadline(Promise.resolve().then(() => hook(controller.signal)).then(() => 'completed' as const, () => 'failed' as const), drainMs, 'timedOut' as const);
        if (drain === 'timedOut') controller.abort(new Error(`the drain's ${drainMs} ms of the shutdown budget (${budgetMs} ms) ran out`));
      }
      await Promise.race([terminating, budget.over]);
      // A room that reported terminated already (acknowledged or not yet) sends nothing more.
      const terminated = this.terminatedAck ?? this.terminated();
      const terminatedAcknowledged = await Promise.race([terminated.then(() => true, () => false), budget.over.then(() => false)]);
      if (this.goneReason !== undefined) return { signal, drain, terminatedAcknowledged: false, roomGone: true };
      return { signal, drain, terminatedAcknowledged };
    } finally {
      budget.cancel();
    }
  }

  private async postEvent(action: 'roomevent' | 'playerevent', body: Record<string, unknown>): Promise<EventAnswer> {
    if (this.closed) throw new ClosedError();
    let res: HttpAnswer;
    try {
      res = await this.transport.send('POST', roomUrl(this.config, action), body, this.eventTimeoutMs);
    } catch (err) {
      if (err instanceof ClosedError) throw err;
      if (err instanceof NoAnswerError) {
        throw new RoomsApiError(`the rooms API did not answer ${action} within ${err.timeoutMs} ms: it answers once the scheduler's forwarders took the event or their options.timeout passed, so the event may still reach them; give the room client an eventTimeoutMs above the forwarders' options.timeout`, undefined);
      }
      throw new RoomsApiError(`the rooms API could not be reached for ${action}: ${failureText(err)}; check ROOMKEEPER_ROOMS_API_URL and that the gateway runs, then send the event again`, undefined);
    }
    let json: unknown;
    try {
      json = JSON.parse(res.body);
    } catch {
      throw new RoomsApiError(`the rooms API answered ${action} with HTTP ${res.status} and a body that is not JSON`, res.status);
    }
    const obj = (typeof json === 'object' && json !== null ? json : {}) as { success?: unknown; message?: unknown; roomGone?: unknown };
    if (res.status < 200 || res.status >= 300) {
      throw new RoomsApiError(`the rooms API refused ${action}: HTTP ${res.status}${typeof obj.message === 'string' ? `: ${obj.message}` : ''}`, res.status);
    }
    const message = typeof obj.message === 'string' ? obj.message : undefined;
    if (obj.success !== true && obj.roomGone === true) {
      this.roomGone(message ?? NO_GONE_MESSAGE);
      return { success: false, roomGone: true, ...(message !== undefined ? { message } : {}) };
    }
    return { success: obj.success === true, ...(message !== undefined ? { message } : {}) };
  }

  private unixNow(): number {
    return Math.floor(this.now() / 1000);
  }
}

/** The long period of the keep-alive handle, which only has to exist (it does nothing). */
const KEEP_ALIVE_TICK_MS = 2 ** 30;

/** The reason a plain ping in flight is aborted when a status change replaces it. */
class AbandonedPingError extends Error {
  constructor() {
    super('abandoned for a status change sent at once');
  }
}

/** The `gone` event's message when the rooms API gave none with `roomGone`. */
const NO_GONE_MESSAGE = 'the rooms API said the room is gone: no ping of it will be recorded again';

type PingOutcome = { answer: PingAnswer } | { gone: string } | { reason: string; retryAfterMs?: number };

/** How a status call settles once the room is gone: its end resolves (moot), anything else rejects. */
function settledAfterGone(status: ReportedStatus, reason: string): Promise<void> {
  return status === 'terminating' || status === 'terminated' ? Promise.resolve() : Promise.reject(new RoomGoneError(reason));
}

function pingOutcome({ status, body, retryAfter }: HttpAnswer, nowMs: number): PingOutcome {
  if (status < 200 || status >= 300) {
    // A 429 or 503 (the gateway, or a proxy in front of it) may say when to come back.
    const wait = status === 429 || status === 503 ? retryAfterMs(retryAfter, nowMs) : undefined;
    return { reason: `HTTP ${status}: ${body.slice(0, 200)}`, ...(wait !== undefined ? { retryAfterMs: wait } : {}) };
  }
  const answer = parsePingAnswer(body);
  if (!answer) return { reason: `HTTP ${status} with an answer that is not {"success": boolean}: ${body.slice(0, 200)}` };
  if (!answer.success && answer.roomGone) return { gone: answer.message ?? NO_GONE_MESSAGE };
  if (!answer.success) {
    // Roomkeeper says why; Maestro's answer is bare.
    return { reason: `the rooms API answered {"success":false}: ${answer.message?.slice(0, 300) ?? 'it does not know this room (yet), or the room already reported terminating or terminated'}` };
  }
  return { answer };
}

/** A promise that resolves after `ms` (a ref'd timer: shutdown keeps the process alive for its budget). */
function deadline(ms: number): { over: Promise<void>; cancel: () => void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const over = new Promise<void>((resolve) => { timer = setTimeout(resolve, ms); });
  return { over, cancel: () => clearTimeout(timer) };
}

/** `promise`'s value, or `fallback` after `ms` (a ref'd timer: shutdown keeps the process alive for its budget). */
function withDeadline<T, F>(promise: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<F>((resolve) => { timer = setTimeout(() => resolve(fallback), ms); });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

