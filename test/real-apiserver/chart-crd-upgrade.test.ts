/**
 * The CRD upgrade the docs give (chart README, "Upgrades and CRDs"; the upgrade NOTES; the main
 * README) works after a `helm install` on kube-apiserver v1.28 with the real `helm` and `kubectl`.
 * Helm creates the chart's CRDs as field manager `helm`; a plain `kubectl apply --server-side` of a
 * changed CRD then fails (`conflict with "helm" ...: .spec.versions`), and the documented command,
 * with `--force-conflicts`, applies it. A second upgrade that changes a field the first left alone
 * conflicts again without the flag, as the chart README says.
 *
 * The plane's own CRDs serve the other suites, so the chart here is a copy holding one of the
 * chart's CRDs under a group of its own (no short name, its own category): Helm installs it as it
 * installs the chart's, and no other suite sees it.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseDocument } from 'yaml';
import { CHART_DIR, REPO_ROOT, runHelm } from '../helm/helm-cli';
import { kubectl, realApiServer, reportNotRun } from '../support/real-apiserver';

const GROUP = 'crd-upgrade.roomkeeper.test';
const CRD = `allocationclaims.${GROUP}`;
const NAMESPACE = 'rk-crd-upgrade';
const RELEASE = 'crd-upgrade';

/** The commands of the chart README's "Upgrades and CRDs" block, comments left out. */
function documentedCommands(): string[] {
  const readme = fs.readFileSync(path.join(CHART_DIR, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Upgrades and CRDs'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
}

/** The chart's AllocationClaim CRD under GROUP, with `edit` applied to it, as YAML. */
function testCrd(edit: (crd: { spec: { names: Record<string, unknown>; versions: { additionalPrinterColumns: unknown[] }[] } }) => void): string {
  const doc = parseDocument(fs.readFileSync(path.join(CHART_DIR, 'crds', 'roomkeeper.io_allocationclaims.yaml'), 'utf8'));
  const crd = doc.toJS() as { metadata: { name: string }; spec: { group: string; names: Record<string, unknown>; versions: { additionalPrinterColumns: unknown[] }[] } };
  crd.metadata.name = CRD;
  crd.spec.group = GROUP;
  delete crd.spec.names.shortNames;
  crd.spec.names.categories = ['rk-crd-upgrade-test'];
  edit(crd);
  return `---\n${JSON.stringify(crd, null, 2)}\n`;
}

function printerColumns(admin: string): string {
  return kubectl(admin, ['get', 'crd', CRD, '-o', 'jsonpath={.spec.versions[0].additionalPrinterColumns[*].name}']);
}

/** kubectl's exit and output without throwing (a refused apply is what some steps expect). */
function tryKubectl(admin: string, args: string[], input?: string): { ok: boolean; output: string } {
  try {
    return { ok: true, output: kubectl(admin, args, input) };
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

test('after helm install, a changed CRD conflicts with "helm" under a plain server-side apply, and the documented --force-conflicts command applies it, on every later upgrade too', async () => {
  const plane = realApiServer();
  if (!plane) {
    expect(reportNotRun('CRD upgrade after a Helm install')).toMatch(/NOT RUN/);
    return;
  }
  const admin = plane.adminKubeconfig;
  const helm = (args: string[]) => runHelm(args, { KUBECONFIG: admin });

  // The documented commands, the same in the three places that give them.
  const commands = documentedCommands();
  expect(commands).toEqual([
    'kubectl apply --server-side --force-conflicts -f helm/roomkeeper/crds/',
    'helm show crds <repo>/roomkeeper --version <version> | kubectl apply --server-side --force-conflicts -f -',
  ]);
  expect(fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8')).toContain(`\n${commands[0]!}\n`);
  expect(fs.readFileSync(path.join(CHART_DIR, 'templates', 'NOTES.txt'), 'utf8')).toContain('| kubectl apply --server-side --force-conflicts -f -');
  const [dirCommand, showCommand] = commands as [string, string];
  const [showPart, applyPart] = showCommand.split(' | ') as [string, string];

  const chart = fs.mkdtempSync(path.join(os.tmpdir(), 'roomkeeper-crd-upgrade-'));
  const crds = path.join(chart, 'crds');
  fs.mkdirSync(path.join(chart, 'templates'), { recursive: true });
  fs.mkdirSync(crds);
  fs.copyFileSync(path.join(CHART_DIR, 'Chart.yaml'), path.join(chart, 'Chart.yaml'));
  const crdFile = path.join(crds, 'allocationclaims.yaml');
  try {
    fs.writeFileSync(crdFile, testCrd(() => undefined));
    const install = await helm(['install', RELEASE, chart, '--namespace', NAMESPACE, '--create-namespace']);
    expect(install.stderr).toBe('');
    expect(install.stdout).toContain('STATUS: deployed');
    const managers = JSON.parse(kubectl(admin, ['get', 'crd', CRD, '--show-managed-fields', '-o', 'jsonpath={.metadata.managedFields}'])) as { manager: string; operation: string }[];
    expect(managers).toContainEqual(expect.objectContaining({ manager: 'helm', operation: 'Update' }));
    const columns = printerColumns(admin);
    expect(columns).toMatch(/^Scheduler AllocationId Replica/);

    // The next chart version adds a printer column (a change under .spec.versions).
    fs.writeFileSync(crdFile, testCrd((crd) => { crd.spec.versions[0]!.additionalPrinterColumns.push({ name: 'Try', type: 'string', jsonPath: '.spec.allocationId' }); }));
    const plain = tryKubectl(admin, ['apply', '--server-side', '-f', crds]);
    expect(plain.ok).toBe(false);
    expect(plain.output).toContain('Apply failed with 1 conflict: conflict with "helm"');
    expect(plain.output).toContain('.spec.versions');
    expect(printerColumns(admin)).toBe(columns);

    // The documented command for a chart directory, pointed at this one.
    const dirArgs = dirCommand.split(' ').slice(1).map((a) => (a === 'helm/roomkeeper/crds/' ? crds : a));
    expect(kubectl(admin, dirArgs)).toContain(`customresourcedefinition.apiextensions.k8s.io/${CRD} serverside-applied`);
    expect(printerColumns(admin)).toBe(`${columns} Try`);

    // A later version changes a field the first apply left alone (its categories), which Helm
    // still shares: a plain apply conflicts again; the documented `helm show crds` form applies it.
    fs.writeFileSync(crdFile, testCrd((crd) => {
      crd.spec.versions[0]!.additionalPrinterColumns.push({ name: 'Try', type: 'string', jsonPath: '.spec.allocationId' });
      crd.spec.names.categories = ['rk-crd-upgrade-test', 'rk-crd-upgrade-test-2'];
    }));
    const again = tryKubectl(admin, ['apply', '--server-side', '-f', crds]);
    expect(again.ok).toBe(false);
    expect(again.output).toContain('conflict with "helm"');
    const chartVersion = /^version: (.*)$/m.exec(fs.readFileSync(path.join(chart, 'Chart.yaml'), 'utf8'))?.[1] ?? '';
    const showArgs = showPart.split(' ').slice(1).map((a) => (a === '<repo>/roomkeeper' ? chart : a === '<version>' ? chartVersion : a));
    const shown = await helm(showArgs);
    expect(shown.code).toBe(0);
    expect(kubectl(admin, applyPart.split(' ').slice(1), shown.stdout)).toContain(`${CRD} serverside-applied`);
    expect(kubectl(admin, ['get', 'crd', CRD, '-o', 'jsonpath={.spec.names.categories}'])).toBe('["rk-crd-upgrade-test","rk-crd-upgrade-test-2"]');
  } finally {
    await helm(['uninstall', RELEASE, '--namespace', NAMESPACE]);
    kubectl(admin, ['delete', 'crd', CRD, '--ignore-not-found', '--wait=false']);
    kubectl(admin, ['delete', 'namespace', NAMESPACE, '--ignore-not-found', '--wait=false']);
    fs.rmSync(chart, { recursive: true, force: true });
  }
}, 180_000);
