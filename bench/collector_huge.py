"""Benchmark: one cluster at Kubernetes' limits, and the CPU of parsing pod metadata.

    .venv/bin/python -m bench.collector_huge [--dsn SUPERUSER_DSN] [--skip-collect] [--skip-parse]

fleet-sim serves one shoot of 5,000 nodes and 150,000 pods (metadata with managedFields) from a
process of its own (`fleet-sim --huge-shoot`), and PostgreSQL (a throwaway embedded server unless
`--dsn` names one) holds its cluster. Two measurements:

1. Memory: `cluster-worker collect --cluster <huge>` runs as a process of its own; its peak RSS (from
   wait4) must stay under 400 MB. Its CPU and the numbers it stored are printed too.
2. CPU per 10,000 pods of metadata, on the same bytes (the pod list the collector asks for, fetched
   once), side by side: a bare `orjson.loads` (with Python's GC as it is, and with the GC off), the
   collector's path (collector.kube.liststream fed 1 MiB chunks, folding pods into counts per namespace),
   and the typed client path (`ApiClient.deserialize(..., "V1PodList")`, what CoreV1Api does; on a
   10,000-pod slice, it is slow). Targets: collector <= 2x bare orjson.loads, typed >= 5x collector.

Exits non-zero when a target is missed.
"""

from __future__ import annotations

import argparse
import base64
import gc
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson
import yaml
from kubernetes import client, config

from bench.common import PROJECT, module_command, postgres, simulator_process, worker_database
from bench.runs import Benchmark, Options, Reading, Result, Run, largest
from bench.table import Row, Target
from collector.kube.liststream import ListSplitter, gc_paused
from sim.world.fleets import huge_cluster_id, huge_fleet

DATABASE = "fleet_bench_huge"
RSS_LIMIT_MB = 400
PARSE_TARGET = 2.0
TYPED_TARGET = 5.0
META = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
TYPED_SLICE = 10_000


def run_measured(args: list[str], env: dict[str, str]) -> tuple[int, float, float, float, str]:
    """Run a process; return its exit code, peak RSS (MB), CPU seconds, wall seconds and stdout."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        child = subprocess.Popen(args, cwd=PROJECT, env=env, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode()
    wall = time.perf_counter() - started
    return child.returncode, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime, wall, text


def measure_collect(worker_dsn: str, kubeconfig: Path, figures: dict[str, float] | None = None) -> bool:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INVENTORY_", "GARDENER_", "DATABASE_"))}
    env.update(
        DATABASE_URL=worker_dsn,
        GARDENER_MODE="real",
        GARDENER_KUBECONFIG=str(kubeconfig),
        INVENTORY_TIMEOUT_SECONDS="600",
        LOG_LEVEL="warning",
    )
    _, baseline_rss, _, _, _ = run_measured([sys.executable, "-c", "import collector.main"], env)
    cluster = str(huge_cluster_id())
    code, rss, cpu, wall, text = run_measured(
        [sys.executable, "-m", "collector.main", "collect", "--cluster", cluster], env
    )
    print(text.rstrip())
    print(
        f"\ncollect of the huge cluster: exit {code}, peak RSS {rss:.0f} MB (the worker after its imports: "
        f"{baseline_rss:.0f} MB), CPU {cpu:.1f} s, wall {wall:.1f} s (mostly the simulator rendering)"
    )
    print(f"target: peak RSS < {RSS_LIMIT_MB} MB")
    if figures is not None:  # for `--json` (the benchmark table of `python -m bench`)
        figures.update(collect_exit=code, peak_rss_mb=rss, baseline_rss_mb=baseline_rss, collect_cpu_seconds=cpu)
    return code == 0 and rss < RSS_LIMIT_MB


def fetch_pod_list(kubeconfig: Path) -> bytes:
    """The exact bytes the collector's pod list gets: metadata only, unfinished pods, resourceVersion=0."""
    garden = config.new_client_from_config(str(kubeconfig))
    garden.configuration.retries = 0
    shoots: Any = client.CustomObjectsApi(garden).list_cluster_custom_object("core.gardener.cloud", "v1beta1", "shoots")
    meta = shoots["items"][0]["metadata"]
    path = f"/apis/core.gardener.cloud/v1beta1/namespaces/{meta['namespace']}/shoots/{meta['name']}/adminkubeconfig"
    body = {"apiVersion": "authentication.gardener.cloud/v1alpha1", "kind": "AdminKubeconfigRequest", "spec": {}}
    serialized = garden.param_serialize(
        "POST", path, header_params={"Content-Type": "application/json"}, body=body, auth_settings=["BearerToken"]
    )
    answer = garden.call_api(*serialized, _request_timeout=60)
    answer.read()
    kubeconfig_doc = yaml.safe_load(base64.b64decode(orjson.loads(answer.data)["status"]["kubeconfig"]))
    shoot = config.new_client_from_config_dict(kubeconfig_doc)
    shoot.configuration.retries = 0
    response: Any = client.CoreV1Api(shoot).list_pod_for_all_namespaces(
        resource_version="0",
        field_selector="status.phase!=Succeeded,status.phase!=Failed",
        _headers={"Accept": META},
        _preload_content=False,
        _request_timeout=(10, 600),
    )
    data: bytes = response.data
    return data


def cpu_of(action: Callable[[], Any], *, gc_off: bool = False) -> float:
    gc.collect()
    started = time.process_time()
    if gc_off:
        with gc_paused():
            result = action()
    else:
        result = action()
    spent = time.process_time() - started
    del result
    gc.collect()
    return spent


def collector_path(body: bytes) -> Callable[[], Counter[str]]:
    def run() -> Counter[str]:
        counts: Counter[str] = Counter()

        def fold(items: list[dict[str, Any]]) -> None:
            counts.update((item.get("metadata") or {}).get("namespace", "") for item in items)

        splitter = ListSplitter(fold)
        for start in range(0, len(body), 1 << 20):
            splitter.feed(body[start : start + (1 << 20)])
        splitter.finish()
        return counts

    return run


def measure_parse(kubeconfig: Path, figures: dict[str, float] | None = None) -> bool:
    body = fetch_pod_list(kubeconfig)
    items = orjson.loads(body)["items"]
    pods = len(items)
    head = {"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": "1"}}
    slice_body = orjson.dumps({**head, "items": items[:TYPED_SLICE]})
    del items
    print(f"\npod list: {pods} pods, {len(body) / 1e6:.1f} MB ({len(body) / pods:.0f} bytes per pod)")
    per_10k = 10_000 / pods
    bare_on = cpu_of(lambda: orjson.loads(body)) * per_10k
    bare_off = cpu_of(lambda: orjson.loads(body), gc_off=True) * per_10k
    ours = cpu_of(collector_path(body)) * per_10k
    print(f"{'CPU per 10,000 pods (whole list)':<44}{'ms':>8}")
    print(f"{'  bare orjson.loads, GC as it is':<44}{bare_on * 1000:>8.0f}")
    print(f"{'  bare orjson.loads, GC off':<44}{bare_off * 1000:>8.0f}")
    print(f"{'  collector (streamed batches + counting)':<44}{ours * 1000:>8.0f}")

    api = client.ApiClient()
    text = slice_body.decode()
    slice_per_10k = 10_000 / TYPED_SLICE
    s_bare = cpu_of(lambda: orjson.loads(slice_body), gc_off=True) * slice_per_10k
    s_ours = cpu_of(collector_path(slice_body)) * slice_per_10k
    s_typed = cpu_of(lambda: api.deserialize(text, "V1PodList", "application/json")) * slice_per_10k
    print(f"{'CPU per 10,000 pods (10,000-pod slice)':<44}{'ms':>8}")
    print(f"{'  bare orjson.loads, GC off':<44}{s_bare * 1000:>8.0f}")
    print(f"{'  collector':<44}{s_ours * 1000:>8.0f}")
    print(f"{'  typed client (deserialize V1PodList)':<44}{s_typed * 1000:>8.0f}")

    vs_bare_on, vs_bare_off, typed_ratio = ours / bare_on, ours / bare_off, s_typed / s_ours
    print(
        f"collector / bare (GC as it is): {vs_bare_on:.2f}; collector / bare (GC off): {vs_bare_off:.2f} "
        f"(target <= {PARSE_TARGET}); typed / collector: {typed_ratio:.1f} (target >= {TYPED_TARGET})"
    )
    if figures is not None:
        figures.update(
            pods=pods,
            bare_gc_off_ms_per_10k=bare_off * 1000,
            collector_ms_per_10k=ours * 1000,
            slice_collector_ms_per_10k=s_ours * 1000,
            typed_ms_per_10k=s_typed * 1000,
            collector_vs_bare=vs_bare_off,
            typed_vs_collector=typed_ratio,
        )
    return vs_bare_off <= PARSE_TARGET and typed_ratio >= TYPED_TARGET


# -- in the table of `python -m bench` --------------------------------------------------------------


def plan(options: Options) -> list[Run]:
    return [] if options.quick else [Run("collector_huge", "bench.collector_huge", ("--dsn", options.dsn))]


def read(results: Sequence[Result]) -> Reading:
    _, f = largest(results)
    rows = [
        Row(
            "collector_huge",
            "peak RSS collecting 5,000 nodes, 150,000 pods",
            f["peak_rss_mb"],
            "MB",
            target=Target("<", RSS_LIMIT_MB),
            note=f"the worker after its imports: {f['baseline_rss_mb']:.0f} MB; collect exit {f['collect_exit']:.0f}",
        ),
        Row(
            "collector_huge",
            "CPU per 10,000 pods, collector path",
            f["collector_ms_per_10k"],
            "ms",
            "bare orjson.loads, GC off",
            f["bare_gc_off_ms_per_10k"],
            Target("<=", PARSE_TARGET),
        ),
        Row(
            "collector_huge",
            "CPU per 10,000 pods, typed client",
            f["typed_ms_per_10k"],
            "ms",
            "collector path, same 10,000 pods",
            f["slice_collector_ms_per_10k"],
            Target(">=", TYPED_TARGET),
        ),
    ]
    return rows, []


BENCHMARK = Benchmark("collector_huge", plan, read)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.collector_huge", description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn", help="a superuser DSN of a server to use instead of a throwaway embedded one")
    parser.add_argument("--skip-collect", action="store_true", help="only the parse CPU comparison")
    parser.add_argument("--skip-parse", action="store_true", help="only the memory of a collection")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    ok = True
    figures: dict[str, float] = {}
    huge = module_command("sim.main", "--huge-shoot", "--port", "0", state_flag="--state-dir")
    with simulator_process(huge, name="huge", quiet=True) as (kubeconfig, _):
        if not args.skip_collect:
            with postgres(args.dsn, name="huge") as (superuser, _):
                worker_dsn = worker_database(superuser, DATABASE, huge_fleet()[0], analyzed=False)
                ok &= measure_collect(worker_dsn, kubeconfig, figures)
        if not args.skip_parse:
            ok &= measure_parse(kubeconfig, figures)
    if args.json:
        args.json.write_bytes(orjson.dumps(figures, option=orjson.OPT_INDENT_2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
