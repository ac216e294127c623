/**
 * A count and its noun in the number the count needs, for messages and history lines: `1 room`,
 * `0 rooms`, `3 rooms` (in English only 1 takes the singular). `plural` for a noun whose plural
 * is not the singular plus `s` (`counted(n, "room's", "rooms'")`).
 */
export function counted(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}

/** The words that agree with a count of things, for the clause that speaks of them: 1 takes `it`, `its`, `is`, `was`, a verb's `s`. */
export interface Agreeing { it: string; them: string; its: string; is: string; was: string; one: string; s: string }

export function agreeing(n: number): Agreeing {
  return n === 1
    ? { it: 'it', them: 'it', its: 'its', is: 'is', was: 'was', one: 'one', s: 's' }
    : { it: 'they', them: 'them', its: 'their', is: 'are', was: 'were', one: 'ones', s: '' };
}
