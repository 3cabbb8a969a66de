"""Kubeconfig documents the simulator hands out: the garden's, and the shoots' minted ones."""

from __future__ import annotations

import base64
from typing import Any

import yaml

Json = dict[str, Any]


def kubeconfig(*, name: str, server: str, ca_pem: bytes, token: str, user: str) -> Json:
    """A one-context kubeconfig with CA data and a bearer token."""
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": name,
                "cluster": {
                    "server": server,
                    "certificate-authority-data": base64.b64encode(ca_pem).decode(),
                },
            }
        ],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": user}}],
        "current-context": name,
        "preferences": {},
    }


# libyaml's emitter where PyYAML was built with it: the same document as `yaml.safe_dump`, several
# times cheaper (the pure-Python emitter dominated the cost of minting a kubeconfig).
_DUMPER = yaml.CSafeDumper if yaml.__with_libyaml__ else yaml.SafeDumper


def to_yaml(config: Json) -> bytes:
    return yaml.dump(config, Dumper=_DUMPER, sort_keys=False).encode()
