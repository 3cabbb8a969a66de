// Drift: findings of the reconcile loop grouped by finding (ListFindingHistory): one row per kind and
// subject however often it opened and resolved again, with its first and last detection, how often
// it opened, its total open time and its latest details folded; most recently opened first. Open
// ones, or with `resolved=1` the whole history (resolved findings are kept, never deleted).
//
// Fragment parameters: kind (a DriftKind name), org (UUID, orgName for display), cluster (UUID,
// clusterName for display), resolved (1: include resolved findings). Findings are only as current as
// reconcile's last pass (see the summary).

import { h } from "/common/dom.js";
import { formatCount, formatDuration, timeElement } from "/common/format.js";
import { fleet, pager } from "../api.js";
import { DRIFT_KINDS, kindLabel } from "../labels.js";
import { pagedTable } from "../paged.js";
import { findingDetails, shootLink } from "./finding.js";
import { chip, clusterLink, clusterNameFor, href, paramsObject } from "./links.js";

function seenCell(f) {
  return h(
    "dl",
    { class: "seen" },
    h("dt", {}, "first"),
    h("dd", {}, timeElement(f.firstDetected)),
    h("dt", {}, "last"),
    h("dd", {}, timeElement(f.lastDetected)),
  );
}

function kindCell(f) {
  return [
    h("span", { class: "kind", dataset: { kind: f.kind ?? "" } }, kindLabel(f.kind)),
    h("code", { class: "subject muted", title: "subject", dataset: { subject: f.subject ?? "" } }, f.subject ?? ""),
  ];
}

// A state as words, never colour alone.
function stateChip(open) {
  return h("span", { class: `badge ${open ? "bad" : "ok"}`, dataset: { state: open ? "open" : "resolved" } }, open ? "open" : "resolved");
}

// The columns of occurrences (ListDriftFindings, GetCluster); `onCluster` leaves out what the cluster's
// own page already says (its cluster and organization).
export function findingColumns({ resolved = false, onCluster = false } = {}) {
  const columns = [
    { label: "Kind", priority: true, cell: kindCell },
    onCluster
      ? null
      : {
          label: "Cluster",
          cell: (f) =>
            f.clusterId ? clusterLink(f.clusterId, f.clusterName) : h("span", { class: "muted" }, "no cluster"),
        },
    onCluster
      ? null
      : { label: "Organization", cell: (f) => f.organizationName || h("span", { class: "muted" }, "unknown") },
    {
      label: "Shoot",
      cell: (f) =>
        f.shootUid || f.shootName
          ? shootLink(f.shootNamespace ?? "", f.shootName ?? "", f.shootUid ?? "")
          : h("span", { class: "muted" }, "none"),
    },
    { label: "Details", cell: (f) => findingDetails(f) },
    { label: "Seen", cell: seenCell },
  ].filter(Boolean);
  if (resolved) {
    columns.push({
      label: "Resolved",
      priority: true,
      cell: (f) => (f.resolved ? timeElement(f.resolved) : stateChip(true)),
    });
  }
  return columns;
}

// The details of a finding folded: the reason on one line, the sentences on request.
function foldedDetails(f) {
  const reason = f.details && typeof f.details.reason === "string" ? f.details.reason : "";
  return h(
    "details",
    { class: "folded-details" },
    h("summary", {}, reason ? reason.charAt(0).toUpperCase() + reason.slice(1) : "Details"),
    findingDetails(f),
  );
}

// The columns of the grouped history (ListFindingHistory): one row per finding.
export function historyColumns({ onCluster = false, showOrganization = true } = {}) {
  return [
    { label: "Finding", priority: true, cell: (g) => kindCell(g) },
    { label: "State", priority: true, cell: (g) => stateChip(Boolean(g.open)) },
    onCluster
      ? null
      : {
          label: "Cluster",
          cell: (g) =>
            g.latest?.clusterId
              ? clusterLink(g.latest.clusterId, g.latest.clusterName)
              : h("span", { class: "muted" }, "no cluster"),
        },
    onCluster || !showOrganization
      ? null
      : { label: "Organization", cell: (g) => g.latest?.organizationName || h("span", { class: "muted" }, "unknown") },
    { label: "Detected", cell: seenCell },
    {
      label: "Opened",
      numeric: true,
      cell: (g) => h("span", { class: "opened", title: `resolved ${formatCount(g.resolved)} times` }, `${formatCount(g.opened)}×`),
    },
    { label: "Open in all", numeric: true, cell: (g) => h("span", { class: "open-time" }, formatDuration(g.openSeconds)) },
    { label: "Details", cell: (g) => (g.latest ? foldedDetails(g.latest) : "") },
  ].filter(Boolean);
}

// The grouped history as a paged table; `filters` as ListFindingHistory takes them.
export function historyTable({ id, caption, filters, onCluster = false, showOrganization = true, startToken = "", pageHref = null, emptyText }) {
  return pagedTable({
    id,
    caption,
    noun: "findings",
    columns: historyColumns({ onCluster, showOrganization }),
    fetchPage: pager("ListFindingHistory", "findings", filters),
    emptyText,
    rowAttributes: (g) => ({
      dataset: {
        findingId: g.latest?.id ?? "",
        kind: g.kind ?? "",
        subject: g.subject ?? "",
        resolved: g.open ? "no" : "yes",
        opened: String(g.opened ?? 0),
      },
    }),
    startToken,
    pageHref,
  });
}

function filters(params, clusterName) {
  const current = paramsObject(params);
  const select = h(
    "select",
    { id: "kind-filter", name: "kind" },
    h("option", { value: "" }, "Every kind"),
    DRIFT_KINDS.map(([kind, label]) => h("option", { value: kind, selected: params.get("kind") === kind }, label)),
  );
  select.addEventListener("change", () => {
    window.location.hash = href("/drift", { ...current, kind: select.value });
  });
  const history = h("input", { type: "checkbox", id: "resolved-filter", checked: params.get("resolved") === "1" });
  history.addEventListener("change", () => {
    window.location.hash = href("/drift", { ...current, resolved: history.checked ? "1" : "" });
  });
  return h(
    "form",
    {
      id: "drift-filters",
      class: "filters",
      "aria-label": "Filter drift findings",
      onsubmit: (event) => event.preventDefault(),
    },
    h("label", { for: "kind-filter" }, "Kind "),
    select,
    " ",
    history,
    h("label", { for: "resolved-filter" }, " with resolved findings (history)"),
    " ",
    params.get("org")
      ? chip(
          `Organization: ${params.get("orgName") || params.get("org")}`,
          href("/drift", { ...current, org: "", orgName: "" }),
        )
      : null,
    " ",
    params.get("cluster")
      ? chip(
          `Cluster: ${clusterName}`,
          href("/drift", { ...current, cluster: "", clusterName: "" }),
        )
      : null,
  );
}

export async function driftView(params) {
  const resolved = params.get("resolved") === "1";
  const [list, clusterName] = await Promise.all([
    historyTable({
      id: "findings",
      caption: resolved ? "Drift findings, open and resolved, one row per finding" : "Open drift findings, one row per finding",
      filters: {
        kind: params.get("kind") || "DRIFT_KIND_UNSPECIFIED",
        organizationId: params.get("org") ?? "",
        clusterId: params.get("cluster") ?? "",
        openOnly: !resolved,
      },
      showOrganization: !params.get("org"),
      emptyText: resolved ? "No drift finding matches these filters." : "No open drift finding matches these filters.",
      startToken: params.get("page") ?? "",
      pageHref: (token) => href("/drift", { ...paramsObject(params), page: token }),
    }),
    clusterNameFor(params.get("cluster"), params.get("clusterName"), fleet),
  ]);
  return [
    h("h1", {}, "Drift"),
    h(
      "p",
      { class: "lead" },
      resolved
        ? "Disagreements between the database and Gardener that the reconcile loop found, open or resolved since: one row per finding, however often it came back, most recently opened first."
        : "Disagreements between the database and Gardener that the reconcile loop found and that are still open: one row per finding, most recently opened first.",
    ),
    filters(params, clusterName),
    list,
  ];
}
