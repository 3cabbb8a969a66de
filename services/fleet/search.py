"""Search queries of the staff view, checked and turned into the LIKE patterns queries.sql matches.

Every pattern is matched against `lower(<name>)` (migration 0009 indexes those expressions). A part of
three or more characters is a substring (`%part%`, served by a trigram index); a shorter one is a
prefix (`part%`, served by a text_pattern_ops btree), because one or two characters hold no trigram
and a substring of them would read the whole index. LIKE's wildcards in the query are escaped, so
`_` and `%` match themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.common.errors import InvalidArgument
from services.fleet.validate import optional_text

# A name is a DNS label (at most 63 characters), an alias at most 255; a search is for a part of one.
MAX_QUERY_CHARS = 100
SUBSTRING_MIN_CHARS = 3


def like_pattern(part: str) -> str:
    """The LIKE pattern (escape character backslash) that finds `part` in a lowered name."""
    escaped = part.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
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


def required_name_search(field: str, value: str) -> str:
    """A query on one kind of name (namespaces) as a pattern; an empty one is `InvalidArgument`."""
    text = search_text(field, value)
    if text is None:
        raise InvalidArgument(f"{field} is required")
    return like_pattern(text)
