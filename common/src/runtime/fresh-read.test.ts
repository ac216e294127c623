import { FreshReads } from './fresh-read';

/** A read whose every call is recorded and finished by the test. */
function scriptedReads() {
  const calls: { key: string; finish: (value: string) => void; fail: (err: Error) => void }[] = [];
  const reads = new FreshReads<string>((key) => new Promise<string>((resolve, reject) => {
    calls.push({ key, finish: resolve, fail: reject });
  }));
  return { reads, calls };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('FreshReads', () => {
  it('answers each caller with a read that started after it asked; callers that asked while one ran share the next', async () => {
    const { reads, calls } = scriptedReads();
    const first = reads.get('s');
    const second = reads.get('s');
    const third = reads.get('s');
    expect(calls).toHaveLength(1);
    calls[0]?.finish('read 1');
    await expect(first).resolves.toBe('read 1');
    await turn();
    expect(calls).toHaveLength(2);
    const fourth = reads.get('s');
    calls[1]?.finish('read 2');
    await expect(Promise.all([second, third])).resolves.toEqual(['read 2', 'read 2']);
    await turn();
    expect(calls).toHaveLength(3);
    calls[2]?.finish('read 3');
    await expect(fourth).resolves.toBe('read 3');
    expect(reads.pending).toBe(0);
  });

  it('runs at most one read and keeps one waiting per key, whatever the number of callers', async () => {
    const { reads, calls } = scriptedReads();
    const answers = Array.from({ length: 100 }, () => reads.get('s'));
    const other = reads.get('t');
    expect(reads.pending).toBe(3);
    expect(calls.map((c) => c.key)).toEqual(['s', 't']);
    calls[0]?.finish('one');
    calls[1]?.finish('other');
    await turn();
    expect(calls.map((c) => c.key)).toEqual(['s', 't', 's']);
    answers.push(...Array.from({ length: 100 }, () => reads.get('s')));
    expect(reads.pending).toBe(2);
    calls[2]?.finish('two');
    await turn();
    calls[3]?.finish('three');
    const values = await Promise.all(answers);
    expect(values.filter((v) => v === 'one')).toHaveLength(1);
    expect(values.filter((v) => v === 'two')).toHaveLength(99);
    expect(values.filter((v) => v === 'three')).toHaveLength(100);
    await expect(other).resolves.toBe('other');
    expect(calls).toHaveLength(4);
    expect(reads.pending).toBe(0);
  });

  it('fails the callers of a failed read and still runs the read waiting behind it', async () => {
    const { reads, calls } = scriptedReads();
    const first = reads.get('s');
    const second = reads.get('s');
    calls[0]?.fail(new Error('API server down'));
    await expect(first).rejects.toThrow('API server down');
    await turn();
    calls[1]?.finish('back');
    await expect(second).resolves.toBe('back');
    expect(reads.pending).toBe(0);
  });
});
