"""Every change of organizations.listed_publicly leaves a record, whoever makes it and however.

FUN-23 leaves the flag to an operator; one following it with plain SQL is recorded as surely as
`fleet org` is (which names its author and reason for the same row). The record keeps the
organization's name, so it reads without the organization row.
"""

from __future__ import annotations

from uuid import uuid4

import psycopg
import pytest

from tests.fixtures.postgres import TestDatabase


def changes(conn: psycopg.Connection[tuple[object, ...]], organization: object) -> list[tuple[object, ...]]:
    return conn.execute(
        "SELECT listed_publicly, previously_listed, changed_by, reason, organization_name"
        " FROM tenant.organization_listing_changes WHERE organization_id = %s ORDER BY changed, listed_publicly",
        (organization,),
    ).fetchall()


def test_plain_sql_is_recorded_with_the_session_user(database: TestDatabase) -> None:
    organization = uuid4()
    with database.admin() as conn:
        conn.execute("INSERT INTO tenant.organizations (id, name, alias) VALUES (%s, 'acme', 'Acme')", (organization,))
        assert changes(conn, organization) == []
        conn.execute("UPDATE tenant.organizations SET listed_publicly = true WHERE id = %s", (organization,))
        conn.execute("UPDATE tenant.organizations SET alias = 'Acme Corp' WHERE id = %s", (organization,))
        user = conn.execute("SELECT session_user").fetchone()
        assert user is not None
        assert changes(conn, organization) == [
            (True, False, user[0], "changed outside `fleet org`: no reason given", "acme"),
        ]


def test_an_organization_created_listed_is_recorded(database: TestDatabase) -> None:
    organization = uuid4()
    with database.admin() as conn:
        conn.execute(
            "INSERT INTO tenant.organizations (id, name, alias, listed_publicly) VALUES (%s, 'globex', 'G', true)",
            (organization,),
        )
        assert [row[:2] for row in changes(conn, organization)] == [(True, False)]


def test_the_author_and_reason_of_the_transaction_are_recorded(database: TestDatabase) -> None:
    organization = uuid4()
    with database.admin() as conn:
        conn.execute("INSERT INTO tenant.organizations (id, name, alias) VALUES (%s, 'initech', 'I')", (organization,))
        with conn.transaction():
            conn.execute("SELECT set_config('fleet.listing_changed_by', 'ops-jane', true)")
            conn.execute("SELECT set_config('fleet.listing_reason', 'ticket 4711', true)")
            conn.execute("UPDATE tenant.organizations SET listed_publicly = true WHERE id = %s", (organization,))
        # The settings were the transaction's: the next change outside it names nobody.
        conn.execute("UPDATE tenant.organizations SET listed_publicly = false WHERE id = %s", (organization,))
        recorded = changes(conn, organization)
    assert recorded[0][:4] == (True, False, "ops-jane", "ticket 4711")
    assert recorded[1][3] == "changed outside `fleet org`: no reason given"


def test_the_record_is_append_only(database: TestDatabase) -> None:
    organization = uuid4()
    with database.admin() as conn:
        conn.execute(
            "INSERT INTO tenant.organizations (id, name, alias, listed_publicly) VALUES (%s, 'hooli', 'H', true)",
            (organization,),
        )
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
            conn.execute("DELETE FROM tenant.organization_listing_changes WHERE organization_id = %s", (organization,))
