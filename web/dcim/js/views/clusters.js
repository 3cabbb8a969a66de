// Clusters: the cluster list with its filters, search and order (ListClusters); filters combine with
// AND as in the API.
//
// Fragment parameters: q (search: cluster name, organization name or alias, or "org/cluster"), order
// (name, organization, pods, nodes, observed, since) and desc=1, status (repeatable, ClusterStatus
// names), attention=1, stale=1, org (UUID, with orgName for display), region, deleted=1 (include
// soft-deleted clusters).

import { h } from "/common/dom.js";
import { count, formatCount, formatMoment, formatDuration, timeElement } from "/common/format.js";
import { pager } from "../api.js";
import { STATUSES, badge, statusBadge } from "../labels.js";
import { pagedTable } from "../paged.js";
import { CLUSTER_ORDERS, ariaSort, requestedOrder, sortLink } from "../sort.js";
import { chip, clusterLink, currentParams, href, paramsObject } from "./links.js";
import { searchableList, startToken } from "./listsearch.js";
import { versionMismatch } from "./versions.js";

export function clusterColumns({ showOrganization = true, order = null, link = null } = {}) {
  const sort = (label, key, options) => (order ? sortLink(label, key, order, link, options) : label);
  const sorted = (...keys) => (order ? ariaSort(order, ...keys) : null);
  return [
    {
      label: "Cluster",
      priority: true,
      header: sort("Cluster", "name"),
      ariaSort: sorted("name"),
      cell: (c) => clusterLink(c.id, c.name),
    },
    showOrganization
      ? {
          label: "Organization",
          header: sort("Organization", "organization"),
          ariaSort: sorted("organization"),
          cell: (c) =>
            h(
              "a",
              {
                href: href("/clusters", { org: c.organizationId, orgName: c.organizationName }),
                title: c.organizationName,
              },
              c.organizationAlias || c.organizationName,
            ),
        }
      : null,
    { label: "Region", cell: (c) => h("span", { class: "nowrap" }, c.region) },
    {
      label: "Status",
      priority: true,
      header: sort("Status", "since", { firstDesc: true }),
      ariaSort: sorted("since"),
      cell: statusCell,
    },
    { label: "Kubernetes", cell: versionCell },
    {
      label: "Nodes (ready)",
      header: sort("Nodes", "nodes", { firstDesc: true }),
      ariaSort: sorted("nodes"),
      numeric: true,
      cell: (c) => (c.snapshot ? `${formatCount(c.snapshot.readyNodes)} / ${formatCount(c.snapshot.nodes)}` : "—"),
    },
    {
      label: "Pods",
      header: sort("Pods", "pods", { firstDesc: true }),
      ariaSort: sorted("pods"),
      numeric: true,
      cell: (c) => (c.snapshot ? formatCount(c.snapshot.pods) : "—"),
    },
    {
      label: "Snapshot",
      header: sort("Snapshot", "observed", { firstDesc: true }),
      ariaSort: sorted("observed"),
      cell: snapshotCell,
    },
    {
      label: "Open drift",
      numeric: true,
      cell: (c) =>
        count(c.openDriftFindings) > 0
          ? h(
              "a",
              { href: href("/drift", { cluster: c.id, clusterName: c.name }), class: "bad-text" },
              formatCount(c.openDriftFindings),
            )
          : "0",
    },
  ].filter(Boolean);
}

function statusCell(c) {
  return [
    statusBadge(c.status),
    c.shootStatusChanged
      ? h("span", { class: "since muted" }, timeElement(c.shootStatusChanged, `since ${formatMoment(c.shootStatusChanged)}`))
      : null,
  ];
}

function versionCell(c) {
  const mismatch = versionMismatch(c);
  if (!mismatch) {
    return c.kubernetesVersion;
  }
  return [
    c.kubernetesVersion,
    " ",
    h(
      "span",
      { class: mismatch.minor ? "warn-text" : "muted", title: "the shoot runs another version than the database holds" },
      `(shoot ${mismatch.observed})`,
    ),
  ];
}

function snapshotCell(c) {
  const parts = [];
  if (c.snapshot && c.snapshot.observed) {
    parts.push(
      h("span", { class: "age" }, timeElement(c.snapshot.observed, `${formatDuration(c.snapshot.ageSeconds)} ago`)),
    );
  } else {
    parts.push(h("span", { class: "muted" }, "never collected"));
  }
  if (c.stale) {
    parts.push(" ", badge("stale", "warn", { dataset: { flag: "stale" } }));
  }
  if (c.snapshot && c.snapshot.lastError) {
    parts.push(
      h(
        "div",
        { class: "bad-text last-error", title: c.snapshot.lastError },
        `Last collection failed: ${c.snapshot.lastError}`,
      ),
    );
  }
  return parts;
}

function filtersForm(params, search) {
  const selected = new Set(params.getAll("status"));
  const current = paramsObject(params);
  // On a phone the filters are folded (the list comes first), unless one is set.
  const set = selected.size + ["attention", "stale", "deleted", "region", "org"].filter((k) => params.get(k)).length;
  const phone = window.matchMedia("(max-width: 40rem)").matches;
  const form = h(
    "form",
    { id: "cluster-filters", class: "filters", "aria-label": "Filter clusters" },
    search,
    h(
      "details",
      { class: "more-filters", open: !phone || set > 0 },
      h("summary", {}, set ? `Filters (${set} set)` : "Filters"),
      h(
        "div",
        { class: "filter-fields" },
    h(
      "fieldset",
      { class: "statuses" },
      h("legend", {}, "Status"),
      STATUSES.map(([status, label]) =>
        h(
          "label",
          {},
          h("input", { type: "checkbox", name: "status", value: status, checked: selected.has(status) }),
          ` ${label}`,
        ),
      ),
    ),
    h(
      "fieldset",
      {},
      h("legend", {}, "Show only"),
      h(
        "label",
        {},
        h("input", { type: "checkbox", name: "attention", value: "1", checked: params.get("attention") === "1" }),
        " needing attention",
      ),
      h(
        "label",
        {},
        h("input", { type: "checkbox", name: "stale", value: "1", checked: params.get("stale") === "1" }),
        " stale",
      ),
      h(
        "label",
        {},
        h("input", { type: "checkbox", name: "deleted", value: "1", checked: params.get("deleted") === "1" }),
        " include deleted",
      ),
    ),
    h(
      "fieldset",
      {},
      h("legend", {}, "Where"),
      h("label", { for: "region-filter" }, "Region "),
      h("input", { type: "text", id: "region-filter", name: "region", value: params.get("region") ?? "", size: 12 }),
      " ",
      params.get("org")
        ? chip(
            `Organization: ${params.get("orgName") || params.get("org")}`,
            href("/clusters", { ...current, org: "", orgName: "" }),
          )
        : h("span", { class: "muted hint" }, "Organization: pick one in the list."),
      h("input", { type: "hidden", name: "org", value: params.get("org") ?? "" }),
      h("input", { type: "hidden", name: "orgName", value: params.get("orgName") ?? "" }),
    ),
    h("p", {}, h("button", { type: "submit" }, "Apply"), " ", h("a", { href: "#/clusters" }, "Clear filters")),
      ),
    ),
  );
  const apply = (event) => {
    event.preventDefault();
    if (event.type === "change" && event.target.name === "q") {
      return; // the search field applies itself as the person types
    }
    const data = new FormData(form);
    // Order and search come from the address, which the search field keeps current.
    const now = currentParams();
    window.location.hash = href("/clusters", {
      q: String(data.get("q") ?? "").trim(),
      order: now.get("order"),
      desc: now.get("desc") === "1",
      status: data.getAll("status"),
      attention: data.get("attention") === "1",
      stale: data.get("stale") === "1",
      deleted: data.get("deleted") === "1",
      region: String(data.get("region") ?? "").trim(),
      org: data.get("org"),
      orgName: data.get("orgName"),
    });
  };
  form.addEventListener("submit", apply);
  // Checkboxes apply at once; the region applies on Enter or when the field is left.
  form.addEventListener("change", apply);
  return form;
}

function clusterList(params, query, signal) {
  const order = requestedOrder(params, CLUSTER_ORDERS);
  const filters = {
    statuses: params.getAll("status"),
    needsAttention: params.get("attention") === "1",
    stale: params.get("stale") === "1",
    includeDeleted: params.get("deleted") === "1",
    region: params.get("region") ?? "",
    organizationId: params.get("org") ?? "",
    query,
    order: order.order,
    descending: order.desc,
  };
  const link = (key, desc) =>
    href("/clusters", { ...paramsObject(params), q: query, order: key === "name" ? "" : key, desc });
  return pagedTable({
    id: "clusters",
    caption: query ? `Clusters matching “${query}”` : "Clusters",
    noun: "clusters",
    columns: clusterColumns({ order, link }),
    fetchPage: pager("ListClusters", "clusters", filters, { signal }),
    emptyText: query ? `No cluster matches “${query}” and these filters.` : "No cluster matches these filters.",
    rowAttributes: (c) => ({ dataset: { clusterId: c.id, cluster: c.name ?? "" } }),
    rowKey: (c) => c.id,
    startToken: startToken(params, query),
    pageHref: (token) => href("/clusters", { ...paramsObject(params), q: query, page: token }),
  });
}

export async function clustersView(params, { onError }) {
  const query = (params.get("q") ?? "").trim();
  const first = await clusterList(params, query, null);
  const { field, slot } = searchableList({
    id: "cluster-search",
    label: "Search",
    placeholder: "cluster, organization, or org/cluster",
    query,
    first,
    render: (text, signal) => clusterList(params, text, signal),
    fragmentFor: (text) => href("/clusters", { ...paramsObject(params), q: text }),
    onError,
  });
  return [h("h1", {}, "Clusters"), filtersForm(params, field), slot];
}
