"""An OCI image layout (image-spec 1.1) written from layers: blobs, the config, the manifest, index.json.

JSON is written with sorted keys and no spaces, and the config's times are SOURCE_DATE_EPOCH, so the
manifest's digest, the image's name for itself, depends on the layers and settings alone.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from deploy.images.layers import Blob

MANIFEST = "application/vnd.oci.image.manifest.v1+json"
CONFIG = "application/vnd.oci.image.config.v1+json"
LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"


@dataclass(frozen=True)
class Written:
    digest: str
    """The manifest's digest: what `image@sha256:...` names."""
    compressed: int
    """The layers' compressed bytes: what a node pulls."""
    unpacked: int
    """The layers' tar bytes: what the image takes on disk."""


def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def descriptor(media_type: str, data: bytes) -> dict[str, Any]:
    return {"mediaType": media_type, "digest": "sha256:" + hashlib.sha256(data).hexdigest(), "size": len(data)}


def write_layout(
    into: Path,
    layers: list[tuple[str, Blob]],
    *,
    epoch: int,
    entrypoint: list[str],
    env: list[str],
    user: str,
    workdir: str,
    ports: list[int],
    labels: dict[str, str],
    tag: str,
) -> Written:
    """The layout in `into` (replaced); `layers` are (what made it, blob), base first."""
    if into.exists():
        shutil.rmtree(into)
    blobs = into / "blobs" / "sha256"
    blobs.mkdir(parents=True)
    created = datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    config = {
        "architecture": "amd64",
        "os": "linux",
        "created": created,
        "config": {
            "User": user,
            "Env": env,
            "Entrypoint": entrypoint,
            "WorkingDir": workdir,
            "ExposedPorts": {f"{port}/tcp": {} for port in ports},
            "Labels": labels,
        },
        "rootfs": {"type": "layers", "diff_ids": [blob.diff_id for _, blob in layers]},
        "history": [{"created": created, "created_by": made_by} for made_by, _ in layers],
    }
    config_data = canonical(config)
    manifest = {
        "schemaVersion": 2,
        "mediaType": MANIFEST,
        "config": descriptor(CONFIG, config_data),
        "layers": [descriptor(LAYER, blob.data) for _, blob in layers],
        "annotations": {"org.opencontainers.image.created": created},
    }
    manifest_data = canonical(manifest)
    for data in [config_data, manifest_data, *(blob.data for _, blob in layers)]:
        (blobs / hashlib.sha256(data).hexdigest()).write_bytes(data)
    pointer = descriptor(MANIFEST, manifest_data)
    index = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [pointer | {"annotations": {"org.opencontainers.image.ref.name": tag}}],
    }
    (into / "index.json").write_bytes(canonical(index))
    (into / "oci-layout").write_bytes(canonical({"imageLayoutVersion": "1.0.0"}))
    return Written(
        digest=pointer["digest"],
        compressed=sum(blob.size for _, blob in layers),
        unpacked=sum(blob.unpacked for _, blob in layers),
    )
