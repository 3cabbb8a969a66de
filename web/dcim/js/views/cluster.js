// One cluster in full (GetCluster): node pools with their snapshots, projects, namespaces with pod
// counts, open drift findings, a timeline of its findings (open and the newest 100 resolved), the
// finding history grouped by finding (ListFindingHistory, paged) and ledger counts.

import { h, table } from "/common/dom.js";
import { count, formatBytes, formatCount, formatDuration, formatMillicores, timeElement } from "/common/format.js";
import { fleet } from "../api.js";
import { badge, statusBadge } from "../labels.js";
import { findingColumns, historyTable } from "./drift.js";
import { href } from "./links.js";
import { namespaceName } from "./names.js";
import { findingTimeline } from "./timeline.js";
import { versionMismatch } from "./versions.js";

function facts(id, pairs) {
  return h(
    "dl",
    { class: "facts", id },
    pairs
      .filter(Boolean)
      .map(([term, value]) => [h("dt", {}, term), h("dd", {}, value === "" || value === undefined ? "—" : value)]),
  );
}

function overview(c) {
  return facts("cluster-facts", [
    [
      "Organization",
      h(
        "a",
        { href: href("/clusters", { org: c.organizationId, orgName: c.organizationName }) },
        `${c.organizationAlias || c.organizationName} (${c.organizationName})`,
      ),
    ],
    ["Region", c.region],
    ["Kubernetes (database)", c.kubernetesVersion],
    [
      "Kubernetes (shoot)",
      c.observedKubernetesVersion
        ? h(
            "span",
            { class: versionMismatch(c)?.minor ? "warn-text" : null, id: "shoot-version" },
            c.observedKubernetesVersion,
            versionMismatch(c) ? " (differs)" : "",
          )
        : h("span", { class: "muted" }, "no live shoot known"),
    ],
    ["Created", timeElement(c.created)],
    c.deleted ? ["Deleted", timeElement(c.deleted)] : null,
    ["Status since", timeElement(c.shootStatusChanged)],
    ["Id", h("code", {}, c.id)],
  ]);
}

function snapshot(c) {
  const s = c.snapshot;
  if (!s) {
    return h("p", { class: "muted", id: "cluster-snapshot" }, "Never collected.");
  }
  return [
    c.stale
      ? h(
          "p",
          { class: "notice warn", id: "stale-notice" },
          "This snapshot is stale: older than three inventory intervals.",
        )
      : null,
    facts("cluster-snapshot", [
      ["Observed", [timeElement(s.observed), ` (${formatDuration(s.ageSeconds)} ago)`]],
      ["Read from", { SNAPSHOT_SOURCE_API_SERVER: "the shoot's API server", SNAPSHOT_SOURCE_PROMETHEUS: "the shoot's Prometheus", SNAPSHOT_SOURCE_MOCK: "mock mode (the database)" }[s.source] ?? "not recorded"],
      ["Nodes", `${formatCount(s.readyNodes)} ready of ${formatCount(s.nodes)}`],
      ["Pods", `${formatCount(s.pods)} of ${formatCount(s.allocatablePods)} allocatable`],
      ["Allocatable CPU", formatMillicores(s.cpuAllocatableMillicores)],
      ["Allocatable memory", formatBytes(s.memoryAllocatableBytes)],
      s.lastError
        ? [
            "Last collection error",
            h("span", { class: "bad-text" }, s.lastError, " (", timeElement(s.lastErrorAt), ")"),
          ]
        : null,
    ]),
  ];
}

function sync(state) {
  if (!state) {
    return h("p", { class: "muted", id: "cluster-sync" }, "Not synced yet.");
  }
  return facts("cluster-sync", [
    ["Sync", `${state.syncStatus ?? ""} (attempt ${formatCount(state.syncAttempts)})`],
    state.syncError ? ["Sync error", h("span", { class: "bad-text" }, state.syncError)] : null,
    ["Sync updated", timeElement(state.syncUpdated)],
    ["First completed", timeElement(state.firstCompleted)],
    ["Shoot", `${state.shootStatus ?? ""}${state.shootOperation ? ` (${state.shootOperation})` : ""}`],
    state.shootMessage ? ["Gardener says", state.shootMessage] : null,
  ]);
}

const poolColumns = [
  { label: "Node pool", cell: (p) => p.name },
  { label: "Machine type", cell: (p) => p.machineType },
  { label: "Autoscaler", numeric: true, cell: (p) => `${formatCount(p.autoscaleMin)}–${formatCount(p.autoscaleMax)}` },
  {
    label: "Nodes (ready)",
    numeric: true,
    cell: (p) => (p.snapshot ? `${formatCount(p.snapshot.readyNodes)} / ${formatCount(p.snapshot.nodes)}` : "—"),
  },
  {
    label: "Observed",
    cell: (p) => (p.snapshot ? timeElement(p.snapshot.observed) : h("span", { class: "muted" }, "never")),
  },
];

const projectColumns = [
  { label: "Project", cell: (p) => p.name },
  { label: "Display name", cell: (p) => p.alias },
  { label: "Namespaces", numeric: true, cell: (p) => formatCount(p.namespaces) },
];

const namespaceColumns = [
  { label: "Project", cell: (n) => n.projectName },
  { label: "Namespace", cell: (n) => namespaceName(n.name, n.kubernetesName) },
  { label: "Pods", numeric: true, cell: (n) => (n.snapshot ? formatCount(n.snapshot.pods) : "—") },
  {
    label: "Observed",
    cell: (n) => (n.snapshot ? timeElement(n.snapshot.observed) : h("span", { class: "muted" }, "never")),
  },
];

const ledgerColumns = [
  { label: "Type", cell: (l) => h("code", {}, l.resourceType) },
  { label: "Active", numeric: true, cell: (l) => formatCount(l.active) },
  { label: "Billable", numeric: true, cell: (l) => formatCount(l.activeBillable) },
  { label: "Not billable", numeric: true, cell: (l) => formatCount(count(l.active) - count(l.activeBillable)) },
];

// The active ledger rows per type with a totals row: what this cluster holds, and what of it is billed.
function ledgerCounts(rows) {
  if (!rows.length) {
    return h("p", { class: "muted", id: "ledger-counts" }, "The ledger has no active rows for this cluster.");
  }
  const rendered = table(null, ledgerColumns, rows, { id: "ledger-counts", "aria-labelledby": "ledger-counts-title" });
  const active = rows.reduce((sum, l) => sum + count(l.active), 0);
  const billable = rows.reduce((sum, l) => sum + count(l.activeBillable), 0);
  rendered.append(
    h(
      "tfoot",
      {},
      h(
        "tr",
        { id: "ledger-total" },
        h("th", { scope: "row" }, "Total"),
        h("td", { class: "num", dataset: { label: "Active" } }, formatCount(active)),
        h("td", { class: "num", dataset: { label: "Billable" } }, formatCount(billable)),
        h("td", { class: "num", dataset: { label: "Not billable" } }, formatCount(active - billable)),
      ),
    ),
  );
  return h("div", { class: "table-wrap" }, rendered);
}

// The shoot runs another version than the database holds: said on top, with the open finding if any.
function versionNotice(c, findings) {
  const mismatch = versionMismatch(c);
  if (!mismatch) {
    return null;
  }
  const finding = findings.find((f) => f.kind === "DRIFT_KIND_VERSION_MISMATCH");
  return h(
    "p",
    { class: mismatch.minor ? "notice warn" : "notice", id: "version-mismatch", dataset: { minor: mismatch.minor ? "yes" : "no" } },
    h("span", { class: "title" }, mismatch.minor ? "Version mismatch: " : "Patch versions differ: "),
    `the database holds Kubernetes ${mismatch.database}, the shoot runs ${mismatch.observed}.`,
    mismatch.minor
      ? finding
        ? [
            " ",
            h(
              "a",
              {
                href: href("/drift", { kind: "DRIFT_KIND_VERSION_MISMATCH", cluster: c.id, clusterName: c.name }),
                id: "version-finding-link",
              },
              "Reconcile reports it as drift.",
            ),
          ]
        : " Reconcile reports a minor version difference as drift once the cluster is ready and not updating."
      : " Gardener's maintenance moves patch versions on its own; this is not drift.",
  );
}

function section(title, id, items, columns, emptyText) {
  return [
    h("h2", { id: `${id}-title` }, title),
    items.length
      ? h("div", { class: "table-wrap" }, table(null, columns, items, { id, "aria-labelledby": `${id}-title` }))
      : h("p", { class: "muted", id }, emptyText),
  ];
}

export async function clusterView(id) {
  const [answer, grouped] = await Promise.all([
    fleet("GetCluster", { id, includeResolved: true }),
    historyTable({
      id: "cluster-history",
      caption: "Finding history, one row per finding, most recently opened first",
      filters: { clusterId: id, openOnly: false, kind: "DRIFT_KIND_UNSPECIFIED", organizationId: "" },
      onCluster: true,
      emptyText: "No drift finding about this cluster so far.",
    }),
  ]);
  const c = answer.cluster ?? {};
  const findings = answer.openFindings ?? [];
  const history = answer.resolvedFindings ?? [];
  const latest = Math.max(0, ...[...findings, ...history].map((f) => Date.parse(f.lastDetected ?? "") || 0));
  return [
    h("p", { class: "breadcrumbs" }, h("a", { href: "#/clusters" }, "Clusters"), " › ", c.name),
    h(
      "h1",
      { id: "cluster-name" },
      c.name,
      " ",
      statusBadge(c.status),
      c.deleted ? [" ", badge("deleted", "neutral")] : null,
    ),
    versionNotice(c, findings),
    overview(c),
    h("h2", {}, "Latest snapshot"),
    snapshot(c),
    h("h2", {}, "Sync with Gardener"),
    sync(answer.sync),
    section("Node pools", "node-pools", answer.nodePools ?? [], poolColumns, "No live node pools."),
    section("Projects", "projects", answer.projects ?? [], projectColumns, "No live projects."),
    section("Namespaces", "namespaces", answer.namespaces ?? [], namespaceColumns, "No live namespaces."),
    section("Open drift findings", "cluster-findings", findings, findingColumns({ onCluster: true }), "No open drift findings."),
    h("h2", { id: "finding-timeline-title" }, "Finding timeline"),
    findingTimeline([...findings, ...history], latest),
    answer.resolvedFindingsTruncated
      ? h("p", { class: "muted", id: "history-truncated" }, "The timeline shows the newest 100 resolved occurrences.")
      : null,
    h("h2", { id: "cluster-history-title" }, "Finding history"),
    grouped,
    h(
      "p",
      {},
      h(
        "a",
        { href: href("/drift", { cluster: c.id, clusterName: c.name, resolved: "1" }), id: "history-link" },
        "Every finding about this cluster, open and resolved",
      ),
    ),
    h("h2", { id: "ledger-counts-title" }, "Ledger"),
    ledgerCounts(answer.ledger ?? []),
    h(
      "p",
      {},
      h(
        "a",
        { href: href("/ledger", { cluster: c.id, clusterName: c.name }), id: "ledger-link" },
        "Every ledger row of this cluster",
      ),
    ),
  ];
}
