/**
 * Server-side printing: objects to `meta.k8s.io/v1` Tables, the way `kubectl get` asks for them
 * (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`).
 */
import { evaluateJsonPath } from './crd-schema';
import { fieldText, type KubeObject } from './kube-object';
import type { PrinterColumn, ResourceType } from './resource-type';
import { isRecord } from '../../../common/src/json/is-record';

type Json = Record<string, unknown>;

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

interface Printer {
  columns: ColumnDefinition[];
  cells(obj: KubeObject, now: Date): unknown[];
}

/** Kubernetes' `duration.HumanDuration` of the time since `ts`. */
export function humanAge(ts: unknown, now: Date): string {
  if (typeof ts !== 'string') return '<unknown>';
  const t = Date.parse(ts);
  if (Number.isNaN(t)) return '<unknown>';
  const ms = now.getTime() - t;
  if (ms < -1000) return '<invalid>';
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  if (years < 8) return days % 365 === 0 ? `${years}y` : `${years}y${days % 365}d`;
  return `${years}y`;
}

function col(name: string, type = 'string', priority = 0, format = '', description = ''): ColumnDefinition {
  return { name, type, format, description, priority };
}

const NAME = col('Name', 'string', 0, 'name', 'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names');
const AGE = col('Age', 'string', 0, '', 'CreationTimestamp is a timestamp representing the server time when this object was created.');

function obj(v: unknown): Json {
  return isRecord(v) ? v : {};
}

function arr(v: unknown): Json[] {
  return Array.isArray(v) ? v.filter(isRecord) : [];
}

function orNone(v: unknown): string {
  return typeof v === 'string' && v !== '' ? v : '<none>';
}

function podStatus(pod: KubeObject): string {
  const status = obj(pod.status);
  let reason = typeof status.reason === 'string' && status.reason ? status.reason : fieldText(status.phase, 'Pending');
  for (const cs of arr(status.containerStatuses).reverse()) {
    const state = obj(cs.state);
    const waiting = obj(state.waiting);
    const terminated = obj(state.terminated);
    if (typeof waiting.reason === 'string' && waiting.reason) reason = waiting.reason;
    else if (typeof terminated.reason === 'string' && terminated.reason) reason = terminated.reason;
    else if (state.terminated !== undefined) reason = terminated.signal ? `Signal:${fieldText(terminated.signal)}` : `ExitCode:${fieldText(terminated.exitCode, '0')}`;
  }
  if (pod.metadata.deletionTimestamp) reason = status.reason === 'NodeLost' ? 'Unknown' : 'Terminating';
  return reason;
}

const PRINTERS: Record<string, Printer> = {
  '/pods': {
    columns: [NAME, col('Ready'), col('Status'), col('Restarts', 'string'), AGE, col('IP', 'string', 1), col('Node', 'string', 1), col('Nominated Node', 'string', 1), col('Readiness Gates', 'string', 1)],
    cells: (pod, now) => {
      const spec = obj(pod.spec);
      const status = obj(pod.status);
      const statuses = arr(status.containerStatuses);
      const ready = statuses.filter((c) => c.ready === true).length;
      const restarts = statuses.reduce((n, c) => n + (typeof c.restartCount === 'number' ? c.restartCount : 0), 0);
      const gates = arr(spec.readinessGates);
      return [
        pod.metadata.name, `${ready}/${arr(spec.containers).length}`, podStatus(pod), String(restarts), humanAge(pod.metadata.creationTimestamp, now),
        orNone(status.podIP), orNone(spec.nodeName), orNone(status.nominatedNodeName), gates.length === 0 ? '<none>' : `0/${gates.length}`,
      ];
    },
  },
  '/nodes': {
    columns: [NAME, col('Status'), col('Roles'), AGE, col('Version'), col('Internal-IP', 'string', 1), col('External-IP', 'string', 1), col('OS-Image', 'string', 1), col('Kernel-Version', 'string', 1), col('Container-Runtime', 'string', 1)],
    cells: (node, now) => {
      const status = obj(node.status);
      const ready = arr(status.conditions).find((c) => c.type === 'Ready');
      let state = ready ? (ready.status === 'True' ? 'Ready' : ready.status === 'False' ? 'NotReady' : 'Unknown') : 'Unknown';
      if (obj(node.spec).unschedulable === true) state += ',SchedulingDisabled';
      const roles = Object.keys(node.metadata.labels ?? {}).filter((l) => l.startsWith('node-role.kubernetes.io/')).map((l) => l.slice('node-role.kubernetes.io/'.length));
      const addresses = arr(status.addresses);
      const info = obj(status.nodeInfo);
      return [
        node.metadata.name, state, roles.length ? roles.join(',') : '<none>', humanAge(node.metadata.creationTimestamp, now), fieldText(info.kubeletVersion),
        orNone(addresses.find((a) => a.type === 'InternalIP')?.address), orNone(addresses.find((a) => a.type === 'ExternalIP')?.address),
        fieldText(info.osImage, '<unknown>'), fieldText(info.kernelVersion, '<unknown>'), fieldText(info.containerRuntimeVersion, '<unknown>'),
      ];
    },
  },
  '/namespaces': {
    columns: [NAME, col('Status'), AGE],
    cells: (ns, now) => [ns.metadata.name, fieldText(obj(ns.status).phase), humanAge(ns.metadata.creationTimestamp, now)],
  },
  '/events': {
    columns: [col('Last Seen'), col('Type'), col('Reason'), col('Object'), col('Subobject', 'string', 1), col('Source', 'string', 1), col('Message'), col('First Seen', 'string', 1), col('Count', 'string', 1), NAME],
    cells: (ev, now) => {
      const involved = obj(ev.involvedObject);
      const source = obj(ev.source);
      const last = ev.lastTimestamp ?? ev.eventTime ?? ev.metadata.creationTimestamp;
      return [
        humanAge(last, now), fieldText(ev.type), fieldText(ev.reason), `${fieldText(involved.kind).toLowerCase()}/${fieldText(involved.name)}`,
        fieldText(involved.fieldPath), fieldText(source.component), fieldText(ev.message), humanAge(ev.firstTimestamp ?? last, now), fieldText(ev.count, '1'), ev.metadata.name,
      ];
    },
  },
  'coordination.k8s.io/leases': {
    columns: [NAME, col('Holder'), AGE],
    cells: (l, now) => [l.metadata.name, fieldText(obj(l.spec).holderIdentity), humanAge(l.metadata.creationTimestamp, now)],
  },
  'apps/deployments': {
    columns: [NAME, col('Ready'), col('Up-to-date', 'integer'), col('Available', 'integer'), AGE],
    cells: (d, now) => {
      const s = obj(d.status);
      const want = typeof obj(d.spec).replicas === 'number' ? obj(d.spec).replicas : 1;
      return [d.metadata.name, `${Number(s.readyReplicas ?? 0)}/${String(want)}`, Number(s.updatedReplicas ?? 0), Number(s.availableReplicas ?? 0), humanAge(d.metadata.creationTimestamp, now)];
    },
  },
  '/services': {
    columns: [NAME, col('Type'), col('Cluster-IP'), col('External-IP'), col('Port(s)'), AGE, col('Selector', 'string', 1)],
    cells: (svc, now) => {
      const spec = obj(svc.spec);
      const ports = arr(spec.ports).map((p) => `${String(p.port)}${p.nodePort ? `:${fieldText(p.nodePort)}` : ''}/${fieldText(p.protocol, 'TCP')}`);
      const selector = Object.entries(obj(spec.selector)).map(([k, v]) => `${k}=${String(v)}`).join(',');
      return [svc.metadata.name, fieldText(spec.type, 'ClusterIP'), orNone(spec.clusterIP), '<none>', ports.length ? ports.join(',') : '<none>', humanAge(svc.metadata.creationTimestamp, now), selector || '<none>'];
    },
  },
  '/configmaps': {
    columns: [NAME, col('Data', 'integer'), AGE],
    cells: (cm, now) => [cm.metadata.name, Object.keys(obj(cm.data)).length + Object.keys(obj(cm.binaryData)).length, humanAge(cm.metadata.creationTimestamp, now)],
  },
  '/secrets': {
    columns: [NAME, col('Type'), col('Data', 'integer'), AGE],
    cells: (s, now) => [s.metadata.name, fieldText(s.type, 'Opaque'), Object.keys(obj(s.data)).length, humanAge(s.metadata.creationTimestamp, now)],
  },
  'apiextensions.k8s.io/customresourcedefinitions': {
    columns: [NAME, col('Created At', 'date')],
    cells: (crd) => [crd.metadata.name, crd.metadata.creationTimestamp],
  },
};

const DEFAULT_PRINTER: Printer = {
  columns: [NAME, AGE],
  cells: (o, now) => [o.metadata.name, humanAge(o.metadata.creationTimestamp, now)],
};

function cellForColumn(column: PrinterColumn, value: unknown, now: Date): unknown {
  if (value === undefined || value === null) return null;
  switch (column.type) {
    case 'date':
      return typeof value === 'string' ? humanAge(value, now) : value;
    case 'integer':
    case 'number':
    case 'boolean':
      return value;
    default:
      return typeof value === 'object' ? JSON.stringify(value) : fieldText(value, 'undefined');
  }
}

function customPrinter(columns: PrinterColumn[]): Printer {
  const effective = columns.length > 0 ? columns : [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }];
  return {
    columns: [NAME, ...effective.map((c) => col(c.name, c.type, c.priority ?? 0, c.format ?? '', c.description ?? ''))],
    cells: (o, now) => [o.metadata.name, ...effective.map((c) => {
      let value: unknown;
      try {
        value = evaluateJsonPath(o, c.jsonPath);
      } catch {
        value = undefined;
      }
      return cellForColumn(c, value, now);
    })],
  };
}

function printerFor(rt: ResourceType, version: string): Printer {
  if (rt.custom) return customPrinter(rt.versions.find((v) => v.name === version)?.printerColumns ?? []);
  return PRINTERS[`${rt.group}/${rt.plural}`] ?? DEFAULT_PRINTER;
}

function rowObject(o: KubeObject, include: IncludeObject): unknown {
  if (include === 'None') return undefined;
  if (include === 'Object') return o;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata };
}

export interface TableOptions {
  include: IncludeObject;
  now: Date;
  /** Leave out column definitions (watch events after the first). */
  noHeaders?: boolean;
}

export function toTable(rt: ResourceType, version: string, objects: KubeObject[], listMeta: Json, options: TableOptions): Json {
  const printer = printerFor(rt, version);
  const rows = objects.map((o) => {
    const row: Json = { cells: printer.cells(o, options.now) };
    const included = rowObject(o, options.include);
    if (included !== undefined) row.object = included;
    return row;
  });
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: options.noHeaders ? null : printer.columns,
    rows,
  };
}
