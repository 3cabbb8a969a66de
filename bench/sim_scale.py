"""Benchmark: fleet-sim at scale: 2,000 small shoots, and one shoot at Kubernetes' limits.

    .venv/bin/python -m bench.sim_scale [--shoots 2000] [--workers 8] [--skip-huge] [--with-scale-fleet]

Each simulator runs in a process of its own (so its CPU time and peak RSS are its own, read from
/proc), on loopback, and stops at the end. Printed side by side:

- many shoots: start-up time; a collector-like pass over every running shoot (mint a viewer
  kubeconfig, list nodes at resourceVersion=0, list pod metadata with the phase selector) with
  `--workers` threads; requests per second and the simulator's CPU per request;
- the huge shoot (5,000 nodes, 150,000 pods): the same pod list as one watch-cache response
  (metadata-only and full objects) and paged by 500, each with its bytes, wall time, and the
  simulator's peak RSS, against the 2 GiB target; ratios of full to metadata bytes and of the
  paged to the single read's simulator CPU;
- optionally the seed's `scale` fleet (about 47,000 shoots): start-up time and RSS.

Exits non-zero when the simulator's peak RSS passes 2 GiB.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import os
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import urllib3

from bench.runs import Benchmark, Options, Reading, Result, Run, largest
from bench.table import Row, Target
from sim.control.client import ControlClient
from sim.control.statedir import STATE_FILE, SimState

PROJECT = Path(__file__).resolve().parents[1]
RSS_LIMIT_BYTES = 2 * 1024**3
META = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
RUNNING = "status.phase!=Succeeded,status.phase!=Failed"
TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Sim:
    process: subprocess.Popen[bytes]
    url: str
    token: str  # the garden token
    state_dir: Path
    http: urllib3.PoolManager
    started_seconds: float

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS

    def peak_rss_bytes(self) -> int:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
        return 0

    def _stream(self, path: str, token: str, accept: str, query: dict[str, str]) -> urllib3.BaseHTTPResponse:
        """A GET whose body is read by the caller (in 1 MiB chunks), then its connection released."""
        return self.http.request(
            "GET",
            self.url + path,
            fields=query or None,
            headers={"Authorization": f"Bearer {token}", "Accept": accept},
            preload_content=False,
            timeout=urllib3.Timeout(connect=5, read=600),
        )

    def get(self, path: str, token: str, accept: str = "application/json", **query: str) -> tuple[int, bytes]:
        response = self._stream(path, token, accept, query)
        body = b"".join(response.stream(1 << 20))
        response.release_conn()
        return response.status, body

    def get_size(self, path: str, token: str, accept: str, **query: str) -> tuple[int, str]:
        """Stream a body, keeping only its size and its continue token (the tail of the JSON)."""
        response = self._stream(path, token, accept, query)
        size, head = 0, b""
        for chunk in response.stream(1 << 20):
            if not size:
                head = chunk[:4096]
            size += len(chunk)
        response.release_conn()
        metadata = head.split(b',"items":[', 1)[0] + b"}"
        continue_token = orjson.loads(metadata).get("metadata", {}).get("continue", "")
        return size, continue_token

    def shoot_kubeconfig(self, key: str, expiration_seconds: int) -> dict[str, Any]:
        """A shoot's kubeconfig through the control client (one call, so on a loop of its own)."""

        async def mint() -> dict[str, Any]:
            async with ControlClient.from_state_dir(self.state_dir, timeout_seconds=600) as control:
                return await control.shoot_kubeconfig(key, expiration_seconds=expiration_seconds)

        return asyncio.run(mint())


@contextmanager
def simulator(*args: str) -> Iterator[Sim]:
    with tempfile.TemporaryDirectory(prefix="bench-sim-") as tmp:
        state_dir = Path(tmp)
        began = time.monotonic()
        command = [sys.executable, "-m", "sim.main", "--port", "0", "--state-dir", str(state_dir), *args]
        process = subprocess.Popen(command, cwd=PROJECT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while not (state_dir / STATE_FILE).exists():
                if process.poll() is not None:
                    raise RuntimeError(f"fleet-sim exited with {process.returncode}")
                time.sleep(0.05)
            started = time.monotonic() - began
            state = SimState.read(state_dir)
            import yaml  # noqa: PLC0415 - only needed once the simulator is up

            kubeconfig = yaml.safe_load(state.garden_kubeconfig.read_text())
            context = ssl.create_default_context(cafile=str(state.ca_file))
            http = urllib3.PoolManager(maxsize=32, ssl_context=context, retries=False)
            yield Sim(process, state.url, kubeconfig["users"][0]["user"]["token"], state_dir, http, started)
        finally:
            process.terminate()
            process.wait(timeout=60)


def mib(size: float) -> str:
    return f"{size / 1024**2:,.0f} MiB"


def many_shoots(shoots: int, workers: int, figures: dict[str, float] | None = None) -> bool:
    organizations = max(1, round(shoots / 5 / 0.945))  # 5 clusters each; about 94.5% have a shoot
    with simulator("--organizations", str(organizations)) as sim:
        status, body = sim.get("/apis/core.gardener.cloud/v1beta1/shoots", sim.token, resourceVersion="0")
        listed = orjson.loads(body)["items"]
        running = [
            s for s in listed if s["status"].get("advertisedAddresses") and not s["spec"]["hibernation"]["enabled"]
        ]
        print(f"many shoots: {len(listed):,} shoots ({len(running):,} running), started in {sim.started_seconds:.1f} s")

        def collect(shoot: dict[str, Any]) -> int:
            meta = shoot["metadata"]
            answer = sim.http.request(
                "POST",
                f"{sim.url}/apis/core.gardener.cloud/v1beta1/namespaces/{meta['namespace']}"
                f"/shoots/{meta['name']}/viewerkubeconfig",
                body=orjson.dumps({"kind": "ViewerKubeconfigRequest", "spec": {"expirationSeconds": 3600}}),
                headers={"Authorization": f"Bearer {sim.token}", "Content-Type": "application/json"},
            )
            import base64  # noqa: PLC0415

            import yaml  # noqa: PLC0415

            config = yaml.safe_load(base64.b64decode(orjson.loads(answer.data)["status"]["kubeconfig"]))
            token = config["users"][0]["user"]["token"]
            # The shoot's API path from its kubeconfig (a project's namespace need not be `garden-<project>`).
            prefix = "/shoots/" + config["clusters"][0]["cluster"]["server"].rsplit("/shoots/", 1)[1]
            sim.get(prefix + "/api/v1/nodes", token, resourceVersion="0")
            sim.get(prefix + "/api/v1/pods", token, META, resourceVersion="0", fieldSelector=RUNNING)
            return 3

        cpu_before, began = sim.cpu_seconds(), time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            requests = sum(pool.map(collect, running))
        wall, cpu = time.monotonic() - began, sim.cpu_seconds() - cpu_before
        print(
            f"  pass over {len(running):,} shoots: {requests:,} requests in {wall:.1f} s = {requests / wall:,.0f} req/s"
        )
        print(f"  simulator CPU {cpu:.1f} s = {cpu / requests * 1000:.2f} ms per request")
        print(f"  simulator peak RSS {mib(sim.peak_rss_bytes())}")
        if figures is not None:  # for `--json` (the benchmark table of `python -m bench`)
            figures.update(
                many_shoots=len(running),
                many_requests_per_second=requests / wall,
                many_cpu_ms_per_request=cpu / requests * 1000,
                many_peak_rss_mib=sim.peak_rss_bytes() / 1024**2,
            )
        return sim.peak_rss_bytes() < RSS_LIMIT_BYTES and status == 200


def huge_shoot(figures: dict[str, float] | None = None) -> bool:
    with simulator("--huge-shoot") as sim:
        print(f"huge shoot: started in {sim.started_seconds:.1f} s, peak RSS {mib(sim.peak_rss_bytes())}")
        config = sim.shoot_kubeconfig("huge--huge", expiration_seconds=86400)
        token = config["users"][0]["user"]["token"]
        pods = "/shoots/huge--huge/api/v1/pods"
        rows = []
        for label, accept, query in (
            ("one list, metadata-only (rv=0)", META, {"resourceVersion": "0"}),
            ("one list, full objects (rv=0)", "application/json", {"resourceVersion": "0"}),
            ("paged by 500, metadata-only", META, {"limit": "500"}),
        ):
            cpu_before, began = sim.cpu_seconds(), time.monotonic()
            size, pages, token_continue = 0, 0, ""
            while True:
                page_query = dict(query, **({"continue": token_continue} if token_continue else {}))
                page_size, token_continue = sim.get_size(pods, token, accept, **page_query)
                size, pages = size + page_size, pages + 1
                if not token_continue:
                    break
            rows.append((label, size, pages, time.monotonic() - began, sim.cpu_seconds() - cpu_before))
            print(
                f"  {label:32} {mib(size):>10} in {pages:>3} response(s), {rows[-1][3]:5.1f} s wall, "
                f"simulator CPU {rows[-1][4]:5.1f} s, peak RSS so far {mib(sim.peak_rss_bytes())}"
            )
        peak = sim.peak_rss_bytes()
        print(f"  full / metadata bytes: {rows[1][1] / rows[0][1]:.2f}x")
        print(f"  paged / single simulator CPU: {rows[2][4] / rows[0][4]:.2f}x")
        verdict = "ok" if peak < RSS_LIMIT_BYTES else "MISSED"
        print(f"  simulator peak RSS {mib(peak)} of the {mib(RSS_LIMIT_BYTES)} target: {verdict}")
        if figures is not None:
            figures.update(huge_peak_rss_mib=peak / 1024**2, huge_metadata_list_seconds=rows[0][3])
        return peak < RSS_LIMIT_BYTES


def scale_fleet() -> bool:
    with simulator("--fleet", "scale") as sim:
        status, body = sim.get("/apis/core.gardener.cloud/v1beta1/shoots", sim.token, limit="1")
        remaining = orjson.loads(body)["metadata"].get("remainingItemCount", 0) + 1
        started, peak = sim.started_seconds, mib(sim.peak_rss_bytes())
        print(f"scale fleet: {remaining:,} shoots, started in {started:.1f} s, peak RSS {peak}")
        return status == 200 and sim.peak_rss_bytes() < RSS_LIMIT_BYTES


# -- in the table of `python -m bench` --------------------------------------------------------------


def plan(options: Options) -> list[Run]:
    args = ("--skip-huge", "--shoots", "400") if options.quick else ()
    return [Run("sim_scale", "bench.sim_scale", args)]


def read(results: Sequence[Result]) -> Reading:
    _, f = largest(results)
    limit = Target("<", RSS_LIMIT_BYTES / 1024**2)
    rows = [
        Row(
            "sim_scale", f"peak RSS serving {f['many_shoots']:,.0f} shoots", f["many_peak_rss_mib"], "MiB", target=limit
        ),
        Row(
            "sim_scale",
            "collector-like pass, requests per second",
            f["many_requests_per_second"],
            "req/s",
            note=f"{f['many_cpu_ms_per_request']:.1f} ms of simulator CPU per request",
        ),
    ]
    if "huge_peak_rss_mib" in f:
        rows.append(Row("sim_scale", "peak RSS serving 150,000 pods", f["huge_peak_rss_mib"], "MiB", target=limit))
    return rows, []


BENCHMARK = Benchmark("sim_scale", plan, read)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.sim_scale", description=__doc__.split("\n\n")[0])
    parser.add_argument("--shoots", type=int, default=2000, help="shoots in the many-shoots fleet (about)")
    parser.add_argument("--workers", type=int, default=8, help="client threads for the many-shoots pass")
    parser.add_argument("--skip-huge", action="store_true", help="skip the 150,000-pod shoot")
    parser.add_argument("--with-scale-fleet", action="store_true", help="also start the seed's scale fleet")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    figures: dict[str, float] = {}
    ok = many_shoots(args.shoots, args.workers, figures)
    if not args.skip_huge:
        ok = huge_shoot(figures) and ok
    if args.with_scale_fleet:
        ok = scale_fleet() and ok
    if args.json:
        args.json.write_text(orjson.dumps(figures, option=orjson.OPT_INDENT_2).decode())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
