"""Every render of the chart validated offline, object by object, as an API server would: the Kubernetes
objects against Kubernetes' own schemas (`kubernetes-validate`, strict: an unknown field is an error) for
the oldest and the newest release the chart supports, and the Prometheus Operator's objects against the
subset of its CRD schemas kept in tests/deploy/schemas. Also what values.schema.json refuses at install
that a process would refuse at start, and what a platform team's values file (deploy/examples) renders.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import jsonschema
import kubernetes_validate
import pytest
import yaml

from tests.fixtures.helm import (
    CHART,
    MONITORING,
    ROOT,
    VARIANTS,
    Doc,
    containers,
    env_of,
    helm,
    needs_helm,
    of_kind,
    pod_spec,
    render,
    set_args,
    workloads,
)

pytestmark = needs_helm

# The oldest Kubernetes release the chart supports and the newest kubernetes-validate knows.
KUBERNETES_VERSIONS = ("1.29", "1.37")
PLATFORM_VALUES = ROOT / "deploy" / "examples" / "platform-team.yaml"
OPERATOR_SCHEMAS = Path(__file__).parent / "schemas" / "monitoring.coreos.com-v1.json"
SERVICE_MONITORS = ("monitoring.monitorKind=ServiceMonitor",)

# Each variant an operator installs, with monitoring on, plus the platform team's file with every new key.
RENDERS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    **{name: ((*sets, *MONITORING), ()) for name, sets in VARIANTS.items()},
    "service-monitors": ((*MONITORING, *SERVICE_MONITORS), ()),
    "every-new-key": ((), ("-f", str(PLATFORM_VALUES))),
}


def rendered(name: str) -> list[Doc]:
    sets, extra = RENDERS[name]
    return render_with(extra, sets)


@cache
def _render_cached(extra: tuple[str, ...], sets: tuple[str, ...]) -> str:
    result = helm("template", "rel", str(CHART), *extra, *set_args(sets))
    assert result.returncode == 0, result.stderr
    return result.stdout


def render_with(extra: tuple[str, ...], sets: tuple[str, ...] = ()) -> list[Doc]:
    return [doc for doc in yaml.safe_load_all(_render_cached(extra, sets)) if doc]


@cache
def operator_validator(kind: str) -> jsonschema.protocols.Validator:
    schemas = json.loads(OPERATOR_SCHEMAS.read_text())
    schema = {**schemas["$defs"][kind], "$defs": schemas["$defs"]}
    validator_class = jsonschema.validators.validator_for(schemas)
    validator_class.check_schema(schema)
    validator: jsonschema.protocols.Validator = validator_class(schema)
    return validator


def validate(doc: Doc, version: str) -> None:
    if doc["apiVersion"].startswith("monitoring.coreos.com/"):
        operator_validator(doc["kind"]).validate(doc)
    else:
        kubernetes_validate.validate(doc, version, strict=True)


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("name", RENDERS)
def test_every_rendered_object_validates(name: str, version: str) -> None:
    docs = rendered(name)
    assert docs
    for doc in docs:
        try:
            validate(doc, version)
        except (kubernetes_validate.ValidationError, jsonschema.ValidationError) as e:
            raise AssertionError(f"{name}: {doc['kind']} {doc['metadata']['name']} on {version}: {e}") from e


def test_the_operator_schemas_refuse_a_misspelt_field() -> None:
    """The CRD subset can fail: a PodMonitor endpoint with a field the operator does not know, and a rule
    whose `for` is no duration, are refused."""
    monitor = next(d for d in rendered("default") if d["kind"] == "PodMonitor")
    monitor["spec"]["podMetricsEndpoints"][0]["intervall"] = "30s"
    with pytest.raises(jsonschema.ValidationError, match="intervall"):
        validate(monitor, "1.37")
    rule = next(d for d in rendered("default") if d["kind"] == "PrometheusRule")
    rule["spec"]["groups"][0]["rules"][0]["for"] = "ten minutes"
    with pytest.raises(jsonschema.ValidationError, match="ten minutes"):
        validate(rule, "1.37")


def test_kubernetes_schemas_refuse_an_unknown_field() -> None:
    deployment = of_kind(rendered("default"), "Deployment")["platform-public-api"]
    pod_spec(deployment)["nodeSelecter"] = {"a": "b"}
    with pytest.raises(kubernetes_validate.ValidationError):
        validate(deployment, "1.29")


def test_the_platform_values_install_unchanged() -> None:
    """Every key a platform team sets first reaches every pod it is meant for."""
    docs = rendered("every-new-key")
    result = helm("lint", "--strict", str(CHART), "-f", str(PLATFORM_VALUES))
    assert result.returncode == 0, result.stdout + result.stderr
    found = workloads(docs)
    assert set(found) == {
        "platform-public-api", "platform-admin-api", "cluster-worker-inventory", "cluster-worker-reconcile",
        "migrations",
    }  # fmt: skip
    for name, workload in found.items():
        spec = pod_spec(workload)
        assert spec["imagePullSecrets"] == [{"name": "registry-credentials"}], name
        assert spec["tolerations"][0]["key"] == "node.example.com/dedicated", name
        assert "nodeAffinity" in spec["affinity"], name
        labels = workload["spec"]["template"]["metadata"]["labels"]
        assert labels["app.kubernetes.io/name"] == name
        for container in containers(workload):
            assert "@sha256:" in container["image"], name
            assert ":" not in container["image"].split("@")[0].rsplit("/", 1)[-1], "a digest, no tag"
            assert env_of(container)["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://otel-collector.observability:4318"
            assert container["envFrom"] == [{"configMapRef": {"name": "fleet-inventory-extra"}}]
    # A deployable's own key replaces the release-wide one, or merges (labels, annotations), or appends (env).
    admin, public = pod_spec(found["platform-admin-api"]), pod_spec(found["platform-public-api"])
    assert admin["priorityClassName"] == "platform-critical"
    assert public["priorityClassName"] == "platform-services"
    assert found["platform-admin-api"]["spec"]["template"]["metadata"]["labels"]["team.example.com/owner"] == (
        "staff-tools"
    )
    annotations = found["platform-public-api"]["spec"]["template"]["metadata"]["annotations"]
    assert annotations == {"backup.example.com/exclude": "true", "sidecar.example.com/inject": "false"}
    public_env = [e["name"] for e in containers(found["platform-public-api"])[0]["env"]]
    assert public_env[-1] == "OTEL_SERVICE_NAME"
    assert pod_spec(found["cluster-worker-inventory"])["nodeSelector"] == {"node.example.com/pool": "batch"}
    assert pod_spec(found["cluster-worker-reconcile"])["nodeSelector"] == {"node.example.com/pool": "platform"}
    zones = [c["topologyKey"] for c in public["topologySpreadConstraints"]]
    assert zones == ["topology.kubernetes.io/zone", "kubernetes.io/hostname"]
    # ServiceMonitors, chosen instead of PodMonitors, select each deployable's Service.
    monitors = of_kind(docs, "ServiceMonitor")
    services = of_kind(docs, "Service")
    assert set(monitors) == set(found) - {"migrations"}
    for name, monitor in monitors.items():
        assert monitor["spec"]["selector"]["matchLabels"].items() <= services[name]["metadata"]["labels"].items()
        assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    assert of_kind(docs, "PodMonitor") == {}


def test_api_replicas_spread_across_nodes_by_default() -> None:
    for name, workload in workloads(rendered("default")).items():
        constraints = pod_spec(workload).get("topologySpreadConstraints", [])
        if name.startswith("platform-"):
            (constraint,) = constraints
            assert constraint["topologyKey"] == "kubernetes.io/hostname"
            labels = workload["spec"]["template"]["metadata"]["labels"]
            assert constraint["labelSelector"]["matchLabels"].items() <= labels.items()
        else:
            assert constraints == [], name


def test_a_digest_wins_over_the_tag() -> None:
    digest = "sha256:" + "ab" * 32
    docs = render(f"platformPublicApi.image.digest={digest}", "platformAdminApi.image.tag=0.2.0")
    found = workloads(docs)
    assert containers(found["platform-public-api"])[0]["image"] == f"fleet-inventory-public-api@{digest}"
    assert containers(found["platform-admin-api"])[0]["image"] == "fleet-inventory-admin-api:0.2.0"
    assert containers(found["cluster-worker-reconcile"])[0]["image"] == "fleet-inventory-worker:0.1.0"


def test_every_object_has_the_standard_labels() -> None:
    for doc in rendered("default"):
        labels = doc["metadata"]["labels"]
        assert labels["helm.sh/chart"] == "fleet-inventory-0.1.0", doc["metadata"]["name"]
        assert labels["app.kubernetes.io/managed-by"] == "Helm"
        assert labels["app.kubernetes.io/instance"] == "rel"
        assert labels["app.kubernetes.io/component"] in {"api", "worker", "migrations", "test", "monitoring"}


@pytest.mark.parametrize("name", ["default", "no-public"])
def test_the_helm_test_pod_calls_each_installed_api(name: str) -> None:
    docs = rendered(name)
    (pod,) = [d for d in docs if d["kind"] == "Pod"]
    assert pod["metadata"]["annotations"]["helm.sh/hook"] == "test"
    env = env_of(pod["spec"]["containers"][0])
    services = of_kind(docs, "Service")
    expected: dict[str, str] = {}
    for api, prefix in (("platform-public-api", "PUBLIC"), ("platform-admin-api", "STAFF")):
        if api in services:
            ports = {p["name"]: p["port"] for p in services[api]["spec"]["ports"]}
            host = services[api]["metadata"]["name"]
            expected |= {f"{prefix}_HTTP": f"{host}:{ports['http']}", f"{prefix}_GRPC": f"{host}:{ports['grpc']}"}
    assert env == expected
    assert pod["spec"]["containers"][0]["command"][:2] == ["python", "-c"]


def test_notes_say_how_to_reach_what_was_installed() -> None:
    result = helm("install", "rel", str(CHART), "--dry-run=client", "--namespace", "fleet")
    assert result.returncode == 0, result.stderr
    notes = result.stdout.split("NOTES:", 1)[1]
    assert "rel-platform-public-api.fleet.svc:8080" in notes
    assert "rel-platform-admin-api.fleet.svc:9091" in notes
    assert "helm test rel -n fleet" in notes
    no_public = helm("install", "rel", str(CHART), "--dry-run=client", "--set", "platformPublicApi.enabled=false")
    assert "platform-public-api" not in no_public.stdout.split("NOTES:", 1)[1]


@pytest.mark.parametrize(
    ("setting", "complaint"),
    [
        ("platformPublicApi.consoleOrigins=*", "/platformPublicApi/consoleOrigins"),
        ("platformPublicApi.consoleOrigins=console.example.com", "/platformPublicApi/consoleOrigins"),
        ("platformPublicApi.consoleOrigins=https://a.example\\,*", "/platformPublicApi/consoleOrigins"),
        ("platformAdminApi.dcimOrigins=*", "/platformAdminApi/dcimOrigins"),
        ("platformPublicApi.image.digest=latest", "/platformPublicApi/image/digest"),
        ("monitoring.monitorKind=Probe", "/monitoring/monitorKind"),
        ("logLevel=trace", "/logLevel"),
        ("clusterWorkerInventory.source=prometheus,gardener.mode=mock", "/gardener/mode"),
        ("tolerations[0].operator=Maybe", "/tolerations/0/operator"),
    ],
    ids=[
        "wildcard-origin", "origin-without-scheme", "wildcard-in-a-list", "wildcard-dcim-origin", "tag-as-digest",
        "monitor-kind", "log-level", "prometheus-source-in-mock-mode", "toleration-operator",
    ],
)  # fmt: skip
def test_the_schema_refuses_at_install_what_a_process_refuses_at_start(setting: str, complaint: str) -> None:
    for command in ("template", "lint"):
        args = ("rel", str(CHART)) if command == "template" else (str(CHART),)
        result = helm(command, *args, "--set", setting)
        assert result.returncode != 0, command
        assert complaint in result.stderr + result.stdout, command


def test_good_origins_pass_the_schema() -> None:
    origins = "https://console.example.com, http://127.0.0.1:5173"
    found = workloads(render(f"platformPublicApi.consoleOrigins={origins.replace(',', chr(92) + ',')}"))
    assert env_of(containers(found["platform-public-api"])[0])["CONSOLE_ORIGINS"] == origins
