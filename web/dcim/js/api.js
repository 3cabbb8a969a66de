// fundament.fleet.v1.FleetService over the Connect protocol, with the DCIM token.
//
// Every call is a POST: it carries an Authorization header, so it is preflighted anyway and must not be
// shared by caches. Credentials are included so a `dcim_auth` cookie for the API's host also works; the
// API allows credentials for the DCIM origins only.
//
// Calls belong to the view on screen: when the person moves on, the router aborts them
// (`beginView`), so a slow answer for a page nobody looks at any more costs nothing further.

import { configuredUrl } from "/common/config.js";
import { RpcError, anySignal, callUnary } from "/common/connect.js";
import { storedToken } from "./auth.js";

const SERVICE = "fundament.fleet.v1.FleetService";
// The API's default; a page of 100 renders quickly, "Show all" walks the rest.
export const PAGE_SIZE = 100;

let viewController = new AbortController();
// Milliseconds to add to this browser's clock to get the API's (learnt from GetFleetSummary's `read`).
let serverOffsetMs = null;

export function adminApiUrl() {
  return configuredUrl("adminApiUrl");
}

// A new view is shown: calls of the previous one are cancelled.
export function beginView() {
  viewController.abort();
  viewController = new AbortController();
  return viewController.signal;
}

// `signal` cancels this call (a stale search); calls are also cancelled when the view changes, unless
// `detached` (the header's search box, which outlives views).
export async function fleet(method, message = {}, { signal = null, detached = false } = {}) {
  const baseUrl = adminApiUrl();
  if (!baseUrl) {
    throw new RpcError("unavailable", "this DCIM has no fleet API configured (adminApiUrl is empty)", {
      reachable: false,
    });
  }
  const answer = await callUnary(baseUrl, `${SERVICE}/${method}`, message, {
    token: storedToken(),
    credentials: "include",
    signal: anySignal([detached ? null : viewController.signal, signal]),
  });
  if (method === "GetFleetSummary" && answer.read) {
    learnServerTime(answer.read);
  }
  return answer;
}

function learnServerTime(iso) {
  const read = Date.parse(iso);
  if (Number.isFinite(read)) {
    serverOffsetMs = read - Date.now();
  }
}

// The API's current time in milliseconds. Trend ranges are anchored to it, not to this browser's
// clock, which may be off. Learnt from the summary's `read` time (read once when not known yet).
export async function serverNow() {
  if (serverOffsetMs === null) {
    await fleet("GetFleetSummary");
  }
  return Date.now() + (serverOffsetMs ?? 0);
}

// A function that reads one page of a List RPC: (pageToken) => {items, nextPageToken}.
export function pager(method, itemsKey, filters, { signal = null, pageSize = PAGE_SIZE } = {}) {
  return async (pageToken) => {
    const answer = await fleet(method, { ...filters, pageSize, pageToken: pageToken ?? "" }, { signal });
    return {
      items: Array.isArray(answer[itemsKey]) ? answer[itemsKey] : [],
      nextPageToken: answer.nextPageToken ?? "",
    };
  };
}
