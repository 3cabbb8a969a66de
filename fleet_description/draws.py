"""Random streams and what a fleet draws from them: ids, names, versions, regions, machine types.

Each named part of a fleet draws from a stream of its own (the seed and the part's names), so a part
never depends on the ones before it and the same seed gives the same fleet on any machine. Ids are
drawn too (version 4 shaped UUIDs from the stream), never taken from the system's randomness.
"""

from __future__ import annotations

import random
import threading
from uuid import UUID

from common.naming import project_name

REGIONS = ("eu-west-1", "eu-central-1", "us-east-1", "ap-southeast-1")
VERSIONS = ("1.30.8", "1.31.4", "1.32.2", "1.33.1")
MACHINES = ("m5.large", "m5.xlarge", "c5.2xlarge", "r5.xlarge")
POOLS = ("system", "workers", "highmem", "gpu")
CLUSTER_WORDS = ("prod", "staging", "dev", "ci", "edge", "data")
PROJECT_WORDS = ("web", "payments", "search", "billing", "identity", "ml", "mobile", "ops")
NAMESPACE_WORDS = ("api", "worker", "frontend", "jobs", "cache", "db")
ORG_WORDS = ("acme", "globex", "initech", "umbrella", "hooli", "stark", "wayne", "tyrell", "cyberdyne", "soylent")


def stream(seed: int, *names: object) -> random.Random:
    """A random stream of its own for one named part of the fleet with `seed`."""
    # Reproducible sample data, never secrets: a seeded PRNG is exactly what is wanted here.
    return random.Random(":".join(map(str, (seed, *names))))  # noqa: S311


def random_uuid(rng: random.Random) -> UUID:
    """A random (version 4 shaped) UUID drawn from `rng`, so ids follow the seed."""
    bits = rng.getrandbits(128)
    bits = (bits & ~(0xF000 << 64)) | (0x4000 << 64)
    bits = (bits & ~(0xC000 << 48)) | (0x8000 << 48)
    return UUID(int=bits)


def organization_id(seed: int, index: int) -> UUID:
    """The id of organization `index`, drawn from a stream of its own so any part can name any other."""
    return random_uuid(stream(seed, "organization-id", index))


# Organization names, drawn in index order so that each can be checked against those before it.
_ORGANIZATION_NAMES: list[str] = []
_PROJECTS_TAKEN: set[str] = set()
_NAMES_LOCK = threading.Lock()


def organization_name(index: int) -> str:
    """The name of organization `index`: its word, then its index once the words are used up.

    A Gardener project name keeps only six characters of the organization's name and 16 bits of its
    hash, so among thousands of `cyberdyne-N` two would share a project, which Fundament could not
    provision (the garden refuses the second). Such a name gets a suffix until its project is free, as a
    person would pick another name.
    """
    with _NAMES_LOCK:
        while len(_ORGANIZATION_NAMES) <= index:
            at = len(_ORGANIZATION_NAMES)
            word = ORG_WORDS[at % len(ORG_WORDS)]
            name = word if at < len(ORG_WORDS) else f"{word}-{at}"
            retry = 0
            while project_name(name) in _PROJECTS_TAKEN:
                retry += 1
                name = f"{word}-{at}-{retry}"
            _PROJECTS_TAKEN.add(project_name(name))
            _ORGANIZATION_NAMES.append(name)
        return _ORGANIZATION_NAMES[index]


def minor_of(version: str) -> str:
    """The minor version of a full one ("1.31.4" -> "1.31"), free text as Fundament holds it."""
    return ".".join(version.split(".")[:2])


def other_minor(version: str) -> str:
    """A full version one minor below ("1.31.4" -> "1.30.9"): a shoot that drifted from its cluster."""
    major, minor = version.split(".")[:2]
    return f"{major}.{int(minor) - 1}.9"
