"""Reading listed shoot objects into what the mirror stores: tables of good and bad objects, no I/O."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import pytest

from collector.reconcile.observed import MalformedShoot, observe_shoot, observe_shoots

UID = "6f1c1f7e-3d1b-4b51-9c39-2d0e1c6f2a10"
CLUSTER = "0b7d6f0e-5d0e-4f8e-8a5e-3f0a8d9c1e22"
ORG = "7a1e2b3c-4d5e-4f60-8a7b-9c0d1e2f3a4b"


def shoot(**changes: Any) -> dict[str, Any]:
    """A shoot object as the garden lists it; `changes` replace top-level parts."""
    obj: dict[str, Any] = {
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "Shoot",
        "metadata": {
            "name": "acme-a1b",
            "namespace": "garden-acme",
            "uid": UID,
            "creationTimestamp": "2026-01-02T03:04:05Z",
            "labels": {"fundament.io/cluster-id": CLUSTER, "fundament.io/organization-id": ORG},
        },
        "spec": {"kubernetes": {"version": "1.31.4"}, "region": "eu-west-1"},
    }
    obj.update(changes)
    return obj


def with_metadata(**changes: Any) -> dict[str, Any]:
    obj = shoot()
    obj["metadata"] = {**obj["metadata"], **changes}
    return obj


def test_a_complete_shoot() -> None:
    observed = observe_shoot(shoot())
    assert observed.uid == UUID(UID)
    assert (observed.name, observed.namespace) == ("acme-a1b", "garden-acme")
    assert (observed.cluster_label, observed.cluster_id) == (CLUSTER, UUID(CLUSTER))
    assert (observed.organization_label, observed.organization_id) == (ORG, UUID(ORG))
    assert (observed.kubernetes_version, observed.region) == ("1.31.4", "eu-west-1")
    assert observed.created == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


@pytest.mark.parametrize(
    ("obj", "version", "region", "organization_label"),
    [
        (shoot(spec={}), "", "", ORG),
        (shoot(spec=None), "", "", ORG),
        (shoot(spec={"kubernetes": None, "region": 7}), "", "", ORG),
        (with_metadata(labels={"fundament.io/cluster-id": CLUSTER}), "1.31.4", "eu-west-1", None),
        (
            with_metadata(labels={"fundament.io/cluster-id": "x", "fundament.io/organization-id": "y"}),
            "1.31.4",
            "eu-west-1",
            "y",
        ),
    ],
    ids=["no spec fields", "null spec", "odd spec types", "no organization label", "labels that are no UUIDs"],
)
def test_missing_or_odd_fields_are_kept_as_they_are(
    obj: dict[str, Any], version: str, region: str, organization_label: str | None
) -> None:
    observed = observe_shoot(obj)
    assert (observed.kubernetes_version, observed.region, observed.organization_label) == (
        version,
        region,
        organization_label,
    )


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        (shoot(metadata=None), "no metadata"),
        (with_metadata(uid=None), "no usable uid"),
        (with_metadata(uid="not-a-uid"), "no usable uid"),
        (with_metadata(name=""), "no usable uid, name or namespace"),
        (with_metadata(creationTimestamp=None), "creationTimestamp None"),
        (with_metadata(creationTimestamp="yesterday"), "creationTimestamp 'yesterday'"),
        (with_metadata(creationTimestamp="2026-01-02T03:04:05"), "is not an RFC 3339 time"),
        (with_metadata(labels={}), "listed without label fundament.io/cluster-id"),
        (with_metadata(labels=None), "listed without label fundament.io/cluster-id"),
    ],
    ids=[
        "no metadata",
        "no uid",
        "uid not a UUID",
        "no name",
        "no creation time",
        "creation time not a time",
        "creation time without zone",
        "no cluster label",
        "null labels",
    ],
)
def test_an_unusable_shoot_fails_the_listing(obj: dict[str, Any], message: str) -> None:
    with pytest.raises(MalformedShoot, match=message):
        observe_shoot(obj)


def test_a_uid_listed_twice_is_kept_once() -> None:
    observed = observe_shoots([shoot(), with_metadata(name="other")])
    assert [s.name for s in observed] == ["acme-a1b"]
