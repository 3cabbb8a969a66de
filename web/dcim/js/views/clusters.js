// Clusters: the cluster list with its filters (ListClusters), which combine with AND as in the API.
//
// Fragment parameters: status (repeatable, ClusterStatus names), attention=1, stale=1, org (UUID, with
// orgName for display), region, deleted=1 (include soft-deleted clusters).

import { h } from "/common/dom.js";
import { count, formatCount, formatDuration, timeElement } from "/common/format.js";
import { pager } from "../api.js";
import { STATUSES, badge, statusBadge } from "../labels.js";
import { pagedTable } from "../paged.js";
import { chip, clusterLink, href, paramsObject } from "./links.js";

export function clusterColumns({ showOrganization = true } = {}) {
  return [
    { label: "Cluster", cell: (c) => clusterLink(c.id, c.name) },
    showOrganization
      ? {
          label: "Organization",
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
    { label: "Status", cell: (c) => statusBadge(c.status) },
    { label: "Kubernetes", cell: versionCell },
    {
      label: "Nodes (ready)",
      numeric: true,
      cell: (c) => (c.snapshot ? `${formatCount(c.snapshot.readyNodes)} / ${formatCount(c.snapshot.nodes)}` : "—"),
    },
    { label: "Pods", numeric: true, cell: (c) => (c.snapshot ? formatCount(c.snapshot.pods) : "—") },
    { label: "Snapshot", cell: snapshotCell },
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

function versionCell(c) {
  const observed = c.observedKubernetesVersion ?? "";
  if (!observed || observed === c.kubernetesVersion) {
    return c.kubernetesVersion;
  }
  return [
    c.kubernetesVersion,
    " ",
    h(
      "span",
      { class: "warn-text", title: "the shoot runs another version than the database holds" },
      `(shoot ${observed})`,
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

function filtersForm(params) {
  const selected = new Set(params.getAll("status"));
  const current = paramsObject(params);
  const form = h(
    "form",
    { id: "cluster-filters", class: "filters", "aria-label": "Filter clusters" },
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
      h("input", { type: "text", id: "region-filter", name: "region", value: params.get("region") ?? "", size: 16 }),
      " ",
      params.get("org")
        ? chip(
            `Organization: ${params.get("orgName") || params.get("org")}`,
            href("/clusters", { ...current, org: "", orgName: "" }),
          )
        : h("span", { class: "muted" }, "Organization: pick one from the list or the organizations page."),
      h("input", { type: "hidden", name: "org", value: params.get("org") ?? "" }),
      h("input", { type: "hidden", name: "orgName", value: params.get("orgName") ?? "" }),
    ),
    h("p", {}, h("button", { type: "submit" }, "Apply"), " ", h("a", { href: "#/clusters" }, "Clear filters")),
  );
  const apply = (event) => {
    event.preventDefault();
    const data = new FormData(form);
    window.location.hash = href("/clusters", {
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

export async function clustersView(params) {
  const filters = {
    statuses: params.getAll("status"),
    needsAttention: params.get("attention") === "1",
    stale: params.get("stale") === "1",
    includeDeleted: params.get("deleted") === "1",
    region: params.get("region") ?? "",
    organizationId: params.get("org") ?? "",
  };
  const list = await pagedTable({
    id: "clusters",
    caption: "Clusters",
    noun: "clusters",
    columns: clusterColumns(),
    fetchPage: pager("ListClusters", "clusters", filters),
    emptyText: "No cluster matches these filters.",
    rowAttributes: (c) => ({ dataset: { clusterId: c.id, cluster: c.name ?? "" } }),
  });
  return [h("h1", {}, "Clusters"), filtersForm(params), list];
}
