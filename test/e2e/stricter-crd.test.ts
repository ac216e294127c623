/**
 * A Scheduler CRD made stricter after a Scheduler was admitted, as an upgrade of Roomkeeper whose
 * CRD checks more does (trial S: two forwarders of one name, taken by the CRD of 2026-12-02).
 * kube-apiserver v1.28 validates the whole object on every write, its status included (from v1.30
 * CRDValidationRatcheting leaves unchanged fields alone), so each write of that Scheduler is refused: the status stood still, still saying in-sync and Ready, and only a log
 * line every 30 s said otherwise. The operator says it in a Warning naming the field and what to
 * do, and the Scheduler is written again once the field is fixed. Runs on the sandbox, or on a
 * real cluster when E2E_KUBECONFIG is set (the real kube-apiserver tier runs it).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { managementCall } from '../support/http';
import { CRD_DIR, schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';

const NAME = 'stricter-crd-e2e';
const CRD = 'schedulers.roomkeeper.io';
const RETIRED = 'retired-game';

/** The Scheduler CRD of crds/, with `check` added to spec.game's rules when given. */
function schedulerCrd(check?: { rule: string; message: string }): k8s.V1CustomResourceDefinition {
  const crd = k8s.loadYaml<k8s.V1CustomResourceDefinition>(fs.readFileSync(path.join(CRD_DIR, 'roomkeeper.io_schedulers.yaml'), 'utf8'));
  const game = crd.spec.versions[0]?.schema?.openAPIV3Schema?.properties?.spec?.properties?.game;
  if (!game) throw new Error('the Scheduler CRD has no spec.game');
  if (check) game.x_kubernetes_validations = [...(game.x_kubernetes_validations ?? []), check];
  return crd;
}

describe('a Scheduler that a stricter CRD refuses', () => {
  let stack: Stack;
  let ext: k8s.ApiextensionsV1Api;
  /** Replaces the installed Scheduler CRD, and waits until the API server judges by it. */
  const install = async (crd: k8s.V1CustomResourceDefinition): Promise<void> => {
    const existing = await ext.readCustomResourceDefinition({ name: CRD });
    await ext.replaceCustomResourceDefinition({ name: CRD, body: { ...crd, metadata: { ...crd.metadata, resourceVersion: existing.metadata?.resourceVersion } } }); // eslint-disable-line @typescript-eslint/no-misused-spread -- loadYaml's models are data-only classes, sent as JSON
  };
  beforeAll(async () => {
    stack = await startStack({ external: true, config: { healthInterval: 300 } });
    ext = stack.kc.makeApiClient(k8s.ApiextensionsV1Api);
  });
  afterAll(async () => {
    await install(schedulerCrd()).catch(() => undefined);
    await stack.api.deleteScheduler(NAME).catch(() => undefined);
    await stack.stop();
  });

  test('is told in a Warning naming the field and what to do where the API server judges every field on every write (v1.28; from v1.30 it ratchets, and nothing is refused), and is written again once the field is fixed', async () => {
    const spec = (schedulerObject(NAME, { roomsReplicas: 1 }) as { spec: Record<string, unknown> }).spec;
    expect((await managementCall(stack, 'POST', '/schedulers', { name: NAME, ...spec, game: RETIRED })).status).toBe(200);
    await waitFor(async () => ((await stack.api.getScheduler(NAME)).status?.state === 'in-sync' ? true : undefined), { timeoutMs: 60_000, message: `${NAME} in sync` });

    await install(schedulerCrd({ rule: `self != '${RETIRED}'`, message: `game ${RETIRED} is not accepted any more` }));
    // The API server judges by the new CRD once a new Scheduler of that game is refused.
    const probe = { apiVersion: 'roomkeeper.io/v1', kind: 'Scheduler', metadata: { name: `${NAME}-probe` }, spec: { ...spec, game: RETIRED } };
    await waitFor(async () => stack.api.createScheduler(probe as never).then(async () => {
      await stack.api.deleteScheduler(`${NAME}-probe`).catch(() => undefined);
      return undefined;
    }, (err: unknown) => ((err as { code?: number }).code === 422 ? true : undefined)), { timeoutMs: 30_000, intervalMs: 200, message: 'a Scheduler of the retired game refused by the stricter CRD' });
    // kube-apiserver v1.28 validates every field on every write; from v1.30 (CRDValidationRatcheting,
    // on by default; the sandbox plays v1.32) a field left unchanged is not judged again.
    const ratchets = await stack.api.patchScheduler(NAME, { metadata: { labels: { probe: 'label' } } }).then(() => true, (err: unknown) => {
      if ((err as { code?: number }).code === 422) return false;
      throw err;
    });
    // A change the operator must write into the status: a room lost (its pod deleted) and replaced.
    const pods = (await stack.core.listNamespacedPod({ namespace: NAME })).items;
    for (const pod of pods) await stack.core.deleteNamespacedPod({ namespace: NAME, name: pod.metadata?.name as string, gracePeriodSeconds: 0 });
    const events = stack.kc.makeApiClient(k8s.EventsV1Api);
    const refusedEvent = async () => (await events.listNamespacedEvent({ namespace: 'default' })).items.find((e) => e.reason === 'SchedulerRefusedByCRD' && e.regarding?.name === NAME);
    if (ratchets) {
      // Nothing is refused, so nothing is told: the lost room is written into the status.
      await waitFor(async () => ((await stack.api.getScheduler(NAME)).status?.lostRooms?.length ? true : undefined), { timeoutMs: 60_000, message: 'the lost room recorded in the status' });
      expect(await refusedEvent()).toBeUndefined();
    } else {
      const event = await waitFor(refusedEvent, { timeoutMs: 60_000, intervalMs: 250, message: 'a SchedulerRefusedByCRD Event' });
      expect(event.type).toBe('Warning');
      expect(event.note).toContain('spec.game');
      expect(event.note).toContain(`game ${RETIRED} is not accepted any more`);
      expect(event.note).toContain(`kubectl edit rks ${NAME}`);
    }

    // Fixed as the Warning says: the Scheduler is written again (its status follows the new generation).
    const fixed = await stack.api.patchScheduler(NAME, { spec: { game: 'current-game' } });
    const generation = fixed.metadata.generation;
    await waitFor(async () => {
      const s = await stack.api.getScheduler(NAME);
      return s.status?.observedGeneration === generation && s.status?.state === 'in-sync' ? true : undefined;
    }, { timeoutMs: 60_000, message: `${NAME}'s status written for generation ${String(generation)}` });
  });
});
