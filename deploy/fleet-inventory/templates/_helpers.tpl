{{/* Labels of every object of one deployable: (list $root name component). Kubernetes' recommended labels
plus helm.sh/chart; component is the deployable's part in the system (api, worker, migrations, test). */}}
{{- define "fleet.labels" -}}
{{- $root := index . 0 -}}
helm.sh/chart: {{ printf "%s-%s" $root.Chart.Name $root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ index . 1 }}
app.kubernetes.io/component: {{ index . 2 }}
app.kubernetes.io/part-of: fleet-inventory
app.kubernetes.io/instance: {{ $root.Release.Name }}
app.kubernetes.io/version: {{ $root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ $root.Release.Service }}
{{- end -}}

{{/* The labels of objects that belong to the release rather than one deployable (the PrometheusRule, the
dashboard): (list $root component). */}}
{{- define "fleet.releaseLabels" -}}
{{- $root := index . 0 -}}
helm.sh/chart: {{ printf "%s-%s" $root.Chart.Name $root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/component: {{ index . 1 }}
app.kubernetes.io/part-of: fleet-inventory
app.kubernetes.io/instance: {{ $root.Release.Name }}
app.kubernetes.io/version: {{ $root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ $root.Release.Service }}
{{- end -}}

{{/* The selector of one deployable: (list $root "platform-public-api"). */}}
{{- define "fleet.selector" -}}
{{- $root := index . 0 -}}
app.kubernetes.io/name: {{ index . 1 }}
app.kubernetes.io/instance: {{ $root.Release.Name }}
{{- end -}}

{{/* The image of one deployable: (list $root target values). <image.repository>-<target>:<image.tag> unless
the deployable names its own repository or tag; a digest (sha256:...) wins over any tag, so what runs is
exactly the image that was built and checked. */}}
{{- define "fleet.image" -}}
{{- $root := index . 0 }}{{- $target := index . 1 }}{{- $own := (index . 2).image | default dict -}}
{{- $repository := $own.repository | default (printf "%s-%s" $root.Values.image.repository $target) -}}
{{- if $own.digest -}}
{{ $repository }}@{{ $own.digest }}
{{- else -}}
{{ $repository }}:{{ $own.tag | default $root.Values.image.tag }}
{{- end -}}
{{- end -}}

{{/* DATABASE_URL from the deployable's own secret: each process connects as its own role. */}}
{{- define "fleet.databaseEnv" -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: uri
{{- end -}}

{{/* The operator's own variables (extraEnv, tracing's OTEL_*), the release-wide ones first, then the
deployable's: (list $root values). Kubernetes takes the last of two entries of one name, so a
deployable's entry overrides a release-wide one. */}}
{{- define "fleet.extraEnv" -}}
{{- $root := index . 0 }}{{- $v := index . 1 -}}
{{- $env := concat ($root.Values.extraEnv | default list) ($v.extraEnv | default list) -}}
{{- with $env }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "fleet.extraEnvFrom" -}}
{{- $root := index . 0 }}{{- $v := index . 1 -}}
{{- $from := concat ($root.Values.extraEnvFrom | default list) ($v.extraEnvFrom | default list) -}}
{{- with $from }}
envFrom: {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* startupProbe gives a slow first start (a cold node, a database far away) its own budget, so the
livenessProbe can stay strict once the process is up. */}}
{{- define "fleet.httpProbes" -}}
startupProbe:
  httpGet: {path: /livez, port: http}
  periodSeconds: 2
  failureThreshold: {{ .Values.startupProbe.failureThreshold }}
livenessProbe:
  httpGet: {path: /livez, port: http}
  periodSeconds: 10
readinessProbe:
  httpGet: {path: /readyz, port: http}
  periodSeconds: 5
{{- end -}}

{{/* The pod's metadata: (list $root name component values). podLabels and podAnnotations of the release,
then of the deployable (which wins on a shared key); the chart's own labels win over both, since the
selectors depend on them. */}}
{{- define "fleet.podMetadata" -}}
{{- $root := index . 0 }}{{- $name := index . 1 }}{{- $component := index . 2 }}{{- $v := index . 3 -}}
{{- $labels := merge (fromYaml (include "fleet.labels" (list $root $name $component))) ($v.podLabels | default dict) ($root.Values.podLabels | default dict) -}}
{{- $annotations := merge dict ($v.podAnnotations | default dict) ($root.Values.podAnnotations | default dict) -}}
labels: {{- toYaml $labels | nindent 2 }}
{{- with $annotations }}
annotations: {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Where and how the pod is scheduled: (list $root name values). Each key is the deployable's when it sets
one, else the release-wide one. A topology spread constraint without a labelSelector gets the deployable's
own selector, so "spread my replicas across nodes" needs no selector written out. */}}
{{- define "fleet.podScheduling" -}}
{{- $root := index . 0 }}{{- $name := index . 1 }}{{- $v := index . 2 -}}
{{- with ($v.imagePullSecrets | default $root.Values.imagePullSecrets) }}
imagePullSecrets: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with ($v.priorityClassName | default $root.Values.priorityClassName) }}
priorityClassName: {{ . }}
{{- end }}
{{- with ($v.nodeSelector | default $root.Values.nodeSelector) }}
nodeSelector: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with ($v.tolerations | default $root.Values.tolerations) }}
tolerations: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with ($v.affinity | default $root.Values.affinity) }}
affinity: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with ($v.topologySpreadConstraints | default $root.Values.topologySpreadConstraints) }}
topologySpreadConstraints:
{{- range . }}
{{- $constraint := deepCopy . }}
{{- if not (hasKey $constraint "labelSelector") }}
{{- $_ := set $constraint "labelSelector" (dict "matchLabels" (fromYaml (include "fleet.selector" (list $root $name)))) }}
{{- end }}
  - {{- toYaml $constraint | nindent 4 }}
{{- end }}
{{- end }}
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

{{/* The deployables this release runs, by name, with their component (ServiceAccounts, monitors, tests). */}}
{{- define "fleet.deployables" -}}
{{- $names := dict }}
{{- if .Values.platformPublicApi.enabled }}{{ $_ := set $names "platform-public-api" "api" }}{{ end }}
{{- if .Values.platformAdminApi.enabled }}{{ $_ := set $names "platform-admin-api" "api" }}{{ $_ := set $names "cluster-worker-inventory" "worker" }}{{ end }}
{{- if .Values.clusterWorkerReconcile.enabled }}{{ $_ := set $names "cluster-worker-reconcile" "worker" }}{{ end }}
{{- toYaml $names }}
{{- end -}}
