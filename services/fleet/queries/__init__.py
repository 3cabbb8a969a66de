"""The staff API's queries, one module per entity, each with its `.sql` file of named blocks.

    base           the loader, the keyset assembly of the sortable lists (orders.sql), the sentinels
    organizations  ListOrganizations, GetOrganization and its listing changes
    clusters       ListClusters, GetCluster's cluster, node pools, projects, namespaces; the inventory clock
    findings       ListDriftFindings, a cluster's open and resolved findings, ListFindingHistory
    ledger         ListInfrastructureResources, a cluster's active ledger counts
    summary        GetFleetSummary's recorded or added-up totals, counts and loop freshness
    search         SearchNamespaces
    trends         GetFleetTrends
    usage          ListUsage: a page of usage groups and their steps

These modules (and `services.common.errors`, `common.database`) are the only ones of the API that
talk to psycopg (the import contracts in pyproject.toml).
"""

from pathlib import Path

from services.fleet.queries import base, clusters, findings, ledger, organizations, search, summary, trends, usage

# Every SQL file of the staff API: readiness proves its role may read and run what they name.
SQL_FILES = tuple(sorted(Path(__file__).parent.glob("*.sql")))

__all__ = [
    "SQL_FILES",
    "base",
    "clusters",
    "findings",
    "ledger",
    "organizations",
    "search",
    "summary",
    "trends",
    "usage",
]
