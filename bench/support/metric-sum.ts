/** Reads a counter out of a MetricsRegistry: the sum over series matching labels. */
import type { MetricsRegistry } from '../../common/src/metrics';

export function sumMetric(registry: MetricsRegistry, name: string, labels: Record<string, string> = {}): number {
  return registry.sum(name, labels);
}

/** The same, over Prometheus text read from another process or an HTTP endpoint. */
export function sumMetricText(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const series = m[3] ?? '';
    if (Object.entries(labels).every(([k, v]) => series.includes(`${k}="${v}"`))) total += Number(m[4]);
  }
  return total;
}
