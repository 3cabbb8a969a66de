"""The soak's fault schedule: break one thing at a time, see the failure, see the recovery.

Each step injects one kind of fault while the load runs, waits (bounded) until the failure shows
where the system is meant to show it, lifts the fault and waits (bounded) until the system has
recovered:

- shoot faults: six ready shoots each get a different API-server fault from fleet-sim's control list
  (401, 403, 500, hang, truncated body, 410; the next cycle: connection reset, malformed body, latency
  past the timeout, ...); each cluster must show a `last_error` written after the fault began, then
  a fresh observation without error once the fault is lifted;
- reconcile list failing: the garden answers 500 to shoot lists; two failed passes must be counted
  on the reconcile worker's /metrics while its heartbeat and the shoot mirror stay as they were;
  once lifted, the heartbeat moves again;
- collector killed: SIGKILL to the inventory worker just after it queued a round, then a restart
  with the same environment; the new process must complete a round;
- database restarted: PostgreSQL stopped (clients cut off), down 8 s (the next cycle: 70 s, longer
  than the public API's cache, which must then answer UNAVAILABLE), started in place; both APIs
  must answer again and both loops must record a pass after it;
- database failed over: the primary stops, its streaming standby is promoted and the old primary is
  rebuilt as the new one's standby (`SoakSystem.fail_over`); every process follows through its
  multi-host DSN (`target_session_attrs=read-write`) without a restart, both APIs must answer again
  and both loops must record a pass on the new primary.

Steps run in that order, cycle after cycle, as long as the next one's time bound still fits before
the soak's end. Every step returns a `StepResult`; a step that did not see what it waited for fails.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row

from fleetctl.demo.world import world_script
from sim.control.client import ControlClient, ControlError
from sim.world.shoots import shoot_key
from soak.checks import QUERIES
from soak.system import (
    INVENTORY,
    SoakSystem,
    metric_sum,
    public_answers,
    scrape,
    staff_answers,
    wait_for,
)

logger = logging.getLogger("fleet.soak")

# (fault kind, resource, seconds): each cycle breaks six shoots in six different ways.
SHOOT_FAULTS: tuple[tuple[tuple[str, str, float], ...], ...] = (
    (
        ("401", "pods", 0),
        ("403", "nodes", 0),
        ("500", "pods", 0),
        ("hang", "nodes", 0),
        ("truncated", "pods", 0),
        ("410", "namespaces", 0),
    ),
    (
        ("reset", "pods", 0),
        ("malformed", "nodes", 0),
        ("latency", "namespaces", 45),  # past INVENTORY_TIMEOUT_SECONDS (30 s): the cluster times out
        ("401", "nodes", 0),
        ("500", "namespaces", 0),
        ("truncated", "nodes", 0),
    ),
)
# How long the database stays down, by cycle: a short outage the public cache hides, then one longer
# than its 60 s TTL, so the public API must answer UNAVAILABLE (a failed read is never cached).
DATABASE_DOWN_SECONDS = (8.0, 70.0)
PUBLIC_CACHE_TTL_SECONDS = 60.0
SETTLE_SECONDS = 10.0


@dataclass(frozen=True)
class StepResult:
    """What one step of the schedule saw."""

    name: str
    passed: bool
    summary: str
    details: tuple[str, ...] = ()


@dataclass
class FaultSchedule:
    """Runs the steps against a running `SoakSystem` until the soak's deadline."""

    system: SoakSystem
    sim: ControlClient
    results: list[StepResult] = field(default_factory=list)
    _used_keys: set[str] = field(default_factory=set)

    # -- reading the database (as superuser; None while it is down) ------------------------------

    async def rows(self, query: str, **params: Any) -> list[dict[str, Any]] | None:
        try:
            async with await psycopg.AsyncConnection.connect(self.system.superuser_dsn, connect_timeout=3) as conn:
                cur = conn.cursor(row_factory=dict_row)
                await cur.execute(QUERIES[query].sql, params or None)
                return await cur.fetchall()
        except psycopg.OperationalError:
            return None

    async def db_now(self) -> datetime:
        rows = await self.rows("now")
        if not rows:
            raise RuntimeError("the database does not answer")
        now: datetime = rows[0]["now"]
        return now

    async def heartbeat(self, loop: str) -> datetime | None:
        rows = await self.rows("heartbeats") or []
        return next((row["last_completed"] for row in rows if row["loop"] == loop), None)

    # -- the schedule ----------------------------------------------------------------------------

    def steps(self, cycle: int) -> list[tuple[str, float, Callable[[], Awaitable[StepResult]]]]:
        """(name, time bound in seconds, step) of one cycle."""
        return [
            ("shoot faults", 180.0, lambda: self.shoot_faults(cycle)),
            ("reconcile list failing", 120.0, self.reconcile_list_fails),
            ("collector killed and restarted", 120.0, self.collector_killed),
            ("database restarted", self.down_seconds(cycle) + 150.0, lambda: self.database_restarted(cycle)),
            ("database failed over", 180.0, self.database_failed_over),
        ]

    async def run(self, deadline: float) -> list[StepResult]:
        loop = asyncio.get_running_loop()
        cycle = 0
        try:
            while True:
                for name, bound, step in self.steps(cycle):
                    if loop.time() + bound > deadline:
                        logger.info("fault schedule: no time left for %r; done", name)
                        return self.results
                    logger.info("fault: %s (cycle %d)", name, cycle + 1)
                    try:
                        result = await step()
                    except Exception as error:  # a broken step must not end the soak before its checks
                        logger.exception("fault: %s could not run", name)
                        result = StepResult(name, False, f"the step itself failed: {type(error).__name__}: {error}")
                    logger.info("fault: %s %s: %s", name, "passed" if result.passed else "FAILED", result.summary)
                    self.results.append(result)
                    await asyncio.sleep(SETTLE_SECONDS)
                cycle += 1
        finally:
            await self._clear_all()

    async def _clear_all(self) -> None:
        try:
            await self.sim.clear_faults()
        except ControlError as error:
            logger.warning("could not clear the simulator's faults: %s", error)

    # -- the steps -------------------------------------------------------------------------------

    def _shoot_keys(self, cluster_ids: Sequence[str], count: int) -> list[tuple[str, str]]:
        """(cluster id, shoot key) of `count` collected clusters not touched before nor by the world script."""
        fleet = self.system.fleet
        if fleet is None:
            return []
        scripted = {str(step.arguments.get("key")) for step in world_script(fleet)}
        keys = {s.cluster_label: shoot_key(s.project, s.name) for s in fleet.shoots}
        chosen = []
        for cluster_id in cluster_ids:
            key = keys.get(cluster_id)
            if key is None or key in scripted or key in self._used_keys:
                continue
            chosen.append((cluster_id, key))
            if len(chosen) == count:
                break
        self._used_keys.update(key for _, key in chosen)
        return chosen

    async def shoot_faults(self, cycle: int) -> StepResult:
        name = f"shoot faults, cycle {cycle + 1}"
        faults = SHOOT_FAULTS[cycle % len(SHOOT_FAULTS)]
        collected = [row["id"] for row in await self.rows("collected_clusters") or []]
        targets = self._shoot_keys(collected, len(faults))
        if len(targets) < len(faults):
            return StepResult(name, False, f"only {len(targets)} collected clusters left to break")
        began = await self.db_now()
        what = {}
        for (cluster_id, key), (kind, resource, seconds) in zip(targets, faults, strict=True):
            await self.sim.fault(key, kind, resource=resource, seconds=seconds)
            what[cluster_id] = f"{kind} on {resource} of {key}"
        ids = list(what)
        errors: dict[str, str] = {}

        async def all_failed() -> bool:
            for row in await self.rows("cluster_errors", ids=ids) or []:
                if row["last_error"] and row["last_error_at"] and row["last_error_at"] >= began:
                    errors[row["id"]] = row["last_error"]
            return len(errors) == len(ids)

        failed_seen = await wait_for(all_failed, timeout_seconds=95, every_seconds=2)
        for _, key in targets:
            await self.sim.clear_faults(key)
        lifted = await self.db_now()
        recovered: set[str] = set()

        async def all_recovered() -> bool:
            for row in await self.rows("cluster_errors", ids=ids) or []:
                if row["last_error"] is None and row["observed"] is not None and row["observed"] >= lifted:
                    recovered.add(row["id"])
            return len(recovered) == len(ids)

        recovered_seen = await wait_for(all_recovered, timeout_seconds=75, every_seconds=2)
        details = tuple(
            f"{what[i]}: "
            + (f"last_error {errors[i][:90]!r}" if i in errors else "NO last_error")
            + ("" if i in recovered else "; did not recover")
            for i in ids
        )
        summary = f"{len(errors)}/{len(ids)} clusters showed last_error, {len(recovered)}/{len(ids)} recovered"
        return StepResult(name, failed_seen and recovered_seen, summary, details)

    async def reconcile_list_fails(self) -> StepResult:
        name = "reconcile list failing"
        port = self.system.ports.reconcile_health

        async def failed_passes() -> float:
            return metric_sum(await scrape(port), "fleet_reconcile_passes_total", outcome="failed")

        before = await failed_passes()
        await self.sim.fault("garden", "500", resource="shoots")
        try:
            first = await wait_for(lambda: _above(failed_passes, before), timeout_seconds=40)
            heartbeat = await self.heartbeat("reconcile")
            shoots = await self.rows("live_shoots")
            second = await wait_for(lambda: _above(failed_passes, before + 1), timeout_seconds=40)
            heartbeat_after = await self.heartbeat("reconcile")
            shoots_after = await self.rows("live_shoots")
        finally:
            await self.sim.clear_faults("garden")
        kept = heartbeat_after == heartbeat and shoots_after == shoots

        async def moved() -> bool:
            now = await self.heartbeat("reconcile")
            return now is not None and heartbeat is not None and now > heartbeat

        resumed = await wait_for(moved, timeout_seconds=40)
        failed = await failed_passes() - before
        summary = (
            f"{failed:.0f} failed passes counted; heartbeat and mirror "
            f"{'unchanged' if kept else 'CHANGED'} while failing; {'resumed' if resumed else 'did NOT resume'}"
        )
        return StepResult(name, first and second and kept and resumed, summary)

    async def collector_killed(self) -> StepResult:
        name = "collector killed (SIGKILL) and restarted"
        port = self.system.ports.inventory_health
        last_round = "fleet_inventory_last_round_timestamp_seconds"
        queued = metric_sum(await scrape(port), last_round)

        async def new_round() -> bool:
            return metric_sum(await scrape(port), last_round) > queued

        mid_round = await wait_for(new_round, timeout_seconds=40, every_seconds=0.5)
        await asyncio.sleep(1.5)  # the round's collections are under way
        child = await asyncio.to_thread(self.system.kill_and_restart, INVENTORY)

        async def round_done() -> bool:
            if child.process.poll() is not None:
                return False
            return metric_sum(await scrape(port), "fleet_inventory_round_duration_seconds_count") >= 1

        completed = await wait_for(round_done, timeout_seconds=75)
        summary = (
            f"killed {'mid-round' if mid_round else 'between rounds'}; the new process (pid {child.process.pid}) "
            f"{'completed a round' if completed else 'did NOT complete a round'}"
        )
        return StepResult(name, completed and child.process.poll() is None, summary)

    @staticmethod
    def down_seconds(cycle: int) -> float:
        return DATABASE_DOWN_SECONDS[cycle % len(DATABASE_DOWN_SECONDS)]

    async def public_unavailable(self) -> float:
        """UNAVAILABLE answers of every public replica so far, by their own metrics."""
        total = 0.0
        for port in self.system.public_http_ports().values():
            total += metric_sum(await scrape(port), "fleet_rpc_requests_total", code="unavailable")
        return total

    async def database_restarted(self, cycle: int) -> StepResult:
        name = "database restarted"
        down = self.down_seconds(cycle)
        began = await self.db_now()
        unavailable_before = await self.public_unavailable()
        await asyncio.to_thread(self.system.restart_database, down)
        # Past the cache's TTL every replica's answer expired while the database was down.
        refused = await self.public_unavailable() - unavailable_before
        must_refuse = down > PUBLIC_CACHE_TTL_SECONDS
        staff, public, loops = await self.recovered(began)
        summary = (
            f"down {down:.0f} s, public API answered UNAVAILABLE {refused:.0f} times meanwhile"
            f"{' (it must, its cache expired)' if must_refuse else ''}; after: " + self.said(staff, public, loops)
        )
        passed = staff and public and all(loops.values()) and (refused > 0 or not must_refuse)
        return StepResult(name, passed, summary)

    async def database_failed_over(self) -> StepResult:
        """The primary stops, its standby is promoted, every process follows through its multi-host DSN."""
        name = "database failed over"
        began = await self.db_now()
        unavailable_before = await self.public_unavailable()
        await asyncio.to_thread(self.system.fail_over)
        refused = await self.public_unavailable() - unavailable_before
        staff, public, loops = await self.recovered(began)
        summary = (
            f"failover {self.system.failovers}: the standby promoted, the old primary its new standby; public"
            f" API answered UNAVAILABLE {refused:.0f} times meanwhile; after: " + self.said(staff, public, loops)
        )
        return StepResult(name, staff and public and all(loops.values()), summary)

    async def recovered(self, began: datetime) -> tuple[bool, bool, dict[str, bool]]:
        """Whether (bounded) the staff API answers, every public replica answers, and each loop recorded a
        pass after `began` (in the database's time)."""
        staff = await wait_for(lambda: staff_answers(self.system), timeout_seconds=60)
        ports = self.system.public_http_ports().values()

        async def every_public() -> bool:
            return all([await public_answers(port) for port in ports])

        public = await wait_for(every_public, timeout_seconds=60)
        loops = {}
        for loop, bound in (("inventory", 90.0), ("reconcile", 60.0)):

            async def moved(loop: str = loop) -> bool:
                now = await self.heartbeat(loop)
                return now is not None and now > began

            loops[loop] = await wait_for(moved, timeout_seconds=bound)
        return staff, public, loops

    @staticmethod
    def said(staff: bool, public: bool, loops: dict[str, bool]) -> str:
        return (
            f"staff API {'answers' if staff else 'does NOT answer'}, public API "
            f"{'answers' if public else 'does NOT answer'}; "
            + ", ".join(f"{loop} {'passed' if ok else 'did NOT pass'} since" for loop, ok in loops.items())
        )


async def _above(read: Callable[[], Awaitable[float]], floor: float) -> bool:
    return await read() > floor
