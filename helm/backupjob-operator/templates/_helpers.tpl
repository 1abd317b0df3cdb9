{{/* Names, labels and the pieces both Deployments share. */}}

{{- define "backupjob-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release name by default, so release "backup-operator" gives deploy/backup-operator-worker.
Truncated to leave room for the longest suffix ("-watcher-leader-election"). */}}
{{- define "backupjob-operator.fullname" -}}
{{- default .Release.Name .Values.fullnameOverride | trunc 38 | trimSuffix "-" }}
{{- end }}

{{- define "backupjob-operator.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "backupjob-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: backupjob-operator
{{- end }}

{{/* Labels of one component: call with (dict "root" $ "component" "worker"). */}}
{{- define "backupjob-operator.componentLabels" -}}
{{ include "backupjob-operator.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "backupjob-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "backupjob-operator.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "backupjob-operator.serviceAccountName" -}}
{{- $sa := (index .root.Values .component).serviceAccount }}
{{- if $sa.create }}
{{- default (printf "%s-%s" (include "backupjob-operator.fullname" .root) .component) $sa.name }}
{{- else }}
{{- required (printf "%s.serviceAccount.name is required when %s.serviceAccount.create is false" .component .component) $sa.name }}
{{- end }}
{{- end }}

{{- define "backupjob-operator.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag }}
{{- if .Values.image.digest }}
{{- printf "%s:%s@%s" .Values.image.repository $tag .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{- define "backupjob-operator.backupImage" -}}
{{- printf "%s:%s" .Values.backupImage.repository (default .Chart.AppVersion .Values.backupImage.tag) }}
{{- end }}

{{- define "backupjob-operator.redisName" -}}
{{- printf "%s-redis" (include "backupjob-operator.fullname" .) }}
{{- end }}

{{/* The Secret and keys the processes read REDIS_URL, REDIS_PASSWORD and REDIS_SENTINEL_PASSWORD
from; an empty key: not read. Without any key there is no Secret at all. */}}
{{- define "backupjob-operator.redisSecret" -}}
{{- $r := .Values.redis }}
{{- $standalone := eq $r.mode "standalone" }}
{{- $sentinel := eq $r.mode "sentinel" }}
{{- if $r.existingSecret.name }}
{{- dict "name" $r.existingSecret.name "urlKey" (ternary $r.existingSecret.urlKey "" $standalone) "passwordKey" $r.existingSecret.passwordKey "sentinelPasswordKey" (ternary $r.existingSecret.sentinelPasswordKey "" $sentinel) | toJson }}
{{- else }}
{{- dict "name" (include "backupjob-operator.redisName" .) "urlKey" (ternary "url" "" $standalone) "passwordKey" (ternary "password" "" (or (ne $r.password "") $r.internal.enabled)) "sentinelPasswordKey" (ternary "sentinelPassword" "" (and $sentinel (ne $r.sentinel.password ""))) | toJson }}
{{- end }}
{{- end }}

{{/* The REDIS_URL the chart's own Secret holds: the in-chart Redis or redis.url. */}}
{{- define "backupjob-operator.redisUrl" -}}
{{- if .Values.redis.internal.enabled }}
{{- printf "redis://%s.%s.svc:6379/0" (include "backupjob-operator.redisName" .) .Release.Namespace }}
{{- else }}
{{- required "redis: set redis.url (redis://host:6379/0 or rediss://host:6380/0 for TLS), or redis.existingSecret.name, or redis.internal.enabled=true to try the operator with a Redis inside the release" .Values.redis.url }}
{{- end }}
{{- end }}

{{/* Fails on combinations the schema cannot express. */}}
{{- define "backupjob-operator.validate" -}}
{{- if and .Values.worker.autoscaling.enabled .Values.worker.keda.enabled }}
{{- fail "worker.autoscaling.enabled and worker.keda.enabled are exclusive: KEDA makes its own HorizontalPodAutoscaler" }}
{{- end }}
{{- if and .Values.redis.internal.enabled (or .Values.redis.url .Values.redis.existingSecret.name) }}
{{- fail "redis.internal.enabled=true runs a Redis inside the release: leave redis.url and redis.existingSecret.name empty, or set redis.internal.enabled=false" }}
{{- end }}
{{- include "backupjob-operator.validateRedisMode" . }}
{{- if eq .Values.ports.metrics .Values.ports.health }}
{{- fail (printf "ports.metrics and ports.health must differ, both are %v" .Values.ports.metrics) }}
{{- end }}
{{- end }}

{{/* redis.mode and the values that belong to each mode. */}}
{{- define "backupjob-operator.validateRedisMode" -}}
{{- $r := .Values.redis }}
{{- if ne $r.mode "standalone" }}
{{- if $r.internal.enabled }}
{{- fail (printf "redis.mode=%s needs a Redis of yours (the bundled one is a single server): set redis.internal.enabled=false" $r.mode) }}
{{- end }}
{{- if $r.url }}
{{- fail (printf "redis.url is for redis.mode=standalone; with redis.mode=%s leave it empty" $r.mode) }}
{{- end }}
{{- else if $r.tls.enabled }}
{{- fail "redis.tls.enabled is for redis.mode cluster or sentinel; with standalone the URL's scheme says it (rediss://)" }}
{{- end }}
{{- if and (eq $r.mode "cluster") (not $r.cluster.nodes) }}
{{- fail "redis.mode=cluster: set redis.cluster.nodes, some nodes of the Redis Cluster as host:port" }}
{{- end }}
{{- if and (ne $r.mode "cluster") $r.cluster.nodes }}
{{- fail (printf "redis.cluster.nodes is set but redis.mode is %s: set redis.mode=cluster or leave it empty" $r.mode) }}
{{- end }}
{{- if eq $r.mode "sentinel" }}
{{- if or (not $r.sentinel.nodes) (not $r.sentinel.masterName) }}
{{- fail "redis.mode=sentinel: set redis.sentinel.nodes (the Sentinels as host:port) and redis.sentinel.masterName" }}
{{- end }}
{{- else if or $r.sentinel.nodes $r.sentinel.masterName $r.sentinel.password $r.existingSecret.sentinelPasswordKey }}
{{- fail (printf "redis.sentinel and redis.existingSecret.sentinelPasswordKey are for redis.mode=sentinel, and redis.mode is %s" $r.mode) }}
{{- end }}
{{- end }}

{{/* Environment both processes read (libs/config). Call with (dict "root" $ "component" "worker"). */}}
{{- define "backupjob-operator.commonEnv" -}}
{{- $root := .root }}
{{- $r := $root.Values.redis }}
{{- $secret := include "backupjob-operator.redisSecret" $root | fromJson -}}
{{- if $secret.urlKey }}
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ $secret.name }}
      key: {{ $secret.urlKey }}
{{- end }}
{{- if eq $r.mode "cluster" }}
- name: REDIS_CLUSTER_NODES
  value: {{ join "," $r.cluster.nodes | quote }}
{{- end }}
{{- if eq $r.mode "sentinel" }}
- name: REDIS_SENTINELS
  value: {{ join "," $r.sentinel.nodes | quote }}
- name: REDIS_SENTINEL_MASTER
  value: {{ $r.sentinel.masterName | quote }}
{{- end }}
{{- with $r.username }}
- name: REDIS_USERNAME
  value: {{ . | quote }}
{{- end }}
{{- if $secret.passwordKey }}
- name: REDIS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ $secret.name }}
      key: {{ $secret.passwordKey }}
{{- end }}
{{- if $secret.sentinelPasswordKey }}
- name: REDIS_SENTINEL_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ $secret.name }}
      key: {{ $secret.sentinelPasswordKey }}
{{- end }}
{{- if $r.tls.enabled }}
- name: REDIS_TLS
  value: "true"
{{- end }}
{{- if $root.Values.redis.tls.caSecret.name }}
- name: NODE_EXTRA_CA_CERTS
  value: /etc/backupjob-operator/redis-ca/{{ $root.Values.redis.tls.caSecret.key }}
{{- end }}
- name: WATCH_NAMESPACES
  value: {{ join "," $root.Values.watchNamespaces | quote }}
- name: QUEUE_SHARDS
  value: {{ $root.Values.queue.shards | quote }}
- name: METRICS_PORT
  value: {{ $root.Values.ports.metrics | quote }}
- name: METRICS_SECURE
  value: {{ $root.Values.metrics.secure | quote }}
{{- if $root.Values.metrics.secure }}
- name: METRICS_CERT_DIR
  value: /etc/backupjob-operator/metrics-tls
{{- end }}
- name: HEALTH_PORT
  value: {{ $root.Values.ports.health | quote }}
- name: LOG_LEVEL
  value: {{ $root.Values.logLevel | quote }}
- name: SHUTDOWN_GRACE_PERIOD
  value: {{ $root.Values.shutdownGracePeriod | quote }}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
{{- end }}

{{- define "backupjob-operator.watcherEnv" -}}
{{- $le := .Values.watcher.leaderElection -}}
- name: LEADER_ELECTION_NAMESPACE
  value: {{ .Release.Namespace | quote }}
- name: LEADER_ELECTION_ID
  value: {{ default (printf "%s-watcher" (include "backupjob-operator.fullname" .)) $le.id | quote }}
- name: LEADER_ELECTION_LEASE_DURATION
  value: {{ $le.leaseDuration | quote }}
- name: LEADER_ELECTION_RENEW_DEADLINE
  value: {{ $le.renewDeadline | quote }}
- name: LEADER_ELECTION_RETRY_PERIOD
  value: {{ $le.retryPeriod | quote }}
- name: RESYNC_PERIOD
  value: {{ .Values.watcher.resyncPeriod | quote }}
{{- with .Values.watcher.queueDashboard.port }}
- name: QUEUE_DASHBOARD_PORT
  value: {{ . | quote }}
{{- end }}
{{- end }}

{{- define "backupjob-operator.workerEnv" -}}
- name: WORKER_CONCURRENCY
  value: {{ .Values.worker.concurrency | quote }}
- name: WORKER_SHARDS
  value: {{ .Values.worker.shards | quote }}
- name: BACKUP_IMAGE
  value: {{ include "backupjob-operator.backupImage" . | quote }}
- name: BACKUP_IMAGE_ALLOWLIST
  value: {{ join "," .Values.backupImage.allowed | quote }}
- name: GRANT_RECHECK_INTERVAL
  value: {{ .Values.worker.grantRecheckInterval | quote }}
- name: GRANT_CACHE_TTL
  value: {{ .Values.worker.grantCacheTtl | quote }}
{{- end }}

{{/* Seconds: the app's grace period plus room for the kubelet, so SIGKILL never cuts a clean exit. */}}
{{- define "backupjob-operator.terminationGracePeriodSeconds" -}}
{{- $d := .Values.shutdownGracePeriod }}
{{- $seconds := 0 }}
{{- if hasSuffix "ms" $d }}{{ $seconds = 1 }}
{{- else if hasSuffix "s" $d }}{{ $seconds = trimSuffix "s" $d | float64 | ceil | int }}
{{- else if hasSuffix "m" $d }}{{ $seconds = mul (trimSuffix "m" $d | int) 60 }}
{{- end }}
{{- add $seconds 5 }}
{{- end }}

{{/* The Secret holding the metrics listener's certificate: the user's, or the one the chart makes. */}}
{{- define "backupjob-operator.metricsCertSecret" -}}
{{- .Values.metrics.certSecret | default (printf "%s-metrics-tls" (include "backupjob-operator.fullname" .)) }}
{{- end }}
