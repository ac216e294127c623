import type * as k8s from '@kubernetes/client-node';
import { Writable } from 'node:stream';
import { createLogger, silentLogger } from '../logger';
import { EventRecorder, type EventSink, type KubeEvent } from './event-recorder';

class FakeSink implements EventSink {
  readonly created: { namespace: string; body: k8s.EventsV1Event }[] = [];
  readonly patched: { namespace: string; name: string; count: number; lastObservedTime: Date }[] = [];
  failCreates = false;
  create(namespace: string, body: k8s.EventsV1Event): Promise<unknown> {
    if (this.failCreates) return Promise.reject(Object.assign(new Error('forbidden'), { code: 403 }));
    this.created.push({ namespace, body });
    return Promise.resolve(body);
  }
  patchSeries(namespace: string, name: string, series: { count: number; lastObservedTime: Date }): Promise<unknown> {
    this.patched.push({ namespace, name, ...series });
    return Promise.resolve(undefined);
  }
}

const roomDeleted = (room: string, note = 'room expired: no ping for 300s'): KubeEvent => ({
  regarding: { apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', name: room, namespace: 'sched-a', uid: `uid-${room}` },
  type: 'Normal', reason: 'GameRoomDeleted', action: 'DeleteRoom', note,
});

const roomIn = (namespace: string, room: string, reason = 'GameRoomDeleted'): KubeEvent => ({
  regarding: { apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', name: room, namespace, uid: `uid-${room}` },
  type: 'Normal', reason, action: 'DeleteRoom', note: `${reason} ${room}`,
});

const schedulerEvent = (scheduler: string, reason: string, note: string): KubeEvent => ({
  regarding: { apiVersion: 'roomkeeper.io/v1', kind: 'Scheduler', name: scheduler, uid: `uid-${scheduler}` },
  type: 'Normal', reason, action: 'ExecuteOperation', note,
});

describe('EventRecorder', () => {
  let sink: FakeSink;
  let clock: number;
  let recorder: EventRecorder;
  beforeEach(() => {
    sink = new FakeSink();
    clock = Date.parse('2026-01-01T00:00:00Z');
    recorder = new EventRecorder({ sink, controller: 'roomkeeper.io/operator', instance: 'op-1', logger: silentLogger(), now: () => clock, flushIntervalMs: 60_000 });
  });
  afterEach(() => recorder.close());

  it('aggregates 1,000 identical events into one Event with a count of 1,000', async () => {
    for (let i = 0; i < 1000; i++) {
      clock += 10;
      recorder.record(roomDeleted('room-1'));
    }
    await recorder.flush();
    expect(sink.created).toHaveLength(1);
    expect(sink.patched).toEqual([{ namespace: 'sched-a', name: sink.created[0]?.body.metadata?.name, count: 1000, lastObservedTime: new Date(clock) }]);
    const body = sink.created[0]?.body;
    expect(body).toMatchObject({
      apiVersion: 'events.k8s.io/v1', kind: 'Event', reason: 'GameRoomDeleted', action: 'DeleteRoom', type: 'Normal',
      reportingController: 'roomkeeper.io/operator', reportingInstance: 'op-1',
      regarding: { kind: 'GameRoom', name: 'room-1', namespace: 'sched-a', uid: 'uid-room-1' },
    });
    // Nothing new: nothing written.
    await recorder.flush();
    expect(sink.patched).toHaveLength(1);
  });

  it('keeps events about other objects, or saying other things, apart', async () => {
    recorder.record(roomDeleted('room-1'));
    recorder.record(roomDeleted('room-2'));
    recorder.record(roomDeleted('room-1', 'room deleted by the user'));
    await recorder.flush();
    expect(sink.created.map((c) => [c.body.regarding?.name, c.body.note])).toEqual([
      ['room-1', 'room expired: no ping for 300s'], ['room-2', 'room expired: no ping for 300s'], ['room-1', 'room deleted by the user'],
    ]);
    expect(sink.patched).toEqual([]);
  });

  it('starts a new Event once the window since the last occurrence has passed', async () => {
    recorder.record(roomDeleted('room-1'));
    clock += 11 * 60_000;
    recorder.record(roomDeleted('room-1'));
    await recorder.flush();
    expect(sink.created).toHaveLength(2);
    expect(sink.patched).toEqual([]);
  });

  it('puts the Events of cluster-scoped objects in default and cuts long notes to 1 kB', async () => {
    recorder.record({ regarding: { apiVersion: 'roomkeeper.io/v1', kind: 'Scheduler', name: 'sched-a' }, type: 'Warning', reason: 'OperationFailed', action: 'ExecuteOperation', note: 'x'.repeat(5000) });
    await recorder.flush();
    expect(sink.created[0]?.namespace).toBe('default');
    expect(sink.created[0]?.body.note).toHaveLength(1024);
  });

  it('remembers a bounded number of events', async () => {
    const small = new EventRecorder({ sink, controller: 'c', instance: 'i', logger: silentLogger(), now: () => clock, maxKeys: 10, maxCreatesPerSecond: 1000, createBurst: 1000 });
    for (let i = 0; i < 100; i++) small.record(roomDeleted(`room-${i}`));
    small.record(roomDeleted('room-0')); // forgotten: created again
    small.record(roomDeleted('room-99')); // remembered: counted
    await small.close();
    expect(sink.created).toHaveLength(101);
    expect(sink.patched.map((p) => p.count)).toEqual([2]);
  });

  it('creates a burst of Events of a kind, then at most maxCreatesPerSecond, and counts the ones it drops', async () => {
    const capped = new EventRecorder({ sink, controller: 'c', instance: 'i', logger: silentLogger(), now: () => clock, maxCreatesPerSecond: 2, createBurst: 5 });
    // Each room in a namespace of its own: only the kind's budget can stop them.
    for (let i = 0; i < 12; i++) capped.record(roomIn(`ns-${i}`, `room-${i}`));
    clock += 1000;
    for (let i = 0; i < 3; i++) capped.record(roomIn(`ns-next-${i}`, `room-next-${i}`));
    await capped.close();
    expect(sink.created.map((c) => c.body.regarding?.name)).toEqual(['room-0', 'room-1', 'room-2', 'room-3', 'room-4', 'room-next-0', 'room-next-1']);
    expect(capped.droppedCount).toBe(8);
  });

  it('gives each kind of object its own budget: rooms by the thousand never silence their Scheduler', async () => {
    const capped = new EventRecorder({ sink, controller: 'c', instance: 'i', logger: silentLogger(), now: () => clock, maxCreatesPerSecond: 2, createBurst: 5 });
    for (let i = 0; i < 1000; i++) capped.record(roomDeleted(`room-${i}`));
    capped.record(schedulerEvent('sched-a', 'RolloutProgress', 'Rolling update to v2.0.0: replacing 10 rooms'));
    await capped.close();
    expect(sink.created.filter((c) => c.body.regarding?.kind === 'GameRoom').length).toBeGreaterThan(0);
    expect(sink.created.filter((c) => c.body.regarding?.kind === 'Scheduler').map((c) => c.body.reason)).toEqual(['RolloutProgress']);
  });

  it('a flood of room Events in one scheduler\'s namespace never stops the first Events of another scheduler\'s rooms', async () => {
    const shared = new EventRecorder({ sink, controller: 'c', instance: 'i', logger: silentLogger(), now: () => clock });
    // team-a's rollout asks for 100 room Events a second for a minute; team-b's rooms come and go now and then.
    for (let ms = 0; ms < 60_000; ms += 10) {
      clock += 10;
      shared.record(roomIn('team-a', `room-a-${ms}`));
      if (ms % 5_000 === 0) shared.record(roomIn('team-b', `room-b-${ms}`, 'GameRoomCreated'));
    }
    await shared.close();
    const created = (ns: string) => sink.created.filter((c) => c.namespace === ns).length;
    expect(created('team-b')).toBe(12); // every one of them
    expect(created('team-a')).toBeGreaterThan(0);
    expect(shared.droppedCount).toBe(6000 - created('team-a'));
  });

  it('keeps the first Events of a quiet namespace even while many namespaces flood the kind', async () => {
    const shared = new EventRecorder({ sink, controller: 'c', instance: 'i', logger: silentLogger(), now: () => clock });
    // Ten busy schedulers together ask for 500 room Events a second, far past the kind's 20.
    for (let ms = 0; ms < 30_000; ms += 20) {
      clock += 20;
      for (let t = 0; t < 10; t++) shared.record(roomIn(`busy-${t}`, `room-${t}-${ms}`));
    }
    // A quiet scheduler's rollout starts: its first Events go through at once.
    for (let i = 0; i < 5; i++) shared.record(roomIn('quiet', `room-q-${i}`, 'GameRoomCreated'));
    await shared.close();
    expect(sink.created.filter((c) => c.namespace === 'quiet')).toHaveLength(5);
  });

  it('a Scheduler flooding Events of its own never stops another Scheduler\'s OperationFinished', async () => {
    const shared = new EventRecorder({ sink, controller: 'c', instance: 'i', logger: silentLogger(), now: () => clock });
    for (let i = 0; i < 500; i++) {
      clock += 5;
      shared.record(schedulerEvent('team-a', 'RolloutProgress', `Rolling update to v2: ${i} rooms replaced`));
      if (i === 250) shared.record(schedulerEvent('team-b', 'OperationFinished', 'Operation op-1 finished'));
    }
    await shared.close();
    expect(sink.created.filter((c) => c.body.regarding?.name === 'team-b').map((c) => c.body.reason)).toEqual(['OperationFinished']);
    expect(sink.created.every((c) => c.namespace === 'default')).toBe(true);
  });

  it('a scheduler asking for ever more never takes another busy scheduler\'s share', async () => {
    const shared = new EventRecorder({ sink, controller: 'c', instance: 'i', logger: silentLogger(), now: () => clock });
    // team-a asks for 200 room Events a second, team-b for 10: both past what they get.
    for (let ms = 0; ms < 30_000; ms += 5) {
      clock += 5;
      shared.record(roomIn('team-a', `room-a-${ms}`));
      if (ms % 100 === 0) shared.record(roomIn('team-b', `room-b-${ms}`));
    }
    await shared.close();
    const created = (ns: string) => sink.created.filter((c) => c.namespace === ns).length;
    expect(created('team-b')).toBeGreaterThanOrEqual(5 * 30); // at least its share of 5 a second
    expect(created('team-a')).toBeGreaterThanOrEqual(5 * 30);
    expect(created('team-a') + created('team-b')).toBeLessThanOrEqual(50 + 20 * 30);
  });

  it('never creates more of a kind than its overall cap, however many namespaces ask', async () => {
    const shared = new EventRecorder({ sink, controller: 'c', instance: 'i', logger: silentLogger(), now: () => clock, maxSubjects: 10_000 });
    // 200 namespaces each ask for 10 room Events a second for 10 seconds: 2,000 a second.
    const start = clock;
    for (let ms = 0; ms < 10_000; ms += 100) {
      clock += 100;
      for (let n = 0; n < 200; n++) shared.record(roomIn(`ns-${n}`, `room-${n}-${ms}`));
    }
    await shared.close();
    const seconds = (clock - start) / 1000;
    expect(sink.created.length).toBeLessThanOrEqual(50 + 20 * seconds);
    expect(sink.created.length).toBeGreaterThanOrEqual(20 * (seconds - 1)); // the cap is used, not wasted
    expect(shared.droppedCount).toBe(20_000 - sink.created.length);
  });

  it('lets a lone busy namespace use the kind\'s whole rate when nobody else asks', async () => {
    const lone = new EventRecorder({ sink, controller: 'c', instance: 'i', logger: silentLogger(), now: () => clock });
    const start = clock;
    for (let ms = 0; ms < 10_000; ms += 10) {
      clock += 10;
      lone.record(roomIn('team-a', `room-${ms}`));
    }
    await lone.close();
    const seconds = (clock - start) / 1000;
    expect(sink.created.length).toBeGreaterThanOrEqual(20 * (seconds - 1));
    expect(sink.created.length).toBeLessThanOrEqual(50 + 20 * seconds);
  });

  it('keeps at most maxSubjects namespace budgets, however many namespaces ask', async () => {
    const bounded = new EventRecorder({ sink, controller: 'c', instance: 'i', logger: silentLogger(), now: () => clock, maxSubjects: 10, maxCreatesPerSecond: 1000, createBurst: 1000 });
    for (let i = 0; i < 100; i++) {
      bounded.record(roomIn(`ns-${i}`, `room-${i}`));
      expect(bounded.subjectBudgetCount).toBeLessThanOrEqual(10);
    }
    await bounded.close();
    expect(bounded.subjectBudgetCount).toBe(10);
    expect(sink.created).toHaveLength(100);
  });

  it('tells at most once a minute, per kind, how many Events were dropped since its last line, and whose', async () => {
    const lines: Record<string, unknown>[] = [];
    const stream = new Writable({ write(chunk: Buffer, _enc, done) { lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>); done(); } });
    const told = new EventRecorder({ sink, controller: 'c', instance: 'i', logger: createLogger('operator', { level: 'warn', stream }), now: () => clock, maxCreatesPerSecond: 2, createBurst: 4 });
    const since = new Date(clock).toISOString();
    // team-a floods rooms and its own Scheduler; team-b asks for a few rooms.
    for (let i = 0; i < 100; i++) {
      told.record(roomIn('team-a', `room-a-${i}`));
      told.record(schedulerEvent('team-a', 'RolloutProgress', `${i} rooms replaced`));
    }
    for (let i = 0; i < 10; i++) told.record(roomIn('team-b', `room-b-${i}`));
    clock += 30_000; // within the minute: no second line
    for (let i = 0; i < 100; i++) told.record(roomIn('team-a', `room-a2-${i}`));
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toHaveLength(1); // the first drop is told at once, the others wait for the minute
    expect(lines[0]).toMatchObject({ level: 'warn', droppedByKind: { GameRoom: 1 }, mostDropped: [{ kind: 'GameRoom', namespace: 'team-a', dropped: 1 }], since });
    const droppedBefore = told.droppedCount;

    clock += 30_000;
    told.record(roomIn('team-b', 'room-b-late'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toHaveLength(2);
    const second = lines[1] as { message: string; droppedByKind: { GameRoom: number; Scheduler: number }; mostDropped: { kind: string; namespace?: string; name?: string; dropped: number }[]; droppedSinceStart: number };
    // Only what was dropped since the first line, per kind; the flooding namespace first.
    expect(second.droppedByKind.GameRoom + second.droppedByKind.Scheduler).toBe(droppedBefore - 1);
    expect(second.droppedByKind.Scheduler).toBeGreaterThan(0);
    expect(second.mostDropped[0]).toMatchObject({ kind: 'GameRoom', namespace: 'team-a' });
    expect(second.mostDropped).toContainEqual({ kind: 'Scheduler', name: 'team-a', dropped: second.droppedByKind.Scheduler });
    expect(second.droppedSinceStart).toBe(told.droppedCount);
    expect(second.message).toContain(`GameRoom ${second.droppedByKind.GameRoom}`);
    expect(second.message).toContain('GameRoom in namespace team-a');

    // Drops not told yet are told when the recorder closes.
    for (let i = 0; i < 50; i++) told.record(roomIn('team-c', `room-c-${i}`));
    await told.close();
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatchObject({ mostDropped: [{ kind: 'GameRoom', namespace: 'team-c' }] });
  });

  it('never throws when the API refuses, and writes no count for an Event that was never created', async () => {
    sink.failCreates = true;
    expect(() => {
      recorder.record(roomDeleted('room-1'));
      recorder.record(roomDeleted('room-1'));
    }).not.toThrow();
    await recorder.flush();
    expect(sink.patched).toEqual([]);
  });

  it('logs an Event refused because its namespace is being deleted (a scheduler\'s deletion) at debug, not as a warning', async () => {
    let logged = '';
    const stream = new Writable({ write(chunk: Buffer, _enc, done) { logged += chunk.toString(); done(); } });
    const terminating = {
      code: 403,
      body: JSON.stringify({ kind: 'Status', status: 'Failure', reason: 'Forbidden', code: 403,
        message: 'events.events.k8s.io "room-1.1" is forbidden: unable to create new content in namespace sched-a because it is being terminated',
        details: { causes: [{ reason: 'NamespaceTerminating', message: 'namespace sched-a is being terminated', field: 'metadata.namespace' }] } }),
    };
    const refusing: EventSink = { create: () => Promise.reject(Object.assign(new Error('forbidden'), terminating)), patchSeries: () => Promise.resolve(undefined) };
    const quiet = new EventRecorder({ sink: refusing, controller: 'roomkeeper.io/operator', instance: 'op-1', logger: createLogger('operator', { level: 'info', stream }), now: () => clock });
    quiet.record(roomDeleted('room-1'));
    await quiet.flush();
    await quiet.close();
    expect(logged).toBe('');
  });
});
