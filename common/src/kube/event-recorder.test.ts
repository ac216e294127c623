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

  it('creates a burst of Events, then at most maxCreatesPerSecond, and counts the ones it drops', async () => {
    const capped = new EventRecorder({ sink, controller: 'c', instance: 'i', logger: silentLogger(), now: () => clock, maxCreatesPerSecond: 2, createBurst: 5 });
    for (let i = 0; i < 12; i++) capped.record(roomDeleted(`room-${i}`));
    clock += 1000;
    for (let i = 0; i < 3; i++) capped.record(roomDeleted(`room-next-${i}`));
    await capped.close();
    expect(sink.created.map((c) => c.body.regarding?.name)).toEqual(['room-0', 'room-1', 'room-2', 'room-3', 'room-4', 'room-next-0', 'room-next-1']);
    expect(capped.droppedCount).toBe(8);
  });

  it('gives each kind of object its own budget: rooms by the thousand never silence their Scheduler', async () => {
    const capped = new EventRecorder({ sink, controller: 'c', instance: 'i', logger: silentLogger(), now: () => clock, maxCreatesPerSecond: 2, createBurst: 5 });
    for (let i = 0; i < 1000; i++) capped.record(roomDeleted(`room-${i}`));
    capped.record({ regarding: { apiVersion: 'roomkeeper.io/v1', kind: 'Scheduler', name: 'sched-a' }, type: 'Normal', reason: 'RolloutProgress', action: 'ExecuteOperation', note: 'Rolling update to v2.0.0: replacing 10 rooms' });
    await capped.close();
    expect(sink.created.filter((c) => c.body.regarding?.kind === 'GameRoom')).toHaveLength(5);
    expect(sink.created.filter((c) => c.body.regarding?.kind === 'Scheduler').map((c) => c.body.reason)).toEqual(['RolloutProgress']);
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
