import { MetricsRegistry } from './metrics';

describe('MetricsRegistry on prom-client', () => {
  it('renders the process metrics, event-loop lag included, on every registry of the process', async () => {
    const operator = new MetricsRegistry();
    const gateway = new MetricsRegistry();
    operator.counter('roomkeeper_test_total', 'A test counter.').inc({ scheduler: 'a' });
    gateway.counter('roomkeeper_test_total', 'The same name in another component.').inc({ scheduler: 'b' }, 2);
    for (const text of [await operator.render(), await gateway.render()]) {
      expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
      expect(text).toMatch(/^nodejs_heap_used_bytes \d+/m);
      expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
      expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds /m);
      expect(text).toContain('# TYPE nodejs_gc_duration_seconds histogram');
      // The build: package.json's version and the commit of this checkout (or ROOMKEEPER_REVISION).
      expect(text).toMatch(/^roomkeeper_build_info\{version="0\.1\.0",revision="([0-9a-f]{12}|[^"]+)"\} 1$/m);
    }
    expect(await operator.render()).toContain('roomkeeper_test_total{scheduler="a"} 1');
    expect(await gateway.render()).toContain('roomkeeper_test_total{scheduler="b"} 2');
    expect(await operator.render()).not.toContain('scheduler="b"');
  });

  it('keeps counter values by label set, renders labels sorted, and sums them', async () => {
    const m = new MetricsRegistry();
    const c = m.counter('roomkeeper_things_total', 'Things.');
    c.inc({ type: 'x', result: 'ok' });
    c.bind({ type: 'x', result: 'error' }).inc(3);
    c.inc({ result: 'ok', type: 'x' });
    expect(c.get({ type: 'x', result: 'ok' })).toBe(2);
    expect(m.sum('roomkeeper_things_total', { type: 'x' })).toBe(5);
    expect(await m.render()).toContain('roomkeeper_things_total{result="ok",type="x"} 2');
  });

  it('removes every series of a subject, in every metric', async () => {
    const m = new MetricsRegistry();
    m.gauge('roomkeeper_rooms', 'Rooms.', undefined, { labelNames: ['scheduler', 'status'] }).set(4, { scheduler: 'gone', status: 'ready' });
    m.gauge('roomkeeper_rooms', 'Rooms.').set(1, { scheduler: 'kept', status: 'ready' });
    m.histogram('roomkeeper_op_seconds', 'Durations.').observe(0.2, { scheduler: 'gone', definition: 'add_rooms' });
    expect(m.removeSeries({ scheduler: 'gone' })).toBe(2);
    const text = await m.render();
    expect(text).not.toContain('scheduler="gone"');
    expect(text).toContain('roomkeeper_rooms{scheduler="kept",status="ready"} 1');
  });

  it('renders a gauge with a collect function before it was ever set', async () => {
    const m = new MetricsRegistry();
    let pending = 7;
    m.gauge('roomkeeper_pending', 'Pending.', () => m.gauge('roomkeeper_pending', '').set(pending));
    expect(await m.render()).toContain('roomkeeper_pending 7');
    pending = 2;
    expect(await m.render()).toContain('roomkeeper_pending 2');
  });

  it('refuses one name as two types', () => {
    const m = new MetricsRegistry();
    m.counter('roomkeeper_x_total', 'X.');
    expect(() => m.gauge('roomkeeper_x_total', 'X.')).toThrow(/already registered/);
  });
});
