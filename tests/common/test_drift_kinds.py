"""The drift kinds are defined once (common.drift_kinds); every other list of them must agree with it."""

from __future__ import annotations

from fundament.fleet.v1 import fleet_pb2

from collector.reconcile.drift import KIND_IDS, KINDS
from common.drift_kinds import DRIFT_KINDS
from services.fleet.convert.scalars import kind_to_proto
from services.fleet.parse.requests import kind_from_proto


def test_reconcile_has_one_rule_per_kind_in_order() -> None:
    assert KIND_IDS == DRIFT_KINDS
    assert len({kind.rule for kind in KINDS}) == len(DRIFT_KINDS)


def test_the_staff_enum_names_every_kind_and_nothing_else() -> None:
    enum_kinds = {
        name.removeprefix("DRIFT_KIND_").lower()
        for name in fleet_pb2.DriftKind.DESCRIPTOR.values_by_name
        if name != "DRIFT_KIND_UNSPECIFIED"
    }
    assert enum_kinds == set(DRIFT_KINDS)
    for kind in DRIFT_KINDS:
        assert kind_from_proto(kind_to_proto(kind)) == kind
