// Links between views: fragments with filters, and the chips that show (and remove) a filter.

import { h } from "/common/dom.js";

// "#/clusters?status=...": `params` is an object; empty values are left out.
export function href(path, params = {}) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item !== undefined && item !== null && item !== "" && item !== false) {
        query.append(key, item === true ? "1" : String(item));
      }
    }
  }
  const text = query.toString();
  return `#${path}${text ? `?${text}` : ""}`;
}

// The current filters as a plain object (repeated keys become arrays), for building the next link.
// `page` (a page token) is left out: a token belongs to exactly the filters it was read with, so any
// link that changes something starts at the first page again.
export function paramsObject(params) {
  const result = {};
  for (const key of new Set(params.keys())) {
    if (key === "page") {
      continue;
    }
    const values = params.getAll(key);
    result[key] = values.length > 1 ? values : values[0];
  }
  return result;
}

export function clusterLink(id, name) {
  return id
    ? h("a", { href: href(`/clusters/${encodeURIComponent(id)}`), class: "cluster-link" }, name || id)
    : h("span", { class: "muted" }, name || "unknown");
}

// A filter that is set, with a link that removes it.
export function chip(label, removeHref) {
  return h(
    "span",
    { class: "chip" },
    label,
    " ",
    h("a", { href: removeHref, "aria-label": `Remove filter: ${label}` }, "✕"),
  );
}

// The parameters of the fragment in the address bar now (which a search field may have moved on).
export function currentParams() {
  const fragment = window.location.hash.replace(/^#/, "");
  const index = fragment.indexOf("?");
  return new URLSearchParams(index >= 0 ? fragment.slice(index + 1) : "");
}

// The name a filter chip shows for cluster `id`: `known` (the link carried it) or the cluster's own
// name, read once (GetCluster) when the address named the cluster by id alone; the id when unreadable.
export async function clusterNameFor(id, known, read) {
  if (!id || known) {
    return known || "";
  }
  try {
    const answer = await read("GetCluster", { id });
    return answer.cluster?.name || id;
  } catch (error) {
    if (error.code === "canceled" || error.code === "unauthenticated") {
      throw error;
    }
    return id;
  }
}
