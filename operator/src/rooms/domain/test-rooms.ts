/** Builders of `RoomView`s for the domain tables (test helper, imported by *.test.ts only). */
import type { RoomView } from './types';

export function roomView(name: string, overrides: Partial<RoomView> = {}): RoomView {
  return {
    name,
    status: 'ready',
    version: 'v1.0.0',
    createdAt: 0,
    terminating: false,
    validation: false,
    ...overrides,
  };
}

/** A seeded pseudo-random generator in [0, 1) (mulberry32), so the tables are deterministic. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
