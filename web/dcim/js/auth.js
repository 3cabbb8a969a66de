// The DCIM token this page sends as `Authorization: Bearer` (docs/architecture.md, 'Staff tokens are DCIM tokens').
//
// DCIM hands the token over in the URL fragment (`platform.html#token=...`), which never reaches any
// server, not even in a Referer. The page takes it once and removes it from the address bar and
// history at once. A person can also paste a token into the sign-in form.
//
// Where it is kept: localStorage, with the token's own expiry (`exp`), so a link opened in another
// tab is signed in too, for exactly as long as the token is valid, and no longer: an expired entry is
// removed when it is read. Why not the `dcim_auth` cookie: that cookie belongs to the API's host and
// only DCIM's sign-in can set it; this page runs on an origin of its own and cannot set a cookie the
// browser would send to the API. The page still calls with credentials included, so where DCIM has
// set that cookie it works as well. "Sign out" removes the token, which signs out every tab (the
// others hear it through the `storage` event).

import { h } from "/common/dom.js";

const STORAGE_KEY = "fleet.dcim.token";
// A token whose expiry cannot be read (the API refuses those anyway) is kept this long at most.
const FALLBACK_LIFETIME_MS = 60 * 60 * 1000;

export const TOKEN_STORAGE_KEY = STORAGE_KEY;

function readEntry() {
  try {
    const raw = localStorage.getItem(STORAGE_KEY);
    if (!raw) {
      return null;
    }
    const entry = JSON.parse(raw);
    if (!entry || typeof entry.token !== "string" || typeof entry.expires !== "number") {
      localStorage.removeItem(STORAGE_KEY);
      return null;
    }
    return entry;
  } catch {
    return null;
  }
}

export function storedToken() {
  const entry = readEntry();
  if (!entry) {
    return "";
  }
  if (entry.expires <= Date.now()) {
    forgetToken();
    return "";
  }
  return entry.token;
}

// When the stored token expires (milliseconds since the epoch), or 0 without one.
export function storedTokenExpiry() {
  const entry = readEntry();
  return entry && entry.expires > Date.now() ? entry.expires : 0;
}

export function storeToken(token) {
  const trimmed = token.trim();
  if (!trimmed) {
    forgetToken();
    return;
  }
  const about = describeToken(trimmed);
  const expires = about && about.expires ? about.expires.getTime() : Date.now() + FALLBACK_LIFETIME_MS;
  try {
    localStorage.setItem(STORAGE_KEY, JSON.stringify({ token: trimmed, expires }));
  } catch {
    // Storage refused (private mode, quota): the page then relies on a dcim_auth cookie alone.
  }
}

export function forgetToken() {
  try {
    localStorage.removeItem(STORAGE_KEY);
  } catch {
    // Nothing was stored.
  }
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

// Why a person is asked to sign in, in their words (the API's developer message is folded below).
const SIGN_IN_REASONS = {
  none: "This browser holds no DCIM token yet.",
  refused: "The token this browser held was not accepted: it has expired or is not a DCIM staff token.",
  "no-session": "The fleet API did not accept this browser's DCIM session: it has ended or was never opened here.",
};

// The sign-in notice: why, a field to paste a DCIM token into, and a way to use DCIM's own session.
export function signInPanel({ why = "none", detail = "", onSignedIn, onUseSession }) {
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
    " ",
    why === "none" && onUseSession
      ? h("button", { type: "button", id: "use-session", onclick: () => onUseSession() }, "Use my DCIM session")
      : null,
  );
  return h(
    "section",
    { class: "notice bad", id: "sign-in", "aria-labelledby": "sign-in-title" },
    h("h1", { class: "title", id: "sign-in-title" }, "Sign in to see the platform"),
    h("p", { id: "sign-in-reason", dataset: { why } }, SIGN_IN_REASONS[why] ?? SIGN_IN_REASONS.none),
    h("p", { class: "muted" }, "Open this page from DCIM, or paste a DCIM staff token below. It is kept in this browser until it expires."),
    form,
    detail
      ? h("details", { class: "technical" }, h("summary", {}, "Technical details"), h("p", { class: "muted" }, detail))
      : null,
  );
}
