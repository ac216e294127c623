/**
 * values.yaml is documented value by value, values.schema.json refuses wrong values with a message
 * that names them, and NOTES.txt tells a new user how to reach the API and create a scheduler.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CHART_DIR, FULL_VALUES_FILE, helmLint, helmTemplateRaw, runHelm } from './helm-cli';

interface JsonSchema { type?: string | string[]; properties?: Record<string, JsonSchema>; $ref?: string; additionalProperties?: unknown }

const schema = JSON.parse(fs.readFileSync(path.join(CHART_DIR, 'values.schema.json'), 'utf8')) as JsonSchema & { $schema: string; definitions: Record<string, JsonSchema> };

function resolve(s: JsonSchema): JsonSchema {
  if (s.$ref) return schema.definitions[s.$ref.replace('#/definitions/', '')] ?? s;
  return s;
}

describe('values.yaml and values.schema.json', () => {
  it('is a draft-07 schema that refuses unknown keys in every structured object', () => {
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    const open: string[] = [];
    const walk = (s: JsonSchema, at: string): void => {
      const r = resolve(s);
      if (r.properties) {
        if (r.additionalProperties !== false) open.push(at || '(root)');
        for (const [k, v] of Object.entries(r.properties)) walk(v, at ? `${at}.${k}` : k);
      }
    };
    walk(schema, '');
    expect(open).toEqual([]);
  });

  it('documents every value with a comment right above it', () => {
    // Keys the schema describes property by property are chart settings and need a comment;
    // keys inside a free-form default (resources, security contexts) belong to that setting.
    const lines = fs.readFileSync(path.join(CHART_DIR, 'values.yaml'), 'utf8').split('\n');
    const stack: { indent: number; schema: JsonSchema | undefined }[] = [{ indent: -1, schema }];
    const undocumented: string[] = [];
    lines.forEach((line, index) => {
      const m = /^( *)([A-Za-z][\w-]*):/.exec(line);
      if (!m) return;
      const indent = m[1]!.length;
      while (stack.length > 1 && stack[stack.length - 1]!.indent >= indent) stack.pop();
      const parent = stack[stack.length - 1]!.schema;
      const own = parent?.properties?.[m[2]!];
      const resolved = own ? resolve(own) : undefined;
      stack.push({ indent, schema: resolved });
      if (!own) return;
      let prev = index - 1;
      while (prev >= 0 && lines[prev]!.trim() === '') prev -= 1;
      if (prev < 0 || !lines[prev]!.trim().startsWith('#')) undocumented.push(`line ${index + 1}: ${m[2]!}`);
    });
    expect(undocumented).toEqual([]);
  });

  // Each case: the value set, and what helm's message must say (the value's path and the reason).
  const refused: [string, Record<string, unknown>, RegExp][] = [
    ['a string replica count', { operator: { replicas: 'two' } }, /operator\.replicas: Invalid type\. Expected: integer, given: string/],
    ['an unknown key', { operator: { replica: 2 } }, /operator: Additional property replica is not allowed/],
    ['an unknown top-level key', { gatway: { replicas: 2 } }, /Additional property gatway is not allowed/],
    ['a bad pull policy', { image: { pullPolicy: 'Sometimes' } }, /image\.pullPolicy: image\.pullPolicy must be one of the following: "Always", "IfNotPresent", "Never"/],
    ['an unknown log level', { logLevel: 'verbose' }, /logLevel: logLevel must be one of the following/],
    ['a duration without a known unit', { operator: { rooms: { pingTimeout: '5 minutes' } } }, /operator\.rooms\.pingTimeout: Does not match pattern/],
    ['a port out of range', { gateway: { port: 70000 } }, /gateway\.port: Must be less than or equal to 65535/],
    ['a negative replica count', { gateway: { replicas: -1 } }, /gateway\.replicas: Must be greater than or equal to 0/],
    ['a non-boolean switch', { gateway: { pingAuth: 'yes' } }, /gateway\.pingAuth: Invalid type\. Expected: boolean, given: string/],
    ['a body limit below 1 KiB', { gateway: { maxBodyBytes: 100 } }, /gateway\.maxBodyBytes: Must be greater than or equal to 1024/],
    ['a relative Ingress path', { ingress: { enabled: true, management: { path: 'schedulers', pathType: 'Prefix' } } }, /ingress\.management\.path: Does not match pattern '\^\/'/],
    ['a bad Service type', { gateway: { service: { type: 'External', port: 8080, roomsPort: 8090 } } }, /gateway\.service\.type: gateway\.service\.type must be one of the following/],
    ['a malformed digest', { image: { digest: 'latest' } }, /image\.digest: Does not match pattern/],
    ['a resource quantity Kubernetes would not parse', { gateway: { resources: { requests: { memory: 'lots' } } } }, /gateway\.resources\.requests\.memory: Does not match pattern/],
  ];

  it.each(refused)('refuses %s in helm template', async (_name, values, message) => {
    const result = await helmTemplateRaw({ values });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("values don't meet the specifications of the schema");
    expect(result.stderr).toMatch(message);
  });

  it('refuses a wrong value in helm lint too', async () => {
    const result = await helmLint({ values: { operator: { replicas: 'two' } } });
    expect(result.code).not.toBe(0);
    expect(`${result.stdout}${result.stderr}`).toMatch(/operator\.replicas: Invalid type\. Expected: integer, given: string/);
  });
});

describe('NOTES.txt', () => {
  // `helm template` does not render NOTES.txt and `helm install --dry-run` needs a cluster, so a
  // copy of the chart renders the same text through `tpl` into a ConfigMap.
  let chartCopy: string;
  beforeAll(() => {
    chartCopy = fs.mkdtempSync(path.join(os.tmpdir(), 'roomkeeper-notes-'));
    fs.cpSync(CHART_DIR, chartCopy, { recursive: true });
    fs.copyFileSync(path.join(CHART_DIR, 'templates/NOTES.txt'), path.join(chartCopy, 'notes-source.txt'));
    fs.writeFileSync(path.join(chartCopy, 'templates/notes-preview.yaml'), [
      'apiVersion: v1', 'kind: ConfigMap', 'metadata:', '  name: notes-preview', 'data:', '  notes: |',
      '    {{- tpl (.Files.Get "notes-source.txt") . | nindent 4 }}', '',
    ].join('\n'));
  });
  afterAll(() => fs.rmSync(chartCopy, { recursive: true, force: true }));

  async function notes(extra: string[]): Promise<string> {
    const result = await runHelm(['template', 'rk', chartCopy, '--namespace', 'games-system', '--show-only', 'templates/notes-preview.yaml', ...extra]);
    expect(result.stderr).toBe('');
    const text = /notes: \|\n([\s\S]*)$/.exec(result.stdout)?.[1] ?? '';
    return text.split('\n').map((l) => l.replace(/^ {4}/, '')).join('\n');
  }

  it('explains port-forward, the credentials, a curl that creates a scheduler and the kubectl equivalent', async () => {
    const text = await notes([]);
    expect(text).toContain('kubectl -n games-system port-forward svc/rk-roomkeeper-gateway 8080:8080');
    expect(text).toContain('export ROOMKEEPER_URL=http://127.0.0.1:8080');
    expect(text).toContain("kubectl -n games-system get secret rk-roomkeeper-auth -o jsonpath='{.data.password}' | base64 -d");
    expect(text).toContain('-X POST $ROOMKEEPER_URL/schedulers');
    expect(text).toContain('curl -s -u "$ROOMKEEPER_USER:$ROOMKEEPER_PASSWORD"');
    // Every call to the management API but /healthz carries the credentials, which come first.
    expect(text.indexOf('export ROOMKEEPER_PASSWORD=')).toBeLessThan(text.indexOf('/openapi.json'));
    expect(text).toContain('curl -s -u "$ROOMKEEPER_USER:$ROOMKEEPER_PASSWORD" $ROOMKEEPER_URL/openapi.json');
    expect(text).toContain('kind: Scheduler');
    expect(text).toContain('kubectl apply -f -');
    expect(text).toContain('kubectl get rks');
  });

  it('after an upgrade, first says to apply the new version\'s CRDs, which Helm never upgrades', async () => {
    const upgrade = await notes(['--is-upgrade']);
    expect(upgrade.split('\n')[0]).toBe('Roomkeeper 0.1.0 is upgraded in namespace games-system.');
    // --force-conflicts: Helm created the CRDs as field manager `helm`, and a plain server-side apply
    // of a changed CRD conflicts with it (test/real-apiserver/chart-crd-upgrade.test.ts).
    expect(upgrade).toContain('helm show crds <this chart> --version 0.1.0 | kubectl apply --server-side --force-conflicts -f -');
    expect(upgrade).toContain('--force-conflicts takes over the fields Helm wrote when it created the CRDs');
    expect(upgrade.indexOf('helm show crds')).toBeLessThan(upgrade.indexOf('1. Reach the management API'));
    const install = await notes([]);
    expect(install.split('\n')[0]).toBe('Roomkeeper 0.1.0 is installed in namespace games-system.');
    expect(install).not.toContain('helm show crds');
  });

  it('helm show crds, which that command pipes to kubectl, prints every CRD of the chart as a document of its own (one file without a leading --- ran into the next, and kubectl applied only the last)', async () => {
    const shown = await runHelm(['show', 'crds', CHART_DIR]);
    expect(shown.code).toBe(0);
    const names = parseAllDocuments(shown.stdout).map((d) => (d.toJS() as { metadata?: { name?: string } } | null)?.metadata?.name).filter((n) => n !== undefined);
    const files = fs.readdirSync(path.join(CHART_DIR, 'crds')).filter((f) => f.endsWith('.yaml'));
    expect(names.sort()).toEqual(files.map((f) => f.replace(/^roomkeeper\.io_(.*)\.yaml$/, '$1.roomkeeper.io')).sort());
  });

  it('says where the password came from, and only what is true of it: generated now, given in values, or the user\'s own Secret', async () => {
    // `lookup` finds no Secret offline, so the chart generates one in this render; the password kept
    // from a Secret already there is checked against a real API server (test/real-apiserver/two-releases.test.ts).
    expect(await notes([])).toContain('(The password was generated by this install; upgrades keep it, and so does a reinstall under this name and namespace, as helm uninstall leaves the Secret.)');
    expect(await notes(['--is-upgrade'])).toContain('(The password was generated by this upgrade;');
    const given = await notes(['--set', 'auth.password=chosen']);
    expect(given).toContain('(The password is auth.password from your values.)');
    const own = await notes(['--set', 'auth.existingSecret=my-creds']);
    expect(own).toContain("get secret my-creds -o jsonpath='{.data.password}'");
    expect(own).toContain('(Your Secret, named in auth.existingSecret: the chart neither made it nor changes it.)');
    for (const text of [given, own]) expect(text).not.toMatch(/generated|kept from/);
  });

  it('gives the Ingress URL when the Ingress is on', async () => {
    const text = await notes(['-f', FULL_VALUES_FILE]);
    expect(text).toContain('export ROOMKEEPER_URL=https://games.example.com\n');
    expect(text).toContain('Rooms API: https://rooms.games.example.com (path /)');
    expect(text).toContain('get secret roomkeeper-credentials');
    // The port-forward offered instead of the Ingress says which URL then reaches the API, and
    // binds a local port a user may bind (the Service listens on 80 here).
    expect(text).toMatch(/port-forward svc\/roomkeeper-full-gateway 8080:80 &\n {2}\(then, instead of the Ingress URL: export ROOMKEEPER_URL=http:\/\/127\.0\.0\.1:8080\)\n/);
  });
});
