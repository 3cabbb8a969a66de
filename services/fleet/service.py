"""FleetApi: the staff fleet view (fleet.v1.FleetService), a thin adapter from requests to queries.

    RequestStack (auth, errors, logs) ──> FleetApi.<rpc>: validate ──> one pool.connection() block
                                                          ──> queries.py ──> convert.py ──> response

Each RPC validates its request (ids, enums, page size and token), runs its queries in one
`async with self._pool.connection()` block (leaving it ends the read-only transaction) and converts
the rows. Errors are raised as `services.common.errors` types and mapped to codes in one place by
the request stack. `now` comes from the injected clock and is passed to SQL too, so staleness and
ages are judged at one instant on both sides.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

import psycopg_pool
from connectrpc.request import RequestContext
from fundament.fleet.v1 import fleet_pb2
from fundament.fleet.v1.fleet_connect import FleetService, FleetServiceASGIApplication
from typing_extensions import override

from services.common.codecs import connect_codecs
from services.common.errors import NotFound
from services.common.paging import PageTokens
from services.common.serving.request_stack import ConnectStackInterceptor, RequestStack
from services.common.singleflight import Outcome, SingleFlightCache
from services.fleet import convert, pages, queries, search, search_convert, trend_queries, trends
from services.fleet.metrics import SUMMARY_CACHE_LOOKUPS
from services.fleet.validate import optional_resource_type, optional_text, optional_uuid, required_uuid

SERVICE = fleet_pb2.DESCRIPTOR.services_by_name["FleetService"]
NO_STORE = "private, no-store"
# Requests are small: filters and a page token.
READ_MAX_BYTES = 64 * 1024
# GetCluster's finding history and GetOrganization's listing changes are cut to this many, newest
# first, so one answer stays bounded however long a cluster flaps; ListDriftFindings pages the rest.
HISTORY_LIMIT = 100


class FleetApi(FleetService):
    """Serves FleetService over both protocols (see services/fleet/main.py)."""

    def __init__(
        self,
        pool: psycopg_pool.AsyncConnectionPool,
        tokens: PageTokens,
        clock: Callable[[], datetime],
        *,
        summary_cache_seconds: float = 0.0,
        summary_read_timeout_seconds: float = 10.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._pool = pool
        self._tokens = tokens
        self._clock = clock
        # The summary is the same for every caller and costs a pass over the whole platform: shared
        # behind a single flight for `summary_cache_seconds` (0: read on every call).
        self._summary: SingleFlightCache[fleet_pb2.GetFleetSummaryResponse] | None = None
        if summary_cache_seconds > 0:
            self._summary = SingleFlightCache(
                self._read_summary,
                ttl_seconds=summary_cache_seconds,
                read_timeout_seconds=summary_read_timeout_seconds,
                clock=monotonic,
                on_lookup=_count_summary_lookup,
                failure_message="the fleet summary is unavailable right now, try again later",
            )

    @property
    def summary_reading(self) -> bool:
        """Whether a shared summary read is running right now (tests wait on it)."""
        return self._summary is not None and self._summary.reading

    @property
    def summary_waiting(self) -> int:
        """Callers waiting for the running summary read right now (tests wait on it)."""
        return 0 if self._summary is None else self._summary.waiting

    async def close(self) -> None:
        """Stop a running shared summary read (at shutdown, before the pool closes)."""
        if self._summary is not None:
            await self._summary.close()

    @override
    async def list_organizations(
        self,
        request: fleet_pb2.ListOrganizationsRequest,
        ctx: RequestContext[fleet_pb2.ListOrganizationsRequest, fleet_pb2.ListOrganizationsResponse],
    ) -> fleet_pb2.ListOrganizationsResponse:
        _no_store(ctx)
        filters = queries.OrganizationFilters(
            pattern=search.name_search("query", request.query),
            order=search_convert.organization_order(request.order),
            descending=request.descending,
        )
        wanted = self._tokens.page_request(
            pages.ORGANIZATIONS[filters.order], filters, size=request.page_size, token=request.page_token
        )
        async with self._pool.connection() as conn:
            rows = await queries.list_organizations(conn, filters=filters, after=wanted.after, limit=wanted.limit)
        page = wanted.page(rows)
        return convert.list_organizations_response(page.items, page.next_page_token)

    @override
    async def list_clusters(
        self,
        request: fleet_pb2.ListClustersRequest,
        ctx: RequestContext[fleet_pb2.ListClustersRequest, fleet_pb2.ListClustersResponse],
    ) -> fleet_pb2.ListClustersResponse:
        _no_store(ctx)
        found = search.cluster_search(request.query)
        filters = queries.ClusterFilters(
            organization_id=optional_uuid("organization_id", request.organization_id),
            statuses=convert.statuses_from_proto(request.statuses),
            needs_attention=request.needs_attention,
            stale=request.stale,
            region=optional_text("region", request.region),
            include_deleted=request.include_deleted,
            either_pattern=found.either,
            cluster_pattern=found.cluster,
            organization_pattern=found.organization,
            order=search_convert.cluster_order(request.order),
            descending=request.descending,
        )
        wanted = self._tokens.page_request(
            pages.CLUSTERS[filters.order], filters, size=request.page_size, token=request.page_token
        )
        now = self._clock()
        async with self._pool.connection() as conn:
            rows = await queries.list_clusters(conn, filters=filters, now=now, after=wanted.after, limit=wanted.limit)
        page = wanted.page(rows)
        return convert.list_clusters_response(page.items, now, page.next_page_token)

    @override
    async def list_drift_findings(
        self,
        request: fleet_pb2.ListDriftFindingsRequest,
        ctx: RequestContext[fleet_pb2.ListDriftFindingsRequest, fleet_pb2.ListDriftFindingsResponse],
    ) -> fleet_pb2.ListDriftFindingsResponse:
        _no_store(ctx)
        filters = queries.FindingFilters(
            kind=convert.kind_from_proto(request.kind),
            organization_id=optional_uuid("organization_id", request.organization_id),
            cluster_id=optional_uuid("cluster_id", request.cluster_id),
            include_resolved=request.include_resolved,
        )
        wanted = self._tokens.page_request(
            pages.DRIFT_FINDINGS, filters, size=request.page_size, token=request.page_token
        )
        async with self._pool.connection() as conn:
            rows = await queries.list_drift_findings(conn, filters=filters, after=wanted.after, limit=wanted.limit)
        page = wanted.page(rows)
        return convert.list_drift_findings_response(page.items, page.next_page_token)

    @override
    async def get_cluster(
        self,
        request: fleet_pb2.GetClusterRequest,
        ctx: RequestContext[fleet_pb2.GetClusterRequest, fleet_pb2.GetClusterResponse],
    ) -> fleet_pb2.GetClusterResponse:
        _no_store(ctx)
        cluster_id = required_uuid("id", request.id)
        now = self._clock()
        async with self._pool.connection() as conn:
            await queries.begin_consistent_read(conn)
            cluster = await queries.get_cluster(conn, cluster_id=cluster_id)
            if cluster is None:
                raise NotFound(f"cluster {cluster_id} not found")
            node_pools = await queries.cluster_node_pools(conn, cluster_id=cluster_id)
            projects = await queries.cluster_projects(conn, cluster_id=cluster_id)
            namespaces = await queries.cluster_namespaces(conn, cluster_id=cluster_id)
            findings = await queries.cluster_open_findings(conn, cluster_id=cluster_id)
            ledger = await queries.cluster_ledger_counts(conn, cluster_id=cluster_id)
            resolved = []
            if request.include_resolved:
                resolved = await queries.cluster_resolved_findings(conn, cluster_id=cluster_id, limit=HISTORY_LIMIT + 1)
        return convert.get_cluster_response(
            cluster,
            node_pools=node_pools,
            projects=projects,
            namespaces=namespaces,
            findings=findings,
            ledger=ledger,
            now=now,
            resolved=resolved[:HISTORY_LIMIT],
            resolved_truncated=len(resolved) > HISTORY_LIMIT,
        )

    @override
    async def get_organization(
        self,
        request: fleet_pb2.GetOrganizationRequest,
        ctx: RequestContext[fleet_pb2.GetOrganizationRequest, fleet_pb2.GetOrganizationResponse],
    ) -> fleet_pb2.GetOrganizationResponse:
        _no_store(ctx)
        organization_id = required_uuid("id", request.id)
        async with self._pool.connection() as conn:
            await queries.begin_consistent_read(conn)
            organization = await queries.get_organization(conn, organization_id=organization_id)
            if organization is None:
                raise NotFound(f"organization {organization_id} not found")
            changes = await queries.organization_listing_changes(
                conn, organization_id=organization_id, limit=HISTORY_LIMIT
            )
        return convert.get_organization_response(organization, changes)

    @override
    async def get_fleet_summary(
        self,
        request: fleet_pb2.GetFleetSummaryRequest,
        ctx: RequestContext[fleet_pb2.GetFleetSummaryRequest, fleet_pb2.GetFleetSummaryResponse],
    ) -> fleet_pb2.GetFleetSummaryResponse:
        _no_store(ctx)
        if self._summary is None:
            return await self._read_summary()
        return (await self._summary.get()).value

    async def _read_summary(self) -> fleet_pb2.GetFleetSummaryResponse:
        """One summary, read in one snapshot at the clock's current instant (its `read` field): the
        totals the inventory loop recorded after its latest round when that is recent (one row), else
        added up now from the cluster listing."""
        now = self._clock()
        async with self._pool.connection() as conn:
            await queries.begin_consistent_read(conn)
            loops = await queries.loop_freshness(conn)
            recorded = await queries.latest_fleet_totals(conn)
            if recorded is not None and _recent(recorded.at, loops, now):
                return convert.fleet_summary_response(
                    recorded.totals(),
                    convert.recorded_by_status(recorded.clusters_by_status),
                    convert.recorded_kinds(recorded.open_findings_by_kind),
                    loops,
                    now,
                    totals_recorded=recorded.at,
                )
            totals = await queries.fleet_totals(conn, now=now)
            status_groups = await queries.fleet_status_inputs(conn)
            kinds = await queries.open_findings_by_kind(conn)
        return convert.fleet_summary_response(totals, convert.clusters_by_status(status_groups), kinds, loops, now)

    @override
    async def list_infrastructure_resources(
        self,
        request: fleet_pb2.ListInfrastructureResourcesRequest,
        ctx: RequestContext[
            fleet_pb2.ListInfrastructureResourcesRequest, fleet_pb2.ListInfrastructureResourcesResponse
        ],
    ) -> fleet_pb2.ListInfrastructureResourcesResponse:
        _no_store(ctx)
        filters = queries.ResourceFilters(
            cluster_id=optional_uuid("cluster_id", request.cluster_id),
            resource_type=optional_resource_type(request.resource_type),
            billable=request.billable if request.HasField("billable") else None,
            include_destroyed=request.include_destroyed,
        )
        wanted = self._tokens.page_request(
            pages.INFRASTRUCTURE_RESOURCES, filters, size=request.page_size, token=request.page_token
        )
        async with self._pool.connection() as conn:
            rows = await queries.list_infrastructure_resources(
                conn, filters=filters, after=wanted.after, limit=wanted.limit
            )
        page = wanted.page(rows)
        return convert.list_infrastructure_resources_response(page.items, page.next_page_token)

    @override
    async def search_namespaces(
        self,
        request: fleet_pb2.SearchNamespacesRequest,
        ctx: RequestContext[fleet_pb2.SearchNamespacesRequest, fleet_pb2.SearchNamespacesResponse],
    ) -> fleet_pb2.SearchNamespacesResponse:
        _no_store(ctx)
        patterns = search.namespace_patterns("query", request.query)
        wanted_search = queries.NamespaceSearch(
            patterns.name, patterns.name_start, patterns.project, patterns.project_names
        )
        wanted = self._tokens.page_request(
            pages.NAMESPACE_SEARCH, wanted_search, size=request.page_size, token=request.page_token
        )
        async with self._pool.connection() as conn:
            rows = await queries.search_namespaces(conn, search=wanted_search, after=wanted.after, limit=wanted.limit)
        page = wanted.page(rows)
        return search_convert.search_namespaces_response(page.items, page.next_page_token)

    @override
    async def get_fleet_trends(
        self,
        request: fleet_pb2.GetFleetTrendsRequest,
        ctx: RequestContext[fleet_pb2.GetFleetTrendsRequest, fleet_pb2.GetFleetTrendsResponse],
    ) -> fleet_pb2.GetFleetTrendsResponse:
        _no_store(ctx)
        wanted = trends.trend_request(request, self._clock())
        async with self._pool.connection() as conn:
            rows = await trend_queries.fleet_trends(conn, wanted)
        return trends.trends_response(rows)


def _recent(recorded: datetime, loops: Sequence[queries.LoopRow], now: datetime) -> bool:
    """Whether totals recorded at `recorded` may stand for now: within three inventory intervals, the
    age at which a snapshot turns stale (a stopped collector's last totals are not shown as current)."""
    interval = next((loop.interval_seconds for loop in loops if loop.loop == "inventory"), None)
    if interval is None:
        return False
    return timedelta(0) <= now - recorded <= timedelta(seconds=queries.STALE_INTERVALS * interval)


def _count_summary_lookup(outcome: Outcome) -> None:
    SUMMARY_CACHE_LOOKUPS.labels(outcome.value).inc()


def _no_store(ctx: RequestContext[Any, Any]) -> None:
    # Staff data behind a credential: no shared or browser cache may keep it, GET or not.
    ctx.response_headers["cache-control"] = NO_STORE


def connect_app(service: FleetApi, stack: RequestStack) -> FleetServiceASGIApplication:
    """The Connect side of the service: binary and compact JSON, POST and GET, through the shared stack."""
    return FleetServiceASGIApplication(
        service, interceptors=[ConnectStackInterceptor(stack)], codecs=connect_codecs(), read_max_bytes=READ_MAX_BYTES
    )
