"""The system organization: Fundament seeds it in every environment; it owns first-party things and is
no tenant.

Its id is Fundament's (its seed `0100-system-org.sql`). The SQL side names it once, as
`tenant.system_organization_id()` (db/migrations/0001_baseline.sql), and a test holds this constant
equal to that function; every cross-organization count or list leaves it out.
"""

from __future__ import annotations

from uuid import UUID

SYSTEM_ORGANIZATION_ID = UUID("019b4000-0000-7000-8000-000000000000")
SYSTEM_ORGANIZATION_NAME = "system"
