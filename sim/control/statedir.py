"""The state dir: the files a running simulator leaves so the demo, benchmarks and people find it.

| file | what |
|---|---|
| `garden-kubeconfig.yaml` (0600) | the garden's address, CA and token |
| `ca.crt` | the CA generated at start |
| `control-token` (0600) | the token of the control endpoint `/_sim` |
| `sim.json` | address, pid, the file names above and the number of shoots; written last |

The credentials are on disk before the port listens; `sim.json` is renamed into place once it
listens, so whoever finds `sim.json` finds everything else ready.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import orjson

GARDEN_KUBECONFIG = "garden-kubeconfig.yaml"
CA_FILE = "ca.crt"
CONTROL_TOKEN_FILE = "control-token"  # noqa: S105 - a file name, not a secret
STATE_FILE = "sim.json"


@dataclass(frozen=True, slots=True)
class SimState:
    """What `sim.json` says about a listening simulator."""

    url: str
    pid: int
    garden_kubeconfig: Path
    control_token_file: Path
    ca_file: Path
    shoots: int

    @classmethod
    def of(cls, state_dir: Path, *, url: str, pid: int, shoots: int) -> SimState:
        return cls(url, pid, state_dir / GARDEN_KUBECONFIG, state_dir / CONTROL_TOKEN_FILE, state_dir / CA_FILE, shoots)

    @classmethod
    def read(cls, state_dir: Path) -> SimState:
        """The state of the simulator writing to `state_dir`; FileNotFoundError while it is not listening."""
        state = orjson.loads((state_dir / STATE_FILE).read_bytes())
        return cls(
            url=state["url"],
            pid=state["pid"],
            garden_kubeconfig=Path(state["garden_kubeconfig"]),
            control_token_file=Path(state["control_token_file"]),
            ca_file=Path(state["ca_file"]),
            shoots=state["shoots"],
        )

    def write(self, state_dir: Path) -> None:
        """Write `sim.json` whole: to a partial file first, then renamed into place."""
        state = {
            "url": self.url,
            "pid": self.pid,
            "garden_kubeconfig": str(self.garden_kubeconfig),
            "control_token_file": str(self.control_token_file),
            "ca_file": str(self.ca_file),
            "shoots": self.shoots,
        }
        partial = state_dir / f"{STATE_FILE}.partial"
        partial.write_bytes(orjson.dumps(state, option=orjson.OPT_INDENT_2))
        partial.replace(state_dir / STATE_FILE)

    def control_token(self) -> str:
        return self.control_token_file.read_text().strip()
