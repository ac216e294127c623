/**
 * A change of a scheduler that the operator refuses: a major change whose validation room never
 * starts (its simulated pod's image cannot be pulled), carrying the fields a test wants to see
 * refused. The spec keeps it (kubectl shows it) while the active version runs.
 */
import type { Scheduler } from '../../common/src/generated/resources';
import { managementCall } from './http';
import { schedulerObject, type Stack } from './stack';
import { waitFor } from './wait';

/**
 * POSTs the definition of `schedulerObject(name, over, env)` with a validation room that never
 * starts, waits until its create_new_scheduler_version ended in error, and returns the Scheduler.
 */
export async function refuseChange(stack: Stack, name: string, over: Record<string, unknown>, env: readonly { name: string; value: string }[] = []): Promise<Scheduler> {
  const broken = (schedulerObject(name, over, [...env, { name: 'ROOMKEEPER_SIM_POD', value: 'image-pull-failure' }]) as { spec: Record<string, unknown> }).spec;
  const posted = await managementCall(stack, 'POST', `/schedulers/${name}`, { name, ...broken });
  if (posted.status !== 200) throw new Error(`POST /schedulers/${name} answered ${posted.status}: ${JSON.stringify(posted.body)}`);
  const opId = (posted.body as { operationId: string }).operationId;
  await waitFor(async () => (await stack.api.getOperation(opId)).status?.status === 'error', { timeoutMs: 60_000, message: `the version change of ${name} refused` });
  return stack.api.getScheduler(name);
}
