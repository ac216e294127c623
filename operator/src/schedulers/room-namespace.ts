/**
 * The labels of a scheduler's namespace (the namespace of its rooms), for both places that create
 * it: create_scheduler and the scheduler controller when it rebuilds a deleted one. Pure.
 *
 * Pod Security Admission (issue 12, L5): `pod-security.kubernetes.io/{enforce,warn,audit}` from
 * the operator's settings, each left out when `none`. The defaults warn at `restricted` and audit at
 * `baseline` but enforce nothing: `baseline` refuses every pod with a `hostPort`, and every room
 * with a port has one (portRange / hostPortRange). A cluster whose rooms have no ports, or that
 * admits host ports another way, sets ROOMKEEPER_ROOM_NAMESPACE_PSA_ENFORCE=baseline.
 */
import type { Config } from '../../../common/src/config';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, SCHEDULER_LABEL } from '../../../common/src/resources/labels';

const PSA_ENFORCE_LABEL = 'pod-security.kubernetes.io/enforce';
const PSA_WARN_LABEL = 'pod-security.kubernetes.io/warn';
const PSA_AUDIT_LABEL = 'pod-security.kubernetes.io/audit';

export type RoomNamespaceSettings = Pick<Config, 'roomNamespacePsaEnforce' | 'roomNamespacePsaWarn' | 'roomNamespacePsaAudit'>;

export function roomNamespaceLabels(scheduler: string, settings: RoomNamespaceSettings): Record<string, string> {
  const psa: [string, string][] = [
    [PSA_ENFORCE_LABEL, settings.roomNamespacePsaEnforce],
    [PSA_WARN_LABEL, settings.roomNamespacePsaWarn],
    [PSA_AUDIT_LABEL, settings.roomNamespacePsaAudit],
  ];
  return {
    [SCHEDULER_LABEL]: scheduler,
    [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
    ...Object.fromEntries(psa.filter(([, level]) => level !== 'none')),
  };
}

/**
 * What the NamespaceReady condition and the log say of a scheduler's namespace that exists without
 * the label the operator watches namespaces by (removed by hand, or the namespace was made again
 * by someone else): its rooms run on in it. delete_scheduler deletes a namespace by its scheduler
 * label alone, so whether a deletion leaves it in place depends on that one.
 */
export function unlabelledNamespaceWords(scheduler: string, labels: Record<string, string> | undefined): string {
  const wanted: [string, string][] = [[MANAGED_BY_LABEL, MANAGED_BY_VALUE], [SCHEDULER_LABEL, scheduler]];
  const missing = wanted.filter(([k, v]) => labels?.[k] !== v).map(([k, v]) => `${k}=${v}`);
  const deletion = labels?.[SCHEDULER_LABEL] === scheduler ? 'deleting the scheduler deletes it all the same' : 'deleting the scheduler leaves it in place';
  return `namespace ${scheduler} exists without the label${missing.length > 1 ? 's' : ''} ${missing.join(' and ')} (removed by hand, or someone else made it again), `
    + `so the operator does not see it as the scheduler's: rooms still run in it, and ${deletion}; `
    + `to hand it back, label it: kubectl label namespace ${scheduler} ${missing.join(' ')} --overwrite`;
}
