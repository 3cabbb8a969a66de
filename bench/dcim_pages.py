"""Benchmark: time to content of DCIM's summary and cluster list pages in headless Chromium.

    .venv/bin/python -m bench.dcim_pages [--dsn SUPERUSER_DSN] [--rounds 5] [--organizations 10000]
                                         [--baseline-web DIR] [--json FILE]

On the same world as bench.fleet_api (built or reused by its prepare_world: at the default size the
scale fleet, 50,000 clusters), with the history bench.fleet_search records (reused when it is recent),
the real staff API and the DCIM page app run in this process on loopback, exactly as in production
(two origins, CORS, a DCIM token in the fragment). Each round opens each page in a fresh browser
context (no cache, no storage) and reads when the page marked its content as shown (the User Timing
mark `dcim-ready` the router sets), counted from the start of the navigation: loading the page and
its modules, the API calls (the summary with its trends; the cluster list's first page of 100) and
drawing. The summary is read fresh on every call (SUMMARY_CACHE_SECONDS=0), the worst a person sees.
Printed as medians with the spread; there is no target (a figure for context, never asserted in tests).

`--baseline-web DIR` serves a second copy of the pages (a `web/` directory, e.g. another commit's,
`git archive COMMIT web | tar -x -C DIR`) on an origin of its own against the same API, and loads
both side by side in every round, alternating which goes first; it prints each page's ratio of this
tree's time to the baseline's (above 1: slower than the baseline).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import secrets
import statistics
import sys
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg

from bench.common import kept_postgres
from bench.fleet_api import _settings, prepare_world
from bench.fleet_search import fill_history
from bench.overview_function import SCALE
from bench.runs import Benchmark, Options, Reading, Result, Run, largest, size_note
from bench.table import Row
from fleetctl.webapp import bind_socket, dcim_app, serve_pages, socket_url
from services.common.auth import DcimTokenRules, mint_token
from services.fleet.app import running_fleet_api
from tests.fixtures.browser import Page, find_chromium, launch_chromium

PAGES = {"summary": "/summary", "clusters": "/clusters"}
READY_MARK = """(() => {
    const mark = performance.getEntriesByName('dcim-ready').find((m) => m.detail && m.detail.view === %s);
    return mark ? mark.startTime : 0;
})()"""


def _say(text: str) -> None:
    print(text, flush=True)


async def _history_is_recent(target: str) -> bool:
    async with await psycopg.AsyncConnection.connect(target) as conn:
        row = await (
            await conn.execute(
                "SELECT count(*) FROM tenant.fleet_history WHERE resolution = 'hour' AND at > now() - interval '1 day'"
            )
        ).fetchone()
    return row is not None and int(row[0]) > 0


async def time_to_content(page: Page, url: str, view: str) -> float:
    """Milliseconds from the start of navigating to `url` until the page marked `view` as shown."""
    await page.goto(url)
    found = await page.wait_for(READY_MARK % json.dumps(view), within=120)
    return float(found)


async def run(target: str, rounds: int, baseline: Path | None = None) -> dict[str, float]:
    binary = find_chromium()
    if binary is None:
        _say("dcim_pages: no Chromium (scripts/install-browser installs Debian's): nothing measured")
        return {}
    if not await _history_is_recent(target):
        _, per_day = await fill_history(target, datetime.now(UTC))
        _say(f"fleet history recorded for the trends: {per_day / 2**20:.1f} MiB per day")
    secret = secrets.token_urlsafe(48)
    rules = DcimTokenRules(secret.encode())
    page_socket, baseline_socket = bind_socket(), bind_socket()
    origins = ",".join(socket_url(s) for s in (page_socket, baseline_socket))
    settings = _settings(target, secret, DCIM_ORIGINS=origins, SUMMARY_CACHE_SECONDS="0")
    trees = ["this"] + (["baseline"] if baseline else [])
    times: dict[tuple[str, str], list[float]] = {(tree, name): [] for tree in trees for name in PAGES}
    async with contextlib.AsyncExitStack() as stack:
        served = await stack.enter_async_context(running_fleet_api(settings, rules=rules))
        api = f"http://127.0.0.1:{served.server.http_port}"
        urls = {"this": await stack.enter_async_context(serve_pages(dcim_app(api), sock=page_socket))}
        if baseline:
            app = dcim_app(api, web_root=baseline)
            urls["baseline"] = await stack.enter_async_context(serve_pages(app, sock=baseline_socket))
        browser = await stack.enter_async_context(launch_chromium(binary))
        for index in range(rounds + 1):  # the first round warms the database and the browser, unmeasured
            for name, route in PAGES.items():
                # Alternate which tree goes first, so neither always meets a warmer database.
                for tree in trees if index % 2 else reversed(trees):
                    token = mint_token(rules, subject=uuid.uuid4(), ttl=timedelta(hours=1), now=datetime.now(UTC))
                    async with browser.new_page() as page:
                        took = await time_to_content(page, f"{urls[tree]}/platform#token={token}&next={route}", name)
                        if page.errors():
                            raise RuntimeError(f"the {name} page ({tree}) reported errors: {page.errors()}")
                    if index:
                        times[(tree, name)].append(took)
    figures: dict[str, float] = {}
    for (tree, name), values in times.items():
        median = statistics.median(values)
        figures[f"{name} ms" if tree == "this" else f"{name} baseline ms"] = median
        _say(
            f"time to content, {name} page ({tree}): median {median:.0f} ms"
            f" (min {min(values):.0f}, max {max(values):.0f}, {len(values)} loads)"
        )
    if baseline:
        for name in PAGES:
            ratio = figures[f"{name} ms"] / figures[f"{name} baseline ms"]
            figures[f"{name} ratio"] = ratio
            _say(f"{name} page: {ratio:.2f}x the baseline's time to content")
    return figures


# -- in the table of `python -m bench` --------------------------------------------------------------


def plan(options: Options) -> list[Run]:
    # The scale fleet only; the world and its history are the ones fleet_api and fleet_search use.
    rounds = "3" if options.quick else "5"
    args = ("--organizations", str(SCALE.organizations), "--rounds", rounds, "--dsn", options.dsn)
    return [Run("dcim_pages", "bench.dcim_pages", args)]


def read(results: Sequence[Result]) -> Reading:
    run, f = largest(results)
    if "summary ms" not in f:
        return [], []  # no Chromium where the benchmarks ran: nothing was measured
    note = size_note(run) or "headless Chromium, fresh browser context per load; measured, not a target"
    rows = [Row("dcim_pages", f"DCIM {name} page, time to content", f[f"{name} ms"], "ms", note=note) for name in PAGES]
    return rows, []


BENCHMARK = Benchmark("dcim_pages", plan, read)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.dcim_pages", description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn", default=None, help="superuser DSN of a server to use (default: an embedded one)")
    parser.add_argument("--rounds", type=int, default=5, help="measured loads per page (default 5)")
    parser.add_argument("--seed", type=int, default=0, help="fleet seed (default 0)")
    parser.add_argument("--organizations", type=int, default=SCALE.organizations, help="fleet size (default 10000)")
    parser.add_argument("--baseline-web", type=Path, help="a second web/ directory to measure side by side")
    parser.add_argument("--json", type=Path, help="also write the figures (medians in ms) to this file")
    args = parser.parse_args(argv)
    if args.rounds < 1 or not 100 <= args.organizations <= SCALE.organizations:
        parser.error(f"--rounds >= 1 and --organizations in 100..{SCALE.organizations}")
    with kept_postgres(args.dsn, data_dir_name="bench-admin-pg") as dsn:
        target = prepare_world(dsn, args.seed, rebuild=False, organizations=args.organizations)
        figures: dict[str, Any] = asyncio.run(run(target, args.rounds, args.baseline_web))
    figures["organizations"] = args.organizations
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
