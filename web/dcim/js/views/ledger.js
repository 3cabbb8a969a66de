// Ledger: what exists (and existed) in the clusters' infrastructure (ListInfrastructureResources).
//
// Fragment parameters: cluster (UUID, clusterName for display), type (a resource type),
// billable=yes|no, destroyed=1 (include destroyed rows). Times are when the inventory noticed.

import { h, replace } from "/common/dom.js";
import { formatCount, timeElement } from "/common/format.js";
import { fleet, pager } from "../api.js";
import { RESOURCE_TYPES, badge } from "../labels.js";
import { pagedTable } from "../paged.js";
import { chip, clusterLink, clusterNameFor, href, paramsObject } from "./links.js";
import { namespaceName } from "./names.js";

// Clusters whose namespace names are looked up at once (GetCluster each), for one page of rows.
const NAME_LOOKUPS_AT_ONCE = 4;

// When the inventory first saw it, last saw it, and noticed it gone (with how that was decided:
// not_found, the inventory missed it; cluster_deleted, organization_deleted), in one compact cell.
function seenCell(r) {
  return h(
    "dl",
    { class: "seen" },
    h("dt", {}, "created"),
    h("dd", {}, timeElement(r.created)),
    h("dt", {}, "last seen"),
    h("dd", {}, timeElement(r.lastSeen)),
    h("dt", {}, "destroyed"),
    h(
      "dd",
      {},
      r.destroyed
        ? [
            timeElement(r.destroyed),
            r.destroyedReason
              ? h("span", { class: "muted destroyed-reason" }, ` ${r.destroyedReason.replaceAll("_", " ")}`)
              : null,
          ]
        : h("span", { class: "muted" }, "active"),
    ),
  );
}

const columns = [
  {
    label: "Cluster",
    priority: true,
    cell: (r) => [clusterLink(r.clusterId, r.clusterName), h("span", { class: "secondary muted" }, r.organizationName ?? "")],
  },
  { label: "Type", priority: true, cell: (r) => h("code", { class: "resource-type" }, r.resourceType ?? "") },
  {
    label: "Namespace",
    cell: (r) =>
      r.namespace ? namespaceName(r.tenantNamespace?.name ?? "", r.namespace) : h("span", { class: "muted" }, "cluster-wide"),
  },
  {
    label: "Name",
    cell: (r) => [
      h("span", { class: "resource-name" }, r.name ?? ""),
      // A worker pool's machine type and autoscaler bounds, as its shoot says now (JSON leaves out zeros).
      r.workerPool
        ? h(
            "span",
            { class: "secondary muted worker-pool" },
            `${r.workerPool.machineType ?? ""}, ${r.workerPool.minimum ?? 0} to ${r.workerPool.maximum ?? 0} nodes`,
          )
        : null,
    ],
  },
  { label: "Cloud id", cell: (r) => h("code", { class: "resource-id" }, r.resourceId ?? "") },
  { label: "Billable", cell: (r) => (r.billable ? badge("billable", "warn") : h("span", { class: "muted" }, "no")) },
  { label: "Seen", cell: seenCell },
];

function filters(params, clusterName) {
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
          `Cluster: ${clusterName}`,
          href("/ledger", { ...current, cluster: "", clusterName: "" }),
        )
      : null,
  );
}

// The ledger names a namespace as Kubernetes does; the page adds the database name (the person's
// name for it) from the cluster's namespaces (GetCluster), read once per cluster per view.
function namedPages(fetchPage) {
  const namesByCluster = new Map();
  const namesOf = (clusterId) => {
    if (!namesByCluster.has(clusterId)) {
      namesByCluster.set(
        clusterId,
        fleet("GetCluster", { id: clusterId })
          .then((answer) => new Map((answer.namespaces ?? []).map((n) => [n.kubernetesName, n])))
          .catch((error) => {
            if (error.code === "canceled") {
              throw error;
            }
            return new Map(); // names stay as Kubernetes has them; the rows are still right
          }),
      );
    }
    return namesByCluster.get(clusterId);
  };
  return async (token) => {
    const page = await fetchPage(token);
    const clusters = [...new Set(page.items.filter((r) => r.namespace && r.clusterId).map((r) => r.clusterId))];
    for (let i = 0; i < clusters.length; i += NAME_LOOKUPS_AT_ONCE) {
      await Promise.all(clusters.slice(i, i + NAME_LOOKUPS_AT_ONCE).map(namesOf));
    }
    for (const row of page.items) {
      if (row.namespace && row.clusterId) {
        row.tenantNamespace = (await namesOf(row.clusterId)).get(row.namespace) ?? null;
      }
    }
    return page;
  };
}

// Totals by type of the rows read so far: all of them once paging is done, else the rows shown.
function totalsTable(rows, more, withDestroyed) {
  const byType = new Map();
  for (const r of rows) {
    const t = byType.get(r.resourceType) ?? { type: r.resourceType, rows: 0, active: 0, billable: 0, destroyed: 0 };
    t.rows += 1;
    if (r.destroyed) {
      t.destroyed += 1;
    } else {
      t.active += 1;
      if (r.billable) {
        t.billable += 1;
      }
    }
    byType.set(r.resourceType, t);
  }
  const types = [...byType.values()].sort((a, b) => a.type.localeCompare(b.type));
  const sum = (key) => types.reduce((total, t) => total + t[key], 0);
  const cells = (t) => [
    h("td", { class: "num", dataset: { label: "Active" } }, formatCount(t.active)),
    h("td", { class: "num", dataset: { label: "Billable" } }, formatCount(t.billable)),
    h("td", { class: "num", dataset: { label: "Not billable" } }, formatCount(t.active - t.billable)),
    withDestroyed ? h("td", { class: "num", dataset: { label: "Destroyed" } }, formatCount(t.destroyed)) : null,
  ];
  const caption = more
    ? `Totals of the ${formatCount(rows.length)} rows shown (more follow: “Show all” totals the whole list)`
    : "Totals";
  return h(
    "table",
    { id: "ledger-totals", class: "stack", dataset: { complete: more ? "no" : "yes" } },
    h("caption", {}, caption),
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th", { scope: "col" }, "Type"),
        h("th", { scope: "col", class: "num" }, "Active"),
        h("th", { scope: "col", class: "num" }, "Billable"),
        h("th", { scope: "col", class: "num" }, "Not billable"),
        withDestroyed ? h("th", { scope: "col", class: "num" }, "Destroyed") : null,
      ),
    ),
    h(
      "tbody",
      {},
      types.map((t) => h("tr", { dataset: { resourceType: t.type } }, h("th", { scope: "row" }, h("code", {}, t.type)), cells(t))),
    ),
    h(
      "tfoot",
      {},
      h(
        "tr",
        { id: "ledger-totals-all" },
        h("th", { scope: "row" }, "Total"),
        cells({ active: sum("active"), billable: sum("billable"), destroyed: sum("destroyed") }),
      ),
    ),
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
  const totals = h("div", { class: "table-wrap totals", id: "ledger-totals-slot" });
  const [list, clusterName] = await Promise.all([
    pagedTable({
    id: "resources",
    caption: "Ledger",
    noun: "resources",
    columns,
    fetchPage: namedPages(pager("ListInfrastructureResources", "resources", request)),
    onRows: (rows, more) => replace(totals, rows.length ? totalsTable(rows, more, request.includeDestroyed) : []),
    emptyText: "No ledger row matches these filters.",
    rowAttributes: (r) => ({
      dataset: { resourceType: r.resourceType ?? "" },
      class: r.destroyed ? "destroyed" : null,
    }),
    startToken: params.get("page") ?? "",
    pageHref: (token) => href("/ledger", { ...paramsObject(params), page: token }),
  }),
    clusterNameFor(params.get("cluster"), params.get("clusterName"), fleet),
  ]);
  return [
    h("h1", {}, "Ledger"),
    h(
      "p",
      { class: "lead" },
      "Infrastructure the inventory saw in each cluster, whoever created it: one row per lifetime of a resource.",
    ),
    filters(params, clusterName),
    totals,
    list,
  ];
}
