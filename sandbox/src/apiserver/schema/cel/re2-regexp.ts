/**
 * Translates the RE2 syntax CEL's `matches()` uses into a JavaScript RegExp, with a small cache.
 * Handles leading flag groups (`(?i)`), `\A`, `\z`, and `(?P<name>...)` groups.
 */
import { CelEvalError } from './cel-values';

const cache = new Map<string, RegExp>();
const CACHE_LIMIT = 512;

export function compileRe2(pattern: string): RegExp {
  const hit = cache.get(pattern);
  if (hit !== undefined) return hit;
  let source = pattern;
  let flags = '';
  const flagGroup = /^\(\?([imsU]+)\)/.exec(source);
  if (flagGroup) {
    for (const f of flagGroup[1] ?? '') if ('ims'.includes(f) && !flags.includes(f)) flags += f;
    source = source.slice(flagGroup[0].length);
  }
  source = source.replace(/\(\?P</g, '(?<').replace(/\\A/g, '^').replace(/\\z/g, '(?![\\s\\S])');
  let re: RegExp;
  try {
    re = new RegExp(source, flags);
  } catch (e) {
    throw new CelEvalError(`invalid regular expression ${JSON.stringify(pattern)}: ${(e as Error).message}`);
  }
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(pattern, re);
  return re;
}
