"""Deterministic derivations: every name, count and quirk of a simulated shoot comes from here.

The world must be the same on every start for the same fleet (tests compare the collector's
snapshots with what the simulator holds, and the demo should not reshuffle between runs), so nothing
here uses a random source: values are cut from a BLAKE2b hash of the inputs. Python's `hash()` is
salted per process and is never used.
"""

from __future__ import annotations

import hashlib
import re
from uuid import UUID

# Kubernetes' own alphabet for generated name suffixes (no vowels, no look-alikes).
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"

# Pods every tenant namespace holds at least / at most (before terminal ones are counted).
TENANT_PODS_MIN = 2
TENANT_PODS_SPAN = 24

# Machine sizes (cores, GiB) a machine type is mapped onto when its name does not say.
_SIZES: tuple[tuple[int, int], ...] = ((2, 8), (4, 16), (8, 32), (16, 64))
_CORES_IN_NAME = re.compile(r"(?:standard|highcpu|highmem|large|-)(\d{1,2})$")


def stable_int(*parts: object) -> int:
    """A non-negative 64-bit integer determined by `parts` alone."""
    digest = hashlib.blake2b("\x1f".join(str(part) for part in parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def stable_uuid(*parts: object) -> UUID:
    """A version-4-shaped UUID determined by `parts` alone (object uids, CSI handles)."""
    digest = hashlib.blake2b("\x1f".join(str(part) for part in parts).encode(), digest_size=16).digest()
    return UUID(bytes=digest, version=4)


def stable_uuid_text(*parts: object) -> str:
    """`str(stable_uuid(*parts))`, without building a UUID object (objects are rendered by the million)."""
    h = hashlib.blake2b("\x1f".join(str(part) for part in parts).encode(), digest_size=16).hexdigest()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:32]}"


def suffix(*parts: object, length: int = 5) -> str:
    """A generated-name suffix like the ones Kubernetes controllers append (`-x7k2p`)."""
    return encode_suffix(stable_int(*parts), length)


def encode_suffix(value: int, length: int = 5) -> str:
    """The low digits of `value` in the suffix alphabet (base 27)."""
    chars = []
    for _ in range(length):
        value, index = divmod(value, len(_SUFFIX_ALPHABET))
        chars.append(_SUFFIX_ALPHABET[index])
    return "".join(chars)


def tenant_pod_count(namespace_name: str) -> int:
    """How many pods a tenant namespace holds, all phases included (derived from its name)."""
    return TENANT_PODS_MIN + stable_int("pods", namespace_name) % TENANT_PODS_SPAN


def pod_phase(namespace: str, pod_name: str) -> str:
    """A pod's phase: mostly Running, some Pending, some Succeeded and Failed (which do not count)."""
    roll = stable_int("phase", namespace, pod_name) % 20
    if roll == 0:
        return "Succeeded"
    if roll == 1:
        return "Failed"
    if roll == 2:
        return "Pending"
    return "Running"


def node_is_ready(node_name: str) -> bool:
    """About one node in seventeen reports Ready=False."""
    return stable_int("ready", node_name) % 17 != 0


def machine_size(machine_type: str) -> tuple[int, int]:
    """(cores, memory GiB) of a machine type: read from a trailing core count, else derived."""
    match = _CORES_IN_NAME.search(machine_type.lower())
    if match is not None and int(match.group(1)) in {2, 4, 8, 16, 32}:
        cores = int(match.group(1))
        return cores, cores * 4
    return _SIZES[stable_int("machine", machine_type) % len(_SIZES)]


def allocatable(machine_type: str, cores: int, memory_gib: int) -> tuple[int, int]:
    """(millicores, bytes) a node offers pods.

    Most machine types reserve about 80m plus 1% per core and 1 GiB plus 6% of memory for the
    system, so quantities read like `3880m` and `14145946Ki`; one type in three reserves nothing,
    so whole quantities (`4`, `16Gi`) are exercised too.
    """
    if stable_int("reserve", machine_type) % 3 == 0:
        return cores * 1000, memory_gib * 1024**3
    total_kib = memory_gib * 1024 * 1024
    return cores * 1000 - 80 - 10 * cores, (total_kib - 1024 * 1024 - total_kib * 6 // 100) * 1024
