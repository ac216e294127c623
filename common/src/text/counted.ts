/**
 * A count and its noun in the number the count needs, for messages and history lines: `1 room`,
 * `0 rooms`, `3 rooms` (in English only 1 takes the singular). `plural` for a noun whose plural
 * is not the singular plus `s` (`counted(n, "room's", "rooms'")`).
 */
export function counted(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}
