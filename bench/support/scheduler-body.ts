/**
 * The scheduler a benchmark creates: one container with one UDP port, small requests, host ports
 * from a range given per scheduler (so schedulers sharing nodes never collide on a port).
 */
import type { Forwarder } from '../../common/src/generated/resources';

export interface BenchSchedulerOptions {
  roomsReplicas?: number;
  portRange?: { start: number; end: number };
  forwarders?: Forwarder[];
}

/** The Scheduler spec (what `POST /schedulers` takes, minus `name`). */
export function benchSchedulerSpec(opts: BenchSchedulerOptions = {}): Record<string, unknown> {
  return {
    game: 'bench-game',
    maxSurge: '25%',
    roomsReplicas: opts.roomsReplicas ?? 0,
    portRange: opts.portRange ?? { start: 20000, end: 29999 },
    ...(opts.forwarders ? { forwarders: opts.forwarders } : {}),
    spec: {
      terminationGracePeriod: '5s',
      containers: [{
        name: 'server',
        image: 'example.com/bench-game:1.0.0',
        imagePullPolicy: 'IfNotPresent',
        command: ['/run'],
        environment: [],
        requests: { memory: '16Mi', cpu: '5m' },
        limits: { memory: '64Mi', cpu: '50m' },
        ports: [{ name: 'game', protocol: 'UDP', port: 7777 }],
      }],
    },
  };
}

/** The `POST /schedulers` body. */
export function benchSchedulerBody(name: string, opts: BenchSchedulerOptions = {}): Record<string, unknown> {
  return { name, ...benchSchedulerSpec(opts) };
}
