/**
 * The health check's add_rooms of a scheduler, and its probes of one room each while the active
 * version's rooms fail before they ping (operator/src/rooms/domain/failing-rooms.ts).
 */
import type { Operation } from '../../common/src/generated/resources';
import type { Stack } from './stack';
import { waitFor } from './wait';

/** The health check's add_rooms of `scheduler`, oldest first. */
export async function healthAdds(stack: Stack, scheduler: string): Promise<Operation[]> {
  return (await stack.api.listOperations(scheduler)).items
    .filter((o) => o.spec.definitionName === 'add_rooms' && o.spec.source === 'operator')
    .sort((a, b) => Date.parse(a.spec.enqueuedAt) - Date.parse(b.spec.enqueuedAt));
}

/** Waits for two probes of `version`'s rooms, and returns every probe made by then. */
export async function twoProbes(stack: Stack, scheduler: string, version: string, timeoutMs: number): Promise<Operation[]> {
  return waitFor(async () => {
    const adds = (await healthAdds(stack, scheduler)).filter((o) => String(o.spec.input?.reason).includes(`one room, to see whether rooms of ${version} start again`));
    return adds.length >= 2 ? adds : undefined;
  }, { timeoutMs, message: 'two probes of one room' });
}
