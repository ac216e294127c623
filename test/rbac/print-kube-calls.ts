/**
 * Prints the permissions derived from the code, per component, with the calls that need them, and
 * the smallest RBAC rules that grant exactly those (resources with the same verbs share a rule).
 *   npx tsx test/rbac/print-kube-calls.ts
 */
import * as path from 'node:path';
import { KubeCallAnalyzer, type KubeUse } from './kube-calls';

const ROOT = path.resolve(__dirname, '../..');
const ENTRIES = { operator: 'operator/src/main.ts', gateway: 'api-gateway/src/main.ts' } as const;

/** RBAC rules (YAML) that grant exactly `uses`: one rule per (group, verb set). */
export function rulesFor(uses: KubeUse[]): string {
  const verbsOf = new Map<string, { group: string; resource: string; verbs: string[] }>();
  for (const u of uses) {
    const k = `${u.group}|${u.resource}`;
    const entry = verbsOf.get(k) ?? { group: u.group, resource: u.resource, verbs: [] };
    entry.verbs.push(u.verb);
    verbsOf.set(k, entry);
  }
  const rules = new Map<string, { group: string; resources: string[]; verbs: string[] }>();
  for (const e of verbsOf.values()) {
    const verbs = [...e.verbs].sort();
    const k = `${e.group}|${verbs.join(',')}`;
    const rule = rules.get(k) ?? { group: e.group, resources: [], verbs };
    rule.resources.push(e.resource);
    rules.set(k, rule);
  }
  const q = (xs: string[]) => `[${xs.map((x) => JSON.stringify(x)).join(', ')}]`;
  return [...rules.values()]
    .map((r) => `- apiGroups: ${q([r.group])}\n  resources: ${q(r.resources)}\n  verbs: ${q(r.verbs)}`)
    .join('\n');
}

function main(): void {
  const analyzer = new KubeCallAnalyzer({
    rootDir: ROOT,
    tsconfigPath: path.join(ROOT, 'tsconfig.json'),
    entries: Object.values(ENTRIES).map((e) => path.join(ROOT, e)),
    sourceDirs: ['operator', 'api-gateway', 'common'],
  });
  for (const [component, entry] of Object.entries(ENTRIES)) {
    const uses = analyzer.usesOf(path.join(ROOT, entry));
    console.log(`# ${component} (${entry})`);
    for (const u of uses) console.log(`${u.verb.padEnd(7)} ${(u.group || 'core')}/${u.resource}\n          ${u.locations.join('\n          ')}`);
    console.log(`\n# ${component}: rules granting exactly these\n${rulesFor(uses)}\n`);
  }
}

if (require.main === module) main();
