// The header's search box: clusters, organizations and namespaces matching what the person types,
// shown as they type (ListClusters and ListOrganizations with `query`, SearchNamespaces), a few of
// each with a link to all clusters or organizations that match.
//
// Each keystroke waits SEARCH_DELAY_MS for the next; a new search cancels the requests of the one
// before (fetch aborted), and only the answers to the latest query are ever shown. The panel carries
// `data-query` (the query its results are for) and `data-pending` (a query being read), which the
// browser tests wait on.

import { h, replace } from "/common/dom.js";
import { fleet } from "./api.js";
import { statusBadge } from "./labels.js";
import { debounce } from "./nav.js";
import { href } from "./views/links.js";
import { namespaceName } from "./views/names.js";
import { MAX_QUERY_LENGTH, SEARCH_DELAY_MS } from "./views/listsearch.js";

const PER_KIND = 5;

function group(title, id, items, more) {
  return h(
    "section",
    { class: "search-group", id, "aria-label": title },
    h("h2", {}, title),
    items.length ? h("ul", {}, items) : h("p", { class: "muted" }, "None."),
    more,
  );
}

function clusterItem(c) {
  return h(
    "li",
    { dataset: { clusterId: c.id ?? "" } },
    h(
      "a",
      { href: href(`/clusters/${encodeURIComponent(c.id ?? "")}`) },
      `${c.organizationName ?? ""}/${c.name ?? ""}`,
    ),
    " ",
    statusBadge(c.status),
  );
}

function organizationItem(org) {
  return h(
    "li",
    { dataset: { organization: org.name ?? "" } },
    h("a", { href: href(`/organizations/${encodeURIComponent(org.id ?? "")}`) }, org.alias || org.name),
    org.alias && org.alias !== org.name ? h("span", { class: "muted" }, ` ${org.name}`) : null,
  );
}

function namespaceItem(n) {
  return h(
    "li",
    { dataset: { namespaceId: n.id ?? "" } },
    // Both names where the API gives the Kubernetes one (NamespaceMatch.kubernetes_name).
    h("a", { href: href(`/clusters/${encodeURIComponent(n.clusterId ?? "")}`) }, namespaceName(n.name, n.kubernetesName)),
    h("span", { class: "muted" }, ` in ${n.organizationName ?? ""}/${n.clusterName ?? ""}, project ${n.projectName ?? ""}`),
  );
}

function failed(result) {
  const error = result.reason;
  return h("p", { class: "bad-text" }, error && error.code === "unauthenticated" ? "Sign in to search." : `Search failed: ${error?.message ?? error}`);
}

export function setUpSearch(form) {
  const input = form.querySelector("input");
  const panel = form.querySelector("#search-results");
  let controller = null;

  const close = () => {
    controller?.abort();
    panel.hidden = true;
    delete panel.dataset.query;
    delete panel.dataset.pending;
  };

  const run = debounce(async (query) => {
    controller?.abort();
    controller = new AbortController();
    const { signal } = controller;
    panel.dataset.pending = query;
    const options = { signal, detached: true };
    const results = await Promise.allSettled([
      fleet("ListClusters", { query, pageSize: PER_KIND }, options),
      fleet("ListOrganizations", { query, pageSize: PER_KIND }, options),
      fleet("SearchNamespaces", { query, pageSize: PER_KIND }, options),
    ]);
    if (signal.aborted) {
      return; // a newer search, or the box was emptied: this one's answers are never shown
    }
    const [clusters, organizations, namespaces] = results;
    replace(
      panel,
      clusters.status === "fulfilled"
        ? group(
            "Clusters",
            "search-clusters",
            (clusters.value.clusters ?? []).map(clusterItem),
            h("a", { class: "more", href: href("/clusters", { q: query }) }, `All clusters matching “${query}”`),
          )
        : failed(clusters),
      organizations.status === "fulfilled"
        ? group(
            "Organizations",
            "search-organizations",
            (organizations.value.organizations ?? []).map(organizationItem),
            h("a", { class: "more", href: href("/organizations", { q: query }) }, `All organizations matching “${query}”`),
          )
        : failed(organizations),
      namespaces.status === "fulfilled"
        ? group(
            "Namespaces",
            "search-namespaces",
            (namespaces.value.namespaces ?? []).map(namespaceItem),
            namespaces.value.nextPageToken ? h("p", { class: "muted" }, "More match: type more of the name.") : null,
          )
        : failed(namespaces),
    );
    panel.hidden = false;
    panel.dataset.query = query;
    delete panel.dataset.pending;
  }, SEARCH_DELAY_MS);

  input.setAttribute("maxlength", String(MAX_QUERY_LENGTH));
  input.addEventListener("input", () => {
    const query = input.value.trim();
    if (!query) {
      run.cancel();
      close();
      return;
    }
    run(query);
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      run.cancel();
      close();
    }
  });
  // Enter opens the cluster list for the query (the usual starting point).
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const query = input.value.trim();
    if (query) {
      run.cancel();
      close();
      window.location.hash = href("/clusters", { q: query });
    }
  });
  // Following a result (or any other navigation) closes the panel.
  window.addEventListener("hashchange", () => {
    run.cancel();
    close();
  });
}
