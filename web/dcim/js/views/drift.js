// Drift: findings of the reconcile loop (ListDriftFindings), by kind, organization or cluster; open
// ones, or with `resolved=1` the whole history (resolved findings are kept, never deleted).
//
// Fragment parameters: kind (a DriftKind name), org (UUID, orgName for display), cluster (UUID,
// clusterName for display), resolved (1: include resolved findings). Findings are only as current as
// reconcile's last pass (see the summary).

import { h } from "/common/dom.js";
import { timeElement } from "/common/format.js";
import { pager } from "../api.js";
import { DRIFT_KINDS, kindLabel } from "../labels.js";
import { pagedTable } from "../paged.js";
import { findingDetails, shootLink } from "./finding.js";
import { chip, clusterLink, href, paramsObject } from "./links.js";

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

export function findingColumns({ resolved = false } = {}) {
  const columns = [
    {
      label: "Kind",
      cell: (f) => [
        h("span", { class: "kind", dataset: { kind: f.kind ?? "" } }, kindLabel(f.kind)),
        h("code", { class: "subject muted", title: "subject", dataset: { subject: f.subject ?? "" } }, f.subject ?? ""),
      ],
    },
    {
      label: "Cluster",
      cell: (f) =>
        f.clusterId ? clusterLink(f.clusterId, f.clusterName) : h("span", { class: "muted" }, "no cluster"),
    },
    { label: "Organization", cell: (f) => f.organizationName || h("span", { class: "muted" }, "unknown") },
    {
      label: "Shoot",
      cell: (f) =>
        f.shootUid || f.shootName
          ? shootLink(f.shootNamespace ?? "", f.shootName ?? "", f.shootUid ?? "")
          : h("span", { class: "muted" }, "none"),
    },
    { label: "Details", cell: (f) => findingDetails(f) },
    { label: "Seen", cell: seenCell },
  ];
  if (resolved) {
    columns.push({
      label: "Resolved",
      cell: (f) => (f.resolved ? timeElement(f.resolved) : h("span", { class: "badge bad" }, "open")),
    });
  }
  return columns;
}

function filters(params) {
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
          `Cluster: ${params.get("clusterName") || params.get("cluster")}`,
          href("/drift", { ...current, cluster: "", clusterName: "" }),
        )
      : null,
  );
}

export async function driftView(params) {
  const resolved = params.get("resolved") === "1";
  const list = await pagedTable({
    id: "findings",
    caption: resolved ? "Drift findings, open and resolved" : "Open drift findings",
    noun: "findings",
    columns: findingColumns({ resolved }),
    fetchPage: pager("ListDriftFindings", "findings", {
      kind: params.get("kind") || "DRIFT_KIND_UNSPECIFIED",
      organizationId: params.get("org") ?? "",
      clusterId: params.get("cluster") ?? "",
      includeResolved: resolved,
    }),
    emptyText: resolved ? "No drift finding matches these filters." : "No open drift finding matches these filters.",
    rowAttributes: (f) => ({
      dataset: { findingId: f.id ?? "", kind: f.kind ?? "", resolved: f.resolved ? "yes" : "no" },
    }),
    startToken: params.get("page") ?? "",
    pageHref: (token) => href("/drift", { ...paramsObject(params), page: token }),
  });
  return [
    h("h1", {}, "Drift"),
    h(
      "p",
      { class: "lead" },
      resolved
        ? "Disagreements between the database and Gardener that the reconcile loop found, open or resolved since, oldest first."
        : "Disagreements between the database and Gardener that the reconcile loop found and that are still open, oldest first.",
    ),
    filters(params),
    list,
  ];
}
