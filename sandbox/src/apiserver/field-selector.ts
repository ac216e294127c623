/**
 * Field selectors: `path=value`, `path==value`, `path!=value`, comma-separated. Paths are dotted
 * JSON paths (`metadata.name`, `status.phase`, `spec.nodeName`, `involvedObject.uid`); a missing
 * field compares as the empty string, as the real server's field sets do.
 */
import { badRequest } from './api-error';
import { fieldText } from './kube-object';

export type FieldMatcher = (obj: Record<string, unknown>) => boolean;

interface FieldRequirement {
  path: string[];
  value: string;
  negate: boolean;
}

const MATCH_ALL: FieldMatcher = () => true;

function fieldValue(obj: Record<string, unknown>, path: readonly string[]): string {
  let cur: unknown = obj;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object') return '';
    cur = (cur as Record<string, unknown>)[p];
  }
  return fieldText(cur);
}

const COMMON_LABELS = ['metadata.name', 'metadata.namespace'];

/** Field labels the real server accepts per built-in resource (`group/plural`), besides metadata.name/namespace. */
const BUILTIN_LABELS: Record<string, string[]> = {
  '/pods': ['spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'spec.hostNetwork', 'status.phase', 'status.podIP', 'status.podIPs', 'status.nominatedNodeName'],
  '/nodes': ['spec.unschedulable'],
  '/namespaces': ['status.phase'],
  '/secrets': ['type'],
  '/events': [
    'involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name', 'involvedObject.uid', 'involvedObject.apiVersion',
    'involvedObject.resourceVersion', 'involvedObject.fieldPath', 'reason', 'reportingComponent', 'source', 'type',
  ],
  'apps/replicasets': ['status.replicas'],
  'batch/jobs': ['status.successful'],
  'certificates.k8s.io/certificatesigningrequests': ['spec.signerName'],
};

/** The field labels a resource may be selected by; `selectable` are a CRD version's selectableFields paths. */
export function supportedFieldLabels(resourceKey: string, selectable: readonly string[] = []): Set<string> {
  return new Set([...COMMON_LABELS, ...(BUILTIN_LABELS[resourceKey] ?? []), ...selectable.map((p) => p.replace(/^\./, ''))]);
}

/** Parses a selector and refuses labels the resource does not support (400), as the real server does. */
export function parseSupportedFieldSelector(selector: string | undefined | null, supported: Set<string>): FieldMatcher {
  if (selector) {
    for (const raw of selector.split(',')) {
      const [label = ''] = raw.split(/!=|==|=/).map((s) => s.trim());
      if (label !== '' && !supported.has(label)) throw badRequest(`field label not supported: ${label}`);
    }
  }
  return parseFieldSelector(selector);
}

function parseFieldSelector(selector: string | undefined | null): FieldMatcher {
  if (!selector || selector.trim() === '') return MATCH_ALL;
  const requirements: FieldRequirement[] = [];
  for (const raw of selector.split(',')) {
    const part = raw.trim();
    if (part === '') continue;
    const m = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/.exec(part);
    if (!m) throw badRequest(`invalid selector: '${selector}'; can't understand '${part}'`);
    const [, field = '', op, value = ''] = m;
    requirements.push({ path: field.split('.'), value, negate: op === '!=' });
  }
  return (obj) => requirements.every((r) => (fieldValue(obj, r.path) === r.value) !== r.negate);
}
