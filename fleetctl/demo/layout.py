"""Where the demo puts things: its address, its ports, its staff subject and its files.

Shared by the demo (which starts everything there), its banner (which prints it) and the soak
(which runs the same system on free ports).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path

from common.settings import LOCAL_DATABASE_PORT
from sim.control.statedir import CA_FILE, CONTROL_TOKEN_FILE, GARDEN_KUBECONFIG

HOST = "127.0.0.1"
STAFF_SUBJECT = uuid.UUID("6f1c0d2e-0000-4000-8000-00000000d1c1")
# The banner's heading above its example commands, one a line, ended by an empty line.
TRY_HEADING = "try"


@dataclass(frozen=True)
class DemoPorts:
    database: int = LOCAL_DATABASE_PORT
    public_http: int = 8080
    public_grpc: int = 9090
    admin_http: int = 8081
    admin_grpc: int = 9091
    console: int = 8000
    dcim: int = 8001
    sim: int = 8443
    inventory_health: int = 8097
    reconcile_health: int = 8098

    def all(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


JWT_SECRET_FILE = "jwt-secret"  # noqa: S105 - a file name, not a secret
STAFF_TOKEN_FILE = "staff-token"  # noqa: S105 - a file name, not a token
SIM_DIR = "sim"


def demo_files(state_dir: Path) -> dict[str, Path]:
    """What the demo writes for people and their tools, by what it is."""
    sim_dir = state_dir / SIM_DIR
    return {
        "staff token": state_dir / STAFF_TOKEN_FILE,
        "JWT secret": state_dir / JWT_SECRET_FILE,
        "garden kubeconfig": sim_dir / GARDEN_KUBECONFIG,
        "simulator CA": sim_dir / CA_FILE,
        "simulator control token": sim_dir / CONTROL_TOKEN_FILE,
    }
