"""`python -m soak` (`make soak`): the whole system under steady load and faults for a bounded time, then checks.

    python -m soak [--minutes 10] [--seed 0] [--public-rate 8]

Starts what `fleet demo` starts (embedded PostgreSQL seeded with the demo fleet, fleet-sim playing
the garden and the status poller, both workers with short intervals, the staff API) plus a second
public API replica, all on free loopback ports and in `.fleet/soak/`, so it runs beside a demo. Once
everything answers, for `--minutes`:

- four processes call GetPlatformOverview at a steady rate (Connect GET, Connect POST, gRPC; both
  replicas), one process pages through every staff list over gRPC and Connect (`load.py`);
- the demo's world script changes the simulated world (pods, a shoot lost and back, a version drift);
- the fault schedule (`faults.py`) breaks shoots, the garden's shoot list, the collector and the
  database (restarted, and failed over to its streaming standby), one at a time, and checks each
  failure shows and heals;
- a sampler reads every snapshot, finding and ledger row every few seconds (`checks.py`).

Then it prints one PASS/FAIL line per check, writes them to `.fleet/soak/result.json`, stops
everything it started (by pid, newest first) and exits 1 if any check failed. Start-up (about a
minute) is not counted in `--minutes`; at least 10 minutes are needed for every fault step to run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import signal
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import psycopg

from db.embedded import runtime_root
from fleetctl.demo.layout import SIM_DIR, STAFF_TOKEN_FILE
from fleetctl.demo.world import play_world
from sim.control.client import ControlClient
from soak.checks import (
    QUERIES,
    SampleLog,
    Verdict,
    answer_verdict,
    invariant_verdict,
    merge_answers,
    queries_verdict,
    render,
    server_codes_verdict,
    take_sample,
)
from soak.faults import FaultSchedule, StepResult
from soak.system import (
    SoakSystem,
    codes_of,
    metric_sum,
    public_answers,
    scrape,
    staff_answers,
    wait_for,
)

logger = logging.getLogger("fleet.soak")

PROJECT = Path(__file__).resolve().parents[1]
SAMPLE_EVERY_SECONDS = 5.0
LOAD = "soak-load"
STEP_KINDS = (
    "shoot faults",
    "reconcile list failing",
    "collector killed",
    "database restarted",
    "database failed over",
)
MAX_MINUTES = 120.0


async def warm_up(system: SoakSystem) -> bool:
    """Wait (bounded) until the first inventory round completed, reconcile passed and every API answers."""

    async def ready() -> bool:
        inventory = await scrape(system.ports.inventory_health)
        rounds = metric_sum(inventory, "fleet_inventory_round_duration_seconds_count")
        reconcile = await scrape(system.ports.reconcile_health)
        passes = metric_sum(reconcile, "fleet_reconcile_passes_total", outcome="completed")
        publics = [await public_answers(port) for port in system.public_http_ports().values()]
        return rounds >= 1 and passes >= 1 and all(publics) and await staff_answers(system)

    return await wait_for(ready, timeout_seconds=240, every_seconds=2)


async def database_rows(system: SoakSystem, query: str) -> list[tuple[Any, ...]]:
    async with await psycopg.AsyncConnection.connect(system.superuser_dsn, autocommit=True) as conn:
        cur = await conn.execute(QUERIES[query].sql)
        return await cur.fetchall()


def start_load(system: SoakSystem, seconds: float, rate: float) -> list[Path]:
    """The client processes (they stop by themselves after `seconds`); the files they will write."""
    results = system.state_dir / "load"
    results.mkdir(exist_ok=True)
    module = [sys.executable, "-m", "soak.load"]
    http, grpc = system.public_http_ports(), system.public_grpc_ports()
    first, second = list(http)
    plans: list[tuple[str, list[str]]] = [
        ("public-connect-get", ["public", "--protocol", "connect-get", "--port", str(http[first])]),
        ("public-connect-post", ["public", "--protocol", "connect-post", "--port", str(http[second])]),
        ("public-grpc-1", ["public", "--protocol", "grpc", "--port", str(grpc[first])]),
        ("public-grpc-2", ["public", "--protocol", "grpc", "--port", str(grpc[second])]),
    ]
    plans = [(name, [*args, "--rate", str(rate)]) for name, args in plans]
    p = system.ports
    token = system.state_dir / STAFF_TOKEN_FILE
    plans.append(
        (
            "staff",
            ["staff", "--http-port", str(p.admin_http), "--grpc-port", str(p.admin_grpc), "--token-file", str(token)],
        )
    )
    files = []
    for name, args in plans:
        out = results / f"{name}.json"
        out.unlink(missing_ok=True)
        system.supervisor.start(
            f"{LOAD}-{name}", [*module, *args, "--seconds", f"{seconds:.0f}", "--out", str(out)], {}
        )
        files.append(out)
    return files


async def sample_until(system: SoakSystem, log: SampleLog, deadline: float) -> None:
    loop = asyncio.get_running_loop()
    while loop.time() < deadline:
        try:
            log.add(await take_sample(system.superuser_dsn))
        except psycopg.Error:
            log.failed_reads += 1  # the database is being restarted
        await asyncio.sleep(SAMPLE_EVERY_SECONDS)


async def wait_for_load(system: SoakSystem, timeout_seconds: float) -> None:
    """Load processes end by themselves; wait for them (bounded)."""
    loads = [c for c in system.supervisor.children if c.name.startswith(LOAD)]
    deadline = time.monotonic() + timeout_seconds
    while any(c.process.poll() is None for c in loads) and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.5)  # child processes signal no event to wait on


def read_tally(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {"answers": {}, "examples": {"missing": [f"{path.name}: the client wrote no result"]}}
    tally: dict[str, Any] = json.loads(path.read_text())
    return tally


async def public_reads(system: SoakSystem) -> dict[str, float]:
    return {
        name: metric_sum(await scrape(port), "fleet_overview_database_reads_total", outcome="ok")
        for name, port in system.public_http_ports().items()
    }


def step_verdicts(results: list[StepResult]) -> list[Verdict]:
    verdicts = [Verdict(f"fault: {r.name}", r.passed, r.summary, r.details) for r in results]
    missing = [kind for kind in STEP_KINDS if not any(r.name.startswith(kind) for r in results)]
    ran = ", ".join(f"{kind} x{sum(r.name.startswith(kind) for r in results)}" for kind in STEP_KINDS)
    verdicts.append(
        Verdict("fault schedule ran every step", not missing, ran, tuple(f"never ran: {m}" for m in missing))
    )
    return verdicts


async def final_verdicts(  # noqa: PLR0917 - one call site, every argument a different thing
    system: SoakSystem,
    files: list[Path],
    log: SampleLog,
    steps: list[StepResult],
    window_seconds: float,
    reads_before: dict[str, float],
) -> list[Verdict]:
    tallies = {path.stem: read_tally(path) for path in files}
    public = [t for name, t in tallies.items() if name.startswith("public")]
    staff = tallies["staff"]
    examples: dict[str, list[str]] = {}
    for tally in public:
        for code, texts in tally.get("examples", {}).items():
            examples.setdefault(code, []).extend(texts)
    server: dict[str, float] = {}
    for name in [*system.public_http_ports(), "platform-admin-api"]:
        for code, count in codes_of(await scrape(system.metrics_port(name))).items():
            server[code] = server.get(code, 0) + count
    counted = int((await database_rows(system, "overview_queries"))[0][0])
    reads_after = await public_reads(system)
    per_replica = {name: reads_after[name] - reads_before.get(name, 0) for name in reads_after}
    services = [c for c in system.supervisor.children if not c.name.startswith(LOAD)]
    ended = [f"{c.name} exited with {c.process.returncode}" for c in services if c.process.poll() is not None]
    answering = await staff_answers(system) and all(
        [await public_answers(port) for port in system.public_http_ports().values()]
    )
    minimum_samples = max(2, int(window_seconds / SAMPLE_EVERY_SECONDS / 3))
    return [
        answer_verdict("public API: only OK or UNAVAILABLE", merge_answers(public), examples),
        answer_verdict("staff API: only OK or UNAVAILABLE", merge_answers([staff]), staff.get("examples", {})),
        server_codes_verdict("services' own counts: no internal error", server),
        Verdict(
            "staff paging: no row twice in a walk",
            not staff.get("duplicates"),
            f"{len(staff.get('duplicates', []))} repeats",
            tuple(staff.get("duplicates", [])),
        ),
        *step_verdicts(steps),
        invariant_verdict("snapshots: none lost, observed never back", log, ["snapshot"], minimum_samples),
        invariant_verdict("findings: none deleted, none reopened", log, ["finding"], minimum_samples),
        invariant_verdict("ledger: rows kept, no duplicate active rows", log, ["ledger", "duplicate"], minimum_samples),
        queries_verdict(counted, per_replica, window_seconds, len(per_replica)),
        Verdict(
            "every service stayed up and answers at the end",
            not ended and answering,
            "all running and answering" if not ended and answering else "see details",
            tuple(ended) + (() if answering else ("an API does not answer",)),
        ),
    ]


async def run_soak(system: SoakSystem, seconds: float, rate: float) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    sim: ControlClient | None = None
    try:
        logger.info("starting PostgreSQL (seeding the demo fleet), fleet-sim, two public replicas, the staff API")
        await asyncio.to_thread(system.start_database)
        await asyncio.to_thread(system.start_processes)
        if not await warm_up(system):
            logger.error("the system did not come up within 4 minutes; logs in %s", system.supervisor.log_dir)
            return 1
        await database_rows(system, "reset_statements")
        reads_before = await public_reads(system)
        started = loop.time()
        deadline = started + seconds
        files = start_load(system, seconds, rate)
        logger.info("load and faults for %.0f s; logs in %s", seconds, system.supervisor.log_dir)
        sim = ControlClient.from_state_dir(system.state_dir / SIM_DIR)
        schedule = FaultSchedule(system, sim)
        log = SampleLog()
        world = asyncio.create_task(
            play_world(system.fleet, system.state_dir / SIM_DIR, system.timings.world_step_seconds, stop)
        )
        work: asyncio.Future[Any] = asyncio.gather(schedule.run(deadline), sample_until(system, log, deadline))
        stopped = asyncio.create_task(stop.wait())
        await asyncio.wait([work, stopped], return_when=asyncio.FIRST_COMPLETED)
        interrupted = stop.is_set()
        if interrupted:
            logger.warning("interrupted after %.0f s: stopping the load; checking what ran", loop.time() - started)
            work.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await work
            for child in [c for c in system.supervisor.children if c.name.startswith(LOAD)]:
                system.supervisor.stop(child, grace_seconds=5)
        await wait_for_load(system, timeout_seconds=max(0.0, deadline - loop.time()) + 60)
        stop.set()
        await world
        stopped.cancel()
        with contextlib.suppress(Exception):
            log.add(await take_sample(system.superuser_dsn))
        verdicts = await final_verdicts(system, files, log, schedule.results, loop.time() - started, reads_before)
        ran = loop.time() - started
        verdicts.append(Verdict("ran its whole time", not interrupted, f"{ran:.0f} of {seconds:.0f} s"))
        print(render(verdicts), flush=True)  # noqa: T201 - the report is the command's output
        result = {"seconds": seconds, "verdicts": [asdict(v) for v in verdicts]}
        (system.state_dir / "result.json").write_text(json.dumps(result, indent=1, default=str))
        return 0 if all(v.passed for v in verdicts) else 1
    finally:
        if sim is not None:
            await sim.close()
        logger.info("stopping everything the soak started")
        await asyncio.to_thread(system.stop)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m soak", description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="minutes of load and faults (default 10)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the demo fleet (default 0)")
    parser.add_argument(
        "--public-rate", type=float, default=8.0, help="calls per second of each public load process (default 8)"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not 0 < args.minutes <= MAX_MINUTES:
        print(f"--minutes must be in (0, {MAX_MINUTES:g}]", file=sys.stderr)  # noqa: T201
        return 2
    if not 0 < args.public_rate <= 200:
        print("--public-rate must be in (0, 200]", file=sys.stderr)  # noqa: T201
        return 2
    # The soak's own log says what it starts and breaks, with the time; nothing per request.
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    for noisy in ("httpx", "uvicorn.error", "fleetctl.webapp"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    state_dir = runtime_root(PROJECT) / "soak"
    state_dir.mkdir(parents=True, exist_ok=True)
    system = SoakSystem(state_dir, seed=args.seed)
    return asyncio.run(run_soak(system, args.minutes * 60, args.public_rate))


if __name__ == "__main__":
    sys.exit(main())
