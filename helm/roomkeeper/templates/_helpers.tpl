{{/*
Names, labels and small helpers shared by every template.
*/}}

{{/* The chart name, or nameOverride. */}}
{{- define "roomkeeper.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The prefix of every object name: fullnameOverride, else release name (plus chart name unless it is already in it). */}}
{{- define "roomkeeper.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "roomkeeper.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels of every object. */}}
{{- define "roomkeeper.labels" -}}
helm.sh/chart: {{ include "roomkeeper.chart" . }}
app.kubernetes.io/name: {{ include "roomkeeper.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: roomkeeper
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Selector labels of one component: (dict "ctx" $ "component" "operator"). */}}
{{- define "roomkeeper.selectorLabels" -}}
app.kubernetes.io/name: {{ include "roomkeeper.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* Labels of one component's objects: (dict "ctx" $ "component" "operator"). */}}
{{- define "roomkeeper.componentLabels" -}}
{{ include "roomkeeper.labels" .ctx }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "roomkeeper.operator.fullname" -}}
{{- printf "%s-operator" (include "roomkeeper.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "roomkeeper.gateway.fullname" -}}
{{- printf "%s-gateway" (include "roomkeeper.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
A component's ServiceAccount: serviceAccount.name, else <fullname>-<component>, whether or not the
chart creates it (with create=false it must exist under that name). Never the namespace's
`default`: the bindings would give the component's rights, the operator's cluster-wide ones, to
every pod of the namespace that runs as `default`. (dict "ctx" $ "component" "operator")
*/}}
{{- define "roomkeeper.serviceAccountName" -}}
{{- $values := (index .ctx.Values .component).serviceAccount -}}
{{- $name := default (include (printf "roomkeeper.%s.fullname" .component) .ctx) $values.name -}}
{{- if and (eq $name "default") .ctx.Values.rbac.create -}}
{{- fail (printf "%s.serviceAccount.name=default would bind the %s's rights to the namespace's default ServiceAccount, and so to every pod in namespace %s that runs as default (each one that names no ServiceAccount does). Leave %s.serviceAccount.name empty (the chart names it %s) or name a ServiceAccount of the %s's own" .component .component .ctx.Release.Namespace .component (include (printf "roomkeeper.%s.fullname" .component) .ctx) .component) -}}
{{- end -}}
{{- $name -}}
{{- end -}}

{{- define "roomkeeper.operator.serviceAccountName" -}}
{{- include "roomkeeper.serviceAccountName" (dict "ctx" . "component" "operator") -}}
{{- end -}}

{{- define "roomkeeper.gateway.serviceAccountName" -}}
{{- include "roomkeeper.serviceAccountName" (dict "ctx" . "component" "gateway") -}}
{{- end -}}

{{/* Name of the Secret holding the management API's `username` and `password`. */}}
{{- define "roomkeeper.authSecretName" -}}
{{- default (printf "%s-auth" (include "roomkeeper.fullname" .)) .Values.auth.existingSecret -}}
{{- end -}}

{{/* Name of the Secret holding the room-token HMAC secret. */}}
{{- define "roomkeeper.roomTokenSecretName" -}}
{{- default (printf "%s-room-token" (include "roomkeeper.fullname" .)) .Values.roomToken.existingSecret -}}
{{- end -}}

{{- define "roomkeeper.leaseName" -}}
{{- default (include "roomkeeper.operator.fullname" .) .Values.operator.leaderElection.leaseName -}}
{{- end -}}

{{/* The rooms API URL given to rooms: the value, else the gateway Service's rooms port. */}}
{{- define "roomkeeper.roomsApiUrl" -}}
{{- if .Values.operator.rooms.apiUrl -}}
{{- .Values.operator.rooms.apiUrl -}}
{{- else -}}
{{- printf "http://%s.%s.svc:%d" (include "roomkeeper.gateway.fullname" .) .Release.Namespace (int .Values.gateway.service.roomsPort) -}}
{{- end -}}
{{- end -}}

{{/* The image reference: repository@digest, else repository:tag (tag defaults to appVersion). */}}
{{- define "roomkeeper.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/*
Milliseconds of a duration written as config.ts accepts it: 500ms, 5s, 2m, 1h, or a bare number of
milliseconds (values.schema.json guarantees the form).
*/}}
{{- define "roomkeeper.durationMs" -}}
{{- $d := toString . | trim -}}
{{- $n := regexFind "^[0-9]+(\\.[0-9]+)?" $d | float64 -}}
{{- $unit := regexReplaceAll "^[0-9]+(\\.[0-9]+)?" $d "" -}}
{{- $ms := $n -}}
{{- if eq $unit "s" -}}{{- $ms = mulf $n 1000 -}}
{{- else if eq $unit "m" -}}{{- $ms = mulf $n 60000 -}}
{{- else if eq $unit "h" -}}{{- $ms = mulf $n 3600000 -}}
{{- end -}}
{{- $ms | ceil | int64 -}}
{{- end -}}

{{/* Whole seconds (rounded up) of such a duration. */}}
{{- define "roomkeeper.durationSeconds" -}}
{{- divf (include "roomkeeper.durationMs" . | float64) 1000 | ceil | int64 -}}
{{- end -}}

{{/* A startupProbe's failureThreshold (period 5 s) that covers a start of this duration (at least 1). */}}
{{- define "roomkeeper.startupProbeFailures" -}}
{{- max 1 (divf (include "roomkeeper.durationSeconds" . | float64) 5 | ceil | int64) -}}
{{- end -}}

{{/*
MiB of a memory quantity written as a plain, decimal-SI (k, M, G, T) or binary-SI (Ki, Mi, Gi, Ti)
number; empty for any other form (an exponent), which the checks below then leave alone.
*/}}
{{- define "roomkeeper.memoryMiB" -}}
{{- $q := toString . | trim -}}
{{- $n := regexFind "^[0-9]+(\\.[0-9]+)?" $q -}}
{{- $factors := dict "" 1.0 "k" 1000.0 "M" 1000000.0 "G" 1000000000.0 "T" 1000000000000.0 "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 -}}
{{- $unit := trimPrefix $n $q -}}
{{- if and $n (hasKey $factors $unit) -}}
{{- divf (mulf ($n | float64) (get $factors $unit)) 1048576.0 -}}
{{- end -}}
{{- end -}}

{{/*
A component's memory limit must hold its V8 heap limit (maxHeapMB) plus what Node holds outside
the heap (code, buffers, sockets: a process with the Kubernetes client and an almost empty heap
is about 127 MB resident, docs/benchmarks.md): with less, the container is OOM-killed before V8
ever collects to stay under its limit. (dict "component" "operator" "values" .Values.operator)
*/}}
{{- define "roomkeeper.heapFitsMemoryLimit" -}}
{{- $limit := (.values.resources.limits | default dict).memory -}}
{{- if $limit -}}
{{- $mib := include "roomkeeper.memoryMiB" $limit -}}
{{- $needed := add (int .values.maxHeapMB) 128 -}}
{{- if and $mib (lt ($mib | float64) ($needed | float64)) -}}
{{- fail (printf "%s.resources.limits.memory=%v leaves less than 128 MiB above %s.maxHeapMB=%d, the V8 heap limit (Node holds about that much outside its heap): the %s would be OOM-killed before V8 collects to stay under its limit. Set %s.resources.limits.memory to at least %dMi, or lower %s.maxHeapMB" .component $limit .component (int .values.maxHeapMB) .component .component $needed .component) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
Environment both processes read: logging, the Kubernetes client, the per-scheduler room limit and the room-token secret.
*/}}
{{- define "roomkeeper.commonEnv" -}}
- name: ROOMKEEPER_LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
- name: ROOMKEEPER_KUBE_QPS
  value: {{ .Values.kube.qps | quote }}
- name: ROOMKEEPER_KUBE_BURST
  value: {{ .Values.kube.burst | int64 | quote }}
- name: ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER
  value: {{ .Values.limits.maxRoomsPerScheduler | int64 | quote }}
- name: ROOMKEEPER_ROOM_TOKEN_SECRET
  valueFrom:
    secretKeyRef:
      name: {{ include "roomkeeper.roomTokenSecretName" . }}
      key: {{ .Values.roomToken.secretKey }}
{{- end -}}

{{/*
Pod scheduling and placement of one component: (dict "ctx" $ "component" "operator" "values" .Values.operator).
Without an explicit affinity, replicas prefer different nodes.
*/}}
{{- define "roomkeeper.podPlacement" -}}
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
affinity:
{{- if .values.affinity }}
  {{- toYaml .values.affinity | nindent 2 }}
{{- else }}
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector:
            matchLabels:
              {{- include "roomkeeper.selectorLabels" (dict "ctx" .ctx "component" .component) | nindent 14 }}
{{- end }}
{{- with .values.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .ctx.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
A container's env: the chart's own entries (`own`, rendered YAML), then extraEnv, then the
component's extraEnv (`component`: "operator" or "gateway"). A name given twice fails the render,
naming it: the kubelet would silently use the last entry, and a chart setting overridden from
extraEnv escapes values.schema.json and the checks of this chart (a lease name its RBAC does not name).
*/}}
{{- define "roomkeeper.containerEnv" -}}
{{- $component := .component -}}
{{- $sources := list (dict "what" "extraEnv" "env" (.ctx.Values.extraEnv | default list)) (dict "what" (printf "%s.extraEnv" $component) "env" ((index .ctx.Values $component).extraEnv | default list)) -}}
{{- $setBy := dict -}}
{{- range (fromYamlArray .own) -}}
{{- $_ := set $setBy .name "the chart" -}}
{{- end -}}
{{- range $source := $sources -}}
{{- range $source.env -}}
{{- $by := get $setBy .name -}}
{{- if eq $by "the chart" -}}
{{- fail (printf "%s sets %s, which the chart already sets for the %s: the kubelet would silently use the last entry. Remove it from %s and set the chart value for it instead (values.yaml names the variable each value sets; one it does not name, the chart derives from the release)" $source.what .name $component $source.what) -}}
{{- else if eq $by $source.what -}}
{{- fail (printf "%s sets %s twice: the kubelet would silently use the last entry. Keep one entry of %s in %s" $source.what .name .name $source.what) -}}
{{- else if $by -}}
{{- fail (printf "%s sets %s, which %s already sets for the %s: the kubelet would silently use the last entry. Keep it in one of them" $source.what .name $by $component) -}}
{{- end -}}
{{- $_ := set $setBy .name $source.what -}}
{{- end -}}
{{- end -}}
{{ .own }}
{{- range $sources }}
{{- with .env }}
{{ toYaml . }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
On the operator Deployment: marks it as a Roomkeeper operator, for the one-operator check below
(the roomkeeper.io/ prefix is Roomkeeper's own; nothing else sets it).
*/}}
{{- define "roomkeeper.operatorMarkerLabel" -}}
roomkeeper.io/operator: "true"
{{- end -}}

{{/*
One Roomkeeper operator per cluster: Schedulers, versions and operations are cluster-scoped, so a
second release's operator would hold a leader Lease of its own and reconcile every Scheduler too.
The install fails naming the release that runs one already. `lookup` sees the cluster under
`helm install`, `helm upgrade` and `--dry-run=server`, not under `helm template` or a client-side
dry run: there the operator's own check refuses to reconcile instead (README, "One Roomkeeper per
cluster"). A Deployment of a chart from before the marker label is found by its component labels.
*/}}
{{- define "roomkeeper.oneOperatorPerCluster" -}}
{{- range (lookup "apps/v1" "Deployment" "" "").items -}}
{{- $labels := .metadata.labels | default dict -}}
{{- $annotations := .metadata.annotations | default dict -}}
{{- $marked := eq (get $labels "roomkeeper.io/operator") "true" -}}
{{- $legacy := and (eq (get $labels "app.kubernetes.io/part-of") "roomkeeper") (eq (get $labels "app.kubernetes.io/component") "operator") -}}
{{- if or $marked $legacy -}}
{{- $release := get $annotations "meta.helm.sh/release-name" | default (get $labels "app.kubernetes.io/instance") -}}
{{- $namespace := get $annotations "meta.helm.sh/release-namespace" | default .metadata.namespace -}}
{{- if not (and (eq $release $.Release.Name) (eq $namespace $.Release.Namespace)) -}}
{{- fail (printf "another Roomkeeper operator runs in this cluster: Deployment %s/%s of release %s in namespace %s. Roomkeeper's Schedulers are cluster-scoped, so two operators would both lead and both reconcile every one of them. Change that release instead (helm upgrade %s -n %s), or uninstall it first (helm uninstall %s -n %s: its Schedulers and rooms stay, and this release's operator takes them over)" .metadata.namespace .metadata.name $release $namespace $release $namespace $release $namespace) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
