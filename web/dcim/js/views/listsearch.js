// The search field above a list: the list follows as the person types (debounced), a newer search
// cancels the request of an older one, and the address keeps the query (one history entry per burst
// of typing), so the result can be shared and the back button leaves it.

import { h, replace } from "/common/dom.js";
import { debounce, setFragment } from "../nav.js";

export const SEARCH_DELAY_MS = 250;
export const MAX_QUERY_LENGTH = 100;

// `render(query, signal)` resolves to the list for `query`; `fragmentFor(query)` is its address.
// Returns {field, slot}: the labelled input and the element the list is shown in.
export function searchableList({ id, label, placeholder, query, first, render, fragmentFor, onError }) {
  const slot = h("div", { class: "list-slot", id: `${id}-slot`, dataset: { query } });
  replace(slot, first);
  let controller = null;
  let shown = query;
  const run = debounce(async (text) => {
    if (text === shown) {
      return;
    }
    controller?.abort();
    controller = new AbortController();
    const { signal } = controller;
    slot.dataset.pending = text;
    setFragment(fragmentFor(text), { burst: id });
    try {
      const list = await render(text, signal);
      if (signal.aborted) {
        return;
      }
      replace(slot, list);
      shown = text;
      slot.dataset.query = text;
      delete slot.dataset.pending;
    } catch (error) {
      if (signal.aborted || error.code === "canceled") {
        return;
      }
      delete slot.dataset.pending;
      onError(error, slot);
    }
  }, SEARCH_DELAY_MS);
  const input = h("input", {
    type: "search",
    id: `${id}-query`,
    name: "q",
    value: query,
    placeholder,
    maxlength: MAX_QUERY_LENGTH,
    autocomplete: "off",
    spellcheck: "false",
  });
  input.addEventListener("input", () => run(input.value.trim()));
  const field = h("p", { class: "list-search" }, h("label", { for: `${id}-query` }, label, " "), input);
  return { field, slot };
}

// The page token a shared address starts the list at, while its search is the one shown.
export function startToken(params, query) {
  return query === (params.get("q") ?? "").trim() ? (params.get("page") ?? "") : "";
}
