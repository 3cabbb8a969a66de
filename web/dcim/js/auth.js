// The DCIM token this page sends as `Authorization: Bearer` (docs/architecture.md, 'Staff tokens are DCIM tokens').
//
// DCIM hands the token over in the URL fragment (`platform.html#token=...`), which never reaches any
// server, not even in a Referer. The page takes it once, keeps it in sessionStorage (gone when the tab
// closes) and removes it from the address bar and history at once. A person can also paste a token into
// the sign-in form. Without a token the page still calls the API with credentials included, so a
// `dcim_auth` cookie set for the API's host works too.

import { h } from "/common/dom.js";

const STORAGE_KEY = "fleet.dcim.token";

export function storedToken() {
  try {
    return sessionStorage.getItem(STORAGE_KEY) ?? "";
  } catch {
    return "";
  }
}

export function storeToken(token) {
  const trimmed = token.trim();
  if (trimmed) {
    sessionStorage.setItem(STORAGE_KEY, trimmed);
  } else {
    sessionStorage.removeItem(STORAGE_KEY);
  }
}

export function forgetToken() {
  sessionStorage.removeItem(STORAGE_KEY);
}

// Moves a `#token=...` fragment into storage and out of the URL; returns whether there was one.
export function adoptTokenFromFragment() {
  const fragment = window.location.hash.replace(/^#/, "");
  if (!fragment.startsWith("token=")) {
    return false;
  }
  const params = new URLSearchParams(fragment);
  storeToken(params.get("token") ?? "");
  const next = params.get("next") ?? "/summary";
  const route = next.startsWith("/") ? next : "/summary";
  window.history.replaceState(null, "", `${window.location.pathname}${window.location.search}#${route}`);
  return true;
}

// What the token says about its holder, for display only: the API is what checks it.
export function describeToken(token) {
  const parts = token.split(".");
  if (parts.length !== 3) {
    return null;
  }
  try {
    const json = atob(parts[1].replace(/-/g, "+").replace(/_/g, "/"));
    const claims = JSON.parse(json);
    const who = typeof claims.name === "string" && claims.name ? claims.name : String(claims.sub ?? "");
    const expires = typeof claims.exp === "number" ? new Date(claims.exp * 1000) : null;
    return { who, expires };
  } catch {
    return null;
  }
}

// The sign-in notice: why the API refused, and a field to paste a DCIM token into.
export function signInPanel(reason, onSignedIn) {
  const input = h("textarea", {
    id: "token-input",
    name: "token",
    rows: 3,
    cols: 60,
    spellcheck: "false",
    autocomplete: "off",
    required: true,
  });
  const form = h(
    "form",
    {
      id: "sign-in-form",
      onsubmit: (event) => {
        event.preventDefault();
        storeToken(input.value);
        onSignedIn();
      },
    },
    h("label", { for: "token-input" }, "DCIM token"),
    h("br"),
    input,
    h("br"),
    h("button", { type: "submit" }, "Sign in"),
  );
  return h(
    "section",
    { class: "notice bad", id: "sign-in", "aria-labelledby": "sign-in-title" },
    h("p", { class: "title", id: "sign-in-title" }, "Sign in to see the platform."),
    h("p", {}, "The fleet API needs a DCIM staff token. ", reason ? `It answered: ${reason}` : ""),
    h("p", { class: "muted" }, "Open this page from DCIM, or paste a token below. It is kept for this tab only."),
    form,
  );
}
