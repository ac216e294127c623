/**
 * `events.k8s.io/v1` Events are a second view of the core `v1` Events, as on a real cluster: one
 * storage, two shapes. These convert between them field by field.
 */
import type { KubeObject } from './kube-object';
import type { ResourceView } from './resource-type';
import { isRecord } from '../../../common/src/json/is-record';

type Json = Record<string, unknown>;

/** [events.k8s.io/v1 field, core/v1 field] */
const FIELDS: [string, string][] = [
  ['regarding', 'involvedObject'],
  ['related', 'related'],
  ['note', 'message'],
  ['reason', 'reason'],
  ['type', 'type'],
  ['action', 'action'],
  ['eventTime', 'eventTime'],
  ['series', 'series'],
  ['reportingController', 'reportingComponent'],
  ['reportingInstance', 'reportingInstance'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
];

function copyFields(from: Json, pairs: [string, string][]): Json {
  const out: Json = {};
  for (const [to, src] of pairs) if (from[src] !== undefined) out[to] = from[src];
  return out;
}

export const eventsV1View: ResourceView = {
  storage: { group: '', plural: 'events' },
  fromStorage(core: KubeObject): KubeObject {
    return {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: core.metadata,
      ...copyFields(core, FIELDS),
    };
  },
  toStorage(v1: Json): Json {
    const out: Json = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: isRecord(v1.metadata) ? v1.metadata : {},
      ...copyFields(v1, FIELDS.map(([a, b]) => [b, a])),
    };
    if (!isRecord(out.involvedObject)) out.involvedObject = {};
    return out;
  },
  fieldPath(path: string): string {
    for (const [v1, core] of FIELDS) {
      if (path === v1 || path.startsWith(`${v1}.`)) return core + path.slice(v1.length);
    }
    return path;
  },
};
