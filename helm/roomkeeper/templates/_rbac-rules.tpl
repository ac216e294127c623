{{/*
THE ONE PLACE where Roomkeeper's permissions are written down. Least privilege: each component gets
exactly the verbs on exactly the resources its code calls, and nothing here depends on values.
A test (test/helm/) renders these lists; keep them in step with the Kubernetes calls in operator/
and api-gateway/.

  operator (ClusterRole)  roomkeeper.io resources, pods, namespaces, nodes (read), ping-digest
                          ConfigMaps (read), events
  operator (Role)         its leader-election Lease, in the release namespace
  gateway  (ClusterRole)  roomkeeper.io resources and its ping-digest ConfigMaps; never pods
  gateway  (Role)         get on the management-API credentials Secret only, by name
*/}}

{{/* Operator, cluster-wide: reconciles schedulers and executes operations in the schedulers' namespaces. */}}
{{- define "roomkeeper.rbac.operatorClusterRules" -}}
# Schedulers: read the recipe, keep its finalizer, switch its active definition (update), and
# delete it at the end of a delete_scheduler operation. Created by the gateway or kubectl.
- apiGroups: ["roomkeeper.io"]
  resources: ["schedulers"]
  verbs: ["get", "list", "watch", "update", "patch", "delete"]
# Versions, operations and rooms are created, pruned and deleted by the operator.
- apiGroups: ["roomkeeper.io"]
  resources: ["schedulerversions", "operations", "gamerooms"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
# Status subresources: the operator computes and writes every status.
- apiGroups: ["roomkeeper.io"]
  resources: ["schedulers/status", "schedulerversions/status", "operations/status", "gamerooms/status"]
  verbs: ["get", "update", "patch"]
# Finalizers subresources: needed to set blockOwnerDeletion on owned children
# (OwnerReferencesPermissionEnforcement).
- apiGroups: ["roomkeeper.io"]
  resources: ["schedulers/finalizers", "schedulerversions/finalizers", "operations/finalizers", "gamerooms/finalizers"]
  verbs: ["update"]
# Room pods in each scheduler's namespace. No pods/status, pods/exec or pods/log.
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list", "watch", "create", "patch", "delete"]
# One namespace per scheduler, created with it and deleted with it.
- apiGroups: [""]
  resources: ["namespaces"]
  verbs: ["get", "list", "watch", "create", "delete"]
# Read-only: a room's address is its node's ExternalDNS/ExternalIP/InternalDNS/InternalIP.
- apiGroups: [""]
  resources: ["nodes"]
  verbs: ["get", "list", "watch"]
# Read-only: the ping digests the gateway replicas write into each scheduler's namespace
# (ConfigMaps labelled roomkeeper.io/ping-digest=true; RBAC cannot narrow by label).
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["get", "list", "watch"]
# Events about schedulers, operations and rooms (core and events.k8s.io APIs).
- apiGroups: ["", "events.k8s.io"]
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
# Create, read, update (enqueueing through the operator) and delete schedulers.
- apiGroups: ["roomkeeper.io"]
  resources: ["schedulers"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
# Versions are read-only for the gateway; the operator writes them.
- apiGroups: ["roomkeeper.io"]
  resources: ["schedulerversions"]
  verbs: ["get", "list", "watch"]
# Enqueue operations, list them, cancel them (patch).
- apiGroups: ["roomkeeper.io"]
  resources: ["operations"]
  verbs: ["get", "list", "watch", "create", "patch"]
# Rooms: read them; pings and room events patch their status.
- apiGroups: ["roomkeeper.io"]
  resources: ["gamerooms", "gamerooms/status"]
  verbs: ["get", "list", "watch", "patch"]
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
