{{- define "fleet.labels" -}}
app.kubernetes.io/part-of: fleet-inventory
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* The selector of one deployable: (list $root "platform-public-api"). */}}
{{- define "fleet.selector" -}}
{{- $root := index . 0 -}}
app.kubernetes.io/name: {{ index . 1 }}
app.kubernetes.io/instance: {{ $root.Release.Name }}
{{- end -}}

{{/* The image of one Dockerfile target: (list $root "public-api"). */}}
{{- define "fleet.image" -}}
{{- $root := index . 0 -}}
{{ $root.Values.image.repository }}-{{ index . 1 }}:{{ $root.Values.image.tag }}
{{- end -}}

{{/* DATABASE_URL from the deployable's own secret: each process connects as its own role. */}}
{{- define "fleet.databaseEnv" -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: uri
{{- end -}}

{{- define "fleet.httpProbes" -}}
livenessProbe:
  httpGet: {path: /livez, port: http}
  periodSeconds: 10
readinessProbe:
  httpGet: {path: /readyz, port: http}
  periodSeconds: 5
{{- end -}}

{{/* Pod-level hardening every deployable shares; the API server token is never mounted (nothing here
talks to the hosting cluster's API). */}}
{{- define "fleet.podSecurity" -}}
automountServiceAccountToken: false
securityContext:
  runAsNonRoot: true
  runAsUser: {{ .Values.securityContext.runAsUser }}
  runAsGroup: {{ .Values.securityContext.runAsGroup }}
  fsGroup: {{ .Values.securityContext.runAsGroup }}
  seccompProfile: {type: RuntimeDefault}
{{- end -}}

{{- define "fleet.containerSecurity" -}}
securityContext:
  runAsNonRoot: true
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities: {drop: [ALL]}
  seccompProfile: {type: RuntimeDefault}
{{- end -}}

{{/* The one writable place: /tmp. */}}
{{- define "fleet.tmpMount" -}}
- {name: tmp, mountPath: /tmp}
{{- end -}}

{{- define "fleet.tmpVolume" -}}
- name: tmp
  emptyDir: {sizeLimit: {{ .Values.tmpSizeLimit }}}
{{- end -}}
