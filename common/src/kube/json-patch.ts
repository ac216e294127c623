/**
 * `value` added at `path` only while nothing is there: a JSON Patch `test` of null, which
 * kube-apiserver's json-patch (v1.28) passes for a member missing from an object that exists (a
 * missing parent still fails), then the `add`. The one condition that tells "not written yet"
 * without the resourceVersion, which every status write moves. Checked on the real server by the
 * differential case "a JSON Patch test of null passes for a missing member only"; the sandbox's
 * patch.ts does the same. A patch that finds the member there fails 422 (`isJsonPatchNotApplied`).
 */
export function addWhereAbsent(path: string, value: unknown): { op: string; path: string; value: unknown }[] {
  return [{ op: 'test', path, value: null }, { op: 'add', path, value }];
}
