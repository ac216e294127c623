/**
 * Host ports for a new room (spec "PortRange", Maestro `RandomPortAllocator`).
 *
 * - Every container port gets a host port drawn at random from the scheduler's `portRange`, or
 *   from the port's own `hostPortRange` when it has one (exactly one of the two is configured;
 *   the port's own range wins if both are present).
 * - Ranges are inclusive of both ends, as Maestro's (`Total() = end - start + 1`).
 * - Ports are distinct within the pod (Maestro's rule), whatever their protocol.
 * - Unlike Maestro, a port already used by another room of this scheduler (`used`) is avoided
 *   while the range has a free one: two rooms of one scheduler on one node would otherwise clash.
 * - When every port of a range is in `used`, the pick falls back to a random port of the range
 *   (still distinct within the pod). Rooms of the scheduler on other nodes may then share it, and
 *   a real clash on one node shows up as a Pending pod (`isPortConflict`), which the room manager
 *   deletes and retries. `planHostPorts` reports the ranges where this happened.
 * - Errors (never thrown): a port with no range, a range outside 1..65535 or with end < start, or
 *   a pod that needs more distinct ports than its range holds.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { PortRange, SchedulerSpec } from './types';

/** The part of a scheduler definition host ports depend on. */
export type HostPortDefinition = Pick<SchedulerSpec, 'portRange'> & {
  spec: { containers: { name: string; ports?: { name: string; port: number; hostPortRange?: PortRange }[] }[] };
};

export interface HostPortPlan {
  /** Host ports per container, per port, in definition order. */
  ports: number[][];
  /** Ranges (`start-end`) whose free ports were all used, so a used port was picked. */
  exhaustedRanges: string[];
}

/** Random draws tried before listing a range's free ports (keeps large, sparse ranges cheap). */
const RANDOM_TRIES = 16;

/** Host ports for each container port of a new room; `rand` returns a number in [0, 1). */
export function pickHostPorts(def: HostPortDefinition, used: ReadonlySet<number>, rand: () => number): number[][] | { error: string } {
  const plan = planHostPorts(def, used, rand);
  return 'error' in plan ? plan : plan.ports;
}

/** As `pickHostPorts`, and also says which ranges were exhausted. */
export function planHostPorts(def: HostPortDefinition, used: ReadonlySet<number>, rand: () => number): HostPortPlan | { error: string } {
  const inPod = new Set<number>();
  const exhausted = new Set<string>();
  const ports: number[][] = [];
  for (const container of def.spec.containers) {
    const picked: number[] = [];
    for (const port of container.ports ?? []) {
      const range = port.hostPortRange ?? def.portRange;
      const where = `container ${container.name} port ${port.name}`;
      if (!range) return { error: `${where} has no host port range (set portRange or hostPortRange)` };
      const bad = invalidRange(range);
      if (bad) return { error: `${where}: ${bad}` };
      const free = pickFrom(range, (p) => !inPod.has(p) && !used.has(p), rand);
      const hostPort = free ?? pickFrom(range, (p) => !inPod.has(p), rand);
      if (hostPort === undefined) {
        return { error: `${where}: host port range ${range.start}-${range.end} has too few ports for this room's ports` };
      }
      if (free === undefined) exhausted.add(`${range.start}-${range.end}`);
      inPod.add(hostPort);
      picked.push(hostPort);
    }
    ports.push(picked);
  }
  return { ports, exhaustedRanges: [...exhausted] };
}

/**
 * Whether a room's pod could not be scheduled because no node had its host ports free: Pending,
 * `PodScheduled=False`, with the scheduler's "didn't have free ports" message.
 */
export function isPortConflict(pod: V1Pod): boolean {
  if (pod.status?.phase !== 'Pending') return false;
  const scheduled = pod.status.conditions?.find((c) => c.type === 'PodScheduled');
  return scheduled?.status === 'False' && /free ports/i.test(scheduled.message ?? '');
}

function invalidRange(range: PortRange): string | undefined {
  const { start, end } = range;
  if (!Number.isInteger(start) || !Number.isInteger(end)) return `host port range ${start}-${end} is not made of integers`;
  if (start < 1 || end > 65535) return `host port range ${start}-${end} is outside 1-65535`;
  if (end < start) return `host port range ${start}-${end} ends before it starts`;
  return undefined;
}

/** A uniformly random port of `range` that passes `ok`, or undefined when none does. */
function pickFrom(range: PortRange, ok: (port: number) => boolean, rand: () => number): number | undefined {
  const size = range.end - range.start + 1;
  for (let i = 0; i < RANDOM_TRIES; i++) {
    const port = range.start + index(rand, size);
    if (ok(port)) return port;
  }
  const candidates: number[] = [];
  for (let p = range.start; p <= range.end; p++) if (ok(p)) candidates.push(p);
  return candidates.length === 0 ? undefined : candidates[index(rand, candidates.length)];
}

/** An index in [0, size) from `rand`, safe against a `rand` that returns 1 or junk. */
function index(rand: () => number, size: number): number {
  const r = rand();
  const i = Number.isFinite(r) ? Math.floor(r * size) : 0;
  return Math.min(size - 1, Math.max(0, i));
}

/** The host ports the pods bound to each node hold, by node name (pods that ended hold none). */
export function hostPortsByNode(pods: readonly V1Pod[]): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>();
  for (const pod of pods) {
    const node = pod.spec?.nodeName;
    if (!node || pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') continue;
    let taken = out.get(node);
    for (const container of pod.spec?.containers ?? []) {
      for (const port of container.ports ?? []) {
        if (port.hostPort === undefined || port.hostPort === 0) continue;
        if (!taken) out.set(node, (taken = new Set()));
        taken.add(port.hostPort);
      }
    }
  }
  return out;
}

/** How many host ports a room of `def` draws from each range (`start-end`), as `planHostPorts` draws them. */
export function portsNeeded(def: HostPortDefinition): Map<string, { range: PortRange; count: number }> {
  const out = new Map<string, { range: PortRange; count: number }>();
  for (const container of def.spec.containers) {
    for (const port of container.ports ?? []) {
      const range = port.hostPortRange ?? def.portRange;
      if (!range) continue;
      const key = `${range.start}-${range.end}`;
      const need = out.get(key);
      if (need) need.count += 1;
      else out.set(key, { range, count: 1 });
    }
  }
  return out;
}

/**
 * Whether a new room of `def` finds its host ports free on at least one of the nodes whose taken
 * ports are `takenOnNodes`: on that node, each range it draws from has as many ports free as the
 * room needs from it. When on none it does, a room whose pod waits for ports (`isPortConflict`)
 * replaced by another only makes one that waits the same way.
 */
export function roomFitsOnANode(def: HostPortDefinition, takenOnNodes: readonly ReadonlySet<number>[]): boolean {
  const needs = [...portsNeeded(def).values()];
  return takenOnNodes.some((taken) => needs.every(({ range, count }) => {
    let used = 0;
    for (const p of taken) if (p >= range.start && p <= range.end) used += 1;
    return range.end - range.start + 1 - used >= count;
  }));
}
