/**
 * Names for a message, the first `max` of them and the rest counted: `a, b, c and 7 more`.
 * `total` is how many there are when `names` holds only the first of them (default: all of
 * `names` are all there are).
 */
export function nameList(names: readonly string[], { max = names.length, total = names.length }: { max?: number; total?: number } = {}): string {
  const shown = names.slice(0, max);
  const more = total - shown.length;
  return `${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}
