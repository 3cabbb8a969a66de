"""`fleet usage`: what the ledger adds up to over a window, from platform-admin-api's ListUsage.

It reads every page over Connect with a short-lived staff token it mints from the shared secret (as
`fleet token` does: `--secret-file`, else JWT_SECRET_FILE or JWT_SECRET), or with the token in
`--token-file`. The page size is chosen so that each page stays within the API's bound on points
(groups x steps). The table goes to stdout; `--csv FILE` (or `-` for stdout) writes the CSV that
fleetctl/usage/export.py describes instead.
"""

from __future__ import annotations

import argparse
import re
import sys
import uuid
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

from connectrpc.errors import ConnectError
from fundament.fleet.v1 import fleet_pb2
from fundament.fleet.v1.fleet_connect import FleetServiceClientSync

from common.clock import utc_now
from common.settings import SettingsError
from fleetctl.token import DEMO_SECRET_FILE, read_secret
from fleetctl.usage import export
from services.common.auth import DcimTokenRules, mint_token

# The demo's platform-admin-api (fleetctl/demo/layout.py).
DEFAULT_API = "http://127.0.0.1:8081"
# ListUsage's bounds (services/fleet/parse/requests.py): the command asks within them.
MAX_PAGE_SIZE = 500
MAX_POINTS = 50_000
TOKEN_TTL = timedelta(minutes=10)
TIMEOUT_MS = 120_000
# The staff member a minted token names: fixed, so the API's logs show every export as this command.
SUBJECT = uuid.uuid5(uuid.NAMESPACE_URL, "fleet-inventory:fleetctl:usage")
AGGREGATES = {
    "organization": fleet_pb2.USAGE_AGGREGATE_ORGANIZATION,
    "cluster": fleet_pb2.USAGE_AGGREGATE_CLUSTER,
    "type": fleet_pb2.USAGE_AGGREGATE_RESOURCE_TYPE,
}
_STEP = re.compile(r"^(\d+)([smhd]?)$")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_time(text: str) -> datetime:
    """An ISO 8601 date or time; without a zone it is UTC."""
    try:
        parsed = datetime.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected a date or time such as 2026-11-01 or 2026-11-01T00:00Z"
        ) from None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def parse_step(text: str) -> int:
    """`1d`, `6h`, `90m`, `3600` (seconds) or `0` (one step spanning the window)."""
    match = _STEP.match(text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a step such as 1d, 6h, 3600 or 0 (one step)")
    return int(match.group(1)) * _UNIT_SECONDS[match.group(2)]


def page_size_for(request: fleet_pb2.ListUsageRequest, now: datetime) -> int:
    """The largest page the API accepts for this window and step."""
    if request.step_seconds == 0:
        return MAX_PAGE_SIZE
    start = request.start.ToDatetime(tzinfo=UTC)
    end = request.end.ToDatetime(tzinfo=UTC) if request.HasField("end") else now
    steps = max(1, -(-(end - start) // timedelta(seconds=request.step_seconds)))
    return max(1, min(MAX_PAGE_SIZE, MAX_POINTS // steps))


def every_group(
    client: FleetServiceClientSync, request: fleet_pb2.ListUsageRequest, headers: Mapping[str, str]
) -> Iterator[fleet_pb2.UsageGroup]:
    """Every group of every page."""
    token = ""
    while True:
        request.page_token = token
        response = client.list_usage(request, headers=headers, timeout_ms=TIMEOUT_MS)
        yield from response.groups
        token = response.next_page_token
        if not token:
            return


def bearer(args: argparse.Namespace, environ: Mapping[str, str]) -> str:
    if args.token_file is not None:
        try:
            return str(args.token_file.read_text().strip())
        except OSError as e:
            raise SettingsError(f"--token-file {args.token_file}: cannot read it ({e.strerror})") from None
    secret = read_secret(args.secret_file, environ)
    return mint_token(DcimTokenRules(secret), subject=SUBJECT, ttl=TOKEN_TTL, now=utc_now(), name="fleet usage")


def build_request(args: argparse.Namespace) -> fleet_pb2.ListUsageRequest:
    request = fleet_pb2.ListUsageRequest(
        step_seconds=args.step,
        aggregate=AGGREGATES[args.by],
        organization_id=args.organization or "",
        cluster_id=args.cluster or "",
        resource_type=args.type or "",
        include_non_billable=args.include_non_billable,
    )
    request.start.FromDatetime(args.start)
    if args.end is not None:
        request.end.FromDatetime(args.end)
    return request


def run(args: argparse.Namespace) -> int:
    environ: Mapping[str, str] = getattr(args, "environ", {})
    try:
        token = bearer(args, environ)
    except SettingsError as e:
        sys.stderr.write(f"fleet usage: {e}\n")
        return 2
    request = build_request(args)
    request.page_size = page_size_for(request, utc_now())
    headers = {"authorization": f"Bearer {token}"}
    try:
        with FleetServiceClientSync(args.api.rstrip("/")) as client:
            rows = list(export.rows_of(every_group(client, request, headers)))
    except ConnectError as e:
        sys.stderr.write(f"fleet usage: {args.api} answered {e.code.name}: {e.message}\n")
        return 1
    if args.csv is None:
        for line in export.table_lines(rows):
            sys.stdout.write(line + "\n")
        return 0
    if str(args.csv) == "-":
        sys.stdout.reconfigure(newline="")  # type: ignore[union-attr]  # stdout is a TextIOWrapper
        export.write_csv(rows, sys.stdout)
        return 0
    with args.csv.open("w", encoding="utf-8", newline="") as out:
        written = export.write_csv(rows, out)
    sys.stderr.write(f"fleet usage: wrote {written} rows to {args.csv}\n")
    return 0


def register(subcommands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subcommands.add_parser(
        "usage",
        help="the ledger added up per organization, cluster or type; a table or FOCUS-style CSV",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Add the ledger up over [--start, --end) in steps (platform-admin-api's ListUsage): per\n"
            "organization, cluster or type, each step's lower and upper bound in hours (the billing rule\n"
            "of docs/staff-api.md) and the peak count. Billable rows only unless --include-non-billable.\n"
            "Without --token-file it mints a 10-minute staff token from --secret-file, else from\n"
            "JWT_SECRET_FILE or JWT_SECRET."
        ),
        epilog=(
            "example, from the project folder while the demo runs (November by organization, as CSV):\n"
            f"  fleet usage --secret-file {DEMO_SECRET_FILE} --start 2026-11-01 --end 2026-12-01 --csv november.csv"
        ),
    )
    parser.add_argument("--start", type=parse_time, required=True, help="window start (UTC unless a zone is given)")
    parser.add_argument("--end", type=parse_time, help="window end, exclusive (default: now)")
    parser.add_argument("--step", type=parse_step, default=0, help="step, e.g. 1d or 6h; 0 (default): one step")
    parser.add_argument("--by", choices=sorted(AGGREGATES), default="organization", help="what to add up by")
    parser.add_argument("--organization", help="only this organization (UUID)")
    parser.add_argument("--cluster", help="only this cluster (UUID)")
    parser.add_argument("--type", help="only this resource type, e.g. kubernetes.node")
    parser.add_argument("--include-non-billable", action="store_true", help="count non-billable rows too")
    parser.add_argument("--csv", type=Path, help="write CSV to this file ('-': stdout) instead of the table")
    parser.add_argument(
        "--api", default=DEFAULT_API, help=f"platform-admin-api's Connect address (default {DEFAULT_API})"
    )
    parser.add_argument("--secret-file", type=Path, help=f"the shared JWT secret (the demo's: {DEMO_SECRET_FILE})")
    parser.add_argument("--token-file", type=Path, help="a staff token to use instead of minting one")
    parser.set_defaults(handler=run)
