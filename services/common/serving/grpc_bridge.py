"""The gRPC side of an API, derived from the generated service descriptor: every unary method
of the service served from the one implementation through the request stack."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import grpc
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from connectrpc.request import Headers, RequestContext
from google.protobuf import message_factory
from google.protobuf.descriptor import ServiceDescriptor

from services.common.serving.request_stack import RequestStack

# Connect spells it CANCELED, gRPC CANCELLED; every other name matches.
_GRPC_CODE = {code: getattr(grpc.StatusCode, "CANCELLED" if code is Code.CANCELED else code.name) for code in Code}
_IDEMPOTENCY = {
    0: IdempotencyLevel.UNKNOWN,
    1: IdempotencyLevel.NO_SIDE_EFFECTS,
    2: IdempotencyLevel.IDEMPOTENT,
}


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def grpc_generic_handler(
    impl: object, service: ServiceDescriptor, stack: RequestStack, *, headers_as_trailers: bool = False
) -> grpc.GenericRpcHandler:
    """A grpc.aio handler serving every unary method of `service` from `impl` through `stack`.

    Response headers (`ctx.response_headers`) reach gRPC clients as initial metadata, or as trailing
    metadata with `headers_as_trailers`. The choice is about cost: grpc.aio sends custom initial
    metadata in a batch of its own before the response (one more trip through gRPC core per call),
    while trailing metadata rides in the response's final batch.
    """
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
    for md in service.methods:
        if md.client_streaming or md.server_streaming:
            raise NotImplementedError(f"streaming method {md.full_name} is not supported")
        request_class = message_factory.GetMessageClass(md.input_type)
        response_class = message_factory.GetMessageClass(md.output_type)
        info: MethodInfo[Any, Any] = MethodInfo(
            name=md.name,
            service_name=service.full_name,
            input=request_class,
            output=response_class,
            idempotency_level=_IDEMPOTENCY[md.GetOptions().idempotency_level],
            stream_type=StreamType.UNARY,
        )
        function = getattr(impl, _snake(md.name))
        handlers[md.name] = grpc.unary_unary_rpc_method_handler(
            _grpc_unary(function, info, stack, headers_as_trailers=headers_as_trailers),
            request_deserializer=request_class.FromString,
            response_serializer=response_class.SerializeToString,
        )
    return grpc.method_handlers_generic_handler(service.full_name, handlers)


def _grpc_unary(
    function: Callable[[Any, RequestContext[Any, Any]], Awaitable[Any]],
    info: MethodInfo[Any, Any],
    stack: RequestStack,
    *,
    headers_as_trailers: bool = False,
) -> Callable[[Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[Any]]:
    async def handle(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        remaining = context.time_remaining()
        metadata = context.invocation_metadata() or ()
        ctx: RequestContext[Any, Any] = RequestContext(
            method=info,
            http_method="POST",
            request_headers=Headers([(k, str(v)) for k, v in metadata if not k.endswith("-bin")]),
            timeout_ms=None if remaining is None else int(remaining * 1000),
            client_address=context.peer(),
        )
        try:
            response = await stack.run(ctx, "grpc", lambda: function(request, ctx))
        except ConnectError as e:
            await context.abort(_GRPC_CODE[e.code], e.message, trailing_metadata=tuple(_metadata(ctx.response_headers)))
        if headers_as_trailers:
            context.set_trailing_metadata(tuple(_metadata(ctx.response_headers)))
        else:
            await context.send_initial_metadata(tuple(_metadata(ctx.response_headers)))
        return response

    return handle


def _metadata(headers: Headers) -> Iterator[tuple[str, str]]:
    for key, value in headers.allitems():
        yield key.lower(), value
