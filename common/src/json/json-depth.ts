/** How deep a parsed JSON value nests, read without recursion (safe on any input). */

/** True when `value` nests objects/arrays deeper than `max` (iterative: safe on any input). */
export function jsonDepthExceeds(value: unknown, max: number): boolean {
  const stack: { v: unknown; d: number }[] = [{ v: value, d: 0 }];
  while (stack.length > 0) {
    const { v, d } = stack.pop() as { v: unknown; d: number };
    if (typeof v !== 'object' || v === null) continue;
    if (d >= max) return true;
    for (const child of Object.values(v)) stack.push({ v: child, d: d + 1 });
  }
  return false;
}
