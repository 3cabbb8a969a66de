"""`helm test`: one real call to each API the release installed, on both of its protocols.

Run by the test pod in an API image (Python, grpcio), configured by its environment: PUBLIC_HTTP and
PUBLIC_GRPC, STAFF_HTTP and STAFF_GRPC (host:port each), for the APIs that were installed. The public API
must answer the overview; the staff API must refuse a call without a credential as UNAUTHENTICATED, which
proves it is serving and checking tokens without this pod holding one. Exits non-zero naming what failed.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request

import grpc

TIMEOUT_SECONDS = 10
OVERVIEW = "/fundament.overview.v1.OverviewService/GetPlatformOverview"
SUMMARY = "/fundament.fleet.v1.FleetService/GetFleetSummary"


def connect(address: str, path: str) -> tuple[int, dict[str, object]]:
    """A Connect unary call with an empty JSON message: (HTTP status, decoded body)."""
    request = urllib.request.Request(
        f"http://{address}{path}", data=b"{}", headers={"content-type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:  # noqa: S310 (http only)
            return response.status, _decoded(response.read())
    except urllib.error.HTTPError as e:
        return e.code, _decoded(e.read())


def _decoded(body: bytes) -> dict[str, object]:
    try:
        answer = json.loads(body)
    except ValueError:
        return {"unreadable": body[:200].decode(errors="replace")}
    return answer if isinstance(answer, dict) else {"unexpected": answer}


def grpc_call(address: str, path: str) -> tuple[grpc.StatusCode, bytes | None]:
    """A gRPC unary call with an empty message: (status code, response bytes or None)."""
    with grpc.insecure_channel(address) as channel:
        call: grpc.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(
            path, request_serializer=None, response_deserializer=None
        )
        try:
            answer: bytes = call(b"", timeout=TIMEOUT_SECONDS)
            return grpc.StatusCode.OK, answer
        except grpc.RpcError as e:
            return e.code(), None


def main() -> int:
    failures: list[str] = []
    checked = 0
    public_http, public_grpc = os.environ.get("PUBLIC_HTTP"), os.environ.get("PUBLIC_GRPC")
    if public_http:
        status, body = connect(public_http, OVERVIEW)
        # Every answer carries the time the database was read, cached or not.
        if status != 200 or "read" not in body:
            failures.append(f"public API over Connect: HTTP {status} {body}")
        checked += 1
    if public_grpc:
        code, answer = grpc_call(public_grpc, OVERVIEW)
        if code != grpc.StatusCode.OK or not answer:
            failures.append(f"public API over gRPC: {code}")
        checked += 1
    staff_http, staff_grpc = os.environ.get("STAFF_HTTP"), os.environ.get("STAFF_GRPC")
    if staff_http:
        status, body = connect(staff_http, SUMMARY)
        if status != 401 or body.get("code") != "unauthenticated":
            failures.append(f"staff API over Connect: HTTP {status} {body}, expected 401 unauthenticated")
        checked += 1
    if staff_grpc:
        code, _ = grpc_call(staff_grpc, SUMMARY)
        if code != grpc.StatusCode.UNAUTHENTICATED:
            failures.append(f"staff API over gRPC: {code}, expected UNAUTHENTICATED")
        checked += 1
    for failure in failures:
        sys.stderr.write(f"FAILED {failure}\n")
    if not checked:
        sys.stderr.write("FAILED no API to call: set PUBLIC_HTTP, PUBLIC_GRPC, STAFF_HTTP or STAFF_GRPC\n")
        return 1
    sys.stdout.write(f"{checked - len(failures)} of {checked} calls answered as expected\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
