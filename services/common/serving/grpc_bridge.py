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
from google.protobuf.message import Message

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
    impl: object,
    service: ServiceDescriptor,
    stack: RequestStack,
    *,
    headers_as_trailers: bool = False,
    remember_last: bool = False,
) -> grpc.GenericRpcHandler:
    """A grpc.aio handler serving every unary method of `service` from `impl` through `stack`.

    Response headers (`ctx.response_headers`) reach gRPC clients as initial metadata, or as trailing
    metadata with `headers_as_trailers`. The choice is about cost: grpc.aio sends custom initial
    metadata in a batch of its own before the response (one more trip through gRPC core per call),
    while trailing metadata rides in the response's final batch.

    With `remember_last`, each method's serializer keeps the bytes of the last message it encoded and
    answers the same message object again without encoding it: a service that answers one cached,
    never-modified message (the public overview) pays for its encoding once per read, as its Connect
    codecs do (`connect_codecs(remember_last=True)`).
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
            response_serializer=_RememberLast() if remember_last else response_class.SerializeToString,
        )
    return grpc.method_handlers_generic_handler(service.full_name, handlers)


class _RememberLast:
    """A response serializer that encodes each new message once; the same object again costs nothing."""

    __slots__ = ("_encoded", "_message")

    def __init__(self) -> None:
        self._message: Message | None = None
        self._encoded = b""

    def __call__(self, message: Message) -> bytes:
        if message is not self._message:
            # Encoded before it is remembered: a message that fails to encode is never kept.
            self._encoded = message.SerializeToString()
            self._message = message
        return self._encoded


class _GrpcRequestContext(RequestContext[Any, Any]):
    """A Connect request context over a gRPC call, asking gRPC for the peer only if something reads it
    (the log line of a call, which a cached call at DEBUG never writes)."""

    def __init__(self, context: grpc.aio.ServicerContext[Any, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._grpc_context = context

    @property
    def client_address(self) -> str | None:
        peer: str = self._grpc_context.peer()
        return peer


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
        ctx: RequestContext[Any, Any] = _GrpcRequestContext(
            context,
            method=info,
            http_method="POST",
            request_headers=Headers([(k, str(v)) for k, v in metadata if not k.endswith("-bin")]),
            timeout_ms=None if remaining is None else int(remaining * 1000),
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
