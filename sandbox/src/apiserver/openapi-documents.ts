/**
 * Minimal OpenAPI v3 documents, enough for `kubectl explain` on custom resources: one document
 * per group-version that has CRD schemas, holding each kind's schema tagged with
 * `x-kubernetes-group-version-kind` and one GET path per kind. No PATCH operations are published,
 * so kubectl keeps asking the server to validate fields (fieldValidation) on apply.
 */
import { createHash } from 'node:crypto';
import { fieldText } from './kube-object';
import type { ObjectStore } from './object-store';
import { resourceKey } from './resource-type';
import { isRecord } from '../../../common/src/json/is-record';

type Json = Record<string, unknown>;

const CRDS = resourceKey('apiextensions.k8s.io', 'customresourcedefinitions');

function schemaName(group: string, version: string, kind: string): string {
  return `${group.split('.').reverse().join('.')}.${version}.${kind}`;
}

export class OpenApiDocuments {
  constructor(private readonly store: ObjectStore) {}

  /** group/version -> component schemas and the GET path of each kind (kubectl explain finds kinds by path). */
  private schemas(): Map<string, { components: Json; paths: Json }> {
    const out = new Map<string, { components: Json; paths: Json }>();
    for (const crd of this.store.list(CRDS)) {
      const spec = isRecord(crd.obj.spec) ? crd.obj.spec : {};
      const names = isRecord(spec.names) ? spec.names : {};
      const group = fieldText(spec.group);
      const kind = fieldText(names.kind);
      for (const v of Array.isArray(spec.versions) ? spec.versions.filter(isRecord) : []) {
        if (v.served === false) continue;
        const version = fieldText(v.name);
        const schema = isRecord(v.schema) && isRecord(v.schema.openAPIV3Schema) ? v.schema.openAPIV3Schema : { type: 'object' };
        const properties = isRecord(schema.properties) ? schema.properties : {};
        const gv = `${group}/${version}`;
        const entry = out.get(gv) ?? { components: {}, paths: {} };
        const name = schemaName(group, version, kind);
        const plural = fieldText(names.plural);
        const path = spec.scope === 'Cluster' ? `/apis/${gv}/${plural}/{name}` : `/apis/${gv}/namespaces/{namespace}/${plural}/{name}`;
        entry.paths[path] = {
          get: {
            'x-kubernetes-action': 'get',
            'x-kubernetes-group-version-kind': { group, version, kind },
            responses: { 200: { description: 'OK', content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } } } },
          },
        };
        entry.components[name] = {
          ...schema,
          properties: {
            apiVersion: { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object.' },
            kind: { type: 'string', description: 'Kind is a string value representing the REST resource this object represents.' },
            metadata: { type: 'object', description: "Standard object's metadata." },
            ...properties,
          },
          'x-kubernetes-group-version-kind': [{ group, kind, version }],
        };
        out.set(gv, entry);
      }
    }
    return out;
  }

  private document(entry: { components: Json; paths: Json }): Json {
    return { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths: entry.paths, components: { schemas: entry.components } };
  }

  root(): Json {
    const paths: Json = {};
    for (const [gv, entry] of this.schemas()) {
      const hash = createHash('sha256').update(JSON.stringify(entry)).digest('hex').slice(0, 32).toUpperCase();
      paths[`apis/${gv}`] = { serverRelativeURL: `/openapi/v3/apis/${gv}?hash=${hash}` };
    }
    return { paths };
  }

  /** The document of `apis/<group>/<version>`, if any CRD serves that group-version. */
  groupVersion(group: string, version: string): Json | undefined {
    const entry = this.schemas().get(`${group}/${version}`);
    return entry ? this.document(entry) : undefined;
  }
}
