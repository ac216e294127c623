import { droppedFields } from './dropped-fields';

describe('droppedFields', () => {
  it('names each member sent that was not kept, nested in objects and lists, in the order sent', () => {
    const sent = { a: 1, typo: 2, nested: { b: 1, c: 2 }, list: [{ d: 1, e: 2 }, { d: 1 }], 'odd key': 1, '': 0 };
    const kept = { a: 1, nested: { b: 1 }, list: [{ d: 1 }, { d: 1 }] };
    expect(droppedFields(sent, kept)).toEqual(['typo', 'nested.c', 'list[0].e', '["odd key"]', '[""]']);
  });

  it('names none when everything was kept (defaults added do not count)', () => {
    expect(droppedFields({ a: { b: [1, 2] } }, { a: { b: [1, 2], c: 'default' } })).toEqual([]);
    expect(droppedFields('x', 'x')).toEqual([]);
  });

  it('names at most `limit`, then how many more', () => {
    const sent = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`k${i}`, i]));
    expect(droppedFields(sent, {}, 2)).toEqual(['k0', 'k1', '(3 more)']);
  });
});
