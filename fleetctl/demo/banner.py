"""The demo's banner: where everything is, and commands that work as printed from any folder.

`tests/fleetctl/test_demo_commands.py` runs every command under the banner's `try` heading against a running
demo, so what it prints cannot go stale.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from common.settings import LOCAL_DATABASE_NAME
from fleet_description.model import Fleet
from fleetctl.demo.layout import HOST, STAFF_SUBJECT, TRY_HEADING, DemoPorts, demo_files


def example_cluster_id(fleet: Fleet | None) -> str:
    """A ready cluster of the demo fleet, for the GetCluster example."""
    for cluster in fleet.clusters if fleet else ():
        if cluster.deleted is None and cluster.sync is not None and cluster.sync.shoot_status == "ready":
            return str(cluster.id)
    return "<cluster id>"


def example_commands(p: DemoPorts, state_dir: Path, fleet: Fleet | None) -> list[str]:
    """Commands that work as printed, from any folder, while the demo runs (a test runs each one)."""
    files = {name: shlex.quote(str(path)) for name, path in demo_files(state_dir).items()}
    tools = shlex.quote(str(Path(sys.executable).parent))
    fleet_rpc = "fundament.fleet.v1.FleetService"
    grpc_admin = f"{HOST}:{p.admin_grpc}"
    auth = '-H "authorization: Bearer $TOKEN"'
    # --fail-with-body: an HTTP error is a failed command, not a quiet exit 0 with an error body.
    curl = "curl -sS --fail-with-body"
    cluster = example_cluster_id(fleet)
    return [
        f"export TOKEN=$(cat {files['staff token']}) PATH={tools}:$PATH",
        f"grpcurl -plaintext {HOST}:{p.public_grpc} fundament.overview.v1.OverviewService/GetPlatformOverview",
        f"{curl} -i 'http://{HOST}:{p.public_http}/fundament.overview.v1.OverviewService/GetPlatformOverview"
        "?encoding=json&message=%7B%7D'",
        f"grpcurl -plaintext {auth} {grpc_admin} {fleet_rpc}/GetFleetSummary",
        f"grpcurl -plaintext {auth} -d '{{\"page_size\": 5}}' {grpc_admin} {fleet_rpc}/ListOrganizations",
        f'grpcurl -plaintext {auth} -d \'{{"page_size": 5, "needs_attention": true}}\' {grpc_admin} '
        f"{fleet_rpc}/ListClusters",
        f'grpcurl -plaintext {auth} -d \'{{"id": "{cluster}"}}\' {grpc_admin} {fleet_rpc}/GetCluster',
        f"grpcurl -plaintext {auth} -d '{{\"page_size\": 20}}' {grpc_admin} {fleet_rpc}/ListDriftFindings",
        f'grpcurl -plaintext {auth} -d \'{{"page_size": 5, "billable": true}}\' {grpc_admin} '
        f"{fleet_rpc}/ListInfrastructureResources",
        f"buf curl --protocol grpc --http2-prior-knowledge {auth} -d '{{}}' "
        f"http://{grpc_admin}/{fleet_rpc}/GetFleetSummary",
        f"{curl} {auth} -H 'content-type: application/json' -d '{{\"page_size\": 3}}' "
        f"http://{HOST}:{p.admin_http}/{fleet_rpc}/ListClusters",
        f"fleet token --secret-file {files['JWT secret']} --subject {STAFF_SUBJECT} --ttl 1h --name 'demo staff'",
        f"kubectl --kubeconfig {files['garden kubeconfig']} get shoots --all-namespaces",
        f"{curl} --cacert {files['simulator CA']} "
        f'-H "authorization: Bearer $(cat {files["simulator control token"]})" https://{HOST}:{p.sim}/_sim/state',
    ]


def banner(p: DemoPorts, state_dir: Path, token: str, fleet: Fleet | None, log_dir: Path) -> str:
    """What the demo prints once everything answers."""
    files = demo_files(state_dir)
    width = max(len(name) for name in files)
    lines = [
        "",
        "fleet inventory demo is running (Ctrl-C stops everything it started)",
        "",
        "pages",
        f"  console /platform (public):  http://{HOST}:{p.console}/platform",
        f"  DCIM /platform (staff):      http://{HOST}:{p.dcim}/platform#token={token}",
        "",
        "APIs and the simulated garden",
        f"  platform-public-api  Connect http://{HOST}:{p.public_http}   gRPC {HOST}:{p.public_grpc}",
        f"  platform-admin-api   Connect http://{HOST}:{p.admin_http}   gRPC {HOST}:{p.admin_grpc}",
        f"  fleet-sim            https://{HOST}:{p.sim} (the garden's API server; shoots under /shoots/)",
        f"  health and metrics   http://{HOST}:{p.public_http}/metrics  http://{HOST}:{p.admin_http}/metrics"
        f"  http://{HOST}:{p.inventory_health}/metrics  http://{HOST}:{p.reconcile_health}/metrics",
        f"  database             postgresql://postgres@{HOST}:{p.database}/{LOCAL_DATABASE_NAME}  (superuser)",
        "",
        f"staff token (12 h, also in {files['staff token']}):",
        f"  {token}",
        "",
        "files (written again on every start)",
        *(f"  {name:<{width}}  {path}" for name, path in files.items()),
        f"  {'logs':<{width}}  {log_dir}/",
        "",
        f"{TRY_HEADING} (each line works as printed, from any folder):",
        *(f"  {command}" for command in example_commands(p, state_dir, fleet)),
        "",
    ]
    return "\n".join(lines)
