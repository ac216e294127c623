/** Shared test fixtures: valid bodies and apps wired to the in-memory store. */
import type { Express } from 'express';
import { silentLogger, type Logger } from '../../../common/src/logger';
import { MetricsRegistry } from '../../../common/src/metrics';
import type { SchedulerSpec } from '../../../common/src/generated/resources';
import { createManagementApp, createRoomsApp } from '../app';
import { staticCredentials } from '../auth';
import { PingRecorder } from '../pings/ping-recorder';
import { createSchedulerValidator } from '../scheduler-validator';
import type { RoomEventSink } from '../use-cases/room-reports';
import { InMemoryStore } from './in-memory-store';
import type { PingForwardQueue } from '../../../common/src/forwarding/forwarding-worker';
import { chooseCandidates, type AllocationSettings } from '../use-cases/room-allocation';
import type { GameRoom } from '../../../common/src/generated/resources';
import { groupAllocatable, isBusyRoom } from '../../../common/src/rooms/allocation';
import type { RoomsRefusalLog } from '../http/rooms-refusal-log';

export const USER = 'admin';
export const PASSWORD = 's3cret-pass';
export const ROOM_SECRET = 'room-token-secret';
export const AUTH = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
export const MAX_BODY = 16 * 1024;

export function validSpec(overrides: Partial<SchedulerSpec> = {}): SchedulerSpec {
  return {
    game: 'tennis',
    maxSurge: '10%',
    roomsReplicas: 1,
    portRange: { start: 40000, end: 60000 },
    forwarders: [],
    annotations: {},
    labels: {},
    spec: {
      terminationGracePeriod: '100s',
      containers: [{
        name: 'game',
        image: 'registry.example/game:1.0',
        imagePullPolicy: 'IfNotPresent',
        command: ['/bin/game'],
        environment: [{ name: 'MODE', value: 'ranked' }],
        requests: { memory: '100Mi', cpu: '100m' },
        limits: { memory: '200Mi', cpu: '200m' },
        ports: [{ name: 'game', protocol: 'udp', port: 7777 }],
      }],
    },
    ...overrides,
  };
}

export function validCreateBody(name = 'tennis-eu', overrides: Partial<SchedulerSpec> = {}): Record<string, unknown> {
  return { name, ...validSpec(overrides) };
}

export interface TestApps {
  store: InMemoryStore;
  metrics: MetricsRegistry;
  management: Express;
  rooms: Express;
  recorder: PingRecorder;
  clock: { now: number };
  ready: { reason: string | undefined };
}

export function buildTestApps(options: {
  forwarder?: RoomEventSink; pingQueue?: PingForwardQueue; pingAuth?: boolean; pingAnswerAllocation?: boolean; maxRoomsPerScheduler?: number; allocationSettings?: Partial<AllocationSettings>;
  /** Another replica of these apps: the same store and clock, its own memory and metrics. */
  replicaOf?: TestApps;
  /** Where the apps log; default nowhere. */
  logger?: Logger;
  /** Where the rooms API logs refused calls; default one of its own over `logger`. */
  refusals?: RoomsRefusalLog;
} = {}): TestApps {
  const clock = options.replicaOf?.clock ?? { now: Date.parse('2026-01-01T00:00:00.000Z') };
  const now = () => clock.now;
  const store = options.replicaOf?.store ?? new InMemoryStore(now);
  const metrics = new MetricsRegistry();
  const logger = options.logger ?? silentLogger();
  const ready = { reason: undefined as string | undefined };
  const readiness = [{ name: 'caches', notReadyReason: () => ready.reason }];
  // The retry backoff is drawn at random from [0, ceiling); a draw of 0 makes a failed write due
  // at once, on the test clock that does not move, so the retry timer wrote it before the test
  // looked (1 run in 250). Half the ceiling: a failed write waits until a test moves the clock.
  const recorder = new PingRecorder({ now, rooms: store, digests: store, replicaId: 'gateway-0', logger, random: () => 0.5 });
  const management = createManagementApp({
    schedulers: store, operations: store, rooms: store, allocationStore: store, validator: createSchedulerValidator(), credentials: staticCredentials({ username: USER, password: PASSWORD }),
    now, logger, metrics, readiness, maxBodyBytes: MAX_BODY, maxRoomsPerScheduler: options.maxRoomsPerScheduler, allocationSettings: options.allocationSettings,
    replicaId: options.replicaOf ? 'gateway-1' : 'gateway-0',
  });
  const rooms = createRoomsApp({
    rooms: store, recorder, forwarder: options.forwarder, pingQueue: options.pingQueue, roomTokenSecrets: options.pingAuth === false ? undefined : [ROOM_SECRET],
    logger, metrics, readiness, maxBodyBytes: MAX_BODY, now, pingAnswerAllocation: options.pingAnswerAllocation, refusals: options.refusals,
  });
  return { store, metrics, management, rooms, recorder, clock, ready };
}

/**
 * The fields of a gateway answer that the route tests read. supertest types every body as `any`;
 * each answer carries some of these, so each is optional and a test that reads into one says with
 * `!` that its answer has it.
 */
export interface Answer {
  code?: number;
  message?: string;
  details?: unknown;
  reason?: string;
  openapi?: string;
  roomId?: string;
  allocationId?: string;
  expiresAt?: string;
  operationId?: string;
  operation?: unknown;
  operations?: { id: string }[];
  scheduler?: { state: string; maxSurge: unknown; spec: { terminationGracePeriod: string; restartPolicy: string; containers: { ports: unknown }[] }; forwarders: { enable?: boolean; options: { timeout: string } }[] };
  schedulers?: { name: string; state: string; autoscaling: unknown }[];
}

/** A supertest answer's JSON body as the fields the tests read. */
export const bodyOf = (res: { body: unknown }): Answer => res.body as Answer;

/** `chooseCandidates` over a whole fleet: its allocatable rooms in groups, and its busy rooms per host counted (as the cache's indexes give them). */
export function candidatesOfFleet(fleet: readonly GameRoom[], options: Omit<Parameters<typeof chooseCandidates>[1], 'busyOnHost'>): GameRoom[] {
  const busyOnHost = (host: string) => fleet.filter((r) => isBusyRoom(r) && (r.status?.host ?? '') === host).length;
  return chooseCandidates(groupAllocatable(fleet), { ...options, busyOnHost });
}
