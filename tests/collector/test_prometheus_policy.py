"""The prometheus-url under the address policy, against the real worker process and fleet-sim.

A decoy listener on loopback counts every connection made to it. The monitoring secrets of some
shoots name it in ways the policy refuses (a host outside PROMETHEUS_ALLOWED_DOMAINS, userinfo, the
database's address), one shoot's Prometheus answers `1e306`, one answers as another shoot's
Prometheus: each of those clusters fails alone with a clear `last_error` and reason (never
`internal`), its numbers kept; the decoy sees no connection at all, so no credential reached it;
the other clusters are collected.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.collector.test_hostile import snapshots
from tests.collector.test_process import PROJECT, WAIT_SECONDS, ready_ids, real_worker_env, serving_labels
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.sim import SimUnderTest

ALLOWED_DOMAIN = "prometheus.fleet-sim.test"


class Decoy:
    """A TCP listener on loopback that counts the connections it accepts (and answers none)."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.socket.settimeout(0.2)
        self.port = int(self.socket.getsockname()[1])
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.socket.accept()
            except TimeoutError:
                continue
            self.connections += 1
            connection.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(WAIT_SECONDS)
        self.socket.close()


@pytest.fixture
def decoy() -> Iterator[Decoy]:
    listener = Decoy()
    yield listener
    listener.stop()


def collect(env: dict[str, str], cluster_ids: list[str]) -> subprocess.CompletedProcess[bytes]:
    args = [arg for cid in cluster_ids for arg in ("--cluster", cid)]
    return subprocess.run(
        [sys.executable, "-m", "collector.main", "collect", *args],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        timeout=WAIT_SECONDS * 2,
        check=False,
    )


def reasons(database: TestDatabase) -> dict[str, Any]:
    with database.admin() as admin:
        found = admin.execute(
            "SELECT cluster_id::text, last_error FROM tenant.cluster_snapshots WHERE last_error IS NOT NULL"
        ).fetchall()
    return {str(row[0]): row[1] for row in found}


@pytest.mark.slow
def test_no_credential_reaches_an_address_outside_the_policy(
    sim: SimUnderTest, sim_database: TestDatabase, tmp_path: Path, decoy: Decoy
) -> None:
    ca_file = tmp_path / "ca.crt"
    ca_file.write_bytes(sim.server.sim.tls.ca_pem)
    database_port = sim_database.server.port
    env = real_worker_env(
        sim,
        sim_database,
        tmp_path,
        INVENTORY_SOURCE="prometheus",
        PROMETHEUS_CA_FILE=str(ca_file),
        PROMETHEUS_ALLOW_LOOPBACK="true",  # fleet-sim's own Prometheus is on 127.0.0.1
        PROMETHEUS_ALLOWED_DOMAINS=ALLOWED_DOMAIN,
        INVENTORY_TIMEOUT_SECONDS="20",
    )
    collectable = sorted(ready_ids(sim_database) & serving_labels(sim))
    cases: dict[str, tuple[str, str]] = {
        # (what the secret or the Prometheus says, what last_error must say)
        "outside": (f"https://localhost:{decoy.port}/", "not under PROMETHEUS_ALLOWED_DOMAINS"),
        "userinfo": (f"https://user:s3cret@127.0.0.1:{decoy.port}/", "carries userinfo"),
        "database": (f"https://127.0.0.1:{database_port}/", "the database's address"),
        "control": (f"https://127.0.0.1:{decoy.port}/ x", "whitespace, control"),
        "huge": ("", "out of range"),
        "impostor": ("", "external label"),
    }
    assert len(collectable) > len(cases), "a shoot for every case and healthy ones"
    first = collect(env, collectable)
    assert first.returncode == 0, first.stderr.decode()[-2000:]
    before = snapshots(sim_database)
    keys = {s.cluster_label: s.key for s in sim.shoots(lambda s: s.cluster_label in collectable and not s.deleting)}
    victims = dict(zip(cases, collectable, strict=False))
    healthy = collectable[len(cases) :]
    for case, cid in victims.items():
        url = cases[case][0]
        if url:
            sim.control.set_monitoring_url(keys[cid], url)
    sim.control.fault(keys[victims["huge"]], "huge_value", resource="prometheus")
    # Another shoot's Prometheus behind this shoot's secret: its external labels give it away.
    # (one that takes any credentials, so only its labels can give it away).
    sim.control.set_monitoring_url(keys[victims["impostor"]], sim.server.sim.prometheus_url(keys[healthy[0]]))
    sim.control.fault(keys[healthy[0]], "any_credentials", resource="prometheus")
    sim.control.advance_clock(900)
    second = collect(env, collectable)
    sim.control.clear_faults()
    assert second.returncode != 0, "the collection says some clusters failed"
    output = second.stdout.decode() + second.stderr.decode()
    assert '"internal"' not in output and "Traceback" not in output, output[-3000:]
    assert decoy.connections == 0, "no connection, so no credential, reached the decoy"
    failed = reasons(sim_database)
    after = snapshots(sim_database)
    for case, cid in victims.items():
        assert cid in failed and cases[case][1] in failed[cid], (case, failed.get(cid))
        assert "s3cret" not in failed[cid]
        assert after[cid][:3] == before[cid][:3], f"{case}: the previous numbers are kept"
    for cid in healthy:
        assert cid not in failed, (cid, failed.get(cid))
        assert after[cid][2] > before[cid][2], f"healthy cluster {cid} collected"
