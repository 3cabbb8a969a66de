// The DCIM staff /platform section: a small hash router over seven views of fundament.fleet.v1.
//
//   #/summary?range=7d              totals, statuses, drift per kind, freshness of both loops, trends
//   #/organizations?q=..&order=..&desc=1   every organization (searched, sorted, paged)
//   #/organizations/<id>?range=7d   one organization, its trends and the changes of its public listing
//   #/organizations/<id>/usage?month=2026-11   one organization's usage per type in a month, as CSV too
//   #/clusters?q=..&order=..&desc=1&status=..&attention=1&stale=1&org=..&region=..&deleted=1
//                                   the cluster list (searched, sorted, paged)
//   #/clusters/<id>                 one cluster: node pools, projects, namespaces, findings, ledger
//   #/drift?kind=..&org=..&cluster=..&resolved=1             drift findings, open or all (paged)
//   #/ledger?cluster=..&type=..&billable=yes|no&destroyed=1               the ledger (paged)
//
// Filters live in the fragment, so a view can be bookmarked, shared and left with the back button.
// `document.body.dataset` carries `route` (the fragment being shown), `view` and `state` ("loading", "ready", "error", "signed-out"), which
// the browser tests wait on; a view that finishes after the person moved on is dropped.

import { RpcError } from "/common/connect.js";
import { h, replace } from "/common/dom.js";
import { formatTime } from "/common/format.js";
import { adminApiUrl, beginView } from "./api.js";
import {
  TOKEN_STORAGE_KEY,
  adoptTokenFromFragment,
  describeToken,
  forgetToken,
  signInPanel,
  storedToken,
  storedTokenExpiry,
} from "./auth.js";
import { endBurst } from "./nav.js";
import { setUpSearch } from "./search.js";
import { clusterView } from "./views/cluster.js";
import { clustersView } from "./views/clusters.js";
import { driftView } from "./views/drift.js";
import { ledgerView } from "./views/ledger.js";
import { organizationView } from "./views/organization.js";
import { organizationsView } from "./views/organizations.js";
import { summaryView } from "./views/summary.js";
import { usageView } from "./views/usage.js";

const view = document.getElementById("view");
const account = document.getElementById("account");
// The summary reads itself again this often while the tab is visible, so freshness, statuses and
// findings move on screen as the loops run; lists are not refreshed under a person paging through them.
const SUMMARY_REFRESH_MS = 30000;
let generation = 0;
let refreshTimer = 0;
// Set when the person asked to call with DCIM's session cookie alone (no token in this browser); kept
// in this browser until the API refuses a call, so the next visit does not ask again.
const SESSION_KEY = "fleet.dcim.session";
let useSessionCookie = readSessionChoice();

function readSessionChoice() {
  try {
    return localStorage.getItem(SESSION_KEY) === "cookie";
  } catch {
    return false;
  }
}

function keepSessionChoice(on) {
  useSessionCookie = on;
  try {
    if (on) {
      localStorage.setItem(SESSION_KEY, "cookie");
    } else {
      localStorage.removeItem(SESSION_KEY);
    }
  } catch {
    // Storage refused: the choice lasts as long as this page.
  }
}

function parseRoute() {
  const fragment = window.location.hash.replace(/^#/, "") || "/summary";
  const [path, query = ""] = fragment.split("?", 2);
  const segments = path.split("/").filter(Boolean);
  return { segments, params: new URLSearchParams(query) };
}

function resolve({ segments, params }) {
  const [first = "summary", second, third] = segments;
  if (first === "organizations" && second && third === "usage") {
    return {
      name: "usage",
      tab: "organizations",
      render: () => usageView(decodeURIComponent(second), params),
    };
  }
  if (first === "organizations" && second) {
    return {
      name: "organization",
      tab: "organizations",
      render: () => organizationView(decodeURIComponent(second), params),
    };
  }
  if (first === "clusters" && second) {
    return { name: "cluster", tab: "clusters", render: () => clusterView(decodeURIComponent(second)) };
  }
  const listOptions = { onError: showListError };
  const views = {
    summary: () => summaryView(params),
    organizations: () => organizationsView(params, listOptions),
    clusters: () => clustersView(params, listOptions),
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
  if (state === "ready") {
    // When a view's content is on screen, as a User Timing mark (the page benchmark reads it).
    performance.mark("dcim-ready", { detail: { view: name, route: window.location.hash } });
  }
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

// When the stored token expires, the page asks to sign in at once instead of at the next call.
let expiryTimer = 0;
const LONGEST_TIMER_MS = 2 ** 31 - 1;

function showAccount() {
  const token = storedToken();
  window.clearTimeout(expiryTimer);
  const left = storedTokenExpiry() - Date.now();
  if (token && left > 0 && left < LONGEST_TIMER_MS) {
    expiryTimer = window.setTimeout(() => route(), left + 1000);
  }
  const about = token ? describeToken(token) : null;
  const signOut = h(
    "button",
    {
      type: "button",
      id: "sign-out",
      onclick: () => {
        forgetToken();
        keepSessionChoice(false);
        route();
      },
    },
    "Sign out",
  );
  const expires = storedTokenExpiry();
  const who = about && about.who ? about.who : "a DCIM token";
  const until = expires ? ` until ${formatTime(new Date(expires).toISOString())}` : "";
  // One short line in the header (the full text is the title and the accessible name).
  replace(
    account,
    token ? [h("span", { class: "who", title: `Signed in as ${who}${until}` }, `Signed in as ${who}`), signOut] : [],
  );
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
  beginView();
  endBurst();
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
  if (!storedToken() && !useSessionCookie) {
    // Without a token every call would be refused (a 401 in the console for nothing): ask first. A
    // DCIM session cookie for the API's host still works, on request ("Use my DCIM session").
    showSignIn("none");
    setState(target.name, "signed-out");
    return;
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
    if (current !== generation || error.code === "canceled") {
      return;
    }
    if (error.code === "unauthenticated") {
      // A refused stored token is dropped, so the next attempt is not the same refused token.
      const hadToken = Boolean(storedToken());
      const hadSession = useSessionCookie;
      forgetToken();
      keepSessionChoice(false);
      showAccount();
      showSignIn(hadToken ? "refused" : hadSession ? "no-session" : "none", error.message);
      setState(target.name, "signed-out");
      return;
    }
    replace(view, errorNotice(error));
    setState(target.name, "error");
  }
}

// The sign-in panel: `why` is "none" (no token yet), "refused" (the API refused the stored token) or
// "no-session" (no DCIM session cookie either); `detail` is the API's own words, kept folded.
function showSignIn(why, detail = "") {
  replace(
    view,
    signInPanel({
      why,
      detail,
      onSignedIn: () => {
        keepSessionChoice(false);
        route();
      },
      onUseSession: () => {
        keepSessionChoice(true);
        route();
      },
    }),
  );
}

// A list that failed while the person searched: the same sign-in or notice as a failed view, in place.
function showListError(error, slot) {
  if (error.code === "unauthenticated") {
    route();
    return;
  }
  replace(slot, errorNotice(error));
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
// Another tab signed in or out (the token lives in localStorage): follow it.
window.addEventListener("storage", (event) => {
  if (event.key === TOKEN_STORAGE_KEY || event.key === null) {
    route({ quiet: document.body.dataset.state === "ready" });
  }
});
document.getElementById("refresh").addEventListener("click", () => route({ quiet: true }));
setUpSearch(document.getElementById("search-form"));
adoptTokenFromFragment();
route();
