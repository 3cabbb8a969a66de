"""Core `v1` objects of a shoot: Node, Namespace, Pod."""

from __future__ import annotations

from common.labels import NAMESPACE_ID_LABEL, POOL_LABEL
from sim.api.objects.meta import Json, condition, created_at, object_meta, owner_reference, with_managed_fields
from sim.world import derive
from sim.world.clock import rfc3339
from sim.world.records import NamespaceRecord, NodeRecord, PodRecord
from sim.world.shoots import ShootState

PROJECT_ID_LABEL = "fundament.io/project-id"
_GIB = 1024**3
_MIB = 1024**2


def cpu_quantity(millicores: int) -> str:
    """`4` for whole cores, `3880m` otherwise (as the kubelet reports them)."""
    return str(millicores // 1000) if millicores % 1000 == 0 else f"{millicores}m"


def memory_quantity(size_bytes: int) -> str:
    if size_bytes % _GIB == 0:
        return f"{size_bytes // _GIB}Gi"
    if size_bytes % _MIB == 0:
        return f"{size_bytes // _MIB}Mi"
    return f"{size_bytes // 1024}Ki"


def provider_id(shoot: ShootState, node: NodeRecord) -> str:
    """The node's cloud id (`spec.providerID`): what the ledger records for nodes."""
    return f"fleet-sim:///{node.zone}/i-{derive.stable_int('instance', shoot.uid, node.name):016x}"


def node_ip(shoot: ShootState, name: str) -> str:
    value = derive.stable_int("node-ip", shoot.uid, name)
    return f"10.250.{value % 250}.{value // 250 % 250 + 1}"


def ready_status(node: NodeRecord) -> str:
    """The node's Ready condition: `True`, or for a node that is not ready `False` or `Unknown` (stable per name)."""
    return "True" if node.ready else ("Unknown" if derive.stable_int("unknown", node.name) % 2 else "False")


def render_node(node: NodeRecord, shoot: ShootState) -> Json:
    created = created_at(shoot.created, node.name)
    moment = rfc3339(created)
    millicores, memory_bytes = derive.allocatable(node.machine_type, node.cores, node.memory_gib)
    status = ready_status(node)
    ready_reason = {"True": "KubeletReady", "False": "KubeletNotReady", "Unknown": "NodeStatusUnknown"}[status]
    version = f"v{shoot.kubernetes_version}"
    ident = derive.stable_uuid(shoot.uid, "machine", node.name)
    obj: Json = {
        "kind": "Node",
        "apiVersion": "v1",
        "metadata": object_meta(
            name=node.name,
            uid=derive.stable_uuid_text(shoot.uid, "node", node.name),
            rv=node.rv,
            created=created,
            labels={
                "beta.kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/instance-type": node.machine_type,
                "beta.kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": node.name,
                "kubernetes.io/os": "linux",
                "networking.gardener.cloud/node-local-dns-enabled": "false",
                "node.kubernetes.io/instance-type": node.machine_type,
                "node.kubernetes.io/role": "node",
                "topology.kubernetes.io/region": shoot.region,
                "topology.kubernetes.io/zone": node.zone,
                POOL_LABEL: node.worker,
                "worker.gardener.cloud/kubernetes-version": shoot.kubernetes_version,
                "worker.gardener.cloud/system-components": "true",
            },
            annotations={
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        ),
        "spec": {"podCIDR": "100.96.0.0/24", "podCIDRs": ["100.96.0.0/24"], "providerID": provider_id(shoot, node)},
        "status": {
            "capacity": {
                "cpu": str(node.cores),
                "ephemeral-storage": "50620216Ki",
                "hugepages-1Gi": "0",
                "hugepages-2Mi": "0",
                "memory": memory_quantity(node.memory_gib * _GIB),
                "pods": str(node.max_pods),
            },
            "allocatable": {
                "cpu": cpu_quantity(millicores),
                "ephemeral-storage": "49243029417",
                "hugepages-1Gi": "0",
                "hugepages-2Mi": "0",
                "memory": memory_quantity(memory_bytes),
                "pods": str(node.max_pods),
            },
            "conditions": [
                condition(
                    "MemoryPressure",
                    "False",
                    "KubeletHasSufficientMemory",
                    "kubelet has sufficient memory available",
                    moment,
                    heartbeat=True,
                ),
                condition(
                    "DiskPressure",
                    "False",
                    "KubeletHasNoDiskPressure",
                    "kubelet has no disk pressure",
                    moment,
                    heartbeat=True,
                ),
                condition(
                    "PIDPressure",
                    "False",
                    "KubeletHasSufficientPID",
                    "kubelet has sufficient PID available",
                    moment,
                    heartbeat=True,
                ),
                condition("Ready", status, ready_reason, f"kubelet status is {status}", moment, heartbeat=True),
            ],
            "addresses": [
                {"type": "InternalIP", "address": node_ip(shoot, node.name)},
                {"type": "Hostname", "address": node.name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": ident.hex,
                "systemUUID": str(ident),
                "bootID": derive.stable_uuid_text(shoot.uid, "boot", node.name),
                "kernelVersion": "6.6.62-cloud-amd64",
                "osImage": "Garden Linux 1592.3",
                "containerRuntimeVersion": "containerd://1.7.24",
                "kubeletVersion": version,
                "kubeProxyVersion": version,
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        },
    }
    return with_managed_fields(obj, "gardener-node-agent", "kubelet", shape="node")


def render_namespace(namespace: NamespaceRecord, shoot: ShootState) -> Json:
    labels = {"kubernetes.io/metadata.name": namespace.name}
    if namespace.namespace_id is not None:
        labels[NAMESPACE_ID_LABEL] = namespace.namespace_id
    if namespace.project_id is not None:
        labels[PROJECT_ID_LABEL] = namespace.project_id
    obj: Json = {
        "kind": "Namespace",
        "apiVersion": "v1",
        "metadata": object_meta(
            name=namespace.name,
            uid=derive.stable_uuid_text(shoot.uid, "namespace", namespace.name),
            rv=namespace.rv,
            created=created_at(shoot.created, namespace.name),
            labels=labels,
        ),
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }
    tenant = namespace.namespace_id is not None
    shape = (tenant, namespace.project_id is not None)
    return with_managed_fields(obj, "fundament-cluster-worker" if tenant else "kube-apiserver", None, shape=shape)


def _owner(shoot: ShootState, pod: PodRecord) -> tuple[Json, dict[str, str]]:
    """The pod's controller and the labels it stamps on the pod."""
    revision = derive.suffix(pod.namespace, pod.app, length=10)
    if pod.daemon:
        uid = derive.stable_uuid_text(shoot.uid, "daemonset", pod.app)
        labels = {"app": pod.app, "controller-revision-hash": revision, "pod-template-generation": "1"}
        return owner_reference("apps/v1", "DaemonSet", pod.app, uid), labels
    if pod.phase in {"Succeeded", "Failed"}:
        job = f"{pod.app}-{revision}"
        uid = derive.stable_uuid_text(shoot.uid, "job", pod.namespace, job)
        labels = {"app": pod.app, "batch.kubernetes.io/job-name": job, "job-name": job}
        return owner_reference("batch/v1", "Job", job, uid), labels
    replica_set = f"{pod.app}-{revision}"
    uid = derive.stable_uuid_text(shoot.uid, "replicaset", pod.namespace, replica_set)
    labels = {"app": pod.app, "pod-template-hash": revision}
    return owner_reference("apps/v1", "ReplicaSet", replica_set, uid), labels


def render_pod(pod: PodRecord, shoot: ShootState) -> Json:
    created = created_at(shoot.created, pod.namespace, pod.name)
    moment = rfc3339(created)
    owner, labels = _owner(shoot, pod)
    terminal = pod.phase in {"Succeeded", "Failed"}
    image = f"registry.example.org/{pod.app}:1.{derive.stable_int('image', pod.app) % 9}"
    spec: Json = {
        "containers": [
            {
                "name": pod.app,
                "image": image,
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent",
            }
        ],
        "restartPolicy": "Never" if terminal else "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default",
        "serviceAccount": "default",
        "securityContext": {},
        "schedulerName": "default-scheduler",
        "tolerations": [
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
            {
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
        ],
        "priority": 0,
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
    }
    if pod.node is not None:
        spec["nodeName"] = pod.node
    status: Json = {"phase": pod.phase, "qosClass": "Burstable"}
    if pod.node is None:
        status["conditions"] = [condition("PodScheduled", "False", "Unschedulable", "0/3 nodes are available", moment)]
    else:
        running = pod.phase == "Running"
        state: Json
        if pod.phase == "Succeeded":
            state = {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": moment, "finishedAt": moment}}
        elif pod.phase == "Failed":
            state = {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": moment, "finishedAt": moment}}
        elif running:
            state = {"running": {"startedAt": moment}}
        else:
            state = {"waiting": {"reason": "ContainerCreating"}}
        ip = derive.stable_int("pod-ip", shoot.uid, pod.namespace, pod.name)
        status.update(
            {
                "conditions": [
                    condition("Initialized", "True", "", "", moment),
                    condition("Ready", "True" if running else "False", "", "", moment),
                    condition("ContainersReady", "True" if running else "False", "", "", moment),
                    condition("PodScheduled", "True", "", "", moment),
                ],
                "hostIP": node_ip(shoot, pod.node),
                "podIP": f"100.96.{ip % 250}.{ip // 250 % 250 + 1}",
                "startTime": moment,
                "containerStatuses": [
                    {
                        "name": pod.app,
                        "state": state,
                        "ready": running,
                        "restartCount": derive.stable_int("restarts", pod.name) % 3,
                        "image": image,
                        "imageID": f"{image.partition(':')[0]}@sha256:{derive.stable_int('digest', image):064x}",
                        "containerID": f"containerd://{derive.stable_int('container', pod.namespace, pod.name):016x}",
                        "started": running,
                    }
                ],
            }
        )
    obj: Json = {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": object_meta(
            name=pod.name,
            namespace=pod.namespace,
            uid=derive.stable_uuid_text(shoot.uid, "pod", pod.namespace, pod.name),
            rv=pod.rv,
            created=created,
            labels=labels,
            owner=owner,
            generate_name=pod.name[: pod.name.rfind("-") + 1],
        ),
        "spec": spec,
        "status": status,
    }
    return with_managed_fields(
        obj, "kube-controller-manager", "kubelet", shape=(pod.daemon, pod.phase, pod.node is None)
    )
