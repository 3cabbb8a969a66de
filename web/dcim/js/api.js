// fundament.fleet.v1.FleetService over the Connect protocol, with the DCIM token.
//
// Every call is a POST: it carries an Authorization header, so it is preflighted anyway and must not be
// shared by caches. Credentials are included so a `dcim_auth` cookie for the API's host also works; the
// API allows credentials for the DCIM origins only.

import { configuredUrl } from "/common/config.js";
import { RpcError, callUnary } from "/common/connect.js";
import { storedToken } from "./auth.js";

const SERVICE = "fundament.fleet.v1.FleetService";
// The API's default; a page of 100 renders quickly, "Show all" walks the rest.
export const PAGE_SIZE = 100;

export function adminApiUrl() {
  return configuredUrl("adminApiUrl");
}

export async function fleet(method, message = {}) {
  const baseUrl = adminApiUrl();
  if (!baseUrl) {
    throw new RpcError("unavailable", "this DCIM has no fleet API configured (adminApiUrl is empty)", {
      reachable: false,
    });
  }
  return callUnary(baseUrl, `${SERVICE}/${method}`, message, {
    token: storedToken(),
    credentials: "include",
  });
}

// A function that reads one page of a List RPC: (pageToken) => {items, nextPageToken}.
export function pager(method, itemsKey, filters) {
  return async (pageToken) => {
    const answer = await fleet(method, { ...filters, pageSize: PAGE_SIZE, pageToken: pageToken ?? "" });
    return {
      items: Array.isArray(answer[itemsKey]) ? answer[itemsKey] : [],
      nextPageToken: answer.nextPageToken ?? "",
    };
  };
}
