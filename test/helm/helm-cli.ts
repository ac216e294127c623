/**
 * Runs the real `helm` binary against the chart in helm/roomkeeper and parses what it renders.
 * Values are passed as files (a temp file for inline objects), never through --set, so tests state
 * exactly the document helm validates against values.schema.json.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { toolPath } from '../support/tools';

export const REPO_ROOT = path.resolve(__dirname, '../..');
export const CHART_DIR = path.join(REPO_ROOT, 'helm/roomkeeper');
export const FULL_VALUES_FILE = path.join(__dirname, 'values-full.yaml');

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A rendered Kubernetes object, loosely typed: tests read fields by path. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

export interface RenderOptions {
  /** Inline values, written to a temp file and passed with -f after `valuesFiles`. */
  values?: Record<string, unknown>;
  valuesFiles?: string[];
  releaseName?: string;
  namespace?: string;
  /** Chart directory (default helm/roomkeeper). */
  chartDir?: string;
}

class HelmError extends Error {
  constructor(readonly args: string[], readonly result: HelmResult) {
    super(`helm ${args.join(' ')} exited with ${result.code}:\n${result.stderr}`);
    this.name = 'HelmError';
  }
}

/** Runs helm with `args`; resolves with its exit code and output whatever the code. */
export function runHelm(args: string[], env: NodeJS.ProcessEnv = {}): Promise<HelmResult> {
  const helm = toolPath('helm');
  // An empty HOME-independent config so nothing from the machine's helm setup leaks in.
  const helmHome = path.join(os.tmpdir(), 'roomkeeper-helm-home');
  const childEnv: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HELM_CACHE_HOME: path.join(helmHome, 'cache'),
    HELM_CONFIG_HOME: path.join(helmHome, 'config'),
    HELM_DATA_HOME: path.join(helmHome, 'data'),
    KUBECONFIG: path.join(helmHome, 'no-kubeconfig'),
    ...env,
  };
  return new Promise((resolve) => {
    execFile(helm, args, { env: childEnv, maxBuffer: 32 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

let tempCounter = 0;

/** Writes `values` to a fresh temp file (JSON is YAML) and returns its path. */
function writeValuesFile(values: Record<string, unknown>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'roomkeeper-values-'));
  tempCounter += 1;
  const file = path.join(dir, `values-${tempCounter}.yaml`);
  fs.writeFileSync(file, JSON.stringify(values, null, 2));
  return file;
}

function valuesArgs(options: RenderOptions): { args: string[]; cleanup: () => void } {
  const files = [...(options.valuesFiles ?? [])];
  let temp: string | undefined;
  if (options.values) {
    temp = writeValuesFile(options.values);
    files.push(temp);
  }
  return {
    args: files.flatMap((f) => ['-f', f]),
    cleanup: () => { if (temp) fs.rmSync(path.dirname(temp), { recursive: true, force: true }); },
  };
}

/** `helm template`: resolves with the raw result (use for expected failures). */
export async function helmTemplateRaw(options: RenderOptions = {}, extraArgs: string[] = []): Promise<HelmResult> {
  const { args, cleanup } = valuesArgs(options);
  try {
    return await runHelm([
      'template', options.releaseName ?? 'rk', options.chartDir ?? CHART_DIR,
      '--namespace', options.namespace ?? 'roomkeeper-system',
      ...args, ...extraArgs,
    ]);
  } finally {
    cleanup();
  }
}

/** Parses a multi-document YAML stream; throws on any YAML error; drops empty documents. */
export function parseManifests(text: string): unknown[] {
  const docs = parseAllDocuments(text);
  const out: unknown[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) throw new Error(`invalid YAML: ${doc.errors.map((e) => e.message).join('; ')}`);
    const value: unknown = doc.toJS();
    if (value !== null && value !== undefined) out.push(value);
  }
  return out;
}

/** `helm template` that must succeed: resolves with every rendered object. */
export async function renderChart(options: RenderOptions = {}): Promise<KubeObject[]> {
  const result = await helmTemplateRaw(options);
  if (result.code !== 0) throw new HelmError(['template'], result);
  return parseManifests(result.stdout) as KubeObject[];
}

/** `helm lint --strict` (warnings fail too). */
export async function helmLint(options: RenderOptions = {}): Promise<HelmResult> {
  const { args, cleanup } = valuesArgs(options);
  try {
    return await runHelm(['lint', '--strict', options.chartDir ?? CHART_DIR, '--namespace', options.namespace ?? 'roomkeeper-system', ...args]);
  } finally {
    cleanup();
  }
}

/** The one object of `kind` whose name ends with `nameSuffix` (throws when not exactly one). */
export function findObject(objects: KubeObject[], kind: string, nameSuffix: string): KubeObject {
  const found = objects.filter((o) => o.kind === kind && o.metadata.name.endsWith(nameSuffix));
  if (found.length !== 1) {
    throw new Error(`expected one ${kind} named *${nameSuffix}, found ${found.length}: ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  }
  return found[0]!;
}

/** Reads a nested field by dotted path (`spec.template.spec`), undefined when absent. */
export function field(obj: unknown, dotted: string): unknown {
  let cur: unknown = obj;
  for (const part of dotted.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}
