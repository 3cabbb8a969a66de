// Organizations: every organization but the system one, listed publicly or not (ListOrganizations),
// searched by name or display name and sorted by name, display name or creation.
//
// Fragment parameters: q (search), order (name, alias, created) and desc=1.

import { h } from "/common/dom.js";
import { count, dateElement, formatCount } from "/common/format.js";
import { pager } from "../api.js";
import { badge } from "../labels.js";
import { pagedTable } from "../paged.js";
import { ORGANIZATION_ORDERS, ariaSort, requestedOrder, sortLink } from "../sort.js";
import { href, paramsObject } from "./links.js";
import { searchableList, startToken } from "./listsearch.js";

function columns(order, link) {
  return [
    {
      label: "Organization",
      priority: true,
      header: [sortLink("Organization", "alias", order, link), " ", h("span", { class: "muted" }, "/"), " ", sortLink("Name", "name", order, link)],
      ariaSort: ariaSort(order, "alias", "name"),
      cell: (org) => [
        h(
          "a",
          { class: "primary organization-link", href: href(`/organizations/${encodeURIComponent(org.id ?? "")}`) },
          org.alias || org.name,
        ),
        h("span", { class: "secondary muted" }, org.name),
      ],
    },
    {
      label: "Listed",
      cell: (org) => (org.listedPublicly ? badge("listed", "ok") : h("span", { class: "muted" }, "not listed")),
    },
    {
      label: "Clusters",
      numeric: true,
      cell: (org) => h("a", { href: href("/clusters", { org: org.id, orgName: org.name }) }, formatCount(org.clusters)),
    },
    { label: "Projects", numeric: true, cell: (org) => formatCount(org.projects) },
    { label: "Namespaces", numeric: true, cell: (org) => formatCount(org.namespaces) },
    { label: "Ready nodes", numeric: true, cell: (org) => formatCount(org.readyNodes) },
    { label: "Pods", numeric: true, cell: (org) => formatCount(org.pods) },
    {
      label: "Needing attention",
      numeric: true,
      cell: (org) =>
        count(org.clustersNeedingAttention) > 0
          ? h(
              "a",
              { href: href("/clusters", { org: org.id, orgName: org.name, attention: true }), class: "bad-text" },
              formatCount(org.clustersNeedingAttention),
            )
          : "0",
    },
    {
      label: "Created",
      header: sortLink("Created", "created", order, link, { firstDesc: true }),
      ariaSort: ariaSort(order, "created"),
      cell: (org) => dateElement(org.created),
    },
    { label: "Deleted", cell: (org) => dateElement(org.deleted) },
  ];
}

function organizationList(params, query, signal) {
  const order = requestedOrder(params, ORGANIZATION_ORDERS);
  const link = (key, desc) =>
    href("/organizations", { ...paramsObject(params), q: query, order: key === "name" ? "" : key, desc });
  return pagedTable({
    id: "organizations",
    caption: query ? `Organizations matching “${query}”` : "Organizations",
    noun: "organizations",
    columns: columns(order, link),
    fetchPage: pager(
      "ListOrganizations",
      "organizations",
      { query, order: order.order, descending: order.desc },
      { signal },
    ),
    emptyText: query ? `No organization matches “${query}”.` : "There are no organizations yet.",
    rowAttributes: (org) => ({ dataset: { organization: org.name ?? "" }, class: org.deleted ? "deleted" : null }),
    startToken: startToken(params, query),
    pageHref: (token) => href("/organizations", { ...paramsObject(params), q: query, page: token }),
  });
}

export async function organizationsView(params, { onError }) {
  const query = (params.get("q") ?? "").trim();
  const first = await organizationList(params, query, null);
  const { field, slot } = searchableList({
    id: "organization-search",
    label: "Search",
    placeholder: "name or display name",
    query,
    first,
    render: (text, signal) => organizationList(params, text, signal),
    fragmentFor: (text) => href("/organizations", { ...paramsObject(params), q: text }),
    onError,
  });
  return [
    h("h1", {}, "Organizations"),
    h("p", { class: "lead" }, "Every organization on the platform, listed publicly or not, live or deleted."),
    h("form", { class: "filters", role: "search", onsubmit: (event) => event.preventDefault() }, field),
    slot,
  ];
}
