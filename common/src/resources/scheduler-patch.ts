/**
 * Applying a PATCH /schedulers/{name} body to a scheduler definition, as Maestro does:
 * top-level fields replace; `spec` fields replace one by one, except `spec.containers`, merged by
 * index (each patch entry's fields replace those of the container at the same index; extra
 * entries are appended); `autoscaling` fields replace one by one (policy as a whole).
 * The merged result must be validated again with validateSchedulerSpec.
 */
import type { Autoscaling, Container, RoomSpec, SchedulerSpec } from '../generated/resources';

export type SchedulerPatch = Partial<Omit<SchedulerSpec, 'spec' | 'autoscaling'>> & {
  autoscaling?: Partial<Autoscaling>;
  spec?: Partial<Omit<RoomSpec, 'containers'>> & { containers?: Partial<Container>[] };
};

/** True when the patch names no field at all (Maestro answers 409 "no change found"). */
export function isEmptyPatch(patch: SchedulerPatch): boolean {
  return Object.values(patch).every((v: unknown) => v === undefined);
}

export function applySchedulerPatch(current: SchedulerSpec, patch: SchedulerPatch): SchedulerSpec {
  const { spec: specPatch, autoscaling: autoscalingPatch, ...topLevel } = patch;
  const merged: SchedulerSpec = structuredClone(current);
  const topLevelEntries: [string, unknown][] = Object.entries(topLevel);
  for (const [key, value] of topLevelEntries) {
    if (value !== undefined) (merged as unknown as Record<string, unknown>)[key] = structuredClone(value);
  }
  if (autoscalingPatch) {
    merged.autoscaling = { ...(merged.autoscaling ?? {}), ...structuredClone(autoscalingPatch) } as Autoscaling;
  }
  if (specPatch) {
    const { containers, ...roomFields } = specPatch;
    const room: RoomSpec = { ...merged.spec };
    const roomEntries: [string, unknown][] = Object.entries(roomFields);
    for (const [key, value] of roomEntries) {
      if (value !== undefined) (room as unknown as Record<string, unknown>)[key] = structuredClone(value);
    }
    if (containers) {
      const list = [...room.containers];
      containers.forEach((c, i) => {
        list[i] = { ...(list[i] ?? {}), ...structuredClone(c) } as Container;
      });
      room.containers = list;
    }
    merged.spec = room;
  }
  return merged;
}
