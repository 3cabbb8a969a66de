// The console's public /platform page: listed organizations, their counts, totals.
//
// One anonymous call, fundament.overview.v1.OverviewService/GetPlatformOverview, as a Connect GET so the
// browser and any proxy may cache it (the API sends Cache-Control with what is left of its minute) and
// so the request is a simple CORS request without a preflight. No credential is sent. The answer holds
// names, aliases and counts only: this page has no cluster or namespace name to show.
//
// `document.body.dataset.state` ends as "ready" or "unavailable", which the browser tests wait on.

import { configuredUrl } from "/common/config.js";
import { RpcError, callUnary } from "/common/connect.js";
import { h, replace } from "/common/dom.js";
import { formatCount, timeElement } from "/common/format.js";

const PROCEDURE = "fundament.overview.v1.OverviewService/GetPlatformOverview";
const container = document.getElementById("overview");

function setState(state) {
  document.body.dataset.state = state;
  container.setAttribute("aria-busy", state === "loading" ? "true" : "false");
}

function unavailable(reason, { retry = false } = {}) {
  replace(
    container,
    h(
      "div",
      { class: "notice warn", role: "status", id: "unavailable" },
      h("p", { class: "title" }, "The platform overview is unavailable."),
      h("p", { class: "reason" }, reason),
      retry ? h("p", {}, h("button", { type: "button", onclick: load }, "Try again")) : null,
    ),
  );
  setState("unavailable");
}

function totalsCards(totals) {
  const items = [
    ["organizations", "Organizations"],
    ["clusters", "Clusters"],
    ["projects", "Projects"],
    ["namespaces", "Namespaces"],
  ];
  return h(
    "ul",
    { class: "cards", id: "totals", "aria-label": "Totals over the listed organizations" },
    items.map(([key, label]) =>
      h(
        "li",
        { class: "card", dataset: { total: key } },
        h("span", { class: "value" }, formatCount(totals[key])),
        h("span", { class: "label" }, label),
      ),
    ),
  );
}

function organizationsTable(organizations, totals) {
  const rows = organizations.map((org) =>
    h(
      "tr",
      { dataset: { organization: org.name ?? "" } },
      h(
        "th",
        { scope: "row" },
        h("span", { class: "alias" }, org.alias || org.name),
        h("span", { class: "name muted" }, org.name),
      ),
      h("td", { class: "num", dataset: { field: "clusters", label: "Clusters" } }, formatCount(org.clusters)),
      h("td", { class: "num", dataset: { field: "projects", label: "Projects" } }, formatCount(org.projects)),
      h("td", { class: "num", dataset: { field: "namespaces", label: "Namespaces" } }, formatCount(org.namespaces)),
    ),
  );
  return h(
    "table",
    { id: "organizations", class: "stack" },
    h("caption", {}, "Listed organizations"),
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th", { scope: "col" }, "Organization"),
        h("th", { scope: "col", class: "num" }, "Clusters"),
        h("th", { scope: "col", class: "num" }, "Projects"),
        h("th", { scope: "col", class: "num" }, "Namespaces"),
      ),
    ),
    h("tbody", {}, rows),
    h(
      "tfoot",
      {},
      h(
        "tr",
        { id: "totals-row" },
        h("th", { scope: "row" }, `Total (${formatCount(totals.organizations)} organizations)`),
        h("td", { class: "num", dataset: { label: "Clusters" } }, formatCount(totals.clusters)),
        h("td", { class: "num", dataset: { label: "Projects" } }, formatCount(totals.projects)),
        h("td", { class: "num", dataset: { label: "Namespaces" } }, formatCount(totals.namespaces)),
      ),
    ),
  );
}

function render(answer) {
  const organizations = Array.isArray(answer.organizations) ? answer.organizations : [];
  const totals = answer.totals ?? {};
  const body =
    organizations.length === 0
      ? h("p", { class: "notice", id: "empty" }, "No organization has chosen to be listed yet.")
      : organizationsTable(organizations, totals);
  replace(
    container,
    totalsCards(totals),
    body,
    h(
      "p",
      { class: "muted", id: "read" },
      "Counted ",
      timeElement(answer.read),
      ". The overview is shared by every visitor and may be up to a minute old.",
    ),
  );
  setState("ready");
}

async function load() {
  const baseUrl = configuredUrl("platformApiUrl");
  if (!baseUrl) {
    // The console's convention: an environment without platform-public-api leaves platformApiUrl empty.
    unavailable("This environment does not run the platform overview.");
    return;
  }
  setState("loading");
  try {
    render(await callUnary(baseUrl, PROCEDURE, {}, { get: true }));
  } catch (error) {
    if (!(error instanceof RpcError)) {
      console.error(error); // a fault of this page, not of the API: keep it visible to developers
      unavailable("This page could not show the answer.", { retry: true });
    } else if (error.code === "unavailable") {
      const reason = error.reachable
        ? "The overview service cannot read its data right now. Try again in a minute."
        : "The overview service cannot be reached right now. Try again in a minute.";
      unavailable(reason, { retry: true });
    } else {
      unavailable(`The overview service answered with an error (${error.code}).`, { retry: true });
    }
  }
}

load();
