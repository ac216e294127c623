/**
 * What the API server knows about one served resource: names, scope, versions, subresources,
 * printer columns and (for custom resources) the compiled schema of each version.
 */
import type { CompiledSchema } from './crd-schema';
import type { KubeObject } from './kube-object';

export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

export interface ScaleSpec {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface ResourceVersion {
  name: string;
  /** A `status` subresource: main writes ignore status, status writes ignore the rest. */
  status: boolean;
  scale?: ScaleSpec;
  printerColumns?: PrinterColumn[];
  schema?: CompiledSchema;
  /** The CRD's storage version. */
  storage?: boolean;
  /** The CRD version's selectableFields (JSON paths such as `.spec.color`). */
  selectableFields?: string[];
}

/** A resource served as another shape of a different resource's storage (events.k8s.io Events). */
export interface ResourceView {
  storage: { group: string; plural: string };
  fromStorage(obj: KubeObject): KubeObject;
  toStorage(obj: Record<string, unknown>): Record<string, unknown>;
  /** Field-selector paths of the view, in storage terms. */
  fieldPath(path: string): string;
}

/** How `metadata.name` is validated. */
export type NameRule = 'subdomain' | 'label' | 'dns1035' | 'path';

export interface ResourceType {
  group: string;
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  /** Served versions, preferred first. */
  versions: ResourceVersion[];
  /** Defined by a CustomResourceDefinition. */
  custom: boolean;
  /** Extra subresources besides status/scale, e.g. `binding` for pods. */
  extraSubresources: string[];
  /** Whether `metadata.generation` is kept. */
  generation: boolean;
  nameRule: NameRule;
  /** Verbs advertised in discovery (default: all eight). Review kinds only `create`. */
  verbs?: string[];
  /** Not stored: a POST is answered at once (access reviews). */
  virtual?: boolean;
  /** Stored as another resource (see ResourceView). */
  view?: ResourceView;
}

/** The key of a resource's storage: `group/plural` (`/pods` for core). */
export function resourceKey(group: string, plural: string): string {
  return `${group}/${plural}`;
}

export function apiVersionOf(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

export function findVersion(rt: ResourceType, version: string): ResourceVersion | undefined {
  return rt.versions.find((v) => v.name === version);
}
