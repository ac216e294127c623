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

export { seededRandom } from '../../../../test/support/seeded-random';
