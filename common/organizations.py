"""The system organization: seeded by the migrations, owns first-party things, and is no tenant.

Its id is fixed (the SQL side names it once too, as `tenant.system_organization_id()`); every
cross-organization count or list leaves it out.
"""

from __future__ import annotations

from uuid import UUID

SYSTEM_ORGANIZATION_ID = UUID("00000000-0000-0000-0000-000000000001")
