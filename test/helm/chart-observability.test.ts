/**
 * The chart's Grafana dashboards and PrometheusRule (issue 14): they render and lint clean, every
 * alert has a summary, a description and a runbook section in the chart README, and every metric
 * a dashboard panel or an alert expression names is in the `/metrics` output of a running stack
 * (sandbox, operator, real gateway, simulated rooms pinging, a real gRPC forwarder receiver).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { forwardResultLabel, startForwardReceiver, type ForwardReceiver } from '../../common/src/forwarding';
import { startOpsServer, type OpsServer } from '../../common/src/ops-server';
import { managementCall } from '../support/http';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';
import { CHART_DIR, KubeObject, field, helmLint, renderChart } from './helm-cli';

const ENABLED = { grafanaDashboards: { enabled: true }, prometheusRule: { enabled: true } };

interface Rule { alert: string; expr: string; for: string; labels: Record<string, string>; annotations: Record<string, string> }
interface Dashboard { uid: string; title: string; panels: { title: string; targets: { expr: string }[] }[] }

const PROMQL_WORDS = new Set([
  'sum', 'max', 'min', 'avg', 'count', 'rate', 'increase', 'irate', 'histogram_quantile', 'clamp_min', 'clamp_max', 'vector', 'abs',
  'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset', 'label_values', 'le', 'inf', 'nan',
]);

/** The metric names a PromQL expression reads: identifiers outside label matchers, grouping lists, ranges and strings. */
export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/(^|[^a-zA-Z0-9_:])\d+(\.\d+)?(e[+-]?\d+)?/gi, '$1 ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const m of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const after = stripped.slice(m.index + m[0].length).trimStart();
    if (PROMQL_WORDS.has(m[0]) || after.startsWith('(')) continue;
    names.add(m[0]);
  }
  return [...names];
}

/** Metric families in a Prometheus text exposition (`# TYPE name kind`). */
function families(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) out.set(m[1] as string, m[2] as string);
  return out;
}

/** Whether a name read by PromQL is one of these families (a histogram's _bucket/_sum/_count too). */
function exposed(name: string, fams: Map<string, string>): boolean {
  if (fams.has(name)) return true;
  const base = /^(.*)_(bucket|sum|count)$/.exec(name)?.[1];
  return base !== undefined && ['histogram', 'summary'].includes(fams.get(base) ?? '');
}

describe('dashboards and alerts', () => {
  let objects: KubeObject[];
  let dashboards: Dashboard[];
  let rules: Rule[];
  beforeAll(async () => {
    objects = await renderChart({ namespace: 'rk-system', values: ENABLED });
    dashboards = objects.filter((o) => o.kind === 'ConfigMap' && o.metadata.name.includes('-dashboard-'))
      .flatMap((o) => Object.values(field(o, 'data') as Record<string, string>).map((json) => JSON.parse(json) as Dashboard));
    rules = objects.filter((o) => o.kind === 'PrometheusRule').flatMap((o) => (field(o, 'spec.groups') as { rules: Rule[] }[]).flatMap((g) => g.rules));
  });

  it('are off by default, render when enabled, and lint clean', async () => {
    const defaults = await renderChart({ namespace: 'rk-system' });
    expect(defaults.filter((o) => o.kind === 'PrometheusRule' || o.metadata.name.includes('-dashboard-'))).toEqual([]);
    const lint = await helmLint({ values: ENABLED });
    expect(lint.stderr).toBe('');
    expect(lint.code).toBe(0);
    expect(dashboards.map((d) => d.uid).sort()).toEqual(['roomkeeper-fleet', 'roomkeeper-gateway', 'roomkeeper-operations']);
    for (const o of objects.filter((x) => x.metadata.name.includes('-dashboard-'))) expect(o.metadata.labels?.grafana_dashboard).toBe('1');
  });

  it('alert on each condition the issue lists, each with a summary, a description and a README runbook section', () => {
    expect(rules.map((r) => r.alert)).toEqual([
      'RoomkeeperNoLeader', 'RoomkeeperOperationStuck', 'RoomkeeperRoomsNotReady', 'RoomkeeperDesiredNotCurrent',
      'RoomkeeperEventLoopLagHigh', 'RoomkeeperPingErrorRateHigh', 'RoomkeeperPingsNotArriving', 'RoomkeeperRoomsChurning', 'RoomkeeperForwarderFailing', 'RoomkeeperCacheImpaired',
      'RoomkeeperApiAccessRefused',
    ]);
    const readme = fs.readFileSync(path.join(CHART_DIR, 'README.md'), 'utf8');
    for (const r of rules) {
      expect(r.annotations.summary?.length).toBeGreaterThan(15);
      expect(r.annotations.description?.length).toBeGreaterThan(40);
      expect(r.annotations.runbook_url).toMatch(new RegExp(`README\\.md#${r.alert.toLowerCase()}$`));
      expect(readme).toMatch(new RegExp(`^### ${r.alert}\\n\\n\\S`, 'm'));
      expect(r.expr).toContain('namespace="rk-system"');
    }
  });

  it('RoomkeeperDesiredNotCurrent leaves out rooms held by players or a matchmaker above the desired count (kept by design: the trial saw it fire on the README\'s own kubectl scale)', () => {
    const rule = rules.find((r) => r.alert === 'RoomkeeperDesiredNotCurrent');
    expect(rule?.expr).toContain('roomkeeper_scheduler_rooms{namespace="rk-system",status=~"occupied|active|allocated"}');
    expect(rule?.expr).not.toContain('!=');
    // More rooms than desired fires only when the free ones alone are more than desired: a rollout
    // waiting for 3 occupied old rooms beside 10 new ones (desired 12, current 13) does not.
    // Nor do rooms marked silent, each with a room made in its place until it pings again or expires.
    expect(rule?.expr).toContain('(max by (scheduler) (roomkeeper_scheduler_rooms_current{namespace="rk-system"}) - sum by (scheduler) (roomkeeper_scheduler_rooms{namespace="rk-system",status=~"occupied|active|allocated"}) - max by (scheduler) (roomkeeper_scheduler_rooms_silent{namespace="rk-system"})) > max by (scheduler) (roomkeeper_scheduler_rooms_desired{namespace="rk-system"})');
    expect(rule?.annotations.description).toContain('kept by design');
  });

  it('RoomkeeperForwarderFailing\'s runbook names every result its expression counts as not ok, and where each is told', () => {
    const rule = rules.find((r) => r.alert === 'RoomkeeperForwarderFailing');
    expect(rule?.expr).toContain('result!="ok"');
    const readme = fs.readFileSync(path.join(CHART_DIR, 'README.md'), 'utf8');
    const section = readme.split('\n### RoomkeeperForwarderFailing\n')[1]?.split('\n### ')[0] ?? '';
    // A failed call, and a receiver's answer with each code Maestro maps and one it does not.
    const counted = [forwardResultLabel({ forwarder: 'f', ok: false }), ...[404, 406, 500, 503].map((code) => forwardResultLabel({ forwarder: 'f', ok: true, code }))];
    expect(counted).not.toContain('ok');
    for (const label of counted) expect(section).toContain(`\`${label}\``);
  });

  it('reads metric names out of PromQL', () => {
    expect(metricNames('histogram_quantile(0.9, sum by (le, definition) (rate(roomkeeper_operation_duration_seconds_bucket{a="b(c)"}[15m])))'))
      .toEqual(['roomkeeper_operation_duration_seconds_bucket']);
    expect(metricNames('(max(x_total{namespace="n"}) or vector(0)) < 1 unless on() (sum(increase(y_total[5m])) > 0)')).toEqual(['x_total', 'y_total']);
    expect(metricNames('a_total / clamp_min(b_total, 1e-9) > 0.5')).toEqual(['a_total', 'b_total']);
  });

  describe('on a running stack', () => {
    let stack: Stack;
    let receiver: ForwardReceiver;
    let operatorOps: OpsServer;
    beforeAll(async () => {
      receiver = await startForwardReceiver();
      stack = await startStack({ config: { healthInterval: 300 }, simulation: { pingIntervalMs: 300 } });
      operatorOps = await startOpsServer({ port: 0, host: '127.0.0.1', metrics: (stack.operators[0] as { metrics: Parameters<typeof startOpsServer>[0]['metrics'] }).metrics, readiness: [] });
    });
    afterAll(async () => {
      await operatorOps.close();
      await stack.stop();
      await receiver.stop();
    });

    it('exposes every metric a dashboard or an alert names', async () => {
      const forwarders = [{ name: 'matchmaker', enable: true, type: 'gRPC', address: receiver.address, options: { timeout: 1000 } }];
      const spec = (schedulerObject('observed', { roomsReplicas: 1, forwarders }) as { spec: Record<string, unknown> }).spec;
      expect((await managementCall(stack, 'POST', '/schedulers', { name: 'observed', ...spec })).status).toBe(200);
      await waitFor(async () => (await stack.api.listGameRooms('observed')).items.some((r) => r.status?.status === 'ready'), { timeoutMs: 60_000, message: 'a ready room' });
      await waitFor(() => receiver.requestsOf('SendRoomResync').length > 0, { timeoutMs: 20_000, message: 'a forwarded ping' });

      const operatorText = await (await fetch(`${operatorOps.url}/metrics`)).text();
      // The forwarding worker reports its results to the gateway's registry periodically, not per call.
      const forwardFamilies = ['roomkeeper_gateway_forwards_total', 'roomkeeper_forwarded_events_total', 'roomkeeper_forward_duration_seconds'];
      const gatewayText = await waitFor(async () => {
        const text = await (await fetch(`${stack.managementUrl!}/metrics`)).text();
        return forwardFamilies.every((f) => families(text).has(f)) ? text : undefined;
      }, { timeoutMs: 20_000, message: `the gateway's /metrics shows ${forwardFamilies.join(', ')}` });
      const fams = new Map([...families(operatorText), ...families(gatewayText)]);
      for (const text of [operatorText, gatewayText]) {
        expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds /m);
        expect(text).toMatch(/^process_cpu_seconds_total /m);
      }
      const named = new Set([
        ...dashboards.flatMap((d) => d.panels.flatMap((p) => p.targets.flatMap((t) => metricNames(t.expr)))),
        ...rules.flatMap((r) => metricNames(r.expr)),
      ]);
      expect(named.size).toBeGreaterThan(20);
      expect([...named].filter((n) => !exposed(n, fams)).sort()).toEqual([]);
    });
  });
});
