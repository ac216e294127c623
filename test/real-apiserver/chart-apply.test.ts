/**
 * Every object the Helm chart renders is applied for real (not a dry run) to kube-apiserver v1.28:
 * with the default values and with every option set (test/helm/values-full.yaml), each in a
 * namespace of its own and under its own release name, CRDs included. The API server's admission
 * and validation are the judge; then everything is removed again.
 */
import * as path from 'node:path';
import { asList, kubectl, realApiServer, renderChart, reportNotRun, type Manifest } from '../support/real-apiserver';
import { REPO_ROOT } from '../support/stack';

const FULL_VALUES = path.join(REPO_ROOT, 'test', 'helm', 'values-full.yaml');

/**
 * The every-option render has a ServiceMonitor and a PrometheusRule: their CRDs (Prometheus
 * Operator) as stand-ins, the same files the sandbox chart test applies.
 */
const MONITORING_CRDS: Record<string, string> = {
  ServiceMonitor: path.join(REPO_ROOT, 'test', 'helm', 'fixtures', 'servicemonitor-crd.yaml'),
  PrometheusRule: path.join(REPO_ROOT, 'test', 'helm', 'fixtures', 'prometheusrule-crd.yaml'),
};

const cases: Array<[string, string[], string, string]> = [
  ['default values', [], 'rk-chart-defaults', 'chart-defaults'],
  ['every option set', ['-f', FULL_VALUES], 'rk-chart-full', 'chart-full'],
];

describe('the Helm chart applied to a real API server', () => {
  test.each(cases)('%s: every rendered object is accepted and exists afterwards', (_what, args, namespace, release) => {
    const plane = realApiServer();
    if (!plane) {
      expect(reportNotRun('Helm chart applied for real')).toMatch(/NOT RUN/);
      return;
    }
    const admin = plane.adminKubeconfig;
    const manifests: Manifest[] = renderChart(['--include-crds', ...args], namespace, release);
    for (const [kind, file] of Object.entries(MONITORING_CRDS)) {
      if (manifests.some((m) => m.kind === kind)) kubectl(admin, ['apply', '-f', file]);
    }
    kubectl(admin, ['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
    kubectl(admin, ['create', 'namespace', namespace]);
    try {
      const out = kubectl(admin, ['apply', '-f', '-'], asList(manifests));
      // kubectl names every object it created or configured; none may be missing.
      for (const m of manifests) {
        expect(out).toContain(`/${String(m.metadata?.name)}`);
        const where = m.metadata?.namespace ? ['-n', m.metadata.namespace] : [];
        const kind = `${String(m.kind)}${m.apiVersion?.includes('/') ? `.${String(m.apiVersion.split('/')[0])}` : ''}`;
        expect(kubectl(admin, ['get', kind, m.metadata?.name ?? '', ...where, '-o', 'name']).trim()).not.toBe('');
      }
      expect(manifests.length).toBeGreaterThan(10);
    } finally {
      // CRDs stay (the suites use them); everything else the render made goes.
      const removable = manifests.filter((m) => m.kind !== 'CustomResourceDefinition');
      kubectl(admin, ['delete', '--ignore-not-found', '--wait=false', '-f', '-'], asList(removable));
      kubectl(admin, ['delete', 'namespace', namespace, '--wait=true', '--timeout=120s']);
    }
  }, 300_000);
});
