// Building the page from API data without innerHTML, so no string from an API is ever parsed as HTML.
//
// h("td", { class: "num" }, "42") makes <td class="num">42</td>. Strings and numbers become text nodes
// (the browser escapes them), arrays are flattened, null/undefined/false are skipped. Attributes are set
// with setAttribute, except "on<event>" keys, which add listeners, and "dataset", an object of data-*.

export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes ?? {})) {
    if (value === null || value === undefined || value === false) {
      continue;
    }
    if (key.startsWith("on") && typeof value === "function") {
      element.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (key === "dataset") {
      Object.assign(element.dataset, value);
    } else {
      element.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(element, children);
  return element;
}

export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) {
      continue;
    }
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

// Replaces everything inside `parent` with `children`.
export function replace(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}

// A cell's attributes: its column's label (a phone shows it beside the value when rows become cards)
// and `priority`, the cells a phone shows first.
export function cellAttributes(column) {
  const classes = [column.numeric ? "num" : null, column.priority ? "priority" : null].filter(Boolean);
  return { class: classes.length ? classes.join(" ") : null, dataset: { label: column.label } };
}

// A table with a caption, a header row and one row per item; `columns` are {label, cell(item), numeric,
// priority}. Its rows become cards on a phone (class "stack").
export function table(caption, columns, items, attributes = {}) {
  const head = h(
    "thead",
    {},
    h(
      "tr",
      {},
      columns.map((c) => h("th", { scope: "col", class: c.numeric ? "num" : null }, c.label)),
    ),
  );
  const body = h(
    "tbody",
    {},
    items.map((item) =>
      h(
        "tr",
        {},
        columns.map((c) => h("td", cellAttributes(c), c.cell(item))),
      ),
    ),
  );
  const classes = ["stack", attributes.class].filter(Boolean).join(" ");
  return h("table", { ...attributes, class: classes }, caption ? h("caption", {}, caption) : null, head, body);
}
