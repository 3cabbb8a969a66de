"""`fleet token`: mint a DCIM-style token for local use (the demo, tests, grpcurl by hand).

It signs with the secret it is given (`--secret-file`, else `JWT_SECRET_FILE` or `JWT_SECRET` from the
environment, the same variables platform-admin-api reads), so it is never a way in without that
secret. The token goes to stdout alone, ready for `TOKEN=$(fleet token ...)`. The demo writes its
secret to `.fleet/demo/jwt-secret` and prints that path in its banner.
"""

from __future__ import annotations

import argparse
import re
import sys
import uuid
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path

from common.clock import utc_now
from common.settings import SettingsError, env_secret
from services.common.auth import MIN_SECRET_BYTES, DcimTokenRules, canonical_uuid, mint_token

# DCIM's own tokens live 24 hours; a local token gets no more.
MAX_TTL = timedelta(hours=24)
_DURATION = re.compile(r"^(\d+)([smhd]?)$")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
# Where `fleet demo` writes the secret platform-admin-api checks tokens with, from the project folder.
DEMO_SECRET_FILE = ".fleet/demo/jwt-secret"  # noqa: S105 - the path of a secret, not one
EXAMPLE_SUBJECT = "6f1c0d2e-0000-4000-8000-000000000001"


def parse_ttl(text: str) -> timedelta:
    """`90s`, `30m`, `1h`, `1d` or plain seconds; positive and at most 24 hours."""
    match = _DURATION.match(text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a duration such as 90s, 30m or 1h")
    ttl = timedelta(seconds=int(match.group(1)) * _UNIT_SECONDS[match.group(2)])
    if ttl <= timedelta(0) or ttl > MAX_TTL:
        raise argparse.ArgumentTypeError(f"{text!r}: must be more than 0 and at most 24h")
    return ttl


def parse_subject(text: str) -> uuid.UUID:
    canonical = canonical_uuid(text)
    if canonical is None:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a UUID such as {EXAMPLE_SUBJECT}")
    return uuid.UUID(canonical)


def read_secret(secret_file: Path | None, env: Mapping[str, str]) -> bytes:
    """The signing secret from `--secret-file`, else from JWT_SECRET_FILE / JWT_SECRET."""
    if secret_file is not None:
        try:
            secret = secret_file.read_text().strip()
        except OSError as e:
            raise SettingsError(f"--secret-file {secret_file}: cannot read it ({e.strerror})") from None
    else:
        found = env_secret(env, "JWT_SECRET")
        if found is None:
            raise SettingsError(
                f"no secret: pass --secret-file FILE (the demo's is {DEMO_SECRET_FILE}) "
                "or set JWT_SECRET / JWT_SECRET_FILE"
            )
        secret = found
    raw = secret.encode()
    if len(raw) < MIN_SECRET_BYTES:
        raise SettingsError(f"the secret must be at least {MIN_SECRET_BYTES} bytes (got {len(raw)})")
    return raw


def run(args: argparse.Namespace) -> int:
    environ: Mapping[str, str] = getattr(args, "environ", {})
    try:
        secret = read_secret(args.secret_file, environ)
    except SettingsError as e:
        sys.stderr.write(f"fleet token: {e}\n")
        return 2
    token = mint_token(DcimTokenRules(secret), subject=args.subject, ttl=args.ttl, now=utc_now(), name=args.name)
    sys.stdout.write(token + "\n")
    return 0


def register(subcommands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subcommands.add_parser(
        "token",
        help="mint a DCIM-style token for platform-admin-api (local use)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Print a DCIM-style token (HS256, issuer dcim-authn-api, audience dcim-user) signed with the\n"
            "given secret. Without --secret-file the secret comes from JWT_SECRET_FILE or JWT_SECRET.\n"
            f"While `make demo` runs, its secret is {DEMO_SECRET_FILE} (its banner prints the full path)."
        ),
        epilog=(
            "example, from the project folder while the demo runs:\n"
            f"  fleet token --secret-file {DEMO_SECRET_FILE} --subject {EXAMPLE_SUBJECT} --ttl 1h"
        ),
    )
    parser.add_argument(
        "--secret-file",
        type=Path,
        help=f"file holding the shared JWT secret (the demo's: {DEMO_SECRET_FILE})",
    )
    parser.add_argument("--subject", type=parse_subject, required=True, help="the staff member's id (UUID)")
    parser.add_argument("--ttl", type=parse_ttl, default=timedelta(hours=1), help="lifetime, e.g. 30m or 1h")
    parser.add_argument("--name", help="display name carried in the token's name claim")
    parser.set_defaults(handler=run)
