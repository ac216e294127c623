/**
 * The patch formats the API server accepts: JSON merge patch (RFC 7386), JSON patch (RFC 6902)
 * and strategic merge patch (for built-in kinds; list merge keys follow the Go types' tags).
 * All functions return new values and never mutate their inputs.
 *
 * A field named `__proto__`, `constructor` or `prototype` is an ordinary field, as on kube-apiserver:
 * a patch stores it as the object's own member (ownField, setOwnField) and never reaches a
 * JavaScript prototype, which matters because under `npm start` the sandbox shares its process
 * with the gateway and the operator. JSON pointers walk own members only, so
 * `/__proto__/polluted` names a missing path (422), as it does on kube-apiserver.
 */
import { ApiError } from './api-error';
import { deepCopy, fieldText } from './kube-object';
import { isRecord } from '../../../common/src/json/is-record';
import { jsonEqual } from '../../../common/src/json/json-equal';
import { ownField, setOwnField } from '../../../common/src/json/own-field';

type Json = Record<string, unknown>;

export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return deepCopy(patch);
  const result: Json = isRecord(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else setOwnField(result, key, applyMergePatch(ownField(result, key), value));
  }
  return result;
}

// ---------------------------------------------------------------- JSON patch

/**
 * A patch that cannot be applied, as kube-apiserver v1.28 answers it: 422 with a generic message
 * and empty details. `_why` says, to the reader of this file, which rule refused the patch; the
 * real server sends none of it, so neither does the sandbox.
 */
function patchError(_why: string): ApiError {
  return new ApiError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw patchError(`invalid JSON pointer: ${pointer}`);
  return pointer.slice(1).split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function getAt(doc: unknown, path: string[]): unknown {
  let cur = doc;
  for (const p of path) {
    if (Array.isArray(cur)) cur = Object.hasOwn(cur, p) ? cur[Number(p)] : undefined;
    else if (isRecord(cur)) cur = ownField(cur, p);
    else return undefined;
  }
  return cur;
}

function parentOf(doc: unknown, path: string[], op: string, pointer: string): unknown {
  const parent = getAt(doc, path.slice(0, -1));
  if (!Array.isArray(parent) && !isRecord(parent)) {
    throw patchError(`the server rejected our request due to an error in our request: ${op} operation does not apply: doc is missing path: "${pointer}": missing value`);
  }
  return parent;
}

function arrayIndex(parent: unknown[], key: string, allowEnd: boolean, pointer: string): number {
  if (key === '-' && allowEnd) return parent.length;
  const i = Number(key);
  if (!Number.isInteger(i) || i < 0 || i > parent.length || (!allowEnd && i === parent.length)) {
    throw patchError(`the server rejected our request due to an error in our request: index out of range: "${pointer}"`);
  }
  return i;
}

function addAt(doc: unknown, path: string[], value: unknown, pointer: string): unknown {
  const key = path.at(-1);
  if (key === undefined) return value;
  const parent = parentOf(doc, path, 'add', pointer);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, true, pointer), 0, value);
  else setOwnField(parent as Json, key, value);
  return doc;
}

function removeAt(doc: unknown, path: string[], pointer: string): unknown {
  const parent = parentOf(doc, path, 'remove', pointer);
  const key = path.at(-1);
  if (Array.isArray(parent) && key !== undefined) parent.splice(arrayIndex(parent, key, false, pointer), 1);
  else {
    if (key === undefined || !Object.hasOwn(parent as Json, key)) {
      throw patchError(`the server rejected our request due to an error in our request: remove operation does not apply: doc is missing path: "${pointer}"`);
    }
    delete (parent as Json)[key];
  }
  return doc;
}

export function applyJsonPatch(target: unknown, operations: unknown): unknown {
  if (!Array.isArray(operations)) throw new ApiError(400, 'BadRequest', 'json patch must be an array of operations');
  let doc = deepCopy(target);
  for (const raw of operations) {
    if (!isRecord(raw)) throw new ApiError(400, 'BadRequest', 'json patch operation must be an object');
    const op = fieldText(raw.op);
    const pointer = fieldText(raw.path);
    const path = parsePointer(pointer);
    switch (op) {
      case 'add':
        doc = addAt(doc, path, deepCopy(raw.value), pointer);
        break;
      case 'remove':
        doc = removeAt(doc, path, pointer);
        break;
      case 'replace':
        if (getAt(doc, path) === undefined) {
          throw patchError(`the server rejected our request due to an error in our request: replace operation does not apply: doc is missing key: ${pointer}: missing value`);
        }
        doc = removeAt(doc, path, pointer);
        doc = addAt(doc, path, deepCopy(raw.value), pointer);
        break;
      case 'move':
      case 'copy': {
        const fromPointer = fieldText(raw.from);
        const from = parsePointer(fromPointer);
        const value = deepCopy(getAt(doc, from));
        if (value === undefined) throw patchError(`the server rejected our request due to an error in our request: ${op} operation does not apply: doc is missing from path: ${fromPointer}`);
        if (op === 'move') doc = removeAt(doc, from, fromPointer);
        doc = addAt(doc, path, value, pointer);
        break;
      }
      case 'test': {
        // As kube-apiserver's json-patch (v1.28): a member missing from an object that exists
        // tests equal to null (a missing parent still fails), the one way to test for absence.
        const missingMember = (): boolean => {
          const parent = getAt(doc, path.slice(0, -1));
          return isRecord(parent) && ownField(parent, path[path.length - 1] as string) === undefined;
        };
        if (!(raw.value === null && path.length > 0 && missingMember()) && !jsonEqual(getAt(doc, path), raw.value)) throw patchError(`the server rejected our request due to an error in our request: testing value ${pointer} failed: test failed`);
        break;
      }
      default:
        throw patchError(`unexpected json patch operation: ${op}`);
    }
  }
  return doc;
}

// ---------------------------------------------------------------- strategic merge patch

type ListStrategy = { kind: 'merge'; key: string } | { kind: 'set' } | { kind: 'replace' };

const NAME_KEYED = new Set(['containers', 'initContainers', 'ephemeralContainers', 'volumes', 'env', 'imagePullSecrets']);
const CONTAINER_LISTS = new Set(['containers', 'initContainers', 'ephemeralContainers']);

/** The merge strategy of the list at `path` (field names from the root), as the Go types tag it. */
export function listStrategy(path: readonly string[]): ListStrategy {
  const field = path[path.length - 1] ?? '';
  if (NAME_KEYED.has(field)) return { kind: 'merge', key: 'name' };
  switch (field) {
    case 'ports':
      return path.some((p) => CONTAINER_LISTS.has(p)) ? { kind: 'merge', key: 'containerPort' } : { kind: 'merge', key: 'port' };
    case 'volumeMounts': return { kind: 'merge', key: 'mountPath' };
    case 'volumeDevices': return { kind: 'merge', key: 'devicePath' };
    case 'conditions':
    case 'addresses': return { kind: 'merge', key: 'type' };
    case 'ownerReferences': return { kind: 'merge', key: 'uid' };
    case 'hostAliases': return { kind: 'merge', key: 'ip' };
    case 'resizePolicy': return { kind: 'merge', key: 'resourceName' };
    case 'topologySpreadConstraints': return { kind: 'merge', key: 'topologyKey' };
    case 'finalizers': return path.length === 2 && path[0] === 'metadata' ? { kind: 'set' } : { kind: 'replace' };
    default: return { kind: 'replace' };
  }
}

const DELETE = Symbol('delete');

function stripDirectives(v: unknown): unknown {
  if (Array.isArray(v)) return v.filter((x) => !(isRecord(x) && x.$patch !== undefined && Object.keys(x).length === 1)).map(stripDirectives);
  if (!isRecord(v)) return v;
  const out: Json = {};
  for (const [k, val] of Object.entries(v)) {
    if (k.startsWith('$')) continue;
    if (val === null) continue;
    setOwnField(out, k, stripDirectives(val));
  }
  return out;
}

function reorder(list: unknown[], order: unknown[], key: string | undefined): unknown[] {
  const id = (x: unknown): unknown => (key && isRecord(x) ? x[key] : x);
  const rank = new Map<unknown, number>();
  order.forEach((o, i) => rank.set(JSON.stringify(id(o)), i));
  const indexed = list.map((x, i) => ({ x, i, r: rank.get(JSON.stringify(id(x))) }));
  indexed.sort((a, b) => {
    if (a.r !== undefined && b.r !== undefined) return a.r - b.r;
    if (a.r === undefined && b.r === undefined) return a.i - b.i;
    return a.r === undefined ? 1 : -1;
  });
  return indexed.map((e) => e.x);
}

function smpList(original: unknown[], patch: unknown[], path: string[]): unknown[] {
  if (patch.some((x) => isRecord(x) && x.$patch === 'replace')) {
    return stripDirectives(patch.filter((x) => !(isRecord(x) && x.$patch === 'replace'))) as unknown[];
  }
  const strategy = listStrategy(path);
  if (strategy.kind === 'replace') return stripDirectives(patch) as unknown[];
  if (strategy.kind === 'set') {
    const out = [...original];
    for (const x of patch) if (!out.some((o) => jsonEqual(o, x))) out.push(x);
    return out;
  }
  const key = strategy.key;
  const out = [...original];
  for (const item of patch) {
    if (!isRecord(item)) {
      out.push(item);
      continue;
    }
    const idx = out.findIndex((o) => isRecord(o) && jsonEqual(o[key], item[key]));
    if (item.$patch === 'delete') {
      if (idx >= 0) out.splice(idx, 1);
      continue;
    }
    if (idx >= 0) {
      const merged = smpMap(out[idx] as Json, item, path);
      if (merged === DELETE) out.splice(idx, 1);
      else out[idx] = merged;
    } else out.push(stripDirectives(item));
  }
  return out;
}

function smpMap(original: Json, patch: Json, path: string[]): Json | typeof DELETE {
  if (patch.$patch === 'delete') return DELETE;
  if (patch.$patch === 'replace') return stripDirectives(patch) as Json;
  const result: Json = { ...original };
  const orders: [string, unknown[]][] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch' || key === '$retainKeys') continue;
    if (key.startsWith('$setElementOrder/')) {
      if (Array.isArray(value)) orders.push([key.slice('$setElementOrder/'.length), value]);
      continue;
    }
    if (key.startsWith('$deleteFromPrimitiveList/')) {
      const field = key.slice('$deleteFromPrimitiveList/'.length);
      const current = ownField(result, field);
      if (Array.isArray(current) && Array.isArray(value)) setOwnField(result, field, current.filter((x) => !value.some((v) => jsonEqual(v, x))));
      continue;
    }
    if (value === null) {
      delete result[key];
      continue;
    }
    const current = ownField(result, key);
    if (isRecord(value)) {
      const merged = smpMap(isRecord(current) ? current : {}, value, [...path, key]);
      if (merged === DELETE) delete result[key];
      else setOwnField(result, key, merged);
    } else if (Array.isArray(value)) {
      setOwnField(result, key, smpList(Array.isArray(current) ? current : [], value, [...path, key]));
    } else {
      setOwnField(result, key, value);
    }
  }
  for (const [field, order] of orders) {
    const list = ownField(result, field);
    if (!Array.isArray(list)) continue;
    const strategy = listStrategy([...path, field]);
    setOwnField(result, field, reorder(list, order, strategy.kind === 'merge' ? strategy.key : undefined));
  }
  if (Array.isArray(patch.$retainKeys)) {
    const keep = new Set(patch.$retainKeys.map(String));
    for (const k of Object.keys(result)) if (!keep.has(k) && !Object.hasOwn(patch, k)) delete result[k];
  }
  return result;
}

export function applyStrategicMergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) throw new ApiError(400, 'BadRequest', 'strategic merge patch must be a JSON object');
  const merged = smpMap(isRecord(target) ? target : {}, patch, []);
  return merged === DELETE ? {} : deepCopy(merged);
}
