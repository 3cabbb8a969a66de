// One organization (GetOrganization): what it runs, and the history of its public listing, newest
// first: who listed or unlisted it with `fleet org list|unlist`, when and why (an append-only record).

import { h, table } from "/common/dom.js";
import { dateElement, formatCount, timeElement } from "/common/format.js";
import { fleet } from "../api.js";
import { badge } from "../labels.js";
import { href } from "./links.js";
import { trendsSection } from "./trends.js";

const changeColumns = [
  { label: "When", cell: (c) => timeElement(c.changed) },
  {
    label: "Change",
    cell: (c) => (c.listedPublicly ? badge("listed", "ok") : badge("unlisted", "neutral")),
  },
  { label: "By", cell: (c) => c.changedBy ?? "" },
  { label: "Reason", cell: (c) => c.reason ?? "" },
];

export async function organizationView(id, params = new URLSearchParams()) {
  const answer = await fleet("GetOrganization", { id });
  const trends = await trendsSection({
    organizationId: id,
    path: `/organizations/${encodeURIComponent(id)}`,
    rangeKey: params.get("range"),
  });
  const org = answer.organization ?? {};
  const changes = answer.listingChanges ?? [];
  return [
    h("p", { class: "breadcrumbs" }, h("a", { href: "#/organizations" }, "Organizations"), " › ", org.name),
    h(
      "h1",
      { id: "organization-name" },
      org.alias || org.name,
      " ",
      org.listedPublicly ? badge("listed", "ok") : badge("not listed", "neutral"),
      org.deleted ? [" ", badge("deleted", "neutral")] : null,
    ),
    h(
      "dl",
      { class: "facts", id: "organization-facts" },
      h("dt", {}, "Name"),
      h("dd", {}, org.name),
      h("dt", {}, "Counts"),
      h(
        "dd",
        { id: "organization-counts" },
        `${formatCount(org.projects)} projects, ${formatCount(org.namespaces)} namespaces, ${formatCount(org.readyNodes)} ready nodes, ${formatCount(org.pods)} pods`,
      ),
      h("dt", {}, "Clusters"),
      h("dd", {}, h("a", { href: href("/clusters", { org: org.id, orgName: org.name }) }, formatCount(org.clusters))),
      h("dt", {}, "Usage"),
      h(
        "dd",
        {},
        h("a", { href: `#/organizations/${encodeURIComponent(org.id)}/usage`, id: "organization-usage" }, "usage per month"),
      ),
      h("dt", {}, "Drift"),
      h("dd", {}, h("a", { href: href("/drift", { org: org.id, orgName: org.name }) }, "open findings")),
      h("dt", {}, "Created"),
      h("dd", {}, dateElement(org.created)),
      h("dt", {}, "Id"),
      h("dd", {}, h("code", {}, org.id)),
    ),
    trends,
    h("h2", { id: "listing-changes-title" }, "Public listing, changes"),
    changes.length
      ? h(
          "div",
          { class: "table-wrap" },
          table(null, changeColumns, changes, { id: "listing-changes", "aria-labelledby": "listing-changes-title" }),
        )
      : h(
          "p",
          { class: "muted", id: "listing-changes" },
          "No operator changed the listing of this organization (fleet org list|unlist records each change).",
        ),
  ];
}
