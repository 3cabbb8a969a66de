"""Checks on request fields that are not protobuf's job: ids must be UUIDs, free text must be sane.

Each function returns the normalized value or raises `InvalidArgument` naming the field, so a bad
argument never reaches SQL (where `'x'::uuid` would fail as a database error instead).
"""

from __future__ import annotations

import re
from uuid import UUID

from services.common.auth import canonical_uuid
from services.common.errors import InvalidArgument

# Regions and resource types are short identifiers; anything longer is not one of ours.
MAX_FILTER_CHARS = 255
_RESOURCE_TYPE = re.compile(r"^[a-z0-9]+(\.[a-z0-9]+)+$")


def optional_uuid(field: str, value: str) -> UUID | None:
    """`value` as a UUID, None when empty (no filter)."""
    if not value:
        return None
    return required_uuid(field, value)


def required_uuid(field: str, value: str) -> UUID:
    """`value` as a UUID; empty or malformed is `InvalidArgument`."""
    if not value:
        raise InvalidArgument(f"{field} is required")
    canonical = canonical_uuid(value)
    if canonical is None:
        raise InvalidArgument(f"{field} must be a UUID such as 018f2a3c-5b6d-7e8f-9a0b-1c2d3e4f5a6b")
    return UUID(canonical)


def optional_text(field: str, value: str) -> str | None:
    """A free-text filter: None when empty, `InvalidArgument` when absurdly long or with control characters."""
    if not value:
        return None
    if len(value) > MAX_FILTER_CHARS:
        raise InvalidArgument(f"{field} must be at most {MAX_FILTER_CHARS} characters")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise InvalidArgument(f"{field} must not contain control characters")
    return value


def optional_resource_type(value: str) -> str | None:
    """A ledger resource type such as `kubernetes.node`; None when empty."""
    text = optional_text("resource_type", value)
    if text is not None and not _RESOURCE_TYPE.match(text):
        raise InvalidArgument("resource_type must look like kubernetes.node (lowercase, dot-separated)")
    return text
