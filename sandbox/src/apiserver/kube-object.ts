/** The loose shape of a stored Kubernetes object and small helpers to read it. */
import { jsonText } from '../../../common/src/json/json-text';
import { isRecord } from '../../../common/src/json/is-record';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  [key: string]: unknown;
}

export type KubeObject = Record<string, unknown> & { metadata: ObjectMeta };

/**
 * A JSON field as text: a string as it is, a number or boolean printed, `fallback` when absent
 * (undefined or null), anything else (an object, an array) as its JSON rather than `[object Object]`.
 */
export function fieldText(v: unknown, fallback = ''): string {
  if (v === undefined || v === null) return fallback;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return jsonText(v) ?? fallback;
}

/** A deep copy of JSON data (objects here are always plain JSON). */
export function deepCopy<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

/** Drops empty labels/annotations/finalizers/ownerReferences, as Go's `omitempty` does on the real server. */
export function compactMetadata(meta: ObjectMeta): void {
  for (const key of ['labels', 'annotations'] as const) {
    const v: unknown = meta[key]; // JSON from a client: may be null whatever ObjectMeta says
    if (v !== undefined && (v === null || (isRecord(v) && Object.keys(v).length === 0))) delete meta[key];
  }
  for (const key of ['finalizers', 'ownerReferences'] as const) {
    const v: unknown = meta[key];
    if (v !== undefined && (v === null || (Array.isArray(v) && v.length === 0))) delete meta[key];
  }
}
