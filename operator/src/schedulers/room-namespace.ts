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
