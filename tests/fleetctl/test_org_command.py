"""`fleet org list|unlist`: the command as a process against a real database, and its audit table."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import psycopg
import pytest
from psycopg import errors

from common.organizations import SYSTEM_ORGANIZATION_ID
from db.seed.write import SEED_AUTHOR
from fleetctl.main import main
from tests.fixtures.postgres import TestDatabase

ADMIN_API = "fun_platform_admin_api"
WORKER = "fun_cluster_worker"


def fleet(database: TestDatabase, *args: str) -> subprocess.CompletedProcess[str]:
    """`fleet org ...` as its own process, on the test database."""
    return subprocess.run(
        [sys.executable, "-m", "fleetctl.main", "org", *args, "--dsn", database.dsn()],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def organization(database: TestDatabase, name: str) -> tuple[Any, bool]:
    with database.admin() as conn:
        row = conn.execute(
            "SELECT id, listed_publicly FROM tenant.organizations WHERE name = %s AND deleted IS NULL", [name]
        ).fetchone()
    assert row is not None
    return row[0], bool(row[1])


def changes(database: TestDatabase) -> list[tuple[Any, ...]]:
    with database.admin() as conn:
        return conn.execute(
            "SELECT organization_id, listed_publicly, previously_listed, changed_by, reason"
            " FROM tenant.organization_listing_changes WHERE changed_by <> %s ORDER BY changed, id",
            (SEED_AUTHOR,),
        ).fetchall()


def an_unlisted_organization(database: TestDatabase) -> str:
    with database.admin() as conn:
        row = conn.execute(
            "SELECT name FROM tenant.organizations WHERE NOT listed_publicly AND deleted IS NULL AND id <> %s"
            " ORDER BY name LIMIT 1",
            [SYSTEM_ORGANIZATION_ID],
        ).fetchone()
    assert row is not None
    return str(row[0])


def overview_names(database: TestDatabase) -> set[str]:
    with psycopg.connect(database.dsn("fun_platform_public_api")) as conn:
        return {str(r[0]) for r in conn.execute("SELECT name FROM tenant.platform_overview()").fetchall()}


def test_list_then_unlist_sets_the_flag_and_records_who_when_and_why(seeded_database: TestDatabase) -> None:
    name = an_unlisted_organization(seeded_database)
    org_id, _ = organization(seeded_database, name)
    assert name not in overview_names(seeded_database)

    listed = fleet(seeded_database, "list", name, "--reason", "asked in ticket 42", "--by", "ada")
    assert listed.returncode == 0, listed.stderr
    assert f"{name} is now listed publicly" in listed.stdout
    assert organization(seeded_database, name) == (org_id, True)
    assert name in overview_names(seeded_database)

    unlisted = fleet(seeded_database, "unlist", name, "--reason", "  changed their mind  ")
    assert unlisted.returncode == 0, unlisted.stderr
    assert organization(seeded_database, name) == (org_id, False)
    assert name not in overview_names(seeded_database)
    recorded = changes(seeded_database)
    assert recorded[0] == (org_id, True, False, "ada", "asked in ticket 42")
    # Without --by, the OS user running the command; the reason is kept without surrounding blanks.
    assert recorded[1][:3] == (org_id, False, True)
    assert recorded[1][3]
    assert recorded[1][4] == "changed their mind"


def test_the_state_it_already_has_changes_and_records_nothing(seeded_database: TestDatabase) -> None:
    name = an_unlisted_organization(seeded_database)
    result = fleet(seeded_database, "unlist", name, "--reason", "tidy", "--by", "ada")
    assert result.returncode == 0, result.stderr
    assert "already not listed publicly; nothing changed, nothing recorded" in result.stdout
    assert changes(seeded_database) == []


def test_the_system_organization_is_refused_with_a_clear_message(seeded_database: TestDatabase) -> None:
    with seeded_database.admin() as conn:
        row = conn.execute("SELECT name FROM tenant.organizations WHERE id = %s", [SYSTEM_ORGANIZATION_ID]).fetchone()
    assert row is not None
    result = fleet(seeded_database, "list", str(row[0]), "--reason", "why not", "--by", "ada")
    assert result.returncode == 1
    assert "is the system organization" in result.stderr
    assert "never listed" in result.stderr
    assert changes(seeded_database) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["list", "no-such-org", "--reason", "x", "--by", "ada"], "no live organization is named 'no-such-org'"),
        (["list", "ORG", "--reason", "   ", "--by", "ada"], "--reason must not be empty"),
        (["list", "ORG", "--reason", "x" * 1001, "--by", "ada"], "at most 1000 are kept"),
        (["list", "ORG", "--reason", "a\x1b[2Jb", "--by", "ada"], "--reason holds U+001B"),
        (["list", "ORG", "--reason", "a\x7fb", "--by", "ada"], "--reason holds U+007F"),
        (["list", "ORG", "--reason", "a\x85b", "--by", "ada"], "--reason holds U+0085"),
        (
            ["list", "ORG", "--reason", "asked \u202eevil", "--by", "ada"],
            "U+202E (RIGHT-TO-LEFT OVERRIDE, category Cf)",
        ),
        (["list", "ORG", "--reason", "a\u2067b\u2069", "--by", "ada"], "--reason holds U+2067"),
        (["list", "ORG", "--reason", "ok\u200b", "--by", "ada"], "--reason holds U+200B"),
        (["list", "ORG", "--reason", "\u200d\u200c \u200d", "--by", "ada"], "--reason holds no visible character"),
        (["list", "ORG", "--reason", "a\u2028b", "--by", "ada"], "--reason holds U+2028"),
        (["list", "ORG", "--reason", "x", "--by", "ada\u202e"], "--by holds U+202E"),
        (["list", "ORG", "--reason", "x", "--by", "a\nda"], "--by holds U+000A"),
        (["list", "ORG", "--reason", "x", "--by", ""], "say who you are with --by"),
    ],
)
def test_bad_input_is_refused_and_nothing_is_written(
    seeded_database: TestDatabase, args: list[str], message: str
) -> None:
    name = an_unlisted_organization(seeded_database)
    result = fleet(seeded_database, *[name if a == "ORG" else a for a in args])
    assert result.returncode == 1
    assert message in result.stderr
    assert changes(seeded_database) == []
    assert organization(seeded_database, name)[1] is False


def test_a_reason_in_any_script_with_joiners_and_lines_is_kept(seeded_database: TestDatabase) -> None:
    name = an_unlisted_organization(seeded_database)
    reason = "asked by \u0645\u0631\u06cc\u0645\u200c\u0647\u0627 (ticket 7)\n\t\U0001f469\u200d\U0001f4bb approved"
    result = fleet(seeded_database, "list", name, "--reason", reason, "--by", "Zoë")
    assert result.returncode == 0, result.stderr
    assert [(c[3], c[4]) for c in changes(seeded_database)] == [("Zoë", reason)]


def test_a_deleted_organization_is_not_found(seeded_database: TestDatabase) -> None:
    with seeded_database.admin() as conn:
        row = conn.execute("SELECT name FROM tenant.organizations WHERE deleted IS NOT NULL LIMIT 1").fetchone()
    assert row is not None
    result = fleet(seeded_database, "list", str(row[0]), "--reason", "x", "--by", "ada")
    assert result.returncode == 1
    assert "no live organization" in result.stderr


def test_the_reason_is_required_by_the_parser(
    seeded_database: TestDatabase, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["org", "list", "acme", "--dsn", seeded_database.dsn()])
    assert exited.value.code == 2
    assert "--reason" in capsys.readouterr().err


def test_main_runs_in_process_too(seeded_database: TestDatabase, capsys: pytest.CaptureFixture[str]) -> None:
    name = an_unlisted_organization(seeded_database)
    assert main(["org", "list", name, "--reason", "asked", "--by", "ada", "--dsn", seeded_database.dsn()]) == 0
    assert "now listed publicly" in capsys.readouterr().out
    assert len(changes(seeded_database)) == 1


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE tenant.organization_listing_changes SET reason = 'rewritten'",
        "DELETE FROM tenant.organization_listing_changes",
        "TRUNCATE tenant.organization_listing_changes",
    ],
)
def test_the_audit_table_refuses_even_a_superusers_plain_statements(
    seeded_database: TestDatabase, statement: str
) -> None:
    name = an_unlisted_organization(seeded_database)
    assert fleet(seeded_database, "list", name, "--reason", "asked", "--by", "ada").returncode == 0
    with seeded_database.admin() as conn, pytest.raises(errors.InsufficientPrivilege, match="append-only"):
        conn.execute(statement)
    assert len(changes(seeded_database)) == 1


def test_the_staff_role_may_read_the_audit_table_and_no_service_role_may_write_it(
    seeded_database: TestDatabase,
) -> None:
    name = an_unlisted_organization(seeded_database)
    assert fleet(seeded_database, "list", name, "--reason", "asked", "--by", "ada").returncode == 0
    with psycopg.connect(seeded_database.dsn(ADMIN_API), autocommit=True) as conn:
        assert conn.execute(
            "SELECT count(*) FROM tenant.organization_listing_changes WHERE changed_by <> %s", (SEED_AUTHOR,)
        ).fetchone() == (1,)
        with pytest.raises(errors.InsufficientPrivilege):
            conn.execute("DELETE FROM tenant.organization_listing_changes")
    with (
        psycopg.connect(seeded_database.dsn(WORKER), autocommit=True) as conn,
        pytest.raises(errors.InsufficientPrivilege),
    ):
        conn.execute("SELECT count(*) FROM tenant.organization_listing_changes")


def test_a_superuser_can_still_rewrite_the_audit_table_with_triggers_off(seeded_database: TestDatabase) -> None:
    """The append-only trigger holds against every role but a superuser (and the owner, who may drop it):
    a superuser turns triggers off with session_replication_role and is trusted (docs/security.md)."""
    name = an_unlisted_organization(seeded_database)
    assert fleet(seeded_database, "list", name, "--reason", "asked", "--by", "ada").returncode == 0
    with seeded_database.admin() as conn:
        conn.execute("SET session_replication_role = replica")
        conn.execute("UPDATE tenant.organization_listing_changes SET reason = 'rewritten' WHERE changed_by = 'ada'")
        conn.execute("SET session_replication_role = DEFAULT")
    assert [c[4] for c in changes(seeded_database)] == ["rewritten"]
