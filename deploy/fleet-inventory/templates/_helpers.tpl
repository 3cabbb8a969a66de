{{- define "fleet.labels" -}}
app.kubernetes.io/part-of: fleet-inventory
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{- define "fleet.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag }}
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
