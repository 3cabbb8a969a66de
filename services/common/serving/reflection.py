"""gRPC server reflection under both names: `grpc.reflection.v1` and `grpc.reflection.v1alpha`.

grpcio-reflection ships only the v1alpha service, while grpcurl and buf curl ask for v1 first (and
newer clients may ask for nothing else). The two protocols are the same messages in two packages:
v1 is v1alpha promoted without a change on the wire. So one servicer answers both: v1 is a second
method path whose bytes are read and written with the v1alpha message classes. So that a client can
also describe the v1 service itself, its file (v1alpha's, with the package renamed) is added to the
default descriptor pool once.
"""

from __future__ import annotations

from collections.abc import Sequence

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection_pb2
from grpc_reflection.v1alpha._async import ReflectionServicer

V1ALPHA_PACKAGE = "grpc.reflection.v1alpha"
V1_PACKAGE = "grpc.reflection.v1"
V1_FILE = "grpc/reflection/v1/reflection.proto"
V1ALPHA_SERVICE = f"{V1ALPHA_PACKAGE}.ServerReflection"
V1_SERVICE = f"{V1_PACKAGE}.ServerReflection"
METHOD = "ServerReflectionInfo"


def _register_v1_file(pool: descriptor_pool.DescriptorPool) -> None:
    """Add grpc/reflection/v1/reflection.proto to `pool` (once), built from the v1alpha file."""
    try:
        pool.FindFileByName(V1_FILE)
        return
    except KeyError:
        pass
    proto = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(proto)
    old, new = f".{V1ALPHA_PACKAGE}.", f".{V1_PACKAGE}."
    proto.name = V1_FILE
    proto.package = V1_PACKAGE
    proto.options.Clear()  # v1alpha's options name its own Java/C# packages
    for message in proto.message_type:
        for field in message.field:
            if field.type_name.startswith(old):
                field.type_name = new + field.type_name[len(old) :]
    for service in proto.service:
        for method in service.method:
            method.input_type = new + method.input_type[len(old) :]
            method.output_type = new + method.output_type[len(old) :]
    pool.Add(proto)


def enable_reflection(server: grpc.aio.Server, service_names: Sequence[str]) -> None:
    """Serve reflection for `service_names` (and both reflection services) under v1 and v1alpha."""
    pool = descriptor_pool.Default()
    _register_v1_file(pool)
    servicer = ReflectionServicer((*service_names, V1_SERVICE, V1ALPHA_SERVICE), pool=pool)
    handler = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        tuple(grpc.method_handlers_generic_handler(name, {METHOD: handler}) for name in (V1_SERVICE, V1ALPHA_SERVICE))
    )
