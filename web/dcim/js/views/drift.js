// Drift: open findings of the reconcile loop (ListDriftFindings), by kind, organization or cluster.
//
// Fragment parameters: kind (a DriftKind name), org (UUID, orgName for display), cluster (UUID,
// clusterName for display). Findings are only as current as reconcile's last pass (see the summary).

import { h } from "/common/dom.js";
import { timeElement } from "/common/format.js";
import { pager } from "../api.js";
import { DRIFT_KINDS, kindLabel } from "../labels.js";
import { pagedTable } from "../paged.js";
import { chip, clusterLink, href, paramsObject } from "./links.js";

// What reconcile recorded as expected and observed, as "key: value" lines.
function detailsCell(details) {
  if (!details || typeof details !== "object") {
    return "";
  }
  const entries = Object.entries(details);
  if (entries.length === 0) {
    return "";
  }
  return h(
    "dl",
    { class: "details" },
    entries.map(([key, value]) => [
      h("dt", {}, key),
      h("dd", {}, typeof value === "string" ? value : JSON.stringify(value)),
    ]),
  );
}

export function findingColumns() {
  return [
    { label: "Kind", cell: (f) => h("span", { class: "kind", dataset: { kind: f.kind ?? "" } }, kindLabel(f.kind)) },
    {
      label: "Cluster",
      cell: (f) =>
        f.clusterId ? clusterLink(f.clusterId, f.clusterName) : h("span", { class: "muted" }, "no cluster"),
    },
    { label: "Organization", cell: (f) => f.organizationName || h("span", { class: "muted" }, "unknown") },
    {
      label: "Shoot",
      cell: (f) =>
        f.shootUid
          ? [f.shootNamespace ? `${f.shootNamespace}/` : "", f.shootName || h("code", {}, f.shootUid)]
          : h("span", { class: "muted" }, "none"),
    },
    { label: "Subject", cell: (f) => h("code", {}, f.subject ?? "") },
    { label: "Details", cell: (f) => detailsCell(f.details) },
    { label: "First detected", cell: (f) => timeElement(f.firstDetected) },
    { label: "Last detected", cell: (f) => timeElement(f.lastDetected) },
  ];
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
  const list = await pagedTable({
    id: "findings",
    caption: "Open drift findings",
    noun: "findings",
    columns: findingColumns(),
    fetchPage: pager("ListDriftFindings", "findings", {
      kind: params.get("kind") || "DRIFT_KIND_UNSPECIFIED",
      organizationId: params.get("org") ?? "",
      clusterId: params.get("cluster") ?? "",
    }),
    emptyText: "No open drift finding matches these filters.",
    rowAttributes: (f) => ({ dataset: { findingId: f.id ?? "", kind: f.kind ?? "" } }),
  });
  return [
    h("h1", {}, "Drift"),
    h(
      "p",
      { class: "lead" },
      "Disagreements between the database and Gardener that the reconcile loop found and that are still open, oldest first.",
    ),
    filters(params),
    list,
  ];
}
