"""Search queries of the staff view, checked and turned into the LIKE patterns the query modules match.

Every pattern is matched against `lower(<name>)` (the schema indexes those expressions). A part of
three or more characters is a substring (`%part%`, served by a trigram index); a shorter one is a
prefix (`part%`, served by a text_pattern_ops btree), because one or two characters hold no trigram
and a substring of them would read the whole index. LIKE's wildcards in the query are escaped, so
`_` and `%` match themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.common.errors import InvalidArgument
from services.fleet.parse.fields import optional_text

# A name is a DNS label (at most 63 characters), an alias at most 255; a search is for a part of one.
MAX_QUERY_CHARS = 100
SUBSTRING_MIN_CHARS = 3


def _escaped(part: str) -> str:
    """`part` lowered, with LIKE's wildcards and its escape character (backslash) escaped."""
    return part.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def like_pattern(part: str) -> str:
    """The LIKE pattern (escape character backslash) that finds `part` in a lowered name."""
    escaped = _escaped(part)
    return f"%{escaped}%" if len(part) >= SUBSTRING_MIN_CHARS else f"{escaped}%"


def search_text(field: str, value: str) -> str | None:
    """A search query: None when empty or blank; trimmed; `InvalidArgument` when too long or with
    control characters."""
    text = optional_text(field, value.strip())
    if text is not None and len(text) > MAX_QUERY_CHARS:
        raise InvalidArgument(f"{field} must be at most {MAX_QUERY_CHARS} characters")
    return text


@dataclass(frozen=True, slots=True)
class ClusterSearch:
    """ListClusters' query as patterns. `either`: the cluster's name or its organization's name or
    alias contains it (no '/'); `cluster` and `organization`: both parts of "org/cluster" (an empty
    part matches everything)."""

    either: str | None = None
    cluster: str | None = None
    organization: str | None = None


def cluster_search(value: str) -> ClusterSearch:
    """ListClusters' `query` field as patterns; no patterns for an empty query."""
    text = search_text("query", value)
    if text is None:
        return ClusterSearch()
    organization, slash, cluster = text.partition("/")
    if not slash:
        return ClusterSearch(either=like_pattern(text))
    if "/" in cluster:
        raise InvalidArgument("query holds at most one '/' (organization/cluster)")
    organization, cluster = organization.strip(), cluster.strip()
    return ClusterSearch(
        cluster=like_pattern(cluster) if cluster else None,
        organization=like_pattern(organization) if organization else None,
    )


def name_search(field: str, value: str) -> str | None:
    """A query on one kind of name (organizations) as a pattern; None for an empty one."""
    text = search_text(field, value)
    return None if text is None else like_pattern(text)


@dataclass(frozen=True, slots=True)
class NamespacePatterns:
    """SearchNamespaces' query as patterns: `name` (and `name_start`, when set) match the namespace's
    name; `project` and `project_names` match the rest of its Kubernetes name.

    A namespace's name on its shoot is its project's 12-character prefix (letters and digits only),
    `-`, and its own name (common/naming.py). So the query is in the Kubernetes name when it is in the
    name, or when it starts in the prefix: then its first `-` is the one after the prefix, what comes
    before it ends the prefix and what follows starts the name. Without a `-`, it is in the prefix
    (or, for a short query, starts it)."""

    name: str
    name_start: str | None = None
    project: str | None = None
    project_names: str | None = None


def namespace_patterns(field: str, value: str) -> NamespacePatterns:
    """SearchNamespaces' query (required) as the patterns of its name and its Kubernetes name."""
    text = search_text(field, value)
    if text is None:
        raise InvalidArgument(f"{field} is required")
    name = like_pattern(text)
    head, dash, tail = text.partition("-")
    if not dash:
        return NamespacePatterns(name, project=like_pattern(text), project_names="%")
    if len(text) < SUBSTRING_MIN_CHARS:
        # A prefix query with a '-' in its first two characters starts no 12-character prefix.
        return NamespacePatterns(name)
    if not head:
        return NamespacePatterns(name, name_start=f"{_escaped(tail)}%")
    return NamespacePatterns(name, project=f"%{_escaped(head)}", project_names=f"{_escaped(tail)}%")
