{{/* One API's Deployment, Service and PodDisruptionBudget: (list $root name target module values ownEnv),
ownEnv being the API's own variables as YAML list items. */}}
{{- define "fleet.api" -}}
{{- $root := index . 0 }}{{- $name := index . 1 }}{{- $target := index . 2 }}{{- $module := index . 3 }}{{- $v := index . 4 }}{{- $ownEnv := index . 5 -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $root.Release.Name }}-{{ $name }}
  labels: {{- include "fleet.labels" (list $root $name "api") | nindent 4 }}
spec:
  replicas: {{ $v.replicas }}
  selector:
    matchLabels: {{- include "fleet.selector" (list $root $name) | nindent 6 }}
  template:
    metadata: {{- include "fleet.podMetadata" (list $root $name "api" $v) | nindent 6 }}
    spec:
      serviceAccountName: {{ $root.Release.Name }}-{{ $name }}
      {{- include "fleet.podSecurity" $root | nindent 6 }}
      {{- with (include "fleet.podScheduling" (list $root $name $v) | trim) }}{{ . | nindent 6 }}{{ end }}
      containers:
        - name: {{ $name }}
          image: {{ include "fleet.image" (list $root $target $v) }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          command: ["python", "-m", {{ $module | quote }}]
          ports:
            - {name: http, containerPort: {{ $v.httpPort }}}
            - {name: grpc, containerPort: {{ $v.grpcPort }}}
          env:
            {{- include "fleet.databaseEnv" $v.databaseSecret | nindent 12 }}
            - {name: BIND_HOST, value: "0.0.0.0"}
            - {name: HTTP_PORT, value: {{ $v.httpPort | quote }}}
            - {name: GRPC_PORT, value: {{ $v.grpcPort | quote }}}
            {{- $ownEnv | nindent 12 }}
            - {name: LOG_LEVEL, value: {{ $root.Values.logLevel | quote }}}
            {{- with (include "fleet.extraEnv" (list $root $v) | trim) }}{{ . | nindent 12 }}{{ end }}
          {{- with (include "fleet.extraEnvFrom" (list $root $v) | trim) }}{{ . | nindent 10 }}{{ end }}
          {{- include "fleet.httpProbes" $root | nindent 10 }}
          resources: {{- toYaml $v.resources | nindent 12 }}
          {{- include "fleet.containerSecurity" $root | nindent 10 }}
          volumeMounts: {{- include "fleet.tmpMount" $root | nindent 12 }}
      volumes: {{- include "fleet.tmpVolume" $root | nindent 8 }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ $root.Release.Name }}-{{ $name }}
  labels: {{- include "fleet.labels" (list $root $name "api") | nindent 4 }}
spec:
  selector: {{- include "fleet.selector" (list $root $name) | nindent 4 }}
  ports:
    - {name: http, port: {{ $v.httpPort }}, targetPort: http}
    - {name: grpc, port: {{ $v.grpcPort }}, targetPort: grpc, appProtocol: kubernetes.io/h2c}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ $root.Release.Name }}-{{ $name }}
  labels: {{- include "fleet.labels" (list $root $name "api") | nindent 4 }}
spec:
  maxUnavailable: {{ $v.podDisruptionBudget.maxUnavailable }}
  selector:
    matchLabels: {{- include "fleet.selector" (list $root $name) | nindent 6 }}
{{- end -}}
