// Sortable column headers: each is a link to the same list in another order, so an order is part of
// the address (shareable, and the back button returns to the previous one).
//
// Fragment parameters: order (a key below; absent: by name) and desc=1 (reversed). The API sorts
// (each order is a keyset of its own, so paging stays consistent); the page never sorts rows itself.

import { h } from "/common/dom.js";

export const CLUSTER_ORDERS = {
  name: "CLUSTER_ORDER_NAME",
  organization: "CLUSTER_ORDER_ORGANIZATION",
  pods: "CLUSTER_ORDER_PODS",
  nodes: "CLUSTER_ORDER_NODES",
  observed: "CLUSTER_ORDER_OBSERVED",
  since: "CLUSTER_ORDER_STATUS_SINCE",
};

export const ORGANIZATION_ORDERS = {
  name: "ORGANIZATION_ORDER_NAME",
  alias: "ORGANIZATION_ORDER_ALIAS",
  created: "ORGANIZATION_ORDER_CREATED",
};

// The order a list's fragment asks for: {key, desc, order (the API's enum name)}; unknown keys are by name.
export function requestedOrder(params, orders) {
  const key = Object.hasOwn(orders, params.get("order") ?? "") ? params.get("order") : "name";
  return { key, desc: params.get("desc") === "1", order: orders[key] };
}

// A header link sorting by `key`: the first click sorts ascending (or descending for counts and times,
// `firstDesc`), the next one reverses. `link(key, desc)` builds the fragment.
export function sortLink(label, key, current, link, { firstDesc = false } = {}) {
  const active = current.key === key;
  const desc = active ? !current.desc : firstDesc;
  const arrow = active ? (current.desc ? " ▼" : " ▲") : "";
  const state = active ? (current.desc ? "descending" : "ascending") : "";
  return h(
    "a",
    {
      href: link(key, desc),
      class: active ? "sort active" : "sort",
      dataset: { sort: key, dir: state || "none" },
      title: `Sort by ${label.toLowerCase()}${active ? (current.desc ? ", ascending" : ", descending") : ""}`,
    },
    label,
    arrow ? h("span", { "aria-hidden": "true" }, arrow) : null,
  );
}

// aria-sort of a column header sorted by `keys` (one of them active): "ascending", "descending" or none.
export function ariaSort(current, ...keys) {
  if (!keys.includes(current.key)) {
    return null;
  }
  return current.desc ? "descending" : "ascending";
}
