/**
 * Fuzzing both apps over real sockets: >= 10,000 malformed requests per listener (random JSON,
 * wrong types, huge strings and numbers, deep nesting, `__proto__`/`constructor` keys, names far
 * longer than Kubernetes allows, bad paths, bad methods, bad auth, every kind of content type and
 * encoding, keys sent twice in one object). No answer may be a 5xx other than grpc-gateway's 501
 * for a wrong method, nothing may reach Object.prototype, no management route that reads a body
 * may take one with a key sent twice, and the process must keep serving.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { roomToken } from '../../common/src/rooms/room-token';
import { requestListener } from './app';
import { createHttpServer, MANAGEMENT_TIMEOUTS, ROOMS_TIMEOUTS } from '../../common/src/http-server';
import { MANAGEMENT_LISTENER_ROUTES, ROOMS_LISTENER_ROUTES } from './openapi';
import { AUTH, buildTestApps, MAX_BODY, ROOM_SECRET, validCreateBody, validSpec } from './testing/fixtures';
import { seededRandom } from '../../test/support/seeded-random';

jest.setTimeout(120_000);


const SEED = 20260101;
const rnd = seededRandom(SEED);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
const int = (n: number) => Math.floor(rnd() * n);

const WEIRD_STRINGS = ['', ' ', 'a', 'info', 'tennis-eu', 'room-1', 'UPPER', '-bad-', 'x'.repeat(300), 'n'.repeat(64), 'r'.repeat(254), 'l'.repeat(4000), '%00', '%ZZ', '..', '%2e%2e', 'a%2Fb', '💥', 'null', '0', '-1', '1e9', "' OR 1=1", '<script>', 'v1.0.0', 'op-1', '__proto__', 'constructor', 'prototype', 'hasOwnProperty'];
/** Numbers JSON can spell but no field accepts: beyond 2^53, beyond a double, thousands of digits. */
const HUGE_NUMBERS = ['1e999999', '-1e400', '123456789012345678901234567890', '9'.repeat(5000), '0.' + '0'.repeat(3000) + '1', '2147483648', '-9223372036854775809', '1E+308'];
const PROTO_BODIES = [
  '{"__proto__":{"polluted":"yes"}}',
  '{"constructor":{"prototype":{"polluted":"yes"}}}',
  '{"name":"fz","__proto__":{"admin":true},"spec":{"__proto__":{"polluted":"yes"}}}',
  '{"status":"ready","metadata":{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}}',
  '{"event":"playerJoin","metadata":{"playerId":{"__proto__":{"polluted":"yes"}}}}',
  '[{"__proto__":[]},{"constructor":null}]',
];

function randomJson(depth = 0): unknown {
  switch (int(depth > 3 ? 6 : 9)) {
    case 0: return null;
    case 1: return rnd() < 0.5;
    case 2: return pick([0, -1, 1.5, 1e308, -0, 10_001, 2 ** 53, 3]);
    case 3: return pick(WEIRD_STRINGS);
    case 4: return 'y'.repeat(int(3000));
    case 5: return pick(['ready', 'occupied', 'terminating', 'terminated', 'playerJoin', 'playerLeft', 'createdAt asc']);
    case 6: return Array.from({ length: int(4) }, () => randomJson(depth + 1));
    default: {
      const keys = ['name', 'game', 'spec', 'containers', 'ports', 'portRange', 'maxSurge', 'roomsReplicas', 'forwarders', 'autoscaling', 'amount', 'roomsIds', 'version', 'status', 'timestamp', 'runningMatches', 'metadata', 'event', 'playerId', '__proto__', 'constructor'];
      const o: Record<string, unknown> = {};
      for (let i = int(5); i > 0; i--) o[pick(keys)] = randomJson(depth + 1);
      return o;
    }
  }
}

/** A valid body with one field broken: wrong types reach deep validation paths. */
function mutatedCreateBody(): unknown {
  const body = structuredClone(validCreateBody(pick(['fz', 'tennis-eu', 'Bad Name', 'info'])));
  const spec = body.spec as Record<string, unknown>;
  const container = (spec.containers as Record<string, unknown>[])[0] as Record<string, unknown>;
  const targets: [Record<string, unknown>, string][] = [[body, 'game'], [body, 'maxSurge'], [body, 'roomsReplicas'], [body, 'portRange'], [body, 'forwarders'], [body, 'autoscaling'], [body, 'annotations'], [spec, 'terminationGracePeriod'], [spec, 'containers'], [container, 'ports'], [container, 'environment'], [container, 'image'], [container, 'requests']];
  const [obj, key] = pick(targets);
  obj[key] = randomJson(1);
  return body;
}

function deepJson(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

function deepObject(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/** `key` with its first character written as a `\u` escape: the same key to JSON.parse. */
function escapedKey(key: string): string {
  return key === '' ? '' : `\\u${key.charCodeAt(0).toString(16).padStart(4, '0')}${JSON.stringify(key.slice(1)).slice(1, -1)}`;
}

/**
 * `value` as JSON text with one key of one of its objects (picked at random, at any depth) sent a
 * second time, as it is or with an escape that spells the same key; undefined when it has no key.
 */
function withDuplicateKey(value: unknown): string | undefined {
  const objects: Record<string, unknown>[] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === 'object' && v !== null) {
      if (Object.keys(v).length > 0) objects.push(v as Record<string, unknown>);
      Object.values(v).forEach(walk);
    }
  };
  walk(value);
  if (objects.length === 0) return undefined;
  const target = pick(objects);
  const key = pick(Object.keys(target));
  const spelling = rnd() < 0.5 ? JSON.stringify(key).slice(1, -1) : escapedKey(key);
  const write = (v: unknown): string => {
    if (Array.isArray(v)) return `[${v.map(write).join(',')}]`;
    if (typeof v !== 'object' || v === null) return JSON.stringify(v);
    const members = Object.entries(v).filter(([, m]) => m !== undefined).map(([k, m]) => `${JSON.stringify(k)}:${write(m)}`);
    if (v === target) members.splice(int(members.length + 1), 0, `"${spelling}":${write(randomJson(3))}`);
    return `{${members.join(',')}}`;
  };
  return write(value);
}

/** A body whose numeric fields hold numbers no field accepts. */
function hugeNumberBody(): string {
  const n = () => pick(HUGE_NUMBERS);
  return pick([
    `{"name":"fz","game":"g","roomsReplicas":${n()},"maxSurge":${n()},"portRange":{"start":${n()},"end":${n()}}}`,
    `{"amount":${n()}}`,
    `{"status":"ready","timestamp":${n()},"runningMatches":${n()}}`,
    `{"forwarders":[{"name":"f","address":"h:1","options":{"timeout":${n()}}}]}`,
    n(),
  ]);
}

function randomLongName(): string {
  return Array.from({ length: 200 + int(3800) }, () => 'abcdefghijklmnopqrstuvwxyz0123456789-.'[int(38)]).join('');
}

const MANAGEMENT_PATHS = ['/schedulers', '/schedulers/info', '/schedulers/{s}', '/schedulers/{s}/add-rooms', '/schedulers/{s}/remove-rooms', '/schedulers/{s}/versions', '/schedulers/{s}/operations', '/schedulers/{s}/operations/{o}', '/schedulers/{s}/operations/{o}/cancel', '/openapi.json', '/healthz', '/metrics', '/', '/schedulers/{s}/{o}/{o}', '/%', '/schedulers/%E0%A4%A'];
const ROOMS_PATHS = ['/scheduler/{s}/rooms/{r}/ping', '/scheduler/{s}/rooms/{r}/roomevent', '/scheduler/{s}/rooms/{r}/playerevent', '/scheduler/{s}/rooms/{r}/status', '/scheduler/{s}/rooms/{r}/address', '/scheduler/{s}/rooms', '/readyz', '/scheduler//rooms//ping'];
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'];
/** The methods each path template serves, so most requests reach a handler. */
const ROUTE_METHODS: Record<string, string[]> = Object.fromEntries(
  [...MANAGEMENT_LISTENER_ROUTES, ...ROOMS_LISTENER_ROUTES].map((r) => [r.path.replace(/:schedulerName/, '{s}').replace(/:operationId/, '{o}').replace(/:roomId/, '{r}'), [] as string[]]),
);
for (const r of [...MANAGEMENT_LISTENER_ROUTES, ...ROOMS_LISTENER_ROUTES]) {
  ROUTE_METHODS[r.path.replace(/:schedulerName/, '{s}').replace(/:operationId/, '{o}').replace(/:roomId/, '{r}')]?.push(r.method.toUpperCase());
}
/** `METHOD template` of each management route that reads a body: it never takes one with a key sent twice. */
const MANAGEMENT_BODY_ROUTES: ReadonlySet<string> = new Set(
  MANAGEMENT_LISTENER_ROUTES.filter((r) => r.requestBody !== undefined).map((r) => `${r.method.toUpperCase()} ${r.path.replace(/:schedulerName/, '{s}').replace(/:operationId/, '{o}')}`),
);
const QUERIES = ['', '?stage=final', '?stage=pending&page=1', '?stage=final&page=-1&perPage=1000', '?stage=a&stage=b', '?version=v1.0.0', '?version=%ZZ', '?game=tennis', '?name[]=x', '?orderBy=createdAt%20sideways', `?q=${'z'.repeat(2000)}`];
const CONTENT_TYPES = [
  undefined, '', 'application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json; charset=utf-16', 'application/json; charset=latin1',
  'application/merge-patch+json', 'application/json-patch+json', 'application/vnd.api+json', 'text/json', 'text/plain', 'text/plain; charset=utf-8',
  'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/octet-stream', '*/*', 'garbage', 'application/', ';;;',
];

interface FuzzRequest { method: string; path: string; headers: Record<string, string>; body?: Buffer; template?: string; duplicateKey?: boolean }

function randomRequest(api: 'management' | 'rooms'): FuzzRequest {
  const template = pick(api === 'management' ? MANAGEMENT_PATHS : ROOMS_PATHS);
  const scheduler = rnd() < 0.55 ? pick(['tennis-eu', 's1']) : rnd() < 0.2 ? randomLongName() : encodeURIComponent(pick(WEIRD_STRINGS)).replace(/%25/g, rnd() < 0.3 ? '%' : '%25');
  const room = rnd() < 0.55 ? 'room-1' : rnd() < 0.2 ? randomLongName() : pick(WEIRD_STRINGS).replace(/[/?#]/g, '');
  const path = template.replace('{s}', scheduler).replace(/\{o\}/g, pick(['op-1', 'op-final', 'zzz', ''])).replace('{r}', encodeURIComponent(room)) + pick(QUERIES);
  const headers: Record<string, string> = {};
  const authChoice = int(6);
  if (api === 'management') {
    if (authChoice < 3) headers.authorization = AUTH;
    else if (authChoice === 3) headers.authorization = `Basic ${Buffer.from('admin:wrong').toString('base64')}`;
    else if (authChoice === 4) headers.authorization = pick(['Basic', 'Basic ====', 'Bearer x', `Basic ${'A'.repeat(5000)}`, 'Basic 6', 'basic YWRtaW46czNjcmV0LXBhc3M=']);
  } else if (authChoice < 4) {
    headers.authorization = `Bearer ${roomToken(ROOM_SECRET, decodeURIComponent(scheduler.replace(/%(?![0-9A-F]{2})/gi, '%25')), room)}`;
  } else if (authChoice === 4) {
    headers.authorization = pick(['Bearer', 'Bearer ', `Bearer ${'t'.repeat(3000)}`, AUTH]);
  }
  const ct = pick(CONTENT_TYPES);
  if (ct) headers['content-type'] = ct;
  let body: Buffer | undefined;
  let duplicateKey = false;
  switch (int(13)) {
    case 0: break;
    case 12: {
      const text = withDuplicateKey(rnd() < 0.5 ? mutatedCreateBody() : { ...validCreateBody(pick(['fz', 'tennis-eu'])), amount: 1, version: 'v1.0.0', ...(rnd() < 0.5 ? { spec: { containers: [{ image: 'x' }] } } : {}) });
      if (text !== undefined) {
        body = Buffer.from(text);
        duplicateKey = true;
        // Mostly past auth and the content type, so most reach the check.
        if (rnd() < 0.8) headers['content-type'] = 'application/json';
        if (api === 'management' && rnd() < 0.8) headers.authorization = AUTH;
      }
      break;
    }
    case 9: body = Buffer.from(hugeNumberBody()); break;
    case 10: body = Buffer.from(pick(PROTO_BODIES)); break;
    case 11: body = Buffer.from(rnd() < 0.5 ? deepObject(pick([50, 200, 2000])) : deepJson(pick([100, 1000]))); break;
    case 1: body = Buffer.from(JSON.stringify(randomJson())); break;
    case 2: body = Buffer.from(JSON.stringify(mutatedCreateBody())); break;
    case 3: body = Buffer.from(JSON.stringify(randomJson()).slice(0, int(40))); break;
    case 4: body = Buffer.from(Array.from({ length: int(200) }, () => int(256))); break;
    case 5: body = Buffer.from(JSON.stringify({ status: pick(['ready', 'occupied', 7, null]), timestamp: randomJson(2), runningMatches: randomJson(2), metadata: randomJson(1) })); break;
    case 6: body = Buffer.from(deepJson(pick([10, 40, 5000]))); break;
    case 7: body = Buffer.from(JSON.stringify({ blob: 'b'.repeat(MAX_BODY + int(1000)) })); break;
    default: {
      body = Buffer.from(JSON.stringify(randomJson()));
      headers['content-encoding'] = pick(['gzip', 'deflate', 'br', 'identity', 'zstd']);
    }
  }
  const methods = ROUTE_METHODS[template];
  const method = methods && rnd() < 0.7 ? pick(methods) : pick(METHODS);
  return { method, path, headers, body, template, duplicateKey };
}

function send(agent: http.Agent, port: number, r: FuzzRequest): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: r.method, path: r.path, headers: r.headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (r.body && r.method !== 'GET' && r.method !== 'HEAD') req.end(r.body);
    else req.end();
  });
}

async function listen(app: http.RequestListener, timeouts: typeof MANAGEMENT_TIMEOUTS | typeof ROOMS_TIMEOUTS): Promise<{ server: http.Server; port: number }> {
  const server = createHttpServer(app, { ...timeouts, maxConnections: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

it(`answers 10,000+ malformed requests per listener without a 5xx (seed ${SEED})`, async () => {
  const t = buildTestApps();
  t.store.seedScheduler('tennis-eu', validSpec());
  t.store.seedScheduler('s1', validSpec({ forwarders: [] }));
  t.store.seedOperation('op-1', { schedulerName: 'tennis-eu' });
  t.store.seedOperation('op-final', { schedulerName: 'tennis-eu' }, { status: 'finished' });
  t.store.seedRoom('s1', 'room-1', { pingStatus: 'ready', instanceStatus: 'ready', status: 'ready' });
  t.store.seedRoom('tennis-eu', 'room-1', { pingStatus: 'ready', instanceStatus: 'ready', status: 'ready' });
  const management = await listen(t.management, MANAGEMENT_TIMEOUTS);
  const rooms = await listen(requestListener(t.rooms), ROOMS_TIMEOUTS);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const failures: string[] = [];
  const statuses = new Map<number, number>();
  const PER_LISTENER = 10_200;
  const TOTAL = 2 * PER_LISTENER;
  const answeredBy = { management: 0, rooms: 0 };
  let duplicatesRefused = 0;
  let next = 0;
  try {
    const worker = async () => {
      while (next < TOTAL) {
        const i = next++;
        const api = i % 2 === 0 ? 'management' : 'rooms';
        const r = randomRequest(api);
        let res: { status: number; body: string };
        try {
          res = await send(agent, api === 'management' ? management.port : rooms.port, r);
        } catch (err) {
          failures.push(`${api} ${r.method} ${r.path.slice(0, 120)} body=${String(r.body?.length)} ${JSON.stringify(r.headers).slice(0, 200)} -> ${String(err)}`);
          continue;
        }
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        answeredBy[api]++;
        const allowed501 = res.status === 501 && (r.method === 'HEAD' || (JSON.parse(res.body) as { code?: unknown }).code === 12);
        if (res.status >= 500 && !allowed501) failures.push(`${api} ${r.method} ${r.path.slice(0, 120)} -> ${res.status} ${res.body.slice(0, 200)}`);
        if (api === 'management' && r.duplicateKey === true && MANAGEMENT_BODY_ROUTES.has(`${r.method} ${r.template ?? ''}`)) {
          if (res.status < 300) failures.push(`management took a key sent twice: ${r.method} ${r.path.slice(0, 120)} ${r.body?.toString().slice(0, 300) ?? ''} -> ${res.status}`);
          if (res.status === 400 && res.body.includes('duplicate key: sent more than once')) duplicatesRefused++;
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    expect(failures).toEqual([]);
    // The mix reached handlers, validation, auth, routing and the body limit, not just one of them.
    for (const status of [200, 400, 401, 404, 413, 415, 501]) expect(statuses.get(status) ?? 0).toBeGreaterThan(20);
    expect(answeredBy).toEqual({ management: PER_LISTENER, rooms: PER_LISTENER });
    // Keys sent twice reached the check, at many depths, and were refused by it.
    expect(duplicatesRefused).toBeGreaterThan(30);
    expect((({}) as Record<string, unknown>).polluted).toBeUndefined();
    expect((({}) as Record<string, unknown>).admin).toBeUndefined();
    // Both apps still serve.
    const alive = await send(agent, management.port, { method: 'GET', path: '/schedulers', headers: { authorization: AUTH } });
    expect(alive.status).toBe(200);
    const ping = await send(agent, rooms.port, { method: 'PUT', path: '/scheduler/s1/rooms/room-1/ping', headers: { authorization: `Bearer ${roomToken(ROOM_SECRET, 's1', 'room-1')}`, 'content-type': 'application/json' }, body: Buffer.from('{"status":"ready","timestamp":1}') });
    expect(JSON.parse(ping.body)).toEqual({ success: true });
  } finally {
    agent.destroy();
    await new Promise((resolve) => management.server.close(resolve));
    await new Promise((resolve) => rooms.server.close(resolve));
  }
});
