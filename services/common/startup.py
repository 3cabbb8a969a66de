"""What both APIs do about the database before and while they serve: the schema check and readiness.

An API refuses to start against a database whose schema is older than it needs (`SchemaTooOld`,
which `main.py` turns into exit code 1), but an unreachable database only delays readiness: the
process serves and answers UNAVAILABLE until the database answers, as an orchestrator expects.

Ready means more than "the database answered": the API's own role may do what the API runs
(`services.common.role_check`; for the public API, run its one function and nothing else). A role
that cannot would have every call answer UNAVAILABLE behind a ready /readyz; a public role that can
read tables must not serve at all. The check asks the catalog, never runs the API's own reads (the
public API's one overview query a minute stays one).

When it runs: once before serving, then in the background, never per probe (/readyz and gRPC health
only read the last verdict):
- after a check that passed, again every `recheck_seconds` (a minute): a grant revoked or a database
  restored under a running API turns it not ready, with the reason;
- after a check that did not pass or did not reach the database, again after `retry_seconds`,
  doubling up to `retry_max_seconds`: fixed grants, or a database back from an outage, are checked
  within seconds.
A check that cannot reach the database leaves a ready API ready (an outage shows as UNAVAILABLE
answers and in the metrics, not as every replica leaving the load balancer at once); an API not yet
ready stays not ready, saying so. Each change of the verdict is logged once, with its reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from enum import Enum

from psycopg_pool import AsyncConnectionPool

from common.database import SCHEMA_VERSION, schema_version
from common.errors import SchemaTooOld
from common.health import ReadyState
from common.text import truncate
from services.common.metrics import API_READY, READINESS_FAILURES
from services.common.role_check import RoleFindings, RoleNeeds, role_findings

logger = logging.getLogger(__name__)

RECHECK_SECONDS = 60.0
RETRY_SECONDS = 1.0
RETRY_MAX_SECONDS = 15.0


class Reason(Enum):
    """Why an API is not ready: the label of `fleet_api_readiness_failures_total`."""

    DATABASE_UNREACHABLE = "database_unreachable"
    SCHEMA_TOO_OLD = "schema_too_old"
    ROLE_MISSING_PRIVILEGE = "role_missing_privilege"
    ROLE_EXCESS_PRIVILEGE = "role_excess_privilege"


for _reason in Reason:  # every series exists from the start, so a rate over it is defined
    READINESS_FAILURES.labels(_reason.value)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What one check found: `reasons` empty means ready."""

    reasons: tuple[Reason, ...]
    text: str
    """The reason in words (empty when ready)."""
    role: str = ""
    schema_version: int = 0

    @property
    def ready(self) -> bool:
        return not self.reasons


class DatabaseReadiness:
    """An API's `ReadinessProbe`: the verdict of its last check of the database and its own role."""

    def __init__(
        self,
        pool: AsyncConnectionPool,
        needs: RoleNeeds,
        *,
        schema_needed: int = SCHEMA_VERSION,
        recheck_seconds: float = RECHECK_SECONDS,
        retry_seconds: float = RETRY_SECONDS,
        retry_max_seconds: float = RETRY_MAX_SECONDS,
    ) -> None:
        self._pool = pool
        self._needs = needs
        self._schema_needed = schema_needed
        self._recheck_seconds = recheck_seconds
        self._retry_seconds = retry_seconds
        self._retry_max_seconds = retry_max_seconds
        self._state = ReadyState(False, "not checked yet")
        self._task: asyncio.Task[None] | None = None
        self.checks = 0
        """How many checks ran (for tests: probes never run one)."""

    async def status(self) -> ReadyState:
        return self._state

    async def start(self) -> None:
        """Check once now, then keep checking in the background.

        Raises `SchemaTooOld` when the database answered with an older schema: the API must not start.
        """
        verdict = await self.check_now()
        if Reason.SCHEMA_TOO_OLD in verdict.reasons:
            raise SchemaTooOld(verdict.text)
        self._task = asyncio.create_task(self._keep_checking(verdict))

    async def stop(self) -> None:
        """Stop checking (the verdict stays as it was); safe to call more than once."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def check_now(self) -> Verdict:
        """One check, applied to what /readyz and gRPC health report; its verdict."""
        self.checks += 1
        try:
            verdict = await self._check()
        except Exception as e:  # unreachable, refusing or too slow: a probe's answer, never a crash
            verdict = Verdict((Reason.DATABASE_UNREACHABLE,), "the database did not answer the readiness check")
            error = {"cause": type(e).__name__, "error": truncate(str(e), 300)}
        else:
            error = {}
        for reason in verdict.reasons:
            READINESS_FAILURES.labels(reason.value).inc()
        if verdict.reasons == (Reason.DATABASE_UNREACHABLE,) and self._state.ready:
            return verdict  # an outage is not a verdict on the role: stay ready, retry soon
        self._apply(verdict, error)
        return verdict

    async def _check(self) -> Verdict:
        async with self._pool.connection() as conn:
            version = await schema_version(conn)
            if version < self._schema_needed:
                text = (
                    f"database schema is at version {version}, this release needs {self._schema_needed}:"
                    " run `fleet db migrate` first"
                )
                return Verdict((Reason.SCHEMA_TOO_OLD,), text, schema_version=version)
            findings = await role_findings(conn, self._needs)
        return _role_verdict(findings, version)

    def _apply(self, verdict: Verdict, error: dict[str, str]) -> None:
        state = ReadyState(verdict.ready, verdict.text)
        API_READY.set(1 if state.ready else 0)
        if state == self._state:
            return
        self._state = state
        if state.ready:
            logger.info("ready", extra={"role": verdict.role, "schema_version": verdict.schema_version})
        else:
            reasons = [reason.value for reason in verdict.reasons]
            logger.warning("not ready", extra={"reason": verdict.text, "reasons": reasons, **error})

    async def _keep_checking(self, last: Verdict) -> None:
        retry = self._retry_seconds
        while True:
            if last.ready:
                retry = self._retry_seconds
                await asyncio.sleep(self._recheck_seconds)
            else:
                await asyncio.sleep(retry)
                retry = min(retry * 2, self._retry_max_seconds)
            last = await self.check_now()


def _role_verdict(findings: RoleFindings, version: int) -> Verdict:
    if findings.ok:
        return Verdict((), "", role=findings.role, schema_version=version)
    reasons = []
    if findings.missing:
        reasons.append(Reason.ROLE_MISSING_PRIVILEGE)
    if findings.excess:
        reasons.append(Reason.ROLE_EXCESS_PRIVILEGE)
    return Verdict(tuple(reasons), findings.reason(), role=findings.role, schema_version=version)
