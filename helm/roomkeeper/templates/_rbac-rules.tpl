{{/*
THE ONE PLACE where Roomkeeper's permissions are written down. Least privilege: each component gets
exactly the verbs on exactly the resources its code calls, and nothing here depends on values.
test/rbac/ derives the calls the code makes (TypeScript type checker) and fails when these lists
grant less, or more, than the code uses; test/helm/ checks the rendered tables.

  operator (ClusterRole)  roomkeeper.io resources, pods, namespaces, nodes (read), ping-digest
                          ConfigMaps (read)
  operator (Role)         its leader-election Lease, in the release namespace
  gateway  (ClusterRole)  roomkeeper.io resources and its ping-digest ConfigMaps; never pods
  gateway  (Role)         get on the management-API credentials Secret only, by name
*/}}

{{/* Operator, cluster-wide: reconciles schedulers and executes operations in the schedulers' namespaces. */}}
{{- define "roomkeeper.rbac.operatorClusterRules" -}}
# Schedulers: read the recipe, keep its finalizer (patch), make the active definition its spec
# (update), and delete it at the end of a delete_scheduler operation.
- apiGroups: ["roomkeeper.io"]
  resources: ["schedulers"]
  verbs: ["get", "list", "watch", "update", "patch", "delete"]
# Versions: read, created by version operations (and rebuilt when the active one was deleted),
# deleted by rollbacks and delete_scheduler; patched to add and remove the version-protection
# finalizer on the versions that cannot be rebuilt.
- apiGroups: ["roomkeeper.io"]
  resources: ["schedulerversions"]
  verbs: ["get", "list", "watch", "create", "patch", "delete"]
# Operations (healing ones are enqueued here; old ones pruned), read through informers.
- apiGroups: ["roomkeeper.io"]
  resources: ["operations"]
  verbs: ["list", "watch", "create", "delete"]
# Rooms, read through informers; remove-rooms by id reads the named room fresh (get) and deletes
# it with its uid as precondition.
- apiGroups: ["roomkeeper.io"]
  resources: ["gamerooms"]
  verbs: ["get", "list", "watch", "create", "delete"]
# Status subresources: merge-patched, written only when they change.
- apiGroups: ["roomkeeper.io"]
  resources: ["schedulers/status", "schedulerversions/status", "operations/status", "gamerooms/status"]
  verbs: ["patch"]
# Room pods carry blockOwnerDeletion towards their GameRoom (OwnerReferencesPermissionEnforcement).
- apiGroups: ["roomkeeper.io"]
  resources: ["gamerooms/finalizers"]
  verbs: ["update"]
# Room pods in each scheduler's namespace. `delete` is required to set ownerReferences on them.
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["list", "watch", "create", "delete"]
# One namespace per scheduler, created with it and deleted with it; watched (those labelled
# managed-by roomkeeper) so that one a kubectl user deleted is rebuilt.
- apiGroups: [""]
  resources: ["namespaces"]
  verbs: ["get", "list", "watch", "create", "delete"]
# Read-only: a room's address is its node's ExternalDNS/ExternalIP/InternalDNS/InternalIP.
- apiGroups: [""]
  resources: ["nodes"]
  verbs: ["list", "watch"]
# Read-only: the ping digests the gateway replicas write into each scheduler's namespace
# (ConfigMaps labelled roomkeeper.io/ping-digest=true; RBAC cannot narrow by label).
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["list", "watch"]
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
# Rooms: read through an informer; pings that change a room patch its status.
- apiGroups: ["roomkeeper.io"]
  resources: ["gamerooms"]
  verbs: ["list", "watch"]
- apiGroups: ["roomkeeper.io"]
  resources: ["gamerooms/status"]
  verbs: ["patch"]
# Ping digests: one ConfigMap per gateway replica in each scheduler's namespace, created once and
# then merge-patched (pings never cost one API write each). No read, no delete.
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["create", "patch"]
{{- end -}}

{{/* Gateway, release namespace: read the management-API credentials and nothing else. */}}
{{- define "roomkeeper.rbac.gatewayNamespaceRules" -}}
- apiGroups: [""]
  resources: ["secrets"]
  resourceNames: [{{ include "roomkeeper.authSecretName" . | quote }}]
  verbs: ["get"]
{{- end -}}
