"""Every answer of platform-admin-api says `Cache-Control: private, no-store`, on both protocols.

The header is the staff API's response policy, set once where the service is mounted
(services/fleet/app.py) and applied by the request stack, so no method can forget it: each method is
called with an empty request, which some answer and others refuse (a required field missing), and
without a credential; every answer carries the header, a Connect response as a header and a gRPC one
as initial metadata (or trailing metadata with an error status).
"""

from __future__ import annotations

import grpc
import pytest
from fundament.fleet.v1 import fleet_pb2
from google.protobuf import message_factory

from tests.fixtures.fleet_api import FleetApiUnderTest, auth_headers

SERVICE = fleet_pb2.DESCRIPTOR.services_by_name["FleetService"]
METHODS = sorted(method.name for method in SERVICE.methods)
NO_STORE = "private, no-store"
CREDENTIALS = {"with a token": True, "without one": False}


def _headers(with_token: bool) -> list[tuple[str, str]]:
    return auth_headers() if with_token else []


@pytest.mark.parametrize("with_token", CREDENTIALS.values(), ids=CREDENTIALS)
@pytest.mark.parametrize("method", METHODS)
async def test_every_connect_answer_is_private_and_not_stored(
    shared_fleet_api: FleetApiUnderTest, method: str, with_token: bool
) -> None:
    response = await shared_fleet_api.clients.http.post(
        f"/{SERVICE.full_name}/{method}",
        content=b"{}",
        headers=[("content-type", "application/json"), *_headers(with_token)],
    )
    assert response.status_code in ((200, 400) if with_token else (401,)), response.text
    assert response.headers["cache-control"] == NO_STORE


@pytest.mark.parametrize("with_token", CREDENTIALS.values(), ids=CREDENTIALS)
@pytest.mark.parametrize("method", METHODS)
async def test_every_grpc_answer_is_private_and_not_stored(
    shared_fleet_api: FleetApiUnderTest, method: str, with_token: bool
) -> None:
    descriptor = SERVICE.methods_by_name[method]
    request_class = message_factory.GetMessageClass(descriptor.input_type)
    response_class = message_factory.GetMessageClass(descriptor.output_type)
    call = shared_fleet_api.clients.channel.unary_unary(
        f"/{SERVICE.full_name}/{method}",
        request_serializer=request_class.SerializeToString,
        response_deserializer=response_class.FromString,
    )(request_class(), metadata=tuple(_headers(with_token)), timeout=60)
    try:
        await call
        metadata = await call.initial_metadata()
    except grpc.aio.AioRpcError as e:
        assert e.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.UNAUTHENTICATED), e.details()
        assert with_token or e.code() == grpc.StatusCode.UNAUTHENTICATED
        metadata = e.trailing_metadata()
    assert metadata is not None
    assert dict(metadata)["cache-control"] == NO_STORE
