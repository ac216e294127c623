/**
 * A small Prometheus registry: counters, gauges and histograms with labels, rendered in the
 * text exposition format (version 0.0.4) at `/metrics`.
 */

type Labels = Record<string, string | number>;

function labelKey(labels: Labels | undefined): string {
  if (!labels) return '';
  const keys = Object.keys(labels).sort();
  return keys.map((k) => `${k}="${escapeLabel(String(labels[k]))}"`).join(',');
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

interface Metric { render(): string }

/** The label sets of a metric's series, kept so series can be removed by label value. */
class SeriesLabels {
  private readonly byKey = new Map<string, Labels>();
  note(key: string, labels: Labels | undefined): void {
    if (!this.byKey.has(key)) this.byKey.set(key, { ...labels });
  }
  /** Keys of the series whose labels include every pair of `match`; forgets them. */
  take(match: Labels): string[] {
    const keys: string[] = [];
    for (const [key, labels] of this.byKey) {
      if (Object.entries(match).every(([k, v]) => String(labels[k]) === String(v))) keys.push(key);
    }
    for (const key of keys) this.byKey.delete(key);
    return keys;
  }
}

export class Counter implements Metric {
  private readonly values = new Map<string, number>();
  private readonly series = new SeriesLabels();
  constructor(readonly name: string, readonly help: string) {}
  inc(labels?: Labels, by = 1): void {
    const k = labelKey(labels);
    this.series.note(k, labels);
    this.values.set(k, (this.values.get(k) ?? 0) + by);
  }
  get(labels?: Labels): number { return this.values.get(labelKey(labels)) ?? 0; }
  /** A child with its labels fixed once, for hot paths (no label formatting per increment). */
  bind(labels: Labels): { inc(by?: number): void } {
    const k = labelKey(labels);
    this.series.note(k, labels);
    return { inc: (by = 1) => { this.values.set(k, (this.values.get(k) ?? 0) + by); } };
  }
  /** Drops every series whose labels include all of `match` (its subject is gone); returns how many. */
  remove(match: Labels): number {
    const keys = this.series.take(match);
    for (const k of keys) this.values.delete(k);
    return keys.length;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const [k, v] of this.values) lines.push(`${this.name}${k ? `{${k}}` : ''} ${v}`);
    return lines.join('\n');
  }
}

export class Gauge implements Metric {
  private readonly values = new Map<string, number>();
  constructor(readonly name: string, readonly help: string, private readonly collect?: () => void) {}
  set(value: number, labels?: Labels): void { this.values.set(labelKey(labels), value); }
  get(labels?: Labels): number { return this.values.get(labelKey(labels)) ?? 0; }
  reset(): void { this.values.clear(); }
  render(): string {
    this.collect?.();
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`];
    for (const [k, v] of this.values) lines.push(`${this.name}${k ? `{${k}}` : ''} ${v}`);
    return lines.join('\n');
  }
}

export const DEFAULT_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class Histogram implements Metric {
  private readonly series = new Map<string, { counts: number[]; sum: number; count: number }>();
  private readonly seriesLabels = new SeriesLabels();
  constructor(readonly name: string, readonly help: string, readonly buckets: number[] = DEFAULT_BUCKETS) {}
  observe(value: number, labels?: Labels): void {
    const k = labelKey(labels);
    this.seriesLabels.note(k, labels);
    this.observeKey(k, value);
  }
  /** A child with its labels fixed once, for hot paths. */
  bind(labels: Labels): { observe(value: number): void } {
    const k = labelKey(labels);
    this.seriesLabels.note(k, labels);
    return { observe: (value: number) => this.observeKey(k, value) };
  }
  /** Drops every series whose labels include all of `match`; returns how many. */
  remove(match: Labels): number {
    const keys = this.seriesLabels.take(match);
    for (const k of keys) this.series.delete(k);
    return keys.length;
  }
  private observeKey(k: string, value: number): void {
    let s = this.series.get(k);
    if (!s) { s = { counts: this.buckets.map(() => 0), sum: 0, count: 0 }; this.series.set(k, s); }
    for (let i = 0; i < this.buckets.length; i++) if (value <= (this.buckets[i] as number)) s.counts[i] = (s.counts[i] ?? 0) + 1;
    s.sum += value;
    s.count += 1;
  }
  /** Starts a timer; calling the result observes the elapsed seconds. */
  startTimer(labels?: Labels): (more?: Labels) => number {
    const start = process.hrtime.bigint();
    return (more?: Labels) => {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      this.observe(seconds, { ...labels, ...more });
      return seconds;
    };
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const [k, s] of this.series) {
      const sep = k ? `${k},` : '';
      this.buckets.forEach((b, i) => lines.push(`${this.name}_bucket{${sep}le="${b}"} ${s.counts[i] ?? 0}`));
      lines.push(`${this.name}_bucket{${sep}le="+Inf"} ${s.count}`);
      lines.push(`${this.name}_sum${k ? `{${k}}` : ''} ${s.sum}`);
      lines.push(`${this.name}_count${k ? `{${k}}` : ''} ${s.count}`);
    }
    return lines.join('\n');
  }
}

/** One registry per process; each component registers its metrics on it. */
export class MetricsRegistry {
  private readonly metrics = new Map<string, Metric>();
  counter(name: string, help: string): Counter { return this.register(name, () => new Counter(name, help)); }
  gauge(name: string, help: string, collect?: () => void): Gauge { return this.register(name, () => new Gauge(name, help, collect)); }
  histogram(name: string, help: string, buckets?: number[]): Histogram { return this.register(name, () => new Histogram(name, help, buckets)); }
  render(): string {
    const mem = process.memoryUsage();
    const proc = [
      '# HELP process_resident_memory_bytes Resident memory size in bytes.',
      '# TYPE process_resident_memory_bytes gauge',
      `process_resident_memory_bytes ${mem.rss}`,
      '# HELP nodejs_heap_used_bytes V8 heap used in bytes.',
      '# TYPE nodejs_heap_used_bytes gauge',
      `nodejs_heap_used_bytes ${mem.heapUsed}`,
    ].join('\n');
    return [...[...this.metrics.values()].map((m) => m.render()), proc].join('\n') + '\n';
  }
  private register<T extends Metric>(name: string, make: () => T): T {
    const existing = this.metrics.get(name);
    if (existing) return existing as T;
    const m = make();
    this.metrics.set(name, m);
    return m;
  }
}

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
