/**
 * The order of a scheduler's operation queue (pure), one comparison for every reader: the
 * operator runs pending operations in it, the gateway lists them in it. Priority operations
 * (enqueued by the operator to heal or scale) come first, then enqueue time, then name, so every
 * replica computes the same order.
 */
import type { Operation } from '../generated/resources';

export function compareQueueOrder(a: Operation, b: Operation): number {
  const pa = a.spec.priority ? 0 : 1;
  const pb = b.spec.priority ? 0 : 1;
  if (pa !== pb) return pa - pb;
  const ta = Date.parse(a.spec.enqueuedAt) || 0;
  const tb = Date.parse(b.spec.enqueuedAt) || 0;
  if (ta !== tb) return ta - tb;
  const na = a.metadata.name ?? '';
  const nb = b.metadata.name ?? '';
  return na < nb ? -1 : na > nb ? 1 : 0;
}
