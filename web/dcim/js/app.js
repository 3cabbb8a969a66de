// The DCIM staff /platform section: a small hash router over seven views of fundament.fleet.v1.
//
//   #/summary                       totals, statuses, drift per kind, freshness of both worker loops
//   #/organizations                 every organization (paged)
//   #/organizations/<id>            one organization and the changes of its public listing
//   #/clusters?status=..&attention=1&stale=1&org=..&region=..&deleted=1   the cluster list (paged)
//   #/clusters/<id>                 one cluster: node pools, projects, namespaces, findings, ledger
//   #/drift?kind=..&org=..&cluster=..&resolved=1             drift findings, open or all (paged)
//   #/ledger?cluster=..&type=..&billable=yes|no&destroyed=1               the ledger (paged)
//
// Filters live in the fragment, so a view can be bookmarked, shared and left with the back button.
// `document.body.dataset` carries `route` (the fragment being shown), `view` and `state` ("loading", "ready", "error", "signed-out"), which
// the browser tests wait on; a view that finishes after the person moved on is dropped.

import { RpcError } from "/common/connect.js";
import { h, replace } from "/common/dom.js";
import { adminApiUrl } from "./api.js";
import { adoptTokenFromFragment, describeToken, forgetToken, signInPanel, storedToken } from "./auth.js";
import { clusterView } from "./views/cluster.js";
import { clustersView } from "./views/clusters.js";
import { driftView } from "./views/drift.js";
import { ledgerView } from "./views/ledger.js";
import { organizationView } from "./views/organization.js";
import { organizationsView } from "./views/organizations.js";
import { summaryView } from "./views/summary.js";

const view = document.getElementById("view");
const account = document.getElementById("account");
// The summary reads itself again this often while the tab is visible, so freshness, statuses and
// findings move on screen as the loops run; lists are not refreshed under a person paging through them.
const SUMMARY_REFRESH_MS = 30000;
let generation = 0;
let refreshTimer = 0;

function parseRoute() {
  const fragment = window.location.hash.replace(/^#/, "") || "/summary";
  const [path, query = ""] = fragment.split("?", 2);
  const segments = path.split("/").filter(Boolean);
  return { segments, params: new URLSearchParams(query) };
}

function resolve({ segments, params }) {
  const [first = "summary", second] = segments;
  if (first === "organizations" && second) {
    return { name: "organization", tab: "organizations", render: () => organizationView(decodeURIComponent(second)) };
  }
  if (first === "clusters" && second) {
    return { name: "cluster", tab: "clusters", render: () => clusterView(decodeURIComponent(second)) };
  }
  const views = {
    summary: () => summaryView(),
    organizations: () => organizationsView(),
    clusters: () => clustersView(params),
    drift: () => driftView(params),
    ledger: () => ledgerView(params),
  };
  const render = views[first];
  return render ? { name: first, tab: first, render } : null;
}

function setState(name, state) {
  document.body.dataset.route = window.location.hash;
  document.body.dataset.view = name;
  document.body.dataset.state = state;
  view.setAttribute("aria-busy", state === "loading" ? "true" : "false");
}

function markTab(tab) {
  for (const link of document.querySelectorAll("#tabs a")) {
    if (link.dataset.tab === tab) {
      link.setAttribute("aria-current", "page");
    } else {
      link.removeAttribute("aria-current");
    }
  }
}

function showAccount() {
  const token = storedToken();
  const about = token ? describeToken(token) : null;
  const signOut = h(
    "button",
    {
      type: "button",
      id: "sign-out",
      onclick: () => {
        forgetToken();
        route();
      },
    },
    "Forget token",
  );
  replace(account, token ? [about && about.who ? `Token for ${about.who} ` : "Token set ", signOut] : []);
}

function scheduleSummaryRefresh(current) {
  refreshTimer = window.setTimeout(() => {
    if (current !== generation) {
      return;
    }
    if (document.hidden) {
      scheduleSummaryRefresh(current);
    } else {
      route({ quiet: true });
    }
  }, SUMMARY_REFRESH_MS);
}

// Shows the view the fragment names. `quiet` keeps the current content on screen until the new one is
// read (a refresh), instead of showing "Loading…".
async function route({ quiet = false } = {}) {
  const current = ++generation;
  window.clearTimeout(refreshTimer);
  showAccount();
  const target = resolve(parseRoute());
  if (!target) {
    markTab("");
    replace(
      view,
      h("p", { class: "notice bad" }, "There is no such page here. ", h("a", { href: "#/summary" }, "Summary")),
    );
    setState("unknown", "error");
    return;
  }
  markTab(target.tab);
  setState(target.name, "loading");
  if (!quiet) {
    replace(view, h("p", { class: "muted" }, "Loading…"));
  }
  if (!adminApiUrl()) {
    const text = "This DCIM has no fleet API configured (adminApiUrl is empty).";
    replace(view, h("p", { class: "notice bad", id: "not-configured" }, text));
    setState(target.name, "error");
    return;
  }
  try {
    const content = await target.render();
    if (current !== generation) {
      return; // the person moved on while this view loaded
    }
    replace(view, content);
    setState(target.name, "ready");
    if (target.name === "summary") {
      scheduleSummaryRefresh(current);
    }
  } catch (error) {
    if (current !== generation) {
      return;
    }
    if (error.code === "unauthenticated") {
      // A refused stored token is dropped, so the next attempt is not the same refused token.
      forgetToken();
      showAccount();
      replace(
        view,
        signInPanel(error.message, () => route()),
      );
      setState(target.name, "signed-out");
      return;
    }
    replace(view, errorNotice(error));
    setState(target.name, "error");
  }
}

function errorReason(error) {
  if (!(error instanceof RpcError)) {
    console.error(error); // a fault of this page, not of the API: keep it visible to developers
    return "This page could not show the answer.";
  }
  if (error.code === "unavailable") {
    return error.reachable
      ? "The fleet API cannot read its database right now."
      : "The fleet API cannot be reached from this page.";
  }
  return `The fleet API answered ${error.code}.`;
}

function errorNotice(error) {
  const reason = errorReason(error);
  return h(
    "div",
    { class: "notice bad", id: "error", role: "alert" },
    h("p", { class: "title" }, reason),
    h("p", { class: "muted" }, error.message),
    h("p", {}, h("button", { type: "button", onclick: () => route() }, "Try again")),
  );
}

window.addEventListener("hashchange", () => {
  // DCIM may hand over a fresh token to an open tab the same way it does on the first visit.
  adoptTokenFromFragment();
  route();
});
document.getElementById("refresh").addEventListener("click", () => route({ quiet: true }));
adoptTokenFromFragment();
route();
