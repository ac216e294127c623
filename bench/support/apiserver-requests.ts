/**
 * What the API server itself counted: `apiserver_request_total` from its `/metrics`, summed by
 * verb and resource (`POST gamerooms`, `PATCH pods/status`, ...). The difference of two snapshots
 * is every client's requests in between (operator, gateway, simulated kubelet, the bench's own
 * watches), as the server saw them.
 */
export type RequestCounts = Map<string, number>;

const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'DELETECOLLECTION']);

export function parseRequestCounts(metricsText: string): RequestCounts {
  const counts: RequestCounts = new Map();
  for (const line of metricsText.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const m = /^apiserver_request_total\{(.*)\}\s+(\S+)$/.exec(line);
    if (!m) continue;
    const labels = new Map([...(m[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1] ?? '', l[2] ?? '']));
    const resource = labels.get('resource') ?? '';
    if (resource === '') continue;
    const sub = labels.get('subresource') ?? '';
    const key = `${labels.get('verb') ?? '?'} ${resource}${sub ? `/${sub}` : ''}`;
    counts.set(key, (counts.get(key) ?? 0) + Number(m[2]));
  }
  return counts;
}

export interface RequestDelta {
  total: number;
  writes: number;
  /** `verb resource` -> requests, largest first. */
  byKind: [string, number][];
}

export function requestDelta(before: RequestCounts, after: RequestCounts): RequestDelta {
  const byKind: [string, number][] = [];
  let total = 0;
  let writes = 0;
  for (const [key, n] of after) {
    const d = n - (before.get(key) ?? 0);
    if (d <= 0) continue;
    byKind.push([key, d]);
    total += d;
    if (WRITE_VERBS.has(key.split(' ')[0] ?? '')) writes += d;
  }
  byKind.sort((a, b) => b[1] - a[1]);
  return { total, writes, byKind };
}

/** "total (writes): top kinds" per unit, for a figure's note. */
export function describeDelta(d: RequestDelta, per: number, unit: string, top = 8): string {
  const each = (n: number) => (n / per).toFixed(2);
  return `${each(d.total)} requests per ${unit} (${each(d.writes)} writes): ${d.byKind.slice(0, top).map(([k, n]) => `${k} ${each(n)}`).join(', ')}`;
}
