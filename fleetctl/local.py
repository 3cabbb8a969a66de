"""Where the local database of `fleet db up` is: what the commands that default to it need, and no more.

Kept apart from fleetctl.db so that a command defaulting to the local database (`fleet org`, the status
poller) does not load the database tooling (the embedded server, migrations, the seed) to know its DSN.
"""

from __future__ import annotations

from pathlib import Path

from common.settings import LOCAL_DATABASE_HOST, LOCAL_DATABASE_NAME, LOCAL_DATABASE_PORT

PROJECT_DIR = Path(__file__).resolve().parents[1]
LOCAL_ADMIN_DSN = f"postgresql://postgres@{LOCAL_DATABASE_HOST}:{LOCAL_DATABASE_PORT}/{LOCAL_DATABASE_NAME}"
