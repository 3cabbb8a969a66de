"""Storage objects of a shoot: PersistentVolume and PersistentVolumeClaim."""

from __future__ import annotations

from sim.api.objects.meta import Json, created_at, object_meta, with_managed_fields
from sim.world import derive
from sim.world.generate import CSI_DRIVER
from sim.world.records import ClaimRecord, VolumeRecord
from sim.world.shoots import ShootState


def claim_uid(shoot: ShootState, namespace: str, name: str) -> str:
    return derive.stable_uuid_text(shoot.uid, "pvc", namespace, name)


def render_volume(volume: VolumeRecord, shoot: ShootState) -> Json:
    spec: Json = {
        "capacity": {"storage": f"{volume.capacity_gib}Gi"},
        "accessModes": ["ReadWriteOnce"],
        "persistentVolumeReclaimPolicy": "Delete",
        "storageClassName": volume.storage_class,
        "volumeMode": "Filesystem",
    }
    annotations: dict[str, str] = {}
    if volume.csi_handle is not None:
        annotations["pv.kubernetes.io/provisioned-by"] = CSI_DRIVER
        spec["csi"] = {
            "driver": CSI_DRIVER,
            "volumeHandle": volume.csi_handle,
            "fsType": "ext4",
            "volumeAttributes": {"storage.kubernetes.io/csiProvisionerIdentity": "1700000000000-8081-" + CSI_DRIVER},
        }
    else:
        spec["local"] = {"path": "/mnt/disks/scratch"}
        spec["nodeAffinity"] = {
            "required": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "Exists"}]}]
            }
        }
    if volume.claim is not None:
        namespace, name = volume.claim
        spec["claimRef"] = {
            "kind": "PersistentVolumeClaim",
            "namespace": namespace,
            "name": name,
            "uid": claim_uid(shoot, namespace, name),
            "apiVersion": "v1",
        }
    obj: Json = {
        "kind": "PersistentVolume",
        "apiVersion": "v1",
        "metadata": object_meta(
            name=volume.name,
            uid=derive.stable_uuid_text(shoot.uid, "pv", volume.name),
            rv=volume.rv,
            created=created_at(shoot.created, "pv", volume.name),
            annotations=annotations,
            finalizers=["kubernetes.io/pv-protection"],
        ),
        "spec": spec,
        "status": {"phase": volume.phase},
    }
    return with_managed_fields(obj, "csi-provisioner", "kube-controller-manager")


def render_claim(claim: ClaimRecord, shoot: ShootState) -> Json:
    size = f"{claim.capacity_gib}Gi"
    obj: Json = {
        "kind": "PersistentVolumeClaim",
        "apiVersion": "v1",
        "metadata": object_meta(
            name=claim.name,
            namespace=claim.namespace,
            uid=claim_uid(shoot, claim.namespace, claim.name),
            rv=claim.rv,
            created=created_at(shoot.created, "pvc", claim.namespace, claim.name),
            annotations={
                "pv.kubernetes.io/bind-completed": "yes",
                "pv.kubernetes.io/bound-by-controller": "yes",
                "volume.beta.kubernetes.io/storage-provisioner": CSI_DRIVER,
                "volume.kubernetes.io/storage-provisioner": CSI_DRIVER,
            },
            finalizers=["kubernetes.io/pvc-protection"],
        ),
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": size}},
            "storageClassName": claim.storage_class,
            "volumeMode": "Filesystem",
            "volumeName": claim.volume,
        },
        "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": size}},
    }
    return with_managed_fields(obj, "kube-controller-manager", "kube-controller-manager")
