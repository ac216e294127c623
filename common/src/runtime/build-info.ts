/**
 * Which build of Roomkeeper runs: its version (package.json) and its revision (the git commit),
 * so that a platform team can tell two builds apart where the chart and the image tag do not (every
 * build so far is 0.1.0: trial S). The revision is `ROOMKEEPER_REVISION` (the image sets it from
 * its build argument), else the commit of the git checkout it runs from (`npm start`), else
 * `unknown`. Read once per process, from files only (no git process).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface BuildInfo {
  version: string;
  revision: string;
}

let cached: BuildInfo | undefined;

/** The nearest directory at or above `from` holding `name`, if any. */
function findUp(from: string, name: string): string | undefined {
  for (let dir = from, i = 0; i < 8; i++) {
    if (fs.existsSync(path.join(dir, name))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
  return undefined;
}

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** The commit a git checkout at `root` has checked out: HEAD, its ref's file, or packed-refs. */
function gitCommit(root: string): string | undefined {
  const gitDir = path.join(root, '.git');
  const head = readText(path.join(gitDir, 'HEAD'))?.trim();
  if (!head) return undefined;
  if (/^[0-9a-f]{40}$/.test(head)) return head;
  const ref = /^ref: (\S+)$/.exec(head)?.[1];
  if (!ref) return undefined;
  const loose = readText(path.join(gitDir, ref))?.trim();
  if (loose && /^[0-9a-f]{40}$/.test(loose)) return loose;
  const packed = readText(path.join(gitDir, 'packed-refs'))?.split('\n').find((line) => line.endsWith(` ${ref}`));
  return packed?.slice(0, 40);
}

export function buildInfo(env: NodeJS.ProcessEnv = process.env): BuildInfo {
  if (cached) return cached;
  const root = findUp(__dirname, 'package.json');
  const pkg = root ? readText(path.join(root, 'package.json')) : undefined;
  let version = 'unknown';
  try {
    const declared = pkg ? (JSON.parse(pkg) as { version?: unknown }).version : undefined;
    if (typeof declared === 'string' && declared !== '') version = declared;
  } catch {
    // an unreadable package.json: the version stays unknown
  }
  const fromEnv = env.ROOMKEEPER_REVISION?.trim();
  const checkout = root ? findUp(root, '.git') : undefined;
  const revision = fromEnv || (checkout ? gitCommit(checkout)?.slice(0, 12) : undefined) || 'unknown';
  cached = { version, revision };
  return cached;
}
