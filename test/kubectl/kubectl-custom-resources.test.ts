import { chmodSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { startSandbox, type Sandbox } from '../../sandbox/src/index';
import { widget, widgetCrd } from '../../sandbox/src/apiserver/widget-crd.fixture';
import { waitFor } from '../support/wait';
import { kubectlSession, type KubectlSession } from './kubectl-runner';

jest.setTimeout(60_000);

describe('kubectl against the sandbox: custom resources', () => {
  let sandbox: Sandbox;
  let kubectl: KubectlSession;

  function file(name: string, doc: unknown): string {
    const p = path.join(kubectl.dir, name);
    writeFileSync(p, stringify(doc));
    return p;
  }

  beforeAll(async () => {
    sandbox = await startSandbox();
    kubectl = await kubectlSession(sandbox);
  });

  afterAll(async () => {
    kubectl.dispose();
    await sandbox.stop();
  });

  it('applies a CRD, waits for it to be established and re-applies it unchanged', async () => {
    const crd = file('crd.yaml', widgetCrd());
    const applied = await kubectl.run(['apply', '-f', crd]);
    expect(applied.stderr).toBe('');
    expect(applied.stdout).toContain('customresourcedefinition.apiextensions.k8s.io/widgets.test.roomkeeper.io created');
    const wait = await kubectl.run(['wait', '--for', 'condition=established', 'crd/widgets.test.roomkeeper.io', '--timeout=20s']);
    expect(wait.stdout).toContain('condition met');
    const again = await kubectl.run(['apply', '-f', crd]);
    expect(again.stdout).toContain('unchanged');
  });

  it('applies a custom object and shows its printer columns', async () => {
    const applied = await kubectl.run(['apply', '-f', file('w1.yaml', widget('w1', { color: 'red', replicas: 2 }))]);
    expect(applied.stdout).toContain('widget.test.roomkeeper.io/w1 created');
    const get = await kubectl.run(['get', 'widgets']);
    const [header, row] = get.stdout.trim().split('\n');
    expect(header!.split(/\s+/)).toEqual(['NAME', 'COLOR', 'REPLICAS', 'STATE', 'AGE']);
    expect(row!.split(/\s+/).slice(0, 3)).toEqual(['w1', 'red', '2']);
  });

  it('re-applies with changes', async () => {
    const applied = await kubectl.run(['apply', '-f', file('w1.yaml', widget('w1', { color: 'red', replicas: 3 }))]);
    expect(applied.stdout).toContain('configured');
    const yaml = await kubectl.run(['get', 'wd', 'w1', '-o', 'yaml']);
    expect(yaml.stdout).toContain('replicas: 3');
    expect(yaml.stdout).toContain('kubectl.kubernetes.io/last-applied-configuration');
    expect(yaml.stdout).toContain('generation: 2');
  });

  it('patches, edits and describes', async () => {
    const patched = await kubectl.run(['patch', 'widget', 'w1', '--type=merge', '-p', '{"spec":{"color":"blue"}}']);
    expect(patched.stdout).toContain('widget.test.roomkeeper.io/w1 patched');
    const editor = path.join(kubectl.dir, 'editor.sh');
    writeFileSync(editor, '#!/bin/sh\nsed -i "s/color: blue/color: green/" "$1"\n');
    chmodSync(editor, 0o755);
    const edited = await kubectl.run(['edit', 'widget', 'w1'], { env: { KUBE_EDITOR: editor } });
    expect(edited.stdout).toContain('widget.test.roomkeeper.io/w1 edited');
    const get = await kubectl.run(['get', 'widget', 'w1', '-o', 'jsonpath={.spec.color}']);
    expect(get.stdout).toBe('green');
    const describe = await kubectl.run(['describe', 'widget', 'w1']);
    expect(describe.stdout).toMatch(/Name:\s+w1/);
    expect(describe.stdout).toMatch(/Color:\s+green/);
  });

  it('explains custom resources from their schema', async () => {
    const explain = await kubectl.run(['explain', 'widgets.spec.color']);
    expect(explain.stdout).toMatch(/KIND:\s+Widget/);
    expect(explain.stdout).toMatch(/ENUM:\s+red\s+green\s+blue/);
  });

  it('rejects an invalid object and names the field', async () => {
    const bad = await kubectl.run(['apply', '-f', file('bad.yaml', widget('bad', { color: 'red', replicas: -3 }))]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('The Widget "bad" is invalid');
    expect(bad.stderr).toContain('spec.replicas');
    const cel = await kubectl.run(['apply', '-f', file('cel.yaml', widget('cel', { color: 'red', replicas: 12 }))]);
    expect(cel.stderr).toContain('replicas must be at most 10');
    const missing = await kubectl.run(['apply', '-f', file('missing.yaml', widget('missing', { replicas: 1 }))]);
    expect(missing.stderr).toContain('spec.color: Required value');
    const unknown = await kubectl.run(['apply', '-f', file('unknown.yaml', widget('unknown', { color: 'red', flavour: 'x' }))]);
    expect(unknown.stderr).toContain('unknown field "spec.flavour"');
  });

  it('streams an update to `kubectl get --watch`', async () => {
    const watch = kubectl.spawn(['get', 'widgets', '--watch']);
    try {
      await waitFor(() => /w1\s+green/.test(watch.output()), { timeoutMs: 20_000, message: 'initial row' });
      await kubectl.run(['patch', 'widget', 'w1', '--type=merge', '-p', '{"spec":{"color":"red"}}']);
      await waitFor(() => /w1\s+red/.test(watch.output()), { timeoutMs: 20_000, message: 'watched update' });
    } finally {
      watch.child.kill('SIGKILL');
    }
  });

  it('scales through the scale subresource and deletes', async () => {
    const scaled = await kubectl.run(['scale', 'widget', 'w1', '--replicas=5']);
    expect(scaled.stdout).toContain('scaled');
    expect((await kubectl.run(['get', 'widget', 'w1', '-o', 'jsonpath={.spec.replicas}'])).stdout).toBe('5');
    const deleted = await kubectl.run(['delete', 'widget', 'w1']);
    expect(deleted.stdout).toContain('widget.test.roomkeeper.io "w1" deleted');
    const none = await kubectl.run(['get', 'widgets']);
    expect(none.stderr).toContain('No resources found in default namespace.');
  });
});
