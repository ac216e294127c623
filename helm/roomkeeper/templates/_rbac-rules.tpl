{{/*
THE ONE PLACE where Roomkeeper's permissions are written down. Least privilege: each component gets
exactly the verbs on exactly the resources its code calls, and nothing here depends on values.
test/rbac/ derives the calls the code makes (TypeScript type checker) and fails when these lists
grant less, or more, than the code uses; test/helm/ checks the rendered tables.

  operator (ClusterRole)  roomkeeper.io resources, pods, namespaces, nodes (read), leases (list), events (create/patch)
  operator (Role)         its leader-election Lease, in the release namespace
  gateway  (ClusterRole)  roomkeeper.io resources only; never pods, ConfigMaps or any core resource
  gateway  (Role)         get on the management-API credentials Secret only, by name

What RBAC cannot narrow further, and why (the chart README says the same):
- Room pods and namespaces are cluster-wide: a scheduler's namespace is created at run time with
  the scheduler's name, so no Role can be bound there in advance. A Role per room namespace, made
  by the operator, would need the operator to hold create on roles and rolebindings plus every
  right it grants (RBAC's escalation check), which is wider than what it replaces.
- `create` and `list`/`watch` cannot be limited by resourceNames, and RBAC has no label selectors:
  the pods and namespaces informers ask only for objects labelled managed-by roomkeeper, and the
  operator lists only the Leases labelled roomkeeper.io/operator-lease, but the grant covers all of them.
- No ConfigMaps at all: the gateway's ping digests are PingDigest custom resources
  (crds/roomkeeper.io_pingdigests.yaml) in the scheduler's namespace.
*/}}

{{/* Operator, cluster-wide: reconciles schedulers and executes operations in the schedulers' namespaces. */}}
{{- define "roomkeeper.rbac.operatorClusterRules" -}}
# Schedulers: read the recipe, keep its finalizer and make the active definition its spec (patch,
# with a generation precondition), and delete it at the end of a delete_scheduler operation.
- apiGroups: ["roomkeeper.io"]
  resources: ["schedulers"]
  verbs: ["get", "list", "watch", "patch", "delete"]
# Versions: read, created by version operations (and rebuilt when the active one was deleted),
# deleted by rollbacks and delete_scheduler; patched to add and remove the version-protection
# finalizer on the versions that cannot be rebuilt.
- apiGroups: ["roomkeeper.io"]
  resources: ["schedulerversions"]
  verbs: ["get", "list", "watch", "create", "patch", "delete"]
# Operations (healing ones are enqueued here; old ones pruned), read through informers; one
# written with kubectl gets the labels of its scheduler and definition (patch of its metadata); a
# running one holds the finalizer roomkeeper.io/operation-running, whose release reads the
# operation again when the list of finalizers moved (get).
- apiGroups: ["roomkeeper.io"]
  resources: ["operations"]
  verbs: ["get", "list", "watch", "create", "patch", "delete"]
# Ping digests the gateway replicas write into each scheduler's namespace: read, and deleted once
# their replica has not written them for 2 x (room ping timeout + flush interval): it is gone (each
# gateway pod name leaves one per scheduler); a live replica's is created again at its next flush.
- apiGroups: ["roomkeeper.io"]
  resources: ["pingdigests"]
  verbs: ["list", "watch", "delete"]
# Rooms, read through informers; remove-rooms by id reads the named room fresh (get) and deletes
# it with its uid as precondition (as the GameRoom a room pod's ownerReference names, when the
# cache does not show it, is read fresh before the pod is deleted as orphaned); a room whose pod is gone but whose foreground deletion waits on
# a lagging garbage collector gets its `foregroundDeletion` finalizer removed (patch); a lost room
# gets the `roomkeeper.io/terminated-forwarded` annotation once its forwarders were told (patch).
- apiGroups: ["roomkeeper.io"]
  resources: ["gamerooms"]
  verbs: ["get", "list", "watch", "create", "patch", "delete"]
# Status subresources: merge-patched, written only when they change (a lost room is appended to a
# Scheduler's status.lostRooms with a JSON patch).
- apiGroups: ["roomkeeper.io"]
  resources: ["schedulers/status", "schedulerversions/status", "operations/status", "gamerooms/status"]
  verbs: ["patch"]
# Room pods carry blockOwnerDeletion towards their GameRoom (OwnerReferencesPermissionEnforcement).
- apiGroups: ["roomkeeper.io"]
  resources: ["gamerooms/finalizers"]
  verbs: ["update"]
# Room pods in each scheduler's namespace. `delete` is required to set ownerReferences on them,
# and deletes a room pod left running without its GameRoom (kubectl delete gameroom
# --cascade=orphan); `get` reads a pod the cache does not show yet before its room is declared lost; one
# `deletecollection` (by label) starts a deleted scheduler's room pods terminating at once.
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list", "watch", "create", "delete", "deletecollection"]
# One namespace per scheduler, created with it and deleted with it; watched (those labelled
# managed-by roomkeeper) so that one a kubectl user deleted is rebuilt.
- apiGroups: [""]
  resources: ["namespaces"]
  verbs: ["get", "list", "watch", "create", "delete"]
# Read-only: a room's address is its node's ExternalDNS/ExternalIP/InternalDNS/InternalIP.
- apiGroups: [""]
  resources: ["nodes"]
  verbs: ["list", "watch"]
# Leader Leases of the whole cluster, listed by the label every Roomkeeper operator puts on its own
# (roomkeeper.io/operator-lease=true) to find another Roomkeeper release's operator leading too: the
# newer of the two stands back. RBAC cannot narrow a list to a label, so this reads every Lease
# (node heartbeats, controllers' leader Leases: holder names and times, no secrets); only `list`,
# every few seconds from the API server's cache, no watch. Writes stay on the operator's own Lease (Role).
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  verbs: ["list"]
# Events for `kubectl describe`: about Schedulers (cluster-scoped, so in `default`) and GameRooms
# (in the schedulers' namespaces). Created once, then only their count patched; never read.
- apiGroups: ["events.k8s.io"]
  resources: ["events"]
  verbs: ["create", "patch"]
{{- end -}}

{{/* Operator, release namespace: leader election. `create` cannot be limited by name; get and update are. */}}
{{- define "roomkeeper.rbac.operatorNamespaceRules" -}}
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  verbs: ["create"]
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  resourceNames: [{{ include "roomkeeper.leaseName" . | quote }}]
  verbs: ["get", "update"]
{{- end -}}

{{/* Gateway, cluster-wide: the management API enqueues operations; the rooms API updates rooms' status. */}}
{{- define "roomkeeper.rbac.gatewayClusterRules" -}}
# Create, read, patch (a new version's spec, with a generation precondition) and delete schedulers.
- apiGroups: ["roomkeeper.io"]
  resources: ["schedulers"]
  verbs: ["get", "list", "watch", "create", "patch", "delete"]
# Versions are read-only for the gateway; the operator writes them.
- apiGroups: ["roomkeeper.io"]
  resources: ["schedulerversions"]
  verbs: ["get", "list", "watch"]
# Enqueue operations, list them, cancel them (patch).
- apiGroups: ["roomkeeper.io"]
  resources: ["operations"]
  verbs: ["get", "list", "watch", "create", "patch"]
# Rooms: read through an informer; pings that change a room patch its status. The allocate API
# reads a room fresh (get) after its compare-and-swap lost, and lists them fresh for a replay the
# cache cannot answer; its write is the status patch below.
- apiGroups: ["roomkeeper.io"]
  resources: ["gamerooms"]
  verbs: ["get", "list", "watch"]
- apiGroups: ["roomkeeper.io"]
  resources: ["gamerooms/status"]
  verbs: ["patch"]
# Ping digests: one PingDigest per gateway replica in each scheduler's namespace, created once and
# then only its status merge-patched (pings never cost one API write each). No read, no delete (the
# operator deletes those of gone replicas), and no right on any core resource but the one Secret of the Role below.
- apiGroups: ["roomkeeper.io"]
  resources: ["pingdigests"]
  verbs: ["create"]
- apiGroups: ["roomkeeper.io"]
  resources: ["pingdigests/status"]
  verbs: ["patch"]
# AllocationClaims: one per allocationId being answered, so two tries of one id on two replicas
# never take two rooms: created, read when another try holds it, deleted once answered (one by
# one, or those a replica kept a few seconds in batches: deletecollection by label), or, over 60 s
# old (stale: left by a replica that stopped mid-request), by the next try of the id; every minute
# each replica lists them to delete the stale ones of any replica.
- apiGroups: ["roomkeeper.io"]
  resources: ["allocationclaims"]
  verbs: ["get", "list", "create", "delete", "deletecollection"]
{{- end -}}

{{/* Gateway, release namespace: read the management-API credentials and nothing else. */}}
{{- define "roomkeeper.rbac.gatewayNamespaceRules" -}}
- apiGroups: [""]
  resources: ["secrets"]
  resourceNames: [{{ include "roomkeeper.authSecretName" . | quote }}]
  verbs: ["get"]
{{- end -}}
