"""A shoot's credential held in memory: what Gardener's kubeconfig subresources mint, and nothing else.

kube/garden.py turns an `AdminKubeconfigRequest` answer into a `Credential`; kube/client.py builds a
client from one. Nothing of it is ever written to disk or logged: the client certificate
reaches OpenSSL through an anonymous memory file (`pem_paths`), and `repr` hides the secrets.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import yaml

from collector.kube.errors import BadResponse
from common.text import truncate

# libyaml's safe loader when present: a kubeconfig is parsed at every credential mint.
_YAML_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True, slots=True, repr=False)
class Credential:
    """Access to one API server, held in memory only (never logged: `repr` hides the secrets)."""

    server: str
    ca_data: str | None = None
    """PEM of the certificate authorities to trust; None trusts the system's."""
    token: str | None = None
    client_cert: bytes | None = None
    client_key: bytes | None = None
    insecure: bool = False
    tls_server_name: str | None = None
    expires: datetime | None = None
    """When the credential stops working; None when it does not say."""

    def __repr__(self) -> str:
        kind = "token" if self.token else "client certificate" if self.client_cert else "anonymous"
        return f"Credential(server={self.server!r}, {kind}, expires={self.expires})"


def credential_from_kubeconfig(text: str | bytes, *, expires: datetime | None) -> Credential:
    """The current context of a kubeconfig with inline data (what Gardener mints).

    Parsed strictly, since a shoot's kubeconfig comes from an answer over the network: the server
    must be `https://` (a bearer token never travels in cleartext), `insecure-skip-tls-verify` must
    be a real YAML boolean (the string "false" is refused, never read as true), strings must be
    strings. Raises BadResponse when it is not such a kubeconfig (no context, files instead of data,
    exec plugins, a field of the wrong type).
    """
    try:
        doc = yaml.load(text, Loader=_YAML_LOADER)  # noqa: S506 - a safe loader, in C when libyaml is there
    except yaml.YAMLError:
        raise BadResponse("the kubeconfig is not YAML") from None
    try:
        contexts = {c["name"]: c["context"] for c in doc.get("contexts") or []}
        current = doc.get("current-context") or next(iter(contexts))
        context = contexts[current]
        cluster = next(c["cluster"] for c in doc["clusters"] if c["name"] == context["cluster"])
        user = next(u.get("user") or {} for u in doc.get("users") or [] if u["name"] == context.get("user"))
        server = str(cluster["server"]).rstrip("/")
    except (AttributeError, KeyError, StopIteration, TypeError):
        raise BadResponse("the kubeconfig names no usable context, cluster and user") from None
    needs_files = "certificate-authority" in cluster or "client-certificate" in user or "tokenFile" in user
    if needs_files or "exec" in user or "auth-provider" in user:
        raise BadResponse("the kubeconfig needs files or plugins; only inline data is supported for shoots")
    ca = _b64(cluster.get("certificate-authority-data"), "certificate-authority-data")
    cert = _b64(user.get("client-certificate-data"), "client-certificate-data")
    key = _b64(user.get("client-key-data"), "client-key-data")
    if not isinstance(cluster.get("server"), str) or not server.lower().startswith("https://"):
        raise BadResponse(
            f"the kubeconfig's server {truncate(server, 80)!r} is not https; refusing to send it a credential"
        )
    insecure = cluster.get("insecure-skip-tls-verify", False)
    if not isinstance(insecure, bool):
        raise BadResponse(
            f"the kubeconfig's insecure-skip-tls-verify is {type(insecure).__name__} {truncate(str(insecure), 20)!r},"
            " not a boolean; refused"
        )
    token = user.get("token")
    server_name = cluster.get("tls-server-name")
    if not isinstance(token, str | None) or not isinstance(server_name, str | None):
        raise BadResponse("the kubeconfig's token or tls-server-name is not a string")
    if token is None and cert is None:
        raise BadResponse("the kubeconfig carries neither a token nor a client certificate")
    if (cert is None) != (key is None):
        raise BadResponse("the kubeconfig has a client certificate without its key, or a key without one")
    return Credential(
        server=server,
        ca_data=ca.decode() if ca else None,
        token=token,
        client_cert=cert,
        client_key=key,
        insecure=insecure,
        tls_server_name=server_name,
        expires=expires,
    )


def _b64(value: object, name: str) -> bytes | None:
    if value is None:
        return None
    try:
        return base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError):
        raise BadResponse(f"the kubeconfig's {name} is not base64") from None


@contextlib.contextmanager
def pem_paths(cert: bytes, key: bytes) -> Iterator[tuple[str, str]]:
    """Paths OpenSSL can load a client certificate and key from, gone when the block ends.

    Python's ssl module loads certificates only from files. On Linux they are anonymous memory files
    (memfd), so nothing touches a disk and a read-only root filesystem is fine; elsewhere a private
    temporary directory that is removed right after the load.
    """
    if hasattr(os, "memfd_create"):
        fds = [os.memfd_create("shoot-credential", os.MFD_CLOEXEC) for _ in range(2)]
        try:
            for fd, data in zip(fds, (cert, key), strict=True):
                os.write(fd, data)
            yield f"/proc/self/fd/{fds[0]}", f"/proc/self/fd/{fds[1]}"
        finally:
            for fd in fds:
                os.close(fd)
        return
    with tempfile.TemporaryDirectory(prefix="cluster-worker-") as directory:
        paths = (Path(directory) / "cert.pem", Path(directory) / "key.pem")
        for path, data in zip(paths, (cert, key), strict=True):
            path.touch(mode=0o600)
            path.write_bytes(data)
        yield str(paths[0]), str(paths[1])
