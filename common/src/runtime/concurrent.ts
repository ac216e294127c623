/**
 * Runs `fn` over `items` with at most `limit` calls in flight, in the items' order of start.
 * `stop` is asked before each item is started; once it says true no further item starts (those
 * in flight finish). The first error is thrown after the calls in flight have settled.
 */
export async function forEachConcurrent<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<void>,
  stop: () => boolean = () => false,
): Promise<void> {
  let next = 0;
  let failure: { err: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (next < items.length && !failure && !stop()) {
      const index = next++;
      try {
        await fn(items[index] as T, index);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, () => worker()));
  if (failure) throw failure.err;
}
