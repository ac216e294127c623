/**
 * The operator/gateway contract on the API server, declared once: the API group and version of
 * every Roomkeeper resource and each resource's plural, as crds/*.yaml define them (the plurals
 * come from the generated `crdInfo`; the generated types pin the apiVersion, which `satisfies`
 * checks here). Client calls take `{ ...ROOMKEEPER_API, plural }`, watches `collectionPath(kind)`.
 */
import type { Scheduler } from '../generated/resources';
import { crdInfo, type CrdKind } from '../generated/schemas';

export const API_GROUP = 'roomkeeper.io';
/** The version within the group (`v1`); `API_VERSION` is the pair as objects carry it. */
export const API_GROUP_VERSION = 'v1';
export const API_VERSION = `${API_GROUP}/${API_GROUP_VERSION}` as const satisfies Scheduler['apiVersion'];

/** The group and version as client-node's CustomObjectsApi takes them. */
export const ROOMKEEPER_API = { group: API_GROUP, version: API_GROUP_VERSION } as const;

/** Each resource's plural (the CRD's `spec.names.plural`). */
export const PLURALS: Readonly<Record<CrdKind, string>> = {
  Scheduler: crdInfo.Scheduler.plural,
  SchedulerVersion: crdInfo.SchedulerVersion.plural,
  Operation: crdInfo.Operation.plural,
  GameRoom: crdInfo.GameRoom.plural,
  PingDigest: crdInfo.PingDigest.plural,
  AllocationClaim: crdInfo.AllocationClaim.plural,
};

/** The path that lists and watches every object of a kind (all namespaces), e.g. `/apis/roomkeeper.io/v1/gamerooms`. */
export function collectionPath(kind: CrdKind): string {
  return `/apis/${API_VERSION}/${PLURALS[kind]}`;
}
