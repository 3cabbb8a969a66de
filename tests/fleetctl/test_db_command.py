"""`fleet db`: the commands an operator runs, through the real command-line entry point."""

from __future__ import annotations

import os

import psycopg
import pytest

from db.embedded import free_port, runtime_root
from db.migrate import available
from fleetctl.main import main
from tests.fixtures.postgres import PROJECT, TestDatabase


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_roles_migrate_status_seed_in_order(empty_database: TestDatabase, capsys: pytest.CaptureFixture[str]) -> None:
    dsn = empty_database.dsn()
    code, out, _ = run(capsys, "db", "status", "--dsn", dsn)
    assert code == 1
    assert "schema version 0" in out and available()[0].path.name in out

    code, _, err = run(capsys, "db", "seed", "--size", "test", "--dsn", dsn)
    assert code == 1 and "run `fleet db migrate` first" in err

    assert run(capsys, "db", "roles", "--dsn", dsn)[0] == 0
    # Without the platform model (Fundament's tables) there is nothing to migrate onto.
    code, _, err = run(capsys, "db", "migrate", "--dsn", dsn)
    assert code == 1 and "platform model fleet inventory applies onto is incomplete" in err
    assert "--platform-model" in err
    code, out, _ = run(capsys, "db", "migrate", "--platform-model", "--dsn", dsn, "--target", "1")
    assert (code, out.splitlines()) == (
        0,
        [
            "platform model (the stand-in for Fundament's tenant tables): built",
            "fleet inventory's migrations: applied 1; schema version 1",
        ],
    )
    code, out, _ = run(capsys, "db", "migrate", "--dsn", dsn)
    assert code == 0 and f"schema version {len(available())}" in out
    code, out, _ = run(capsys, "db", "status", "--dsn", dsn)
    assert code == 0 and "pending: none" in out

    code, out, _ = run(capsys, "db", "seed", "--size", "test", "--seed", "4", "--dsn", dsn)
    assert code == 0 and "9 organizations" in out
    with empty_database.admin() as conn:
        assert conn.execute("SELECT count(*) FROM tenant.organizations").fetchone() == (10,)

    code, _, err = run(capsys, "db", "seed", "--size", "test", "--dsn", dsn)
    assert code == 1 and "already holds 9 organizations" in err


def test_without_dsn_the_server_is_migration_database_url(
    empty_database: TestDatabase, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # How the chart's migration job runs it: the DSN in the environment, not in the process's arguments.
    monkeypatch.setenv("MIGRATION_DATABASE_URL", empty_database.dsn())
    code, out, _ = run(capsys, "db", "status")
    assert code == 1 and "schema version 0" in out
    assert run(capsys, "db", "roles")[0] == 0
    code, out, _ = run(capsys, "db", "migrate", "--platform-model", "--target", "1")
    assert code == 0 and out.splitlines()[-1] == "fleet inventory's migrations: applied 1; schema version 1"
    # --dsn still wins.
    unreachable = f"postgresql://postgres@127.0.0.1:{free_port()}/fleet"
    code, _, err = run(capsys, "db", "status", "--dsn", unreachable)
    assert code == 1 and "cannot connect to" in err


def test_an_unknown_size_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["db", "seed", "--size", "huge"])
    assert exit_info.value.code == 2
    assert "expected one of test, demo, scale" in capsys.readouterr().err


def test_an_unreachable_server_is_one_clear_line(capsys: pytest.CaptureFixture[str]) -> None:
    dsn = f"postgresql://postgres@127.0.0.1:{free_port()}/fleet"
    code, _, err = run(capsys, "db", "status", "--dsn", dsn)
    assert code == 1
    assert err.startswith("fleet db status: cannot connect to") and "fleet db up" in err
    assert len(err.strip().splitlines()) == 1


def test_up_and_down_run_a_server_of_their_own(capsys: pytest.CaptureFixture[str]) -> None:
    data_dir = runtime_root(PROJECT) / f"cli-test-pg-{os.getpid()}"
    port = str(free_port())
    try:
        code, out, _ = run(capsys, "db", "up", "--data-dir", str(data_dir), "--port", port)
        assert code == 0
        dsn = out.strip().splitlines()[-1]
        assert dsn == f"postgresql://postgres@127.0.0.1:{port}/fleet"
        with psycopg.connect(dsn) as conn:
            assert conn.execute("SELECT current_database()").fetchone() == ("fleet",)
        assert run(capsys, "db", "up", "--data-dir", str(data_dir), "--port", port)[0] == 0  # already up: fine
        assert run(capsys, "db", "down", "--data-dir", str(data_dir), "--port", port)[0] == 0
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(dsn, connect_timeout=2)
        assert (data_dir / "PG_VERSION").exists()
    finally:
        assert run(capsys, "db", "down", "--data-dir", str(data_dir), "--port", port, "--remove")[0] == 0
    assert not data_dir.exists()
