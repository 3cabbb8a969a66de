// Organizations: every organization but the system one, listed publicly or not (ListOrganizations).

import { h } from "/common/dom.js";
import { count, dateElement, formatCount } from "/common/format.js";
import { pager } from "../api.js";
import { badge } from "../labels.js";
import { pagedTable } from "../paged.js";
import { href } from "./links.js";

const columns = [
  {
    label: "Organization",
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
  { label: "Created", cell: (org) => dateElement(org.created) },
  { label: "Deleted", cell: (org) => dateElement(org.deleted) },
];

export async function organizationsView() {
  const list = await pagedTable({
    id: "organizations",
    caption: "Organizations",
    noun: "organizations",
    columns,
    fetchPage: pager("ListOrganizations", "organizations", {}),
    emptyText: "There are no organizations yet.",
    rowAttributes: (org) => ({ dataset: { organization: org.name ?? "" }, class: org.deleted ? "deleted" : null }),
  });
  return [
    h("h1", {}, "Organizations"),
    h("p", { class: "lead" }, "Every organization on the platform, listed publicly or not, live or deleted."),
    list,
  ];
}
