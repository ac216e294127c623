/**
 * Simulated game rooms: one simulated game server per running room pod (a pod whose containers
 * carry `ROOMKEEPER_SCHEDULER_NAME` and `ROOMKEEPER_ROOM_ID`), pinging the rooms API as a real
 * game server would. Driven by a pod informer; talks to the API server only to watch pods.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { silentLogger, type Logger } from '../../../common/src/logger';
import type { Counter, MetricsRegistry } from '../../../common/src/metrics';
import { isTerminalPhase, isTerminating, podKey } from '../kubelet/pod-fields';
import { PodInformer } from '../kubelet/pod-informer';
import { withSharedDispatcher, type SharedDispatcherKubeConfig } from '../../../common/src/kube/shared-dispatcher';
import { roomkeeperUserAgent } from '../../../common/src/kube/clients';
import { PingClient, type PingRequest, type PingResult } from './ping-client';
import { roomIdentityOf } from './room-identity';
import { DEFAULT_SCRIPT, InvalidRoomScriptError, parseRoomScript, unitRandom, type RoomScript } from './room-script';
import { SimRoom, type RoomView } from './sim-room';
import type { LivePingStatus } from '../../../common/src/rooms/room-status';

export interface SimRoomsOptions {
  kubeConfig: KubeConfig;
  /** Base URL of the rooms API; a pod's `ROOMKEEPER_ROOMS_API_URL` overrides it. */
  roomsApiUrl: string;
  /** Interval between pings of one room (default 5000 ms; first gap random in [0.5, 1.5) intervals, then ±10%). */
  pingIntervalMs?: number;
  /** The first ping of a room goes out after a random delay up to this (default min(interval, 500 ms)). */
  firstPingMaxDelayMs?: number;
  /**
   * Sockets per origin for the keep-alive agent (default 512). Real game servers each hold a
   * connection of their own; a small pool would queue pings behind slow answers (a status change
   * waits up to a second for its write) and make rooms look silent that are not.
   */
  maxSockets?: number;
  logger?: Logger;
  metrics?: MetricsRegistry;
  now?: () => number;
  /** Replaces the HTTP client (tests of pure scheduling only). */
  send?: (ping: PingRequest) => Promise<PingResult>;
  /**
   * A pod informer to share (e.g. the simulated kubelet's), so pods are listed and watched once.
   * It is not stopped by `stop()`. Without it, SimRooms runs its own.
   */
  podInformer?: PodInformer;
  /** Only pods on nodes this accepts become rooms (default: every node). */
  nodeFilter?: (nodeName: string) => boolean;
}

export interface SimRoomsStats {
  activeRooms: number;
  pingsSent: number;
  pingFailures: number;
  /** Failed pings by the namespace of the room's pod (its scheduler). */
  pingFailuresByNamespace: Record<string, number>;
  pingsByStatus: Record<LivePingStatus, number>;
  /** The last failed pings (at most `RECENT_FAILURES`), oldest first: what a failure was. */
  recentFailures: PingFailure[];
}

export interface PingFailure {
  at: string;
  pod: string;
  status: LivePingStatus;
  statusCode?: number;
  error?: string;
}

const RECENT_FAILURES = 10;
/** Rooms whose pod went away, kept (newest) so `endedRoom()` can still say what their game server did. */
const ENDED_ROOMS = 10_000;

export interface SimRoomView extends RoomView {
  namespace: string;
  podName: string;
}

interface Entry {
  room: SimRoom;
  namespace: string;
  podName: string;
}

export class SimRooms {
  private readonly logger: Logger;
  private readonly informer: PodInformer;
  private readonly ownsInformer: boolean;
  private connections: SharedDispatcherKubeConfig | undefined;
  private readonly client: PingClient;
  private readonly entries = new Map<string, Entry>();
  /** The last view of rooms whose pod was deleted, by pod uid (insertion order = age). */
  private readonly ended = new Map<string, SimRoomView>();
  private readonly counters = { pingsSent: 0, pingFailures: 0, pingsByStatus: { ready: 0, occupied: 0, terminating: 0 } };
  private readonly recentFailures: PingFailure[] = [];
  private readonly failuresByNamespace = new Map<string, number>();
  private readonly metric: Counter | undefined;
  private readonly pingIntervalMs: number;
  private readonly firstPingMaxDelayMs: number;
  private readonly now: () => number;
  private stopped = false;
  /** Rooms whose game server a test has taken over (they ping no more). */
  private readonly silenced = new Set<string>();

  private constructor(private readonly options: SimRoomsOptions) {
    this.logger = (options.logger ?? silentLogger()).child({ component: 'sim-rooms' });
    this.client = new PingClient({ maxSockets: options.maxSockets ?? 512 });
    this.pingIntervalMs = Math.max(1, options.pingIntervalMs ?? 5000);
    this.firstPingMaxDelayMs = Math.max(0, options.firstPingMaxDelayMs ?? Math.min(this.pingIntervalMs, 500));
    this.now = options.now ?? (() => Date.now());
    this.metric = options.metrics?.counter('roomkeeper_sim_room_pings_total', 'Pings sent by simulated game rooms, by status and result.');
    this.ownsInformer = options.podInformer === undefined;
    if (options.podInformer) this.informer = options.podInformer;
    else {
      this.connections = withSharedDispatcher(options.kubeConfig, { userAgent: roomkeeperUserAgent('simulated-rooms') });
      const kubeConfig = this.connections.kubeConfig;
      const core = kubeConfig.makeApiClient(CoreV1Api);
      this.informer = new PodInformer({ name: 'room-pods', kubeConfig, core, logger: this.logger });
    }
  }

  static async start(options: SimRoomsOptions): Promise<SimRooms> {
    const rooms = new SimRooms(options);
    rooms.informer.subscribe((type, pod) => (type === 'delete' ? rooms.onPodDeleted(pod) : rooms.onPod(pod)));
    await rooms.informer.start();
    // A shared informer listed before this subscribed: the pods it already holds are news here.
    if (!rooms.ownsInformer) for (const pod of rooms.informer.list()) rooms.onPod(pod);
    rooms.logger.info('simulated rooms started', { roomsApiUrl: options.roomsApiUrl, pingIntervalMs: rooms.pingIntervalMs });
    return rooms;
  }

  stats(): SimRoomsStats {
    let active = 0;
    for (const e of this.entries.values()) if (e.room.state === 'running') active++;
    return { activeRooms: active, pingsSent: this.counters.pingsSent, pingFailures: this.counters.pingFailures, pingFailuresByNamespace: Object.fromEntries(this.failuresByNamespace), pingsByStatus: { ...this.counters.pingsByStatus }, recentFailures: [...this.recentFailures] };
  }

  /** A room whose pod is gone, as its game server last was (the last 10,000 such rooms are kept). */
  endedRoom(roomId: string, schedulerName?: string): SimRoomView | undefined {
    let found: SimRoomView | undefined;
    for (const v of this.ended.values()) {
      if (v.roomId === roomId && (schedulerName === undefined || v.schedulerName === schedulerName)) found = v;
    }
    return found;
  }

  /** The room with this id (and scheduler, when ids repeat across schedulers), newest first. */
  room(roomId: string, schedulerName?: string): SimRoomView | undefined {
    let found: SimRoomView | undefined;
    for (const e of this.entries.values()) {
      const v = e.room.view();
      if (v.roomId === roomId && (schedulerName === undefined || v.schedulerName === schedulerName)) {
        found = { ...v, namespace: e.namespace, podName: e.podName };
      }
    }
    return found;
  }

  /**
   * Stops one room's simulated game server for good (it never pings again), so a test can send
   * that room's pings itself — e.g. to hold it occupied.
   */
  silence(roomId: string): void {
    this.silenced.add(roomId);
    for (const e of this.entries.values()) if (e.room.view().roomId === roomId) e.room.stop();
  }

  rooms(): SimRoomView[] {
    return [...this.entries.values()].map((e) => ({ ...e.room.view(), namespace: e.namespace, podName: e.podName }));
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const e of this.entries.values()) e.room.stop();
    this.entries.clear();
    this.ended.clear();
    if (this.ownsInformer) await this.informer.stop();
    await this.connections?.close();
    this.client.close();
  }

  private onPod(pod: V1Pod): void {
    if (this.stopped) return;
    const uid = pod.metadata?.uid ?? '';
    const entry = this.entries.get(uid);
    if (isTerminating(pod)) {
      entry?.room.terminate();
      return;
    }
    const nodeName = pod.spec?.nodeName ?? '';
    const alive = pod.status?.phase === 'Running' && (pod.status.containerStatuses ?? []).some((c) => c.state?.running)
      && (this.options.nodeFilter === undefined || this.options.nodeFilter(nodeName));
    if (!alive) {
      if (entry && (entry.room.state === 'running' || isTerminalPhase(pod.status?.phase))) entry.room.stop();
      return;
    }
    if (entry && entry.room.state !== 'stopped') return;
    const identity = roomIdentityOf(pod);
    if (!identity || this.silenced.has(identity.roomId)) return;
    const room = new SimRoom({
      identity,
      script: this.scriptOf(pod, identity.script),
      roomsApiUrl: identity.roomsApiUrl ?? this.options.roomsApiUrl,
      pingIntervalMs: this.pingIntervalMs,
      firstPingDelayMs: Math.floor(unitRandom(1, `${uid}/${identity.roomId}`, 0) * this.firstPingMaxDelayMs),
      send: this.options.send ?? ((ping) => this.client.send(ping)),
      now: this.now,
      onPing: (status, result) => this.countPing(podKey(pod), status, result),
    });
    this.entries.set(uid, { room, namespace: pod.metadata?.namespace ?? '', podName: pod.metadata?.name ?? '' });
    room.start();
  }

  private onPodDeleted(pod: V1Pod): void {
    const uid = pod.metadata?.uid ?? '';
    const entry = this.entries.get(uid);
    if (!entry) return;
    entry.room.stop();
    this.entries.delete(uid);
    this.ended.set(uid, { ...entry.room.view(), namespace: entry.namespace, podName: entry.podName });
    if (this.ended.size > ENDED_ROOMS) this.ended.delete(this.ended.keys().next().value as string);
  }

  private scriptOf(pod: V1Pod, value: string | undefined): RoomScript {
    try {
      return parseRoomScript(value);
    } catch (err) {
      if (!(err instanceof InvalidRoomScriptError)) throw err;
      this.logger.warn('bad room script; the room pings ready', { pod: podKey(pod), error: err.message });
      return DEFAULT_SCRIPT;
    }
  }

  private countPing(pod: string, status: LivePingStatus, result: PingResult): void {
    this.counters.pingsSent++;
    this.counters.pingsByStatus[status]++;
    if (!result.ok) {
      this.counters.pingFailures++;
      const namespace = pod.slice(0, pod.indexOf('/'));
      this.failuresByNamespace.set(namespace, (this.failuresByNamespace.get(namespace) ?? 0) + 1);
      const failure = { pod, status, statusCode: result.statusCode, error: result.error };
      this.recentFailures.push({ at: new Date(this.now()).toISOString(), ...failure });
      if (this.recentFailures.length > RECENT_FAILURES) this.recentFailures.shift();
      this.logger.debug('ping failed', failure);
    }
    this.metric?.inc({ status, result: result.ok ? 'ok' : 'failed' });
  }
}
