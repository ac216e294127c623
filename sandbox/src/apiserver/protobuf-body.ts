/**
 * Decodes the few Kubernetes protobuf request bodies that kubectl's and helm's typed clients send
 * (`kubectl create namespace|secret|configmap|serviceaccount`, `kubectl drain`'s Evictions, helm's
 * release Secrets and `--create-namespace`). The envelope is `k8s\0` + runtime.Unknown{typeMeta, raw}; `raw` is the
 * typed message. Field numbers follow k8s.io/api's generated.proto. Other kinds are refused (415).
 */
import { unsupportedMediaType } from './api-error';

type Json = Record<string, unknown>;

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

interface Field {
  no: number;
  wire: number;
  varint?: bigint;
  bytes?: Buffer;
}

function readVarint(buf: Buffer, pos: { i: number }): bigint {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    const b = buf[pos.i++];
    if (b === undefined) throw new Error('truncated varint');
    result |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return result;
    shift += 7n;
  }
}

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  const pos = { i: 0 };
  while (pos.i < buf.length) {
    const key = Number(readVarint(buf, pos));
    const no = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ no, wire, varint: readVarint(buf, pos) });
    else if (wire === 2) {
      const len = Number(readVarint(buf, pos));
      out.push({ no, wire, bytes: buf.subarray(pos.i, pos.i + len) });
      pos.i += len;
    } else if (wire === 1) pos.i += 8;
    else if (wire === 5) pos.i += 4;
    else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

const str = (f: Field): string => (f.bytes ?? Buffer.alloc(0)).toString('utf8');

function mapEntry(f: Field, valueAsBytes: boolean): [string, string] {
  let key = '';
  let value = '';
  for (const e of fields(f.bytes ?? Buffer.alloc(0))) {
    if (e.no === 1) key = str(e);
    if (e.no === 2) value = valueAsBytes ? (e.bytes ?? Buffer.alloc(0)).toString('base64') : str(e);
  }
  return [key, value];
}

function ownerReference(buf: Buffer): Json {
  const o: Json = {};
  for (const f of fields(buf)) {
    if (f.no === 1) o.kind = str(f);
    else if (f.no === 3) o.name = str(f);
    else if (f.no === 4) o.uid = str(f);
    else if (f.no === 5) o.apiVersion = str(f);
    else if (f.no === 6) o.controller = f.varint === 1n;
    else if (f.no === 7) o.blockOwnerDeletion = f.varint === 1n;
  }
  return o;
}

function objectMeta(buf: Buffer): Json {
  const m: Json = {};
  const labels: Record<string, string> = {};
  const annotations: Record<string, string> = {};
  const finalizers: string[] = [];
  const owners: Json[] = [];
  for (const f of fields(buf)) {
    switch (f.no) {
      case 1: m.name = str(f); break;
      case 2: m.generateName = str(f); break;
      case 3: m.namespace = str(f); break;
      case 5: m.uid = str(f); break;
      case 6: m.resourceVersion = str(f); break;
      case 11: { const [k, v] = mapEntry(f, false); labels[k] = v; break; }
      case 12: { const [k, v] = mapEntry(f, false); annotations[k] = v; break; }
      case 13: owners.push(ownerReference(f.bytes ?? Buffer.alloc(0))); break;
      case 14: finalizers.push(str(f)); break;
      default: break;
    }
  }
  for (const k of ['name', 'generateName', 'namespace', 'uid', 'resourceVersion']) if (m[k] === '') delete m[k];
  if (Object.keys(labels).length) m.labels = labels;
  if (Object.keys(annotations).length) m.annotations = annotations;
  if (finalizers.length) m.finalizers = finalizers;
  if (owners.length) m.ownerReferences = owners;
  return m;
}

function deleteOptions(buf: Buffer): Json {
  const o: Json = {};
  for (const f of fields(buf)) {
    if (f.no === 1 && f.varint !== undefined) o.gracePeriodSeconds = Number(BigInt.asIntN(64, f.varint));
    else if (f.no === 4) o.propagationPolicy = str(f);
  }
  return o;
}

function decodeKind(kind: string, raw: Buffer): Json | undefined {
  const obj: Json = {};
  const data: Record<string, string> = {};
  const stringData: Record<string, string> = {};
  const binaryData: Record<string, string> = {};
  for (const f of fields(raw)) {
    if (f.no === 1) {
      obj.metadata = objectMeta(f.bytes ?? Buffer.alloc(0));
      continue;
    }
    switch (kind) {
      case 'Namespace':
        if (f.no === 2) {
          const finalizers = fields(f.bytes ?? Buffer.alloc(0)).filter((x) => x.no === 1).map(str);
          obj.spec = finalizers.length ? { finalizers } : {};
        }
        break;
      case 'Secret':
        if (f.no === 2) { const [k, v] = mapEntry(f, true); data[k] = v; }
        else if (f.no === 3) obj.type = str(f);
        else if (f.no === 4) { const [k, v] = mapEntry(f, false); stringData[k] = v; }
        else if (f.no === 5) obj.immutable = f.varint === 1n;
        break;
      case 'ConfigMap':
        if (f.no === 2) { const [k, v] = mapEntry(f, false); data[k] = v; }
        else if (f.no === 3) { const [k, v] = mapEntry(f, true); binaryData[k] = v; }
        else if (f.no === 4) obj.immutable = f.varint === 1n;
        break;
      case 'ServiceAccount':
        if (f.no === 4) obj.automountServiceAccountToken = f.varint === 1n;
        break;
      case 'Eviction':
        if (f.no === 2) obj.deleteOptions = deleteOptions(f.bytes ?? Buffer.alloc(0));
        break;
      default:
        return undefined;
    }
  }
  if (Object.keys(data).length) obj.data = data;
  if (Object.keys(stringData).length) obj.stringData = stringData;
  if (Object.keys(binaryData).length) obj.binaryData = binaryData;
  return obj;
}

/** The JSON form of a protobuf request body, or a 415 for kinds this server cannot read. */
export function decodeProtobufBody(body: Buffer): Json {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC)) throw unsupportedMediaType('application/vnd.kubernetes.protobuf', ['application/json', 'application/yaml']);
  let apiVersion = '';
  let kind = '';
  let raw: Buffer = Buffer.alloc(0);
  try {
    for (const f of fields(body.subarray(4))) {
      if (f.no === 1) {
        for (const t of fields(f.bytes ?? Buffer.alloc(0))) {
          if (t.no === 1) apiVersion = str(t);
          if (t.no === 2) kind = str(t);
        }
      } else if (f.no === 2) raw = f.bytes ?? Buffer.alloc(0);
    }
    const decoded = decodeKind(kind, raw);
    if (decoded) return { apiVersion, kind, ...decoded };
  } catch {
    // fall through to 415
  }
  throw unsupportedMediaType(`application/vnd.kubernetes.protobuf (${kind || 'unknown kind'})`, ['application/json', 'application/yaml']);
}
