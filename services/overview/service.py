"""`overview.v1.OverviewService`: the thin adapter between both protocols and the shared answer.

    Connect (GET/POST) ─┐
                        ├─> RequestStack ─> OverviewApi.get_platform_overview ─> SingleFlightCache ─> OverviewReader
    gRPC               ─┘

The RPC takes no input and needs no credential (any `Authorization` header is ignored: the stack has
no authenticator). It answers the cached overview and says how long it stays fresh in
`Cache-Control: public, max-age=N`, which reaches Connect clients as a header (GET and POST alike)
and gRPC clients as trailing metadata.
"""

from __future__ import annotations

from connectrpc.request import RequestContext
from fundament.overview.v1 import overview_pb2
from fundament.overview.v1.overview_connect import OverviewService, OverviewServiceASGIApplication
from typing_extensions import override

from services.common.codecs import connect_codecs
from services.common.serving.request_stack import ConnectStackInterceptor, RequestStack
from services.common.singleflight import ReadFailed, SingleFlightCache

SERVICE = overview_pb2.DESCRIPTOR.services_by_name["OverviewService"]

# Sent on failures, so no cache on the way keeps an error in place of the answer.
NO_STORE = "no-store"


def cache_control(max_age_seconds: int) -> str:
    return f"public, max-age={max_age_seconds}"


class OverviewApi(OverviewService):
    """Answers GetPlatformOverview from the single-flight cache."""

    def __init__(self, cache: SingleFlightCache[overview_pb2.GetPlatformOverviewResponse]) -> None:
        self._cache = cache

    @property
    def cache(self) -> SingleFlightCache[overview_pb2.GetPlatformOverviewResponse]:
        return self._cache

    @override
    async def get_platform_overview(
        self,
        request: overview_pb2.GetPlatformOverviewRequest,
        ctx: RequestContext[overview_pb2.GetPlatformOverviewRequest, overview_pb2.GetPlatformOverviewResponse],
    ) -> overview_pb2.GetPlatformOverviewResponse:
        try:
            answer = await self._cache.get()
        except ReadFailed:  # UNAVAILABLE, and nothing on the way may keep it
            ctx.response_headers["cache-control"] = NO_STORE
            raise
        ctx.response_headers["cache-control"] = cache_control(answer.max_age_seconds)
        return answer.value


def connect_app(api: OverviewApi, stack: RequestStack) -> OverviewServiceASGIApplication:
    """The Connect side of the service: binary and compact JSON, POST and GET, through the shared stack.

    The codecs remember the last message they encoded: every call answers the same cached message
    object, so it is serialized once per read instead of once per call.
    """
    return OverviewServiceASGIApplication(
        api,
        interceptors=[ConnectStackInterceptor(stack)],
        codecs=connect_codecs(remember_last=True),
        read_max_bytes=64 * 1024,
    )
