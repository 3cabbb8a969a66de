"""Kubernetes quantities as millicores and bytes, rounded up like Kubernetes does."""

from __future__ import annotations

import pytest

from collector.kube.quantity import millis, whole


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4", 4000),
        ("3880m", 3880),
        ("0.5", 500),
        ("1.5", 1500),
        ("100u", 1),  # rounds up, like MilliValue()
        ("250000n", 1),
        ("2k", 2_000_000),
        ("1e3", 1_000_000),
        ("1E-3", 1),
        (".1", 100),
        (8, 8000),
    ],
)
def test_cpu_in_millicores(text: str | int, expected: int) -> None:
    assert millis(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("16Gi", 16 * 1024**3),
        ("14145946Ki", 14145946 * 1024),
        ("512Mi", 512 * 1024**2),
        ("1G", 10**9),
        ("110", 110),
        ("1.5Ki", 1536),
        ("100m", 1),  # a tenth of a byte still needs a byte
        ("0", 0),
    ],
)
def test_memory_and_counts_in_whole_units(text: str, expected: int) -> None:
    assert whole(text) == expected


@pytest.mark.parametrize("text", ["", "Gi", "1.2.3", "12 Gi", "1KiB", "abc", "1e999", "--1"])
def test_what_is_no_quantity_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"quantity|exponent"):
        whole(text)
