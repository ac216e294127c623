/**
 * The most rooms one scheduler may have (ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER, issue 12 M4): a
 * definition that asks for more is refused, by the gateway before anything is written and by the
 * version operation when the change came past the gateway (kubectl edit or scale).
 */
import type { SchedulerSpec } from '../generated/resources';
import type { FieldError } from './result';

/**
 * Fields of a definition that ask for more rooms than one scheduler may have, in the definition's
 * field names. `autoscaling.max` -1 (unbounded, as Maestro) is allowed: the operator reads it as the limit.
 */
export function roomLimitViolations(spec: Pick<SchedulerSpec, 'roomsReplicas' | 'autoscaling'>, maxRooms: number): FieldError[] {
  const out: FieldError[] = [];
  const over = (field: string, value: number | undefined) => {
    if (value !== undefined && value > maxRooms) out.push({ field, message: `must be at most ${maxRooms}, the most rooms one scheduler may have (ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER); got ${value}` });
  };
  over('roomsReplicas', spec.roomsReplicas);
  over('autoscaling.min', spec.autoscaling?.min);
  over('autoscaling.max', spec.autoscaling?.max);
  return out;
}

/**
 * Why adding `amount` rooms to a count of `before` is refused, or undefined when it fits: said the
 * same by the gateway (when it accepts add-rooms) and the add_rooms executor (when it runs).
 */
export function addAboveLimit(before: number, amount: number, maxRooms: number): string | undefined {
  const after = before + amount;
  return after <= maxRooms ? undefined : `would take roomsReplicas from ${before} to ${after}, above ${maxRooms}, the most rooms one scheduler may have (ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER)`;
}
