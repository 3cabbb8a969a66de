"""FleetApi: the staff fleet view (fleet.v1.FleetService), a thin adapter from requests to queries.

    RequestStack (auth, errors, logs, Cache-Control) ──> FleetApi.<rpc>:
        parse/requests.py ──> pages.py ──> one pool.connection() block of queries/<entity>.py ──> convert/<entity>.py

Each RPC is filed by layer, one module per step (docs/architecture.md, 'The staff API is filed by
layer, its queries and messages by entity'): its request is parsed into the inputs of its queries
in `parse/requests.py`, a paged list's page is asked of the page tokens by its spec in `pages.py`, its
queries (per entity, in `queries/`) run in one `async with self._pool.connection()` block (leaving it
ends the read-only transaction) and its answer is built from the rows per entity in `convert/`.
Errors are raised as `services.common.errors` types and mapped to codes in one place by the request
stack, which also sets the headers every answer carries (services/fleet/app.py). `now` comes from the
injected clock and is passed to SQL too, so staleness and ages are judged at one instant on both
sides.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime

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
from services.fleet import convert, pages, queries
from services.fleet.metrics import SUMMARY_CACHE_LOOKUPS
from services.fleet.parse import requests

SERVICE = fleet_pb2.DESCRIPTOR.services_by_name["FleetService"]
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
        filters = requests.organization_filters(request)
        wanted = self._tokens.page_request(
            pages.ORGANIZATIONS[filters.order], filters, size=request.page_size, token=request.page_token
        )
        async with self._pool.connection() as conn:
            rows = await queries.organizations.list_organizations(
                conn, filters=filters, after=wanted.after, limit=wanted.limit
            )
        page = wanted.page(rows)
        return convert.organizations.list_organizations_response(page.items, page.next_page_token)

    @override
    async def list_clusters(
        self,
        request: fleet_pb2.ListClustersRequest,
        ctx: RequestContext[fleet_pb2.ListClustersRequest, fleet_pb2.ListClustersResponse],
    ) -> fleet_pb2.ListClustersResponse:
        filters = requests.cluster_filters(request)
        now = self._clock()
        if filters.order is queries.clusters.ClusterOrder.OBSERVED and filters.descending:
            walk = self._tokens.page_request(
                pages.CLUSTERS_BY_OBSERVED_WALK, filters, size=request.page_size, token=request.page_token
            )
            async with self._pool.connection() as conn:
                walked = await queries.clusters.walk_by_observed(
                    conn, filters=filters, now=now, after=walk.after, limit=walk.limit
                )
            walked_page = walk.page(walked)
            return convert.clusters.list_clusters_response(
                [w.row for w in walked_page.items], now, walked_page.next_page_token
            )
        wanted = self._tokens.page_request(
            pages.CLUSTERS[filters.order], filters, size=request.page_size, token=request.page_token
        )
        async with self._pool.connection() as conn:
            rows = await queries.clusters.list_clusters(
                conn, filters=filters, now=now, after=wanted.after, limit=wanted.limit
            )
        page = wanted.page(rows)
        return convert.clusters.list_clusters_response(page.items, now, page.next_page_token)

    @override
    async def list_drift_findings(
        self,
        request: fleet_pb2.ListDriftFindingsRequest,
        ctx: RequestContext[fleet_pb2.ListDriftFindingsRequest, fleet_pb2.ListDriftFindingsResponse],
    ) -> fleet_pb2.ListDriftFindingsResponse:
        filters = requests.finding_filters(request)
        wanted = self._tokens.page_request(
            pages.DRIFT_FINDINGS, filters, size=request.page_size, token=request.page_token
        )
        async with self._pool.connection() as conn:
            rows = await queries.findings.list_drift_findings(
                conn, filters=filters, after=wanted.after, limit=wanted.limit
            )
        page = wanted.page(rows)
        return convert.findings.list_drift_findings_response(page.items, page.next_page_token)

    @override
    async def list_finding_history(
        self,
        request: fleet_pb2.ListFindingHistoryRequest,
        ctx: RequestContext[fleet_pb2.ListFindingHistoryRequest, fleet_pb2.ListFindingHistoryResponse],
    ) -> fleet_pb2.ListFindingHistoryResponse:
        filters = requests.history_filters(request)
        wanted = self._tokens.page_request(
            pages.FINDING_HISTORY, filters, size=request.page_size, token=request.page_token
        )
        now = self._clock()
        async with self._pool.connection() as conn:
            rows = await queries.findings.list_finding_history(
                conn, filters=filters, after=wanted.after, now=now, limit=wanted.limit
            )
        page = wanted.page(rows)
        return convert.findings.list_finding_history_response(page.items, page.next_page_token)

    @override
    async def get_cluster(
        self,
        request: fleet_pb2.GetClusterRequest,
        ctx: RequestContext[fleet_pb2.GetClusterRequest, fleet_pb2.GetClusterResponse],
    ) -> fleet_pb2.GetClusterResponse:
        wanted = requests.cluster_detail(request)
        cluster_id = wanted.id
        now = self._clock()
        async with self._pool.connection() as conn:
            await queries.base.begin_consistent_read(conn)
            cluster = await queries.clusters.get_cluster(conn, cluster_id=cluster_id)
            if cluster is None:
                raise NotFound(f"cluster {cluster_id} not found")
            node_pools = await queries.clusters.cluster_node_pools(conn, cluster_id=cluster_id)
            projects = await queries.clusters.cluster_projects(conn, cluster_id=cluster_id)
            namespaces = await queries.clusters.cluster_namespaces(conn, cluster_id=cluster_id)
            findings = await queries.findings.cluster_open_findings(conn, cluster_id=cluster_id)
            ledger = await queries.ledger.cluster_ledger_counts(conn, cluster_id=cluster_id)
            resolved = []
            if wanted.include_resolved:
                resolved = await queries.findings.cluster_resolved_findings(
                    conn, cluster_id=cluster_id, limit=HISTORY_LIMIT + 1
                )
        return convert.clusters.get_cluster_response(
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
        organization_id = requests.organization_id(request)
        async with self._pool.connection() as conn:
            await queries.base.begin_consistent_read(conn)
            organization = await queries.organizations.get_organization(conn, organization_id=organization_id)
            if organization is None:
                raise NotFound(f"organization {organization_id} not found")
            changes = await queries.organizations.organization_listing_changes(
                conn, organization_id=organization_id, limit=HISTORY_LIMIT
            )
        return convert.organizations.get_organization_response(organization, changes)

    @override
    async def get_fleet_summary(
        self,
        request: fleet_pb2.GetFleetSummaryRequest,
        ctx: RequestContext[fleet_pb2.GetFleetSummaryRequest, fleet_pb2.GetFleetSummaryResponse],
    ) -> fleet_pb2.GetFleetSummaryResponse:
        if self._summary is None:
            return await self._read_summary()
        return (await self._summary.get()).value

    async def _read_summary(self) -> fleet_pb2.GetFleetSummaryResponse:
        """One summary, read in one snapshot at the clock's current instant (its `read` field): the
        totals the inventory loop recorded after its latest round when that is recent (one row), else
        added up now from the cluster listing."""
        now = self._clock()
        async with self._pool.connection() as conn:
            await queries.base.begin_consistent_read(conn)
            standby = await queries.summary.standby_replay(conn)
            loops = await queries.summary.loop_freshness(conn)
            recorded = await queries.summary.latest_fleet_totals(conn)
            if recorded is not None and queries.summary.is_recent(recorded.at, loops, now):
                return convert.summary.fleet_summary_response(
                    recorded.totals(),
                    convert.summary.recorded_by_status(recorded.clusters_by_status),
                    convert.summary.recorded_kinds(recorded.open_findings_by_kind),
                    loops,
                    now,
                    totals_recorded=recorded.at,
                    standby=standby,
                )
            totals = await queries.summary.fleet_totals(conn, now=now)
            status_groups = await queries.summary.fleet_status_inputs(conn)
            kinds = await queries.summary.open_findings_by_kind(conn)
        return convert.summary.fleet_summary_response(
            totals, convert.summary.clusters_by_status(status_groups), kinds, loops, now, standby=standby
        )

    @override
    async def list_infrastructure_resources(
        self,
        request: fleet_pb2.ListInfrastructureResourcesRequest,
        ctx: RequestContext[
            fleet_pb2.ListInfrastructureResourcesRequest, fleet_pb2.ListInfrastructureResourcesResponse
        ],
    ) -> fleet_pb2.ListInfrastructureResourcesResponse:
        filters = requests.resource_filters(request)
        wanted = self._tokens.page_request(
            pages.INFRASTRUCTURE_RESOURCES, filters, size=request.page_size, token=request.page_token
        )
        async with self._pool.connection() as conn:
            rows = await queries.ledger.list_infrastructure_resources(
                conn, filters=filters, after=wanted.after, limit=wanted.limit
            )
        page = wanted.page(rows)
        return convert.ledger.list_infrastructure_resources_response(page.items, page.next_page_token)

    @override
    async def search_namespaces(
        self,
        request: fleet_pb2.SearchNamespacesRequest,
        ctx: RequestContext[fleet_pb2.SearchNamespacesRequest, fleet_pb2.SearchNamespacesResponse],
    ) -> fleet_pb2.SearchNamespacesResponse:
        search = requests.namespace_search(request)
        wanted = self._tokens.page_request(
            pages.NAMESPACE_SEARCH, search, size=request.page_size, token=request.page_token
        )
        async with self._pool.connection() as conn:
            rows = await queries.search.search_namespaces(conn, search=search, after=wanted.after, limit=wanted.limit)
        page = wanted.page(rows)
        return convert.search.search_namespaces_response(page.items, page.next_page_token)

    @override
    async def get_fleet_trends(
        self,
        request: fleet_pb2.GetFleetTrendsRequest,
        ctx: RequestContext[fleet_pb2.GetFleetTrendsRequest, fleet_pb2.GetFleetTrendsResponse],
    ) -> fleet_pb2.GetFleetTrendsResponse:
        wanted = requests.trend_range(request, self._clock())
        async with self._pool.connection() as conn:
            rows = await queries.trends.fleet_trends(conn, wanted)
        return convert.trends.trends_response(rows)

    @override
    async def list_usage(
        self,
        request: fleet_pb2.ListUsageRequest,
        ctx: RequestContext[fleet_pb2.ListUsageRequest, fleet_pb2.ListUsageResponse],
    ) -> fleet_pb2.ListUsageResponse:
        now = self._clock()
        filters = requests.usage_filters(request, now)
        wanted = self._tokens.page_request(
            pages.USAGE[filters.aggregate], filters.bound(), size=request.page_size, token=request.page_token
        )
        async with self._pool.connection() as conn:
            await queries.base.begin_consistent_read(conn)
            rows = await queries.usage.usage_groups(
                conn, filters=filters, now=now, after=wanted.after, limit=wanted.limit
            )
            page = wanted.page(rows)
            steps = await queries.usage.usage_steps(conn, filters=filters, now=now, groups=page.items)
        return convert.usage.list_usage_response(filters, page.items, steps, now, page.next_page_token)


def _count_summary_lookup(outcome: Outcome) -> None:
    SUMMARY_CACHE_LOOKUPS.labels(outcome.value).inc()


def connect_app(service: FleetApi, stack: RequestStack) -> FleetServiceASGIApplication:
    """The Connect side of the service: binary and compact JSON, POST and GET, through the shared stack."""
    return FleetServiceASGIApplication(
        service, interceptors=[ConnectStackInterceptor(stack)], codecs=connect_codecs(), read_max_bytes=READ_MAX_BYTES
    )
