/**
 * Finds the keys a JSON text sends more than once in one object (`{"name":"a","name":"b"}`).
 * JSON.parse keeps the last value without a word; Go's protojson (Maestro) refuses the body. Keys
 * are compared as JSON.parse decodes them, so `"a"` and `"\u0061"` are the same key.
 *
 * One pass over the text with a stack on the heap: linear in the text's length, whatever its depth.
 * Meant for a text JSON.parse accepted; on any other text it still ends, in linear time.
 */
import { joinIndex, memberPath } from '../validation/field-path';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

/**
 * One open object or array. Frames are reused level by level (many small objects make no garbage),
 * and paths are built only for a duplicate found, so deep input costs no path strings.
 */
interface Frame {
  isObject: boolean;
  /** Object: how many distinct keys it has shown so far. */
  count: number;
  /** Object: its first key. */
  firstKey: string;
  /** Object: its keys, once it has shown a second one (kept across uses of the frame, cleared). */
  keys: Set<string> | undefined;
  /** Object: the last key read (the member a child container belongs to). */
  key: string;
  /** Object: whether the next string is a key. */
  expectKey: boolean;
  /** Array: the index of the current element. */
  index: number;
}

/** The index of the quote that ends the string whose opening quote is at `open`; -1 when it never ends. */
function stringEnd(text: string, open: number): number {
  let at = text.indexOf('"', open + 1);
  while (at !== -1) {
    let backslashes = 0;
    for (let i = at - 1; i > open && text.charCodeAt(i) === BACKSLASH; i--) backslashes++;
    if (backslashes % 2 === 0) return at;
    at = text.indexOf('"', at + 1);
  }
  return -1;
}

/** The key as JSON.parse reads it: escapes decoded (`\u0061` is `a`). */
function decodeKey(text: string, open: number, close: number): string {
  const raw = text.slice(open + 1, close);
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(text.slice(open, close + 1)) as string;
  } catch {
    return raw;
  }
}

/** `spec.containers[0].env[1].name`: where the duplicate `key` sits, from the `depth` open frames. */
function pathOf(stack: readonly Frame[], depth: number, key: string): string {
  let path = '';
  for (let level = 0; level < depth - 1; level++) {
    const frame = stack[level] as Frame;
    path = frame.isObject ? memberPath(path, frame.key) : joinIndex(path, frame.index);
  }
  return memberPath(path, key);
}

/** Whether `frame` already holds `key`; records it if not. */
function seenBefore(frame: Frame, key: string): boolean {
  if (frame.count === 0) {
    frame.firstKey = key;
    frame.count = 1;
    return false;
  }
  if (frame.count === 1) {
    if (frame.firstKey === key) return true;
    frame.keys ??= new Set();
    frame.keys.clear();
    frame.keys.add(frame.firstKey);
  }
  const keys = frame.keys as Set<string>;
  if (keys.has(key)) return true;
  keys.add(key);
  frame.count++;
  return false;
}

/** The duplicate keys of a JSON text: the paths of the first of them, and how many there are in all. */
export interface DuplicateKeys {
  /** The paths of the first `limit` duplicates (`spec.containers[0].env[1].name`), in the order they appear; [] for none. */
  paths: string[];
  /** How many duplicates the text sends in all (a key sent three times in one object counts twice), `paths` among them. */
  total: number;
}

/**
 * The duplicate keys in `text`: the paths of the first `limit` of them, in the order they appear,
 * and how many there are in all (the rest are counted, their paths not built).
 */
export function findDuplicateKeys(text: string, limit = 10): DuplicateKeys {
  const found: string[] = [];
  let total = 0;
  const stack: Frame[] = [];
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const top = depth > 0 ? stack[depth - 1] : undefined;
    if (c === QUOTE) {
      const close = stringEnd(text, i);
      if (close === -1) break;
      if (top?.isObject === true && top.expectKey) {
        const key = decodeKey(text, i, close);
        top.expectKey = false;
        top.key = key;
        if (seenBefore(top, key)) {
          total++;
          if (found.length < limit) found.push(pathOf(stack, depth, key));
        }
      }
      i = close;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      let frame = stack[depth];
      if (frame === undefined) {
        frame = { isObject: false, count: 0, firstKey: '', keys: undefined, key: '', expectKey: false, index: 0 };
        stack.push(frame);
      }
      frame.isObject = c === OPEN_OBJECT;
      frame.count = 0;
      frame.key = '';
      frame.expectKey = frame.isObject;
      frame.index = 0;
      depth++;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (depth > 0) depth--;
    } else if (c === COMMA && top !== undefined) {
      if (top.isObject) top.expectKey = true;
      else top.index++;
    }
  }
  return { paths: found, total };
}
