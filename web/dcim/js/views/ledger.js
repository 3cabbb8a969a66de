// Ledger: what exists (and existed) in the clusters' infrastructure (ListInfrastructureResources).
//
// Fragment parameters: cluster (UUID, clusterName for display), type (a resource type),
// billable=yes|no, destroyed=1 (include destroyed rows). Times are when the inventory noticed.

import { h } from "/common/dom.js";
import { timeElement } from "/common/format.js";
import { pager } from "../api.js";
import { RESOURCE_TYPES, badge } from "../labels.js";
import { pagedTable } from "../paged.js";
import { chip, clusterLink, href, paramsObject } from "./links.js";

const columns = [
  { label: "Cluster", cell: (r) => clusterLink(r.clusterId, r.clusterName) },
  { label: "Organization", cell: (r) => r.organizationName ?? "" },
  { label: "Type", cell: (r) => h("code", {}, r.resourceType ?? "") },
  { label: "Name", cell: (r) => (r.namespace ? `${r.namespace}/${r.name ?? ""}` : (r.name ?? "")) },
  { label: "Cloud id", cell: (r) => h("code", { class: "resource-id" }, r.resourceId ?? "") },
  { label: "Billable", cell: (r) => (r.billable ? badge("billable", "warn") : h("span", { class: "muted" }, "no")) },
  { label: "Created", cell: (r) => timeElement(r.created) },
  { label: "Last seen", cell: (r) => timeElement(r.lastSeen) },
  {
    label: "Destroyed",
    // How the end was decided: not_found (the inventory missed it), cluster_deleted, organization_deleted.
    cell: (r) =>
      r.destroyed
        ? [
            timeElement(r.destroyed),
            r.destroyedReason ? h("span", { class: "muted destroyed-reason" }, ` ${r.destroyedReason.replaceAll("_", " ")}`) : null,
          ]
        : h("span", { class: "muted" }, "active"),
  },
];

function filters(params) {
  const current = paramsObject(params);
  const type = h(
    "select",
    { id: "type-filter", name: "type" },
    h("option", { value: "" }, "Every type"),
    RESOURCE_TYPES.map((name) => h("option", { value: name, selected: params.get("type") === name }, name)),
  );
  const billable = h(
    "select",
    { id: "billable-filter", name: "billable" },
    h("option", { value: "" }, "Billable or not"),
    h("option", { value: "yes", selected: params.get("billable") === "yes" }, "Billable only"),
    h("option", { value: "no", selected: params.get("billable") === "no" }, "Not billable only"),
  );
  const destroyed = h("input", {
    type: "checkbox",
    id: "destroyed-filter",
    name: "destroyed",
    checked: params.get("destroyed") === "1",
  });
  const apply = () => {
    window.location.hash = href("/ledger", {
      ...current,
      type: type.value,
      billable: billable.value,
      destroyed: destroyed.checked,
    });
  };
  for (const control of [type, billable, destroyed]) {
    control.addEventListener("change", apply);
  }
  return h(
    "form",
    {
      id: "ledger-filters",
      class: "filters",
      "aria-label": "Filter the ledger",
      onsubmit: (event) => event.preventDefault(),
    },
    h("label", { for: "type-filter" }, "Type "),
    type,
    " ",
    h("label", { for: "billable-filter" }, "Billing "),
    billable,
    " ",
    h("label", {}, destroyed, " include destroyed"),
    " ",
    params.get("cluster")
      ? chip(
          `Cluster: ${params.get("clusterName") || params.get("cluster")}`,
          href("/ledger", { ...current, cluster: "", clusterName: "" }),
        )
      : null,
  );
}

export async function ledgerView(params) {
  const request = {
    clusterId: params.get("cluster") ?? "",
    resourceType: params.get("type") ?? "",
    includeDestroyed: params.get("destroyed") === "1",
  };
  // `billable` is an optional field: left out, both kinds are listed.
  if (params.get("billable") === "yes" || params.get("billable") === "no") {
    request.billable = params.get("billable") === "yes";
  }
  const list = await pagedTable({
    id: "resources",
    caption: "Ledger",
    noun: "resources",
    columns,
    fetchPage: pager("ListInfrastructureResources", "resources", request),
    emptyText: "No ledger row matches these filters.",
    rowAttributes: (r) => ({
      dataset: { resourceType: r.resourceType ?? "" },
      class: r.destroyed ? "destroyed" : null,
    }),
  });
  return [
    h("h1", {}, "Ledger"),
    h(
      "p",
      { class: "lead" },
      "Infrastructure the inventory saw in each cluster, whoever created it: one row per lifetime of a resource.",
    ),
    filters(params),
    list,
  ];
}
