"""Garden objects: Shoot and Project (`core.gardener.cloud/v1beta1`), project namespaces, and the
`AdminKubeconfigRequest`/`ViewerKubeconfigRequest` answers (`authentication.gardener.cloud/v1alpha1`).

Field paths are those of Gardener's own API types (`core.gardener.cloud/v1beta1` Shoot and Project,
`authentication.gardener.cloud/v1alpha1` kubeconfig requests), so a client written for Gardener reads
them unchanged.
"""

from __future__ import annotations

import base64
from datetime import datetime

from common.labels import CLUSTER_ID_LABEL, ORGANIZATION_ID_LABEL
from sim.api.objects.meta import Json, object_meta, with_managed_fields
from sim.world import derive
from sim.world.clock import rfc3339
from sim.world.records import NamespaceRecord
from sim.world.shoots import ADDONS, ExtensionSpec, ProjectRecord, ShootState

GARDENER_GROUP = "core.gardener.cloud"
GARDENER_VERSION = "v1beta1"
SHOOT_API_VERSION = f"{GARDENER_GROUP}/{GARDENER_VERSION}"
AUTHENTICATION_API_VERSION = "authentication.gardener.cloud/v1alpha1"
STATUS_LABEL = "shoot.gardener.cloud/status"
HEALTH_CONDITIONS = (
    "APIServerAvailable",
    "ControlPlaneHealthy",
    "ObservabilityComponentsHealthy",
    "EveryNodeReady",
    "SystemComponentsHealthy",
)


def _conditions(shoot: ShootState, moment: str) -> list[Json]:
    progressing = shoot.last_operation_state in {"Processing", "Pending"}
    entries = []
    for kind in HEALTH_CONDITIONS:
        if progressing:
            status, reason = "Progressing", "ConditionProgressing"
        elif kind == "ControlPlaneHealthy" and not shoot.control_plane_healthy:
            status, reason = "False", "DeploymentUnhealthy"
        else:
            status, reason = "True", f"{kind}Healthy" if not kind.endswith("Healthy") else kind
        entries.append(
            {
                "type": kind,
                "status": status,
                "lastTransitionTime": moment,
                "lastUpdateTime": moment,
                "reason": reason,
                "message": "All checks passed." if status == "True" else f"{kind} is {status.lower()}.",
            }
        )
    return entries


def render_shoot(shoot: ShootState, api_url: str) -> Json:
    """A Shoot as the garden serves it; `api_url` is where its API server answers."""
    changed = rfc3339(shoot.changed or shoot.created)
    progress = 100 if shoot.last_operation_state == "Succeeded" else 60
    description = {
        "Succeeded": f"Shoot cluster has been successfully {'hibernated' if shoot.is_hibernated else 'reconciled'}.",
        "Processing": f"{shoot.last_operation} of Shoot cluster in progress.",
        "Pending": f"{shoot.last_operation} of Shoot cluster is pending.",
        "Error": "Flow failed: waiting for the infrastructure to become ready (will retry).",
        "Failed": "Flow failed: the infrastructure could not be provisioned.",
        "Aborted": "Flow was aborted.",
    }.get(shoot.last_operation_state, shoot.last_operation_state)
    status: Json = {
        "lastOperation": {
            "type": shoot.last_operation,
            "state": shoot.last_operation_state,
            "progress": progress,
            "description": description,
            "lastUpdateTime": changed,
        },
        "conditions": _conditions(shoot, changed),
        "constraints": [
            {
                "type": "HibernationPossible",
                "status": "True",
                "lastTransitionTime": changed,
                "lastUpdateTime": changed,
                "reason": "NoProblematicWebhooks",
                "message": "All webhooks are properly configured.",
            }
        ],
        "gardener": {"id": "gardenlet-0", "name": "gardenlet-0", "version": "v1.110.0"},
        "hibernated": shoot.is_hibernated,
        "isHibernated": shoot.is_hibernated,
        "observedGeneration": shoot.generation,
        "seedName": "local-seed",
        "technicalID": shoot.technical_id,
        "uid": derive.stable_uuid_text(shoot.uid, "status-uid"),
    }
    if shoot.has_advertised_addresses:
        status["advertisedAddresses"] = [{"name": "external", "url": api_url}]
    if shoot.last_operation_state in {"Error", "Failed"}:
        status["lastErrors"] = [
            {"description": description, "codes": ["ERR_INFRA_DEPENDENCIES"], "lastUpdateTime": changed}
        ]
    obj: Json = {
        "apiVersion": SHOOT_API_VERSION,
        "kind": "Shoot",
        "metadata": object_meta(
            name=shoot.name,
            namespace=shoot.namespace,
            uid=shoot.uid,
            rv=shoot.rv,
            created=shoot.created,
            labels={
                **({CLUSTER_ID_LABEL: shoot.cluster_label} if shoot.cluster_labelled else {}),
                ORGANIZATION_ID_LABEL: shoot.organization_label,
                STATUS_LABEL: shoot.status_label,
                "project.gardener.cloud/name": shoot.project,
            },
            annotations={"gardener.cloud/created-by": "fundament-cluster-worker"},
            finalizers=["gardener"],
        ),
        "spec": {
            "cloudProfile": {"kind": "CloudProfile", "name": "local"},
            "credentialsBindingName": "fundament",
            "hibernation": {"enabled": shoot.hibernated},
            "kubernetes": {"version": shoot.kubernetes_version},
            "maintenance": {
                "autoUpdate": {"kubernetesVersion": True, "machineImageVersion": True},
                "timeWindow": {"begin": "220000+0000", "end": "230000+0000"},
            },
            "networking": {
                "type": "calico",
                "nodes": "10.250.0.0/16",
                "pods": "100.96.0.0/11",
                "services": "100.64.0.0/13",
                "ipFamilies": ["IPv4"],
            },
            "provider": {
                "type": "local",
                "workers": [
                    {
                        "name": worker.name,
                        "minimum": worker.minimum,
                        "maximum": worker.maximum,
                        "maxSurge": 1,
                        "maxUnavailable": 0,
                        "machine": {
                            "type": worker.machine_type,
                            "image": {"name": "gardenlinux", "version": "1592.3.0"},
                            "architecture": "amd64",
                        },
                        "cri": {"name": "containerd"},
                        "zones": list(worker.zones),
                    }
                    for worker in shoot.workers
                ],
            },
            "purpose": "evaluation" if shoot.addons else "production",
            "region": shoot.region,
            "seedName": "local-seed",
        },
        "status": status,
    }
    if shoot.extensions:
        obj["spec"]["extensions"] = [_extension(extension) for extension in shoot.extensions]
    if shoot.addons:
        obj["spec"]["addons"] = {name: {"enabled": name in shoot.addons} for name in sorted({*ADDONS, *shoot.addons})}
    obj["metadata"]["generation"] = shoot.generation
    if shoot.deleting:
        obj["metadata"]["deletionTimestamp"] = changed
        obj["metadata"]["deletionGracePeriodSeconds"] = 0
        obj["metadata"]["annotations"]["confirmation.gardener.cloud/deletion"] = "true"
    return with_managed_fields(obj, "fundament-cluster-worker", "gardenlet")


# What each extension of the catalogue is configured with, as its documentation shows it.
_PROVIDER_CONFIGS: dict[str, Json] = {
    "shoot-dns-service": {
        "apiVersion": "service.dns.extensions.gardener.cloud/v1alpha1",
        "kind": "DNSConfig",
        "syncProvidersFromShootSpecDNS": True,
    },
    "shoot-cert-service": {
        "apiVersion": "service.cert.extensions.gardener.cloud/v1alpha1",
        "kind": "CertConfig",
        "shootIssuers": {"enabled": True},
    },
}


def _extension(extension: ExtensionSpec) -> Json:
    if extension.disabled:
        return {"type": extension.type, "disabled": True}
    config = _PROVIDER_CONFIGS.get(extension.type)
    return {"type": extension.type, **({"providerConfig": config} if config is not None else {})}


def render_project(project: ProjectRecord) -> Json:
    """A Project as the garden serves it: Fundament's carry the organization label (as `EnsureProject`
    creates them); `spec.namespace` is absent, and the phase Pending, until the namespace exists."""
    fundament = project.organization_label is not None
    spec: Json = {
        "owner": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "User",
            "name": "fundament" if fundament else "admin",
        },
        "purpose": "Clusters provisioned by Fundament" if fundament else "Clusters",
    }
    if project.garden_namespace is not None:
        spec["namespace"] = project.garden_namespace
    obj: Json = {
        "apiVersion": SHOOT_API_VERSION,
        "kind": "Project",
        "metadata": object_meta(
            name=project.name,
            uid=project.uid,
            rv=project.rv,
            created=project.created,
            labels={ORGANIZATION_ID_LABEL: project.organization_label}
            if project.organization_label is not None
            else None,
        ),
        "spec": spec,
        "status": {"phase": "Ready" if project.garden_namespace is not None else "Pending", "observedGeneration": 1},
    }
    obj["metadata"]["generation"] = 1
    return with_managed_fields(obj, "gardener-apiserver", "gardener-controller-manager")


def render_garden_namespace(namespace: NamespaceRecord, project: ProjectRecord | None, created: datetime) -> Json:
    """A project's namespace in the garden, labelled with the project it belongs to (`project` None: none)."""
    obj: Json = {
        "kind": "Namespace",
        "apiVersion": "v1",
        "metadata": object_meta(
            name=namespace.name,
            uid=derive.stable_uuid_text("garden-namespace", namespace.name),
            rv=namespace.rv,
            created=created,
            labels={
                "kubernetes.io/metadata.name": namespace.name,
                "gardener.cloud/role": "project",
                **({"project.gardener.cloud/name": project.name} if project is not None else {}),
            },
        ),
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }
    return with_managed_fields(obj, "gardener-controller-manager", None)


def render_kubeconfig_request(
    kind: str, name: str, namespace: str, *, expiration_seconds: int, kubeconfig: bytes, expires: datetime
) -> Json:
    """The answer to a kubeconfig subresource POST: the request echoed, with the credential in status."""
    return {
        "kind": kind,
        "apiVersion": AUTHENTICATION_API_VERSION,
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": None},
        "spec": {"expirationSeconds": expiration_seconds},
        "status": {
            "kubeconfig": base64.b64encode(kubeconfig).decode(),
            "expirationTimestamp": rfc3339(expires),
        },
    }
