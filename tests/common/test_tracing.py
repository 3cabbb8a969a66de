"""Tracing (common/tracing.py) as an operator turns it on: each process started with the standard OTEL_*
variables against a local OTLP/HTTP receiver, its spans decoded and checked: a SERVER span per RPC on
both protocols that continues the caller's W3C `traceparent`, the database statements beneath it, a
span per collection (per cluster, with its outcome) and per reconcile pass, and the request id beside
the trace id in the log line. And off: no OpenTelemetry module is even loaded, so no span, no exporter.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest

from common import tracing
from common.settings import SettingsError
from db.embedded import free_port
from tests.fixtures.deployables import INVENTORY, JOBS, PUBLIC, RECONCILE, STAFF, Deployables, running_deployables
from tests.fixtures.fleet_api import staff_token
from tests.fixtures.otlp import ReceivedSpan, Receiver, otlp_receiver
from tests.fixtures.overview import PATH as OVERVIEW_PATH
from tests.fixtures.overview import ROLE as PUBLIC_ROLE
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.sim import SimUnderTest
from tests.fixtures.waiting import eventually, eventually_async

pytestmark = pytest.mark.slow

LIST_CLUSTERS = "/fundament.fleet.v1.FleetService/ListClusters"
SERVER, CLIENT = 2, 3  # OTLP's SpanKind numbers
STATUS_ERROR = 2


def traceparent() -> tuple[str, str, str]:
    """A caller's trace context: (header, trace id, span id)."""
    trace_id, span_id = secrets.token_hex(16), secrets.token_hex(8)
    return f"00-{trace_id}-{span_id}-01", trace_id, span_id


def children(spans: list[ReceivedSpan], parent: ReceivedSpan) -> list[ReceivedSpan]:
    return [s for s in spans if s.trace_id == parent.trace_id and s.parent_span_id == parent.span_id]


def database_children(spans: list[ReceivedSpan], parent: ReceivedSpan) -> list[ReceivedSpan]:
    return [s for s in children(spans, parent) if s.kind == CLIENT and s.attributes.get("db.system.name")]


@pytest.fixture
def traced(sim: SimUnderTest, sim_database: TestDatabase, tmp_path: Path) -> Iterator[tuple[Deployables, Receiver]]:
    with otlp_receiver() as receiver:
        otel = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "100"}
        settings = {job: dict(otel) for job in JOBS}
        settings[PUBLIC]["CACHE_TTL_SECONDS"] = "1"
        settings[RECONCILE]["OTEL_SERVICE_NAME"] = "reconcile-as-named"
        with running_deployables(sim, sim_database, tmp_path, settings) as running:
            for job in (PUBLIC, STAFF):
                running.wait_serving(job)
            yield running, receiver


def test_spans_arrive_with_their_parents_across_connect_grpc_and_the_database(
    traced: tuple[Deployables, Receiver],
) -> None:
    running, receiver = traced
    # Connect: the public overview, continuing our trace; its shared read is a statement beneath the call.
    sent: list[tuple[str, str]] = []

    def overview_traced_down_to_the_database() -> ReceivedSpan | None:
        header, trace_id, span_id = traceparent()
        sent.append((trace_id, span_id))
        answer = httpx.post(
            running.url(PUBLIC) + OVERVIEW_PATH,
            content=b"{}",
            headers={"content-type": "application/json", "traceparent": header},
            timeout=30,
        )
        assert answer.status_code == 200, answer.text
        spans = receiver.of(PUBLIC)
        for trace_id, span_id in sent:
            for span in spans:
                if span.trace_id == trace_id and span.parent_span_id == span_id and database_children(spans, span):
                    return span
        return None

    call = eventually(overview_traced_down_to_the_database, "the overview's call and its read, in our trace", every=1)
    assert call.kind == SERVER
    assert call.name == "fundament.overview.v1.OverviewService/GetPlatformOverview"
    assert call.attributes["rpc.system"] == "connect_rpc"
    assert call.attributes["rpc.method"] == "GetPlatformOverview"
    statements = database_children(receiver.of(PUBLIC), call)
    (statement,) = [s for s in statements if "platform_overview" in s.attributes["db.query.text"]]
    assert statement.name == statement.attributes["db.operation.name"] == "SELECT"
    assert statement.attributes["db.system.name"] == "postgresql"
    assert statement.attributes["db.user"] == PUBLIC_ROLE

    # gRPC: the staff API's cluster list, continuing another trace, its statements beneath it.
    header, trace_id, span_id = traceparent()
    with grpc.insecure_channel(f"127.0.0.1:{running.env[STAFF]['GRPC_PORT']}") as channel:
        list_clusters: grpc.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(LIST_CLUSTERS)
        answer = list_clusters(
            b"",
            metadata=(("authorization", f"Bearer {staff_token()}"), ("traceparent", header), ("x-request-id", "r-1")),
            timeout=30,
        )
    assert answer

    def staff_call() -> ReceivedSpan | None:
        spans = receiver.of(STAFF)
        found = [s for s in spans if s.trace_id == trace_id and s.parent_span_id == span_id]
        return found[0] if found and database_children(spans, found[0]) else None

    grpc_call = eventually(staff_call, "the staff API's gRPC call and its statements, in our trace")
    assert grpc_call.kind == SERVER
    assert grpc_call.attributes["rpc.system"] == "grpc"
    assert grpc_call.attributes["rpc.grpc.status_code"] == 0
    assert grpc_call.attributes["enduser.id"]
    statements = database_children(receiver.of(STAFF), grpc_call)
    assert any(s.attributes.get("db.operation.name") == "SELECT" for s in statements)
    for statement in statements:
        assert statement.attributes["db.user"] == "fun_platform_admin_api"
        # Statements of ours, as written in the .sql files (the pool's empty-query check is no span).
        assert statement.attributes["db.operation.name"] in {"SELECT", "SET"}, statement
        assert statement.attributes["db.query.text"].startswith("--"), statement

    # The request id and the trace id in the same log line.
    rpc_lines = [
        json.loads(line)
        for line in (running.logs / f"{STAFF}.log").read_text().splitlines()
        if line.startswith("{") and '"rpc ' in line
    ]
    (line,) = [entry for entry in rpc_lines if entry.get("request_id") == "r-1"]
    assert line["trace_id"] == trace_id
    assert line["span_id"] == grpc_call.span_id

    # A refused call is a span too, with the code; a client's fault is not the server's error.
    header, trace_id, _ = traceparent()
    refused = httpx.post(
        running.url(STAFF) + LIST_CLUSTERS,
        content=b"{}",
        headers={"content-type": "application/json", "traceparent": header},
        timeout=30,
    )
    assert refused.status_code == 401
    unauthenticated = eventually(
        lambda: next((s for s in receiver.of(STAFF) if s.trace_id == trace_id), None), "the refused call's span"
    )
    assert unauthenticated.attributes["rpc.connect_rpc.error_code"] == "unauthenticated"
    assert unauthenticated.status_code != STATUS_ERROR
    assert database_children(receiver.of(STAFF), unauthenticated) == []


def test_each_collection_and_reconcile_pass_is_a_span_with_its_outcome(traced: tuple[Deployables, Receiver]) -> None:
    running, receiver = traced

    def first_round() -> dict[str, int] | None:
        for line in (running.logs / f"{INVENTORY}.log").read_text().splitlines():
            if line.startswith("{") and '"inventory round done"' in line:
                entry = json.loads(line)
                return {"clusters": entry["clusters"], "collected": entry["collected"], "failed": entry["failed"]}
        return None

    done = eventually(first_round, "the inventory's first round")
    assert done["clusters"] > 1

    def collections() -> list[ReceivedSpan] | None:
        found = [s for s in receiver.of(INVENTORY) if s.name == "inventory.collect"]
        return found if len(found) >= done["clusters"] else None

    collected = eventually(collections, "a span per collected cluster")
    outcomes = [s.attributes["fleet.outcome"] for s in collected]
    assert (outcomes.count("collected"), outcomes.count("failed")) == (done["collected"], done["failed"])
    spans = receiver.of(INVENTORY)
    assert len({s.attributes["fleet.cluster.id"] for s in collected}) == len(collected)
    for span in collected:
        assert span.parent_span_id == ""  # each collection is a trace of its own
        assert span.attributes["fleet.outcome"] in {"collected", "failed"}
        if span.attributes["fleet.outcome"] == "failed":
            assert span.status_code == STATUS_ERROR
            assert span.attributes["error.type"]
    assert any(database_children(spans, span) for span in collected)

    passes = eventually(
        lambda: [s for s in receiver.of("reconcile-as-named") if s.name == "reconcile.pass"] or None,
        "a reconcile pass, under the service name OTEL_SERVICE_NAME gave it",
    )
    reconcile = passes[0]
    assert reconcile.attributes["fleet.outcome"] == "completed"
    assert reconcile.attributes["fleet.shoots_listed"] > 0
    assert database_children(receiver.of("reconcile-as-named"), reconcile)


async def test_off_no_opentelemetry_module_is_loaded_and_nothing_is_sent(database: TestDatabase) -> None:
    """Tracing off (no OTEL_* variable asks for it): the served process never imports OpenTelemetry at all
    (`-X importtime` lists every module a process imports), so no span is created and no exporter runs; and
    `OTEL_TRACES_EXPORTER=none` beside an endpoint keeps it off too: the receiver hears nothing."""
    for asked in ({}, {"OTEL_TRACES_EXPORTER": "none"}):
        with otlp_receiver() as receiver:
            endpoint = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "10"}
            otel = asked and {**asked, **endpoint}
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "DATABASE_URL": database.dsn(PUBLIC_ROLE),
                "HTTP_PORT": str(free_port()),
                "GRPC_PORT": str(free_port()),
                **otel,
            }
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-X",
                "importtime",
                "-m",
                "services.overview.main",
                env=env,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
            )
            assert process.stderr is not None
            lines: list[bytes] = []
            try:
                # Every line, the import times included, until the process says it listens.
                while b'"listening"' not in (line := await asyncio.wait_for(process.stderr.readline(), 60)):
                    assert line, b"".join(lines).decode()[-3000:]
                    lines.append(line)
                async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{env['HTTP_PORT']}", timeout=30) as client:

                    async def answered() -> bool:
                        reply = await client.post(
                            OVERVIEW_PATH,
                            content=b"{}",
                            headers={"content-type": "application/json", "traceparent": traceparent()[0]},
                        )
                        return reply.status_code == 200

                    await eventually_async(answered, "an overview answer")
            finally:
                process.terminate()
                _, rest = await asyncio.wait_for(process.communicate(), timeout=60)
            imported = (b"".join(lines) + rest).decode()
            assert "import time:" in imported
            assert "services.overview.service" in imported
            assert "psycopg" in imported
            assert "opentelemetry" not in imported
            assert receiver.requests == 0


def test_the_variables_that_ask_for_tracing() -> None:
    assert tracing.configured({}) is False
    assert tracing.configured({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}) is True
    assert tracing.configured({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}) is True
    assert tracing.configured({"OTEL_TRACES_EXPORTER": "otlp"}) is True
    assert tracing.configured({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}) is False
    assert tracing.configured({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}) is False
    with pytest.raises(SettingsError, match="OTEL_TRACES_EXPORTER='zipkin'"):
        tracing.configured({"OTEL_TRACES_EXPORTER": "zipkin"})
    with pytest.raises(SettingsError, match="OTEL_EXPORTER_OTLP_PROTOCOL='grpc'"):
        tracing.configured({"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_TRACES_EXPORTER": "otlp"})
