"""The benchmark table's logic (bench/table.py, plot.py, suite.py, each module's `read`), without running one.

Each module's reader is fed the figures that the same module's `report` function returns, so a
renamed figure in a module breaks here and not only in a 30-minute `make bench`.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from bench import collector_hostile, collector_sources, fleet_api, overview_function, plot, suite
from bench.runs import Options, Run
from bench.table import Point, Row, Target, meets, render, rows_from_json, to_json


@pytest.mark.parametrize(
    ("value", "op", "limit", "expected"),
    [
        (2.9, "<=", 3, True),
        (3.0, "<=", 3, True),
        (3.1, "<=", 3, False),
        (399, "<", 400, True),
        (400, "<", 400, False),
        (0.8, ">=", 0.8, True),
        (0.79, ">=", 0.8, False),
        (0, "==", 0, True),
        (1, "==", 0, False),
    ],
    ids=str,
)
def test_targets_compare_as_written(value: float, op: str, limit: float, expected: bool) -> None:
    assert meets(value, Target(op, limit)) is expected


def test_an_unknown_operator_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown target operator '=<'"):
        Target("=<", 3)


def test_the_target_applies_to_the_ratio_when_there_is_a_reference() -> None:
    row = Row("b", "f", 30.0, "ms", "count", 10.0, Target("<=", 3))
    assert row.ratio == pytest.approx(3.0)
    assert row.met is True
    slower = Row("b", "f", 31.0, "ms", "count", 10.0, Target("<=", 3))
    assert slower.met is False


def test_the_target_applies_to_the_value_without_a_reference() -> None:
    assert Row("b", "rss", 350.0, "MB", target=Target("<", 400)).met is True
    assert Row("b", "rss", 450.0, "MB", target=Target("<", 400)).met is False
    assert Row("b", "info", 1.0, "ms").met is None


def test_a_zero_reference_gives_an_infinite_ratio_not_a_crash() -> None:
    assert Row("b", "f", 1.0, "ms", "zero", 0.0).ratio == math.inf
    assert Row("b", "f", 0.0, "ms", "zero", 0.0).ratio == 1.0


def test_render_says_which_targets_were_missed() -> None:
    rows = [
        Row("overview_function", "platform_overview()", 150.0, "ms", "count(*)", 60.0, Target("<=", 3)),
        Row("fleet_api", "GetFleetSummary read every call", 400.0, "ms", "count(*)", 2.0, Target("<=", 3), "why"),
        Row("fleet_api", "GetCluster median", 7.5, "ms"),
    ]
    text = render(rows)
    assert "2.50x" in text
    assert "NO" in text
    assert "1 of 2 targets met, missed:" in text
    assert "fleet_api / GetFleetSummary read every call: why" in text


def test_json_round_trips_and_recomputes_the_verdicts() -> None:
    rows = [Row("b", "f", 4.0, "ms", "r", 2.0, Target("<=", 1.5), "n"), Row("b", "g", 1.0, "s")]
    points = [Point("s", "p", 500.0, 1.0, "ms"), Point("s", "p", 5000.0, 9.0, "ms")]
    text = to_json(rows, points, {"seconds": 10})
    assert '"met": false' in text
    again, points_again = rows_from_json(text)
    assert again == rows
    assert points_again == points


@pytest.mark.parametrize(("power", "expected"), [(1.0, 1.0), (0.5, 0.5), (0.0, 0.0), (2.0, 2.0)])
def test_slope_is_the_power_of_growth(power: float, expected: float) -> None:
    series = [Point("s", "p", size, 3 * size**power, "ms") for size in (500, 5_000, 50_000)]
    assert plot.slope(series) == pytest.approx(expected)


def test_describe_calls_out_faster_than_linear_growth() -> None:
    points = [Point("quadratic", "p", size, size**2, "ms") for size in (10, 100)]
    points += [Point("flat", "p", size, 5.0, "ms") for size in (10, 100)]
    lines = plot.describe(points)
    assert any("quadratic" in line and "FASTER than linear" in line for line in lines)
    assert any("flat" in line and "linear or better" in line for line in lines)


def test_a_single_size_has_no_slope() -> None:
    assert plot.slope([Point("s", "p", 10, 1, "ms")]) is None


def test_draw_writes_a_png(tmp_path: Path) -> None:
    points = [
        Point(name, panel, size, size * k, "ms")
        for name, panel, k in (("a", "one", 1), ("b", "one", 2), ("c", "two", 3))
        for size in (500, 5_000, 50_000)
    ]
    picture = tmp_path / "growth.png"
    plot.draw(points, picture, "test")
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_draw_without_points_writes_nothing(tmp_path: Path) -> None:
    plot.draw([], tmp_path / "growth.png", "test")
    assert not (tmp_path / "growth.png").exists()


def test_the_suite_names_each_benchmark_once_and_sizes_the_growing_ones() -> None:
    assert len(set(suite.NAMES)) == len(suite.NAMES)
    full = [run for b in suite.BENCHMARKS for run in b.plan(Options("DSN"))]
    quick = [run for b in suite.BENCHMARKS for run in b.plan(Options("DSN", quick=True))]
    assert {run.percent for run in full if run.benchmark == "overview_function"} == {1, 10, 100}
    assert all(run.percent < 100 for run in quick if run.benchmark in ("overview_function", "fleet_api"))
    assert len({run.label for run in full}) == len(full)
    assert fleet_api.deep_page(100) == 500
    assert fleet_api.deep_page(1) == 5


def overview_figures(overview_ms: float, serial_ms: float) -> dict[str, float]:
    """What bench.overview_function.report returns for these medians."""
    times = {
        overview_function.OVERVIEW_LABEL: [overview_ms / 1000] * 3,
        overview_function.COUNT_LABEL: [serial_ms / 2000] * 3,
        overview_function.SERIAL_COUNT_LABEL: [serial_ms / 1000] * 3,
    }
    return overview_function.report(times)


@pytest.mark.parametrize(("overview_ms", "met"), [(290.0, True), (310.0, False)])
def test_the_overview_reader_takes_the_module_figures(overview_ms: float, met: bool) -> None:
    results = [
        (Run("overview_function", "m", (), percent), overview_figures(overview_ms * percent / 100, 1.0 * percent))
        for percent in (1, 10, 100)
    ]
    rows, points = overview_function.read(results)
    target_row = rows[0]
    assert target_row.value == pytest.approx(overview_ms)
    assert target_row.reference_value == pytest.approx(100.0)
    assert target_row.met is met
    assert {p.size for p in points} == {500, 5_000, 50_000}


def test_the_staff_api_reader_takes_the_module_figures() -> None:
    names = [
        "ListClusters page 1",
        "ListClusters page 500",
        "GetFleetSummary (served)",
        "GetFleetSummary (uncached)",
        "count(*) clusters",
        "ListOrganizations",
        "ListDriftFindings",
        "GetCluster",
        "ListInfrastructureResources",
    ]
    times = {name: [float(i + 1)] * 3 for i, name in enumerate(names)}
    figures = fleet_api.report(times)
    rows, points = fleet_api.read([(Run("fleet_api", "m", (), 100), figures)])
    deep = rows[0]
    assert deep.figure == "ListClusters page 500"
    assert deep.ratio == pytest.approx(2.0)
    assert deep.met is False  # 2x the first page is over the 1.5 target
    assert len(points) == 4


def test_a_quick_run_says_so_on_its_target_rows() -> None:
    results = [(Run("overview_function", "m", (), 10), overview_figures(10.0, 5.0))]
    rows, _ = overview_function.read(results)
    assert "10% of the scale fleet" in rows[0].note


@pytest.mark.parametrize(("rss_mb", "met"), [(120.0, True), (320.0, False)])
def test_the_hostile_reader_gives_each_bomb_its_rss_and_livez_rows(rss_mb: float, met: bool) -> None:
    figures: dict[str, float] = {"baseline_rss_mb": 80.0, "baseline_livez_worst_ms": 10.0}
    for bomb in collector_hostile.BOMBS:
        key = f"{bomb.kind}_{bomb.resource}"
        figures.update({f"{key}_rss_mb": rss_mb, f"{key}_livez_worst_ms": 50.0, f"{key}_livez_failures": 0})
    rows, _ = collector_hostile.read([(Run("collector_hostile", "m", ()), figures)])
    assert len(rows) == 2 * len(collector_hostile.BOMBS)
    assert {row.met for row in rows if row.unit == "MB"} == {met}
    assert {row.met for row in rows if row.unit == "ms"} == {True}


@pytest.mark.parametrize(("differences", "met"), [(0, True), (3, False)])
def test_the_sources_reader_compares_both_sources_and_requires_agreement(differences: int, met: bool) -> None:
    figures: dict[str, float] = {"differences": differences, "compared_numbers": 5000}
    for source in ("apiserver", "prometheus"):
        for phase in ("cold", "warm"):
            key = f"{source}_{phase}"
            figures |= {
                f"{key}_clusters": 2000,
                f"{key}_seconds": 20.0,
                f"{key}_ideal_seconds": 10.0,
                f"{key}_worker_cpu_ms_per_cluster": 5.0,
                f"{key}_requests_per_cluster": 7.0,
                f"{key}_kib_read_per_cluster": 20.0,
                f"{key}_credentials_minted": 2000.0 if (source, phase) == ("apiserver", "cold") else 0.0,
                f"{key}_secrets_read": 2000.0 if (source, phase) == ("prometheus", "cold") else 0.0,
            }
    rows, points = collector_sources.read([(Run("collector_sources", "m", ()), figures)])
    assert points == []
    by_figure = {row.figure: row for row in rows}
    agreement = by_figure["numbers the two sources stored differently"]
    assert (
        agreement.value == differences
        and (agreement.target is not None)
        and meets(agreement.value, agreement.target) == met
    )
    rounds = [row for row in rows if row.figure.startswith("one round")]
    assert len(rounds) == 4 and all(row.ratio == 2.0 for row in rounds)
    minted = {row.figure: row.value for row in rows if row.figure.startswith("shoot credentials minted")}
    assert minted == {
        "shoot credentials minted per round, API-server source": 2000.0,
        "shoot credentials minted per round, Prometheus source": 0.0,
    }
