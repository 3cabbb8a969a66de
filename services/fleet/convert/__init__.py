"""Rows in, fleet.v1 messages out: the only place that builds the staff API's protobuf messages, one
module per entity, as the queries are filed.

    scalars        the enums (status, drift kind, snapshot source), ages and optional text
    organizations  ListOrganizations, GetOrganization
    clusters       ListClusters, GetCluster
    findings       ListDriftFindings, ListFindingHistory, GetCluster's findings (details: a finding's details)
    ledger         ListInfrastructureResources and GetCluster's ledger counts
    summary        GetFleetSummary
    search         SearchNamespaces
    trends         GetFleetTrends
    usage          ListUsage
"""

from services.fleet.convert import clusters, findings, ledger, organizations, scalars, search, summary, trends, usage

__all__ = ["clusters", "findings", "ledger", "organizations", "scalars", "search", "summary", "trends", "usage"]
