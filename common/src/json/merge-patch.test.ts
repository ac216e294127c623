import { mergePatchBetween } from './merge-patch';

/** RFC 7386's MergePatch, as the API server applies a merge patch. */
function apply(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const base = typeof target === 'object' && target !== null && !Array.isArray(target) ? target as Record<string, unknown> : {};
  const members = patch as Record<string, unknown>;
  const kept = Object.entries(base).filter(([k]) => !(k in members));
  const patched = Object.entries(members).filter(([, v]) => v !== null).map(([k, v]) => [k, apply(base[k], v)] as const);
  return Object.fromEntries([...kept, ...patched]);
}

describe('mergePatchBetween', () => {
  it('turns the object before into the object after when applied, at every depth', () => {
    const cases: [unknown, Record<string, unknown>][] = [
      [{ players: ['alice', 'bob'], mode: 'duel', dur: 60000 }, { match: 'r4-172' }],
      [{ a: { b: 1, c: { d: 2 } }, e: [1, 2] }, { a: { c: { f: 3 } }, e: [3] }],
      [{ a: { b: 1 } }, { a: 'now a string' }],
      [{ a: 'a string' }, { a: { b: 1 } }],
      [undefined, { x: 1 }],
      [null, { x: { y: 2 } }],
      [{}, {}],
    ];
    for (const [before, after] of cases) expect(apply(before, mergePatchBetween(before, after))).toEqual(after);
  });
});
