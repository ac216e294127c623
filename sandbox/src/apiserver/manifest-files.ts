/** Reads Kubernetes manifests (multi-document YAML or JSON) from files and folders. */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { isRecord } from '../../../common/src/json/is-record';

const MANIFEST = /\.(ya?ml|json)$/i;

async function filesUnder(entry: string): Promise<string[]> {
  const stat = await fs.stat(entry);
  if (stat.isFile()) return [entry];
  const names = (await fs.readdir(entry)).sort();
  const out: string[] = [];
  for (const n of names) {
    const full = path.join(entry, n);
    const s = await fs.stat(full);
    if (s.isDirectory()) out.push(...(await filesUnder(full)));
    else if (MANIFEST.test(n)) out.push(full);
  }
  return out;
}

/** Every object document in the given files/folders (folders are read recursively, sorted by name). */
export async function readManifests(entries: readonly string[]): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (const entry of entries) {
    for (const file of await filesUnder(entry)) {
      const text = await fs.readFile(file, 'utf8');
      for (const doc of parseAllDocuments(text)) {
        const [firstError] = doc.errors;
        if (firstError) throw new Error(`${file}: ${firstError.message}`);
        const value: unknown = doc.toJS();
        if (isRecord(value)) {
          if (value.kind === 'List' && Array.isArray(value.items)) out.push(...value.items.filter(isRecord));
          else out.push(value);
        }
      }
    }
  }
  return out;
}
