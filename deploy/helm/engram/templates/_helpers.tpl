{{/* The chart's name. */}}
{{- define "engram.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* "<release>-engram" (or the release name alone when it already contains the chart name). */}}
{{- define "engram.fullname" -}}
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

{{/* The services and what each one serves: http (gateway), grpc (ingest, recall) or consumer. */}}
{{- define "engram.serviceKinds" -}}
gateway: http
ingest: grpc
recall: grpc
embedder: consumer
classifier: consumer
conflicts: consumer
promotion: consumer
{{- end -}}

{{/* The durable JetStream consumers of each consumer service (the services' app.py files and services/promotion/service.py). */}}
{{- define "engram.durables" -}}
embedder: [embedder, embedder_restored, embedder_deleted, embedder_expired, embedder_updated]
classifier: [classifier]
conflicts: [conflicts]
promotion: [promotion_classified, promotion_conflicts, promotion_feedback, promotion_review]
{{- end -}}

{{/* The gRPC health service name of ingest and recall. */}}
{{- define "engram.grpcService" -}}
{{- if eq . "ingest" }}engram.v1.IngestService{{ else }}engram.v1.RecallService{{ end -}}
{{- end -}}

{{- define "engram.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels of every object. */}}
{{- define "engram.labels" -}}
helm.sh/chart: {{ include "engram.chart" . }}
app.kubernetes.io/name: {{ include "engram.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: engram
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Selector labels of one service; call with (dict "root" $ "component" "gateway"). */}}
{{- define "engram.selectorLabels" -}}
app.kubernetes.io/name: {{ include "engram.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* Labels of one service's objects; call with (dict "root" $ "component" "gateway"). */}}
{{- define "engram.componentLabels" -}}
{{ include "engram.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* Object name of one service: "<fullname>-<component>". */}}
{{- define "engram.componentName" -}}
{{- printf "%s-%s" (include "engram.fullname" .root) .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "engram.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}

{{- define "engram.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "engram.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The Secret holding the ENGRAM_* secret keys. */}}
{{- define "engram.secretName" -}}
{{- default (include "engram.fullname" .) .Values.secrets.existingSecret -}}
{{- end -}}

{{/* Name of the CloudNativePG Cluster (its app Secret is "<this>-app", its primary Service "<this>-rw"). */}}
{{- define "engram.cnpgName" -}}
{{- printf "%s-pg" (include "engram.fullname" .) | trunc 50 | trimSuffix "-" -}}
{{- end -}}

{{/* secretKeyRef of the owner (migration) database URL. */}}
{{- define "engram.ownerUrlRef" -}}
{{- if .Values.postgresql.cnpg.enabled -}}
secretKeyRef:
  name: {{ printf "%s-app" (include "engram.cnpgName" .) }}
  key: uri
{{- else -}}
secretKeyRef:
  name: {{ include "engram.secretName" . }}
  key: ENGRAM_DATABASE_URL
{{- end -}}
{{- end -}}

{{/* The NATS URL when it is not a secret: the subchart's Service, or externalNats.url; empty otherwise. */}}
{{- define "engram.natsUrl" -}}
{{- if .Values.nats.enabled -}}
{{- printf "nats://%s-nats.%s.svc:4222" .Release.Name .Release.Namespace -}}
{{- else -}}
{{- .Values.externalNats.url -}}
{{- end -}}
{{- end -}}

{{/* host:port of NATS's monitoring endpoint, for KEDA. */}}
{{- define "engram.natsMonitoring" -}}
{{- if .Values.externalNats.monitoringEndpoint -}}
{{- .Values.externalNats.monitoringEndpoint -}}
{{- else if .Values.nats.enabled -}}
{{- printf "%s-nats.%s.svc:8222" .Release.Name .Release.Namespace -}}
{{- else -}}
{{- fail "services.<name>.keda.enabled needs externalNats.monitoringEndpoint (host:8222 of your NATS) or nats.enabled" -}}
{{- end -}}
{{- end -}}

{{/* Pod anti-affinity by podAntiAffinityPreset; call with (dict "root" $ "component" name). */}}
{{- define "engram.antiAffinity" -}}
{{- $preset := .root.Values.podAntiAffinityPreset -}}
{{- if eq $preset "hard" }}
podAntiAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    - topologyKey: kubernetes.io/hostname
      labelSelector:
        matchLabels:
          {{- include "engram.selectorLabels" . | nindent 10 }}
{{- else if eq $preset "soft" }}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- include "engram.selectorLabels" . | nindent 12 }}
{{- end }}
{{- end -}}
