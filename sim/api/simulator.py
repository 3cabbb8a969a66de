"""The simulator's state in one place: the world, clock, tokens, faults, request log, monitoring and TLS.

The HTTP layer (`sim/api/server.py` and the API modules) reads it to answer requests; the control API
(`sim/control/actions.py`) changes it. It knows its own address once the server is bound.
"""

from __future__ import annotations

from dataclasses import dataclass

from fleet_description.model import Fleet
from sim.api.credentials.kubeconfig import Json, kubeconfig
from sim.api.credentials.tls import TlsMaterial, generate_tls
from sim.api.credentials.tokens import Tokens
from sim.api.faults.injected import FaultTable
from sim.api.machinery.listcache import ListCache
from sim.api.prometheus.monitoring import MonitoringState
from sim.api.requestlog import RequestLog
from sim.world.clock import Clock
from sim.world.generate import DEFAULT_PROFILE, ContentProfile
from sim.world.world import World

# gardener-apiserver's default for --shoot-admin-kubeconfig-max-expiration (24 h).
MAX_KUBECONFIG_SECONDS = 24 * 3600
MIN_KUBECONFIG_SECONDS = 600
DEFAULT_KUBECONFIG_SECONDS = 3600


@dataclass(frozen=True, slots=True)
class SimSettings:
    host: str = "127.0.0.1"
    """Address to listen on; loopback unless told otherwise."""
    port: int = 0
    """TCP port; 0 picks a free one."""
    latency_seconds: float = 0.0
    """Added to every API answer (the demo uses it to make the collector's concurrency visible)."""
    continue_ttl_seconds: float = 300.0
    """How long a continue token stays valid (etcd compacts every five minutes)."""
    chunk_bytes: int = 256 * 1024
    """Size of the pieces a long list is streamed in."""
    list_cache_bytes: int = 64 * 1024 * 1024
    """Bound of the encoded shoot lists kept between requests (`sim/api/machinery/listcache.py`); 0 keeps none."""


class Simulator:
    def __init__(
        self,
        fleet: Fleet,
        settings: SimSettings | None = None,
        *,
        profile: ContentProfile = DEFAULT_PROFILE,
        tls: TlsMaterial | None = None,
    ) -> None:
        self.settings = settings or SimSettings()
        self.clock = Clock()
        self.world = World(fleet, self.clock, profile=profile)
        self.tokens = Tokens()
        self.faults = FaultTable()
        self.requests = RequestLog()
        self.list_cache = ListCache(self.settings.list_cache_bytes)
        self.monitoring = MonitoringState()
        self.tls = tls or generate_tls((self.settings.host,))
        self.base_url = ""  # known once bound

    def shoot_url(self, key: str) -> str:
        return f"{self.base_url}/shoots/{key}"

    def prometheus_url(self, key: str) -> str:
        """The `prometheus-url` of the shoot's monitoring secret: fleet-sim's own, unless a test set another."""
        return self.monitoring.urls.get(key) or f"{self.base_url}/prometheus/{key}"

    def metrics_url(self, key: str) -> str:
        """Where the shoot's kube-state-metrics exposition is served, for a real Prometheus to scrape."""
        return f"{self.base_url}/kube-state-metrics/{key}/metrics"

    def garden_kubeconfig(self) -> Json:
        return kubeconfig(
            name="garden", server=self.base_url, ca_pem=self.tls.ca_pem, token=self.tokens.garden_token, user="garden"
        )

    def reset(self) -> None:
        """The generated world, no faults, no minted credentials, an empty log, the real time."""
        self.faults.clear()
        self.monitoring.reset()
        self.world.reset()
        self.list_cache.clear()
        self.tokens.forget_minted()
        self.requests.clear()
        self.clock.reset()
