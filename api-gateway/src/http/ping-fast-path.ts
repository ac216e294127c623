/**
 * The ping route without the Express chain. Pings are nearly all the gateway's traffic (10,000
 * rooms every 5 s is 2,000 a second), so `PUT /scheduler/{name}/rooms/{id}/ping` with a valid
 * room token and a JSON body is answered here: one regex, a cached token comparison, the body
 * read and parsed, `RoomReports.ping`, one `res.end`. Anything else — another route, a missing or
 * wrong token, a body too large, chunked, compressed (any Content-Encoding but `identity`: the
 * body parser inflates gzip, deflate, br and zstd, and answers 415 to others), of a type the rooms API
 * does not read as JSON (`isRoomsJsonContentType`) or in a charset other than UTF-8 — falls
 * through to Express untouched, so every error keeps the one error mapping. So does every ping
 * while the gateway logs at `debug`, so that each is logged with its request id. The answers, metrics
 * labels and limits are the same as the Express route's.
 *
 * The expected tokens of rooms that pinged lately are cached, but only after the presented token
 * matched and only for names Kubernetes can hold, in an LRU of fixed size: pings without
 * credentials cannot grow the gateway's memory.
 */
import type * as http from 'node:http';
import type { Logger } from '../../../common/src/logger';
import type { MetricsRegistry } from '../../../common/src/metrics';
import { matchingRoomToken } from '../../../common/src/rooms/room-token';
import { timingSafeEqual } from 'node:crypto';
import { bearerToken } from '../auth';
import { InputError } from '../errors';
import type { RoomReports } from '../use-cases/room-reports';
import { tooDeepError } from '../json-body-limits';
import { isDnsLabel, isDnsSubdomain } from '../../../common/src/kube/object-names';
import { isRoomsJsonContentType, isUtf8ContentType } from './content-type';
import { errorAnswer } from './error-handler';
import { TokenCache } from './token-cache';
import { RoomsRefusalReason, type RoomsRefusalLog } from './rooms-refusal-log';

/** A ping's path: scheduler and room, each percent-encoded. */
export const PING_PATH = /^\/scheduler\/([^/?#]+)\/rooms\/([^/?#]+)\/ping$/;
const PING_ROUTE = '/scheduler/:schedulerName/rooms/:roomId/ping';
/** Expected tokens of this many rooms (the most recently verified) are cached by default. */
const DEFAULT_TOKEN_CACHE_SIZE = 10_000;

export interface PingFastPathOptions {
  reports: RoomReports;
  /** Secrets whose room tokens are accepted (current, then previous); undefined: ping authentication is off. */
  roomTokenSecrets?: readonly string[];
  maxBodyBytes: number;
  metrics: MetricsRegistry;
  /** Where a failed ping's cause is logged (a 500, the Kubernetes API unavailable). */
  logger: Logger;
  /** Rooms whose verified token is cached (default DEFAULT_TOKEN_CACHE_SIZE). */
  tokenCacheSize?: number;
  /** Where pings refused for their body are logged (bounded: rooms-refusal-log.ts). */
  refusals?: RoomsRefusalLog;
}

/** Returns true when it took the request; false leaves the request untouched for Express. */
export type FastPath = (req: http.IncomingMessage, res: http.ServerResponse) => boolean;

export interface PingFastPath extends FastPath {
  /** How many room tokens are cached now (for tests and diagnosis). */
  cachedTokens(): number;
}

export function pingFastPath(opts: PingFastPathOptions): PingFastPath {
  const requests = opts.metrics.counter('roomkeeper_http_requests_total', 'HTTP requests answered, by api, route, method and status.');
  const duration = opts.metrics.histogram('roomkeeper_http_request_duration_seconds', 'HTTP request duration by api and route.');
  const observe = duration.bind({ api: 'rooms', route: PING_ROUTE }).observe;
  const answered = new Map<number, { inc(): void }>();
  const countAnswer = (status: number): void => {
    let c = answered.get(status);
    if (!c) answered.set(status, (c = requests.bind({ api: 'rooms', route: PING_ROUTE, method: 'PUT', status })));
    c.inc();
  };
  const tokens = new TokenCache(opts.tokenCacheSize ?? DEFAULT_TOKEN_CACHE_SIZE);
  /** Whether `presented` is the room's token; only a match is cached. */
  const tokenMatches = (secrets: readonly string[], scheduler: string, room: string, presented: string): boolean => {
    const key = `${scheduler}/${room}`;
    const cached = tokens.get(key);
    if (cached !== undefined) {
      const expected = Buffer.from(cached);
      const given = Buffer.from(presented);
      // Tokens have one fixed length, so comparing lengths leaks nothing; then constant time.
      if (given.length === expected.length && timingSafeEqual(given, expected)) return true;
    }
    // Not cached, or cached under the other secret of a rotation: try every accepted secret.
    const match = matchingRoomToken(secrets, scheduler, room, presented);
    if (match === undefined) return false;
    tokens.set(key, match);
    return true;
  };

  const fast = (req: http.IncomingMessage, res: http.ServerResponse): boolean => {
    if (req.method !== 'PUT') return false;
    // At debug (ROOMKEEPER_LOG_LEVEL, or SIGUSR2) every ping takes the Express route, which logs it
    // with its requestId and answers X-Request-Id: whoever traces a room's pings sees each one.
    if (opts.logger.isLevelEnabled('debug')) return false;
    const m = PING_PATH.exec(req.url ?? '');
    if (!m) return false;
    const length = Number(req.headers['content-length']);
    if (!Number.isInteger(length) || length < 0 || length > opts.maxBodyBytes) return false;
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') return false;
    if (length > 0 && !(isRoomsJsonContentType(req.headers['content-type']) && isUtf8ContentType(req.headers['content-type']))) return false;
    let scheduler: string;
    let room: string;
    try {
      scheduler = decodeURIComponent(m[1] as string);
      room = decodeURIComponent(m[2] as string);
    } catch {
      return false;
    }
    // A name Kubernetes cannot hold is no room: Express answers it, and nothing is cached for it.
    if (!isDnsLabel(scheduler) || !isDnsSubdomain(room)) return false;
    if (opts.roomTokenSecrets !== undefined) {
      const token = bearerToken(req.headers.authorization);
      if (!token || !tokenMatches(opts.roomTokenSecrets, scheduler, room, token)) return false;
    }

    const start = process.hrtime.bigint();
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
      const text = JSON.stringify(body);
      res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
      res.end(text);
      countAnswer(status);
      observe(Number(process.hrtime.bigint() - start) / 1e9);
    };
    const fail = (err: unknown, body?: unknown): void => {
      const failed = errorAnswer(err, opts.maxBodyBytes, opts.logger);
      if (failed.status >= 400 && failed.status < 500) {
        opts.reports.rejectedPing(body);
        opts.refusals?.record({ reason: RoomsRefusalReason.BadRequest, schedulerName: scheduler, roomId: room, answer: failed.body.message });
      }
      answer(failed.status, { success: false, ...failed.body }, failed.headers);
    };

    const chunks: Buffer[] = [];
    let received = 0;
    req.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received <= length) chunks.push(chunk);
    });
    req.on('error', () => res.destroy());
    req.on('end', () => {
      let body: unknown;
      try {
        const text = Buffer.concat(chunks).toString('utf8');
        body = text === '' ? {} : JSON.parse(text);
      } catch (err) {
        fail(new InputError(`invalid JSON body: ${err instanceof Error ? err.message.slice(0, 200) : 'parse error'}`));
        return;
      }
      const tooDeep = tooDeepError(body);
      if (tooDeep) {
        fail(tooDeep);
        return;
      }
      opts.reports.ping(scheduler, room, body).then((result) => answer(200, result), (err: unknown) => fail(err, body));
    });
    return true;
  };
  return Object.assign(fast, { cachedTokens: () => tokens.size });
}
