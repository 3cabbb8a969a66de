// A table over a paged List RPC: the first page at once, then "Show more" (one page) or "Show all"
// (every remaining page, in order), following next_page_token until the API stops setting it.
//
// Pages are keyset pages (docs/architecture.md, 'Keyset paging with signed tokens'), so rows added
// while a person reads do not shift or repeat what is already shown. Failures on later pages are shown under the table; the rows stay.

import { append, h, replace } from "/common/dom.js";
import { formatCount } from "/common/format.js";

// `fetchPage(token)` returns {items, nextPageToken}; `columns` as in dom.table(). Resolves once the
// first page is shown (rejects with its error, so the view can show sign-in or an error instead).
export async function pagedTable({ id, caption, noun, columns, fetchPage, emptyText, rowAttributes }) {
  const first = await fetchPage("");
  const container = h("div", { id, class: "paged" });
  const body = h("tbody");
  const status = h("p", { class: "paging muted", id: `${id}-paging`, "aria-live": "polite" });
  const actions = h("p", { class: "paging-actions" });
  let shown = 0;
  let nextToken = "";
  let busy = false;

  const addRows = (items) => {
    for (const item of items) {
      const attributes = rowAttributes ? rowAttributes(item) : {};
      body.append(
        h(
          "tr",
          attributes,
          columns.map((c) => h("td", { class: c.numeric ? "num" : null }, c.cell(item))),
        ),
      );
    }
    shown += items.length;
  };

  const describe = (extra = "") => {
    // What the browser tests wait on: "loading" while a page is read, then "more" or "done".
    container.dataset.paging = busy ? "loading" : nextToken ? "more" : "done";
    const more = nextToken ? " More follow." : "";
    replace(status, `Showing ${formatCount(shown)} ${noun}.${more}${extra}`);
    replace(
      actions,
      nextToken
        ? [
            h("button", { type: "button", id: `${id}-more`, onclick: () => load(false), disabled: busy }, "Show more"),
            " ",
            h("button", { type: "button", id: `${id}-all`, onclick: () => load(true), disabled: busy }, "Show all"),
          ]
        : [],
    );
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
    } catch (error) {
      busy = false;
      describe(` The next page failed: ${error.message}`);
    }
  };

  addRows(first.items);
  nextToken = first.nextPageToken;
  describe();

  if (shown === 0 && !nextToken) {
    return append(container, [h("p", { class: "notice empty" }, emptyText)]);
  }
  const head = h(
    "thead",
    {},
    h(
      "tr",
      {},
      columns.map((c) => h("th", { scope: "col", class: c.numeric ? "num" : null }, c.label)),
    ),
  );
  return append(container, [h("table", {}, h("caption", {}, caption), head, body), status, actions]);
}
