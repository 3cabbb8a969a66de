"""A shoot's parts as the garden answers them: read whole, or not at all, whatever the answer holds."""

from __future__ import annotations

from typing import Any

import pytest

from collector.reconcile.shoot_parts import MAX_ENTRIES, WorkerPool, parse_parts


def worker(name: object = "pool-a", machine: object = "m5.large", minimum: object = 1, maximum: object = 3) -> Any:
    return {"name": name, "machine": {"type": machine}, "minimum": minimum, "maximum": maximum}


def test_a_stock_shoot_reads_whole() -> None:
    parts = parse_parts(
        {
            "provider": {"type": "aws", "workers": [worker(), worker("pool-b", "c5.xlarge", 0, 10)]},
            "extensions": [
                {"type": "shoot-dns-service", "providerConfig": {"kind": "DNSConfig"}},
                {"type": "shoot-networking-problemdetector", "disabled": True},
            ],
            "addons": {"nginxIngress": {"enabled": True}, "kubernetesDashboard": {"enabled": False}},
        }
    )
    assert parts.pools == (WorkerPool("pool-a", "m5.large", 1, 3), WorkerPool("pool-b", "c5.xlarge", 0, 10))
    assert parts.extensions == ("shoot-dns-service",)
    assert parts.addons == ("nginxIngress",)
    assert parts.unreadable == () and parts.problems == ()


def test_a_workerless_shoot_without_extensions_has_none() -> None:
    parts = parse_parts({"provider": {"type": "local"}})
    assert (parts.pools, parts.extensions, parts.addons) == ((), (), ())


@pytest.mark.parametrize(
    "provider",
    [
        "aws",
        {"workers": {"name": "pool-a"}},
        {"workers": ["pool-a"]},
        {"workers": [worker(name="")]},
        {"workers": [worker(name="x" * 256)]},
        {"workers": [worker(name="bad\nname")]},
        {"workers": [worker(machine=None)]},
        {"workers": [{"name": "pool-a", "machine": "m5.large", "minimum": 1, "maximum": 3}]},
        {"workers": [worker(minimum=-1)]},
        {"workers": [worker(minimum="1")]},
        {"workers": [worker(minimum=True)]},
        {"workers": [worker(maximum=2**31)]},
        {"workers": [worker(maximum=1.5)]},
        {"workers": [worker(), worker()]},
        {"workers": [worker(name=f"p{i}") for i in range(MAX_ENTRIES + 1)]},
    ],
)
def test_workers_in_a_shape_gardener_never_gives_are_not_read(provider: object) -> None:
    parts = parse_parts({"provider": provider, "extensions": [{"type": "shoot-dns-service"}]})
    assert parts.pools is None and parts.unreadable == ("workers",) and len(parts.problems) == 1
    assert parts.extensions == ("shoot-dns-service",), "the other parts are read as usual"


@pytest.mark.parametrize(
    "extensions",
    [
        {"type": "shoot-dns-service"},
        [{"type": 7}],
        [{"disabled": False}],
        [{"type": "shoot-dns-service", "disabled": "no"}],
        [{"type": "shoot-dns-service"}, {"type": "shoot-dns-service"}],
        [{"type": f"e{i}"} for i in range(MAX_ENTRIES + 1)],
    ],
)
def test_extensions_in_a_shape_gardener_never_gives_are_not_read(extensions: object) -> None:
    parts = parse_parts({"extensions": extensions})
    assert parts.extensions is None and parts.unreadable == ("extensions",)


@pytest.mark.parametrize(
    "addons",
    [["nginxIngress"], {"nginxIngress": True}, {"nginxIngress": {"enabled": "yes"}}, {"": {"enabled": True}}],
)
def test_addons_in_a_shape_gardener_never_gives_are_not_read(addons: object) -> None:
    parts = parse_parts({"addons": addons})
    assert parts.addons is None and parts.unreadable == ("addons",)
