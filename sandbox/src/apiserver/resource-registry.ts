/**
 * The set of served resources: built-ins plus those defined by CustomResourceDefinitions.
 * Discovery, routing and storage all look resources up here.
 */
import { builtinResourceTypes } from './builtin-resources';
import { compileSchema } from './crd-schema';
import type { PrinterColumn, ResourceType, ResourceVersion, ScaleSpec } from './resource-type';
import { resourceKey } from './resource-type';
import { fieldText } from './kube-object';

type Json = Record<string, unknown>;

function asObject(v: unknown): Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {};
}

function asStrings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** Builds the served resource of a CRD object (only served versions, storage version first if served). */
export function resourceTypeFromCrd(crd: Json): ResourceType {
  const spec = asObject(crd.spec);
  const names = asObject(spec.names);
  const kind = fieldText(names.kind);
  const versions: ResourceVersion[] = [];
  const rawVersions = Array.isArray(spec.versions) ? spec.versions.map(asObject) : [];
  for (const v of rawVersions) {
    if (v.served === false) continue;
    const sub = asObject(v.subresources);
    const scaleRaw = sub.scale === undefined ? undefined : asObject(sub.scale);
    const scale: ScaleSpec | undefined = scaleRaw
      ? {
          specReplicasPath: fieldText(scaleRaw.specReplicasPath, '.spec.replicas'),
          statusReplicasPath: fieldText(scaleRaw.statusReplicasPath, '.status.replicas'),
          labelSelectorPath: typeof scaleRaw.labelSelectorPath === 'string' ? scaleRaw.labelSelectorPath : undefined,
        }
      : undefined;
    const columns: PrinterColumn[] = (Array.isArray(v.additionalPrinterColumns) ? v.additionalPrinterColumns : []).map((c) => {
      const col = asObject(c);
      return {
        name: fieldText(col.name),
        type: fieldText(col.type, 'string'),
        format: typeof col.format === 'string' ? col.format : undefined,
        description: typeof col.description === 'string' ? col.description : undefined,
        priority: typeof col.priority === 'number' ? col.priority : 0,
        jsonPath: fieldText(col.jsonPath),
      };
    });
    const openAPIV3Schema = asObject(v.schema).openAPIV3Schema;
    versions.push({
      name: fieldText(v.name),
      status: sub.status !== undefined,
      scale,
      printerColumns: columns,
      schema: openAPIV3Schema === undefined ? undefined : compileSchema(openAPIV3Schema),
      storage: v.storage === true,
      selectableFields: (Array.isArray(v.selectableFields) ? v.selectableFields : []).map((f) => fieldText(asObject(f).jsonPath)).filter((p) => p !== ''),
    });
  }
  // Preferred version: the real server sorts by Kubernetes version priority; the storage version first is close enough.
  versions.sort((a, b) => Number(b.storage ?? false) - Number(a.storage ?? false));
  return {
    group: fieldText(spec.group),
    plural: fieldText(names.plural),
    singular: fieldText(names.singular, kind.toLowerCase()),
    kind,
    listKind: fieldText(names.listKind, `${kind}List`),
    namespaced: spec.scope !== 'Cluster',
    shortNames: asStrings(names.shortNames),
    categories: asStrings(names.categories),
    versions,
    custom: true,
    extraSubresources: [],
    generation: true,
    nameRule: 'subdomain',
  };
}

export class ResourceRegistry {
  private readonly byKey = new Map<string, ResourceType>();
  private readonly byGroupVersionPlural = new Map<string, ResourceType>();

  constructor() {
    for (const rt of builtinResourceTypes()) this.add(rt);
  }

  add(rt: ResourceType): void {
    const existing = this.byKey.get(resourceKey(rt.group, rt.plural));
    if (existing) this.removeIndexes(existing);
    this.byKey.set(resourceKey(rt.group, rt.plural), rt);
    for (const v of rt.versions) this.byGroupVersionPlural.set(`${rt.group}/${v.name}/${rt.plural}`, rt);
  }

  remove(group: string, plural: string): void {
    const existing = this.byKey.get(resourceKey(group, plural));
    if (!existing) return;
    this.removeIndexes(existing);
    this.byKey.delete(resourceKey(group, plural));
  }

  private removeIndexes(rt: ResourceType): void {
    for (const v of rt.versions) this.byGroupVersionPlural.delete(`${rt.group}/${v.name}/${rt.plural}`);
  }

  get(group: string, plural: string): ResourceType | undefined {
    return this.byKey.get(resourceKey(group, plural));
  }

  /** A built-in type (the registry always has them); throws when asked for one it does not build. */
  builtin(group: string, plural: string): ResourceType {
    const rt = this.get(group, plural);
    if (!rt) throw new Error(`the sandbox registry has no built-in resource ${resourceKey(group, plural)}`);
    return rt;
  }

  find(group: string, version: string, plural: string): ResourceType | undefined {
    return this.byGroupVersionPlural.get(`${group}/${version}/${plural}`);
  }

  all(): ResourceType[] {
    return [...this.byKey.values()];
  }
}
