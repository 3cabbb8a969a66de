// A table over a paged List RPC: the first page at once, then "Show more" (one page) or "Show all"
// (every remaining page, in order), following next_page_token until the API stops setting it.
//
// Pages are keyset pages (docs/architecture.md, 'Keyset paging with signed tokens'), so rows added
// while a person reads do not shift or repeat what is already shown. Failures on later pages are shown under the table; the rows stay.

import { append, cellAttributes, h, replace } from "/common/dom.js";
import { formatCount } from "/common/format.js";

// `fetchPage(token)` returns {items, nextPageToken}; `columns` as in dom.table(), plus optional
// `header` (nodes shown instead of the label, e.g. a sort link) and `ariaSort`. `onRows(all, more)` is
// called with every row shown so far after each page (totals). Resolves once the first page is shown
// (rejects with its error, so the view can show sign-in or an error instead).
//
// `rowKey(item)`, where given, names a row: one already shown is not shown again.
//
// `startToken` starts the list at a page of its own (the `page` parameter of a shared address), and
// `pageHref(token)` makes "Next page" a link to the list starting at the next page, so where a person
// is in a long list is part of the address too (back returns to the page before).
export async function pagedTable({
  id,
  caption,
  noun,
  columns,
  fetchPage,
  emptyText,
  rowAttributes,
  onRows,
  startToken = "",
  pageHref = null,
  rowKey = null,
}) {
  const first = await fetchPage(startToken);
  const container = h("div", { id, class: "paged" });
  const body = h("tbody");
  const status = h("p", { class: "paging muted", id: `${id}-paging`, "aria-live": "polite" });
  const actions = h("p", { class: "paging-actions" });
  let shown = 0;
  let nextToken = "";
  let busy = false;
  const shownRows = [];

  // A walk by a volatile key (snapshot time) may bring a row again that changed after it was shown
  // (the API never skips one: docs/architecture.md, 'A walk by snapshot time'); it is shown once.
  const keys = new Set();
  const addRows = (fetched) => {
    const items = rowKey ? fetched.filter((item) => !keys.has(rowKey(item))) : fetched;
    for (const item of items) {
      if (rowKey) {
        keys.add(rowKey(item));
      }
      const attributes = rowAttributes ? rowAttributes(item) : {};
      body.append(
        h(
          "tr",
          attributes,
          columns.map((c) => h("td", cellAttributes(c), c.cell(item))),
        ),
      );
    }
    shown += items.length;
    shownRows.push(...items);
  };

  const describe = (extra = "") => {
    // What the browser tests wait on: "loading" while a page is read, then "more" or "done".
    container.dataset.paging = busy ? "loading" : nextToken ? "more" : "done";
    const more = nextToken ? " More follow." : "";
    const where = startToken ? " (from a later page)" : "";
    replace(status, `Showing ${formatCount(shown)} ${noun}${where}.${more}${extra}`);
    replace(actions, [
      startToken && pageHref ? [h("a", { href: pageHref(""), id: `${id}-first` }, "First page"), " "] : null,
      nextToken
        ? [
            h("button", { type: "button", id: `${id}-more`, onclick: () => load(false), disabled: busy }, "Show more"),
            " ",
            h("button", { type: "button", id: `${id}-all`, onclick: () => load(true), disabled: busy }, "Show all"),
            pageHref ? [" ", h("a", { href: pageHref(nextToken), id: `${id}-next` }, "Next page")] : null,
          ]
        : null,
    ]);
  };

  const load = async (all) => {
    busy = true;
    describe(" Loading…");
    try {
      do {
        const page = await fetchPage(nextToken);
        addRows(page.items);
        nextToken = page.nextPageToken;
        if (all && nextToken) {
          replace(status, `Showing ${formatCount(shown)} ${noun}. Loading more…`);
        }
      } while (all && nextToken);
      busy = false;
      describe();
      if (onRows) {
        onRows(shownRows, Boolean(nextToken));
      }
    } catch (error) {
      busy = false;
      describe(error.code === "canceled" ? "" : ` The next page failed: ${error.message}`);
    }
  };

  addRows(first.items);
  nextToken = first.nextPageToken;
  describe();
  if (onRows) {
    onRows(shownRows, Boolean(nextToken));
  }

  if (shown === 0 && !nextToken) {
    return append(container, [h("p", { class: "notice empty" }, emptyText)]);
  }
  const head = h(
    "thead",
    {},
    h(
      "tr",
      {},
      columns.map((c) =>
        h("th", { scope: "col", class: c.numeric ? "num" : null, "aria-sort": c.ariaSort ?? null }, c.header ?? c.label),
      ),
    ),
  );
  const wrapped = h("div", { class: "table-wrap" }, h("table", { class: "stack" }, h("caption", {}, caption), head, body));
  return append(container, [wrapped, status, actions]);
}
