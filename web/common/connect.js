// Calling a Connect unary RPC from the browser with plain fetch: no generated client, no build step.
//
// The Connect protocol (v1) for unary calls with JSON is small enough to speak directly:
//   POST <base>/<package.Service>/<Method>  with Content-Type: application/json and the request as JSON,
//   GET  <base>/<package.Service>/<Method>?connect=v1&encoding=json&message=<request JSON>  for
//        side-effect-free RPCs (cacheable, and a "simple" CORS request: no preflight).
// A success is HTTP 200 with the response message as JSON (proto3 JSON: lowerCamelCase names, int64 as
// strings, enums by name, fields at their default left out). A failure is any other status with a body
// {code, message}; when the body is not that (a proxy's page, a gateway error) the code is derived from
// the HTTP status as the Connect specification prescribes.
//
// Every failure surfaces as an RpcError whose `code` is a Connect code name ("unavailable",
// "unauthenticated", ...). A request the browser could not complete at all (server down, CORS refused,
// timed out) is "unavailable" with `reachable = false`: to a page it means "the API cannot be reached".

const DEFAULT_TIMEOUT_MS = 15000;

// Connect's mapping of HTTP status to code, for error bodies that are not Connect JSON.
const HTTP_STATUS_CODES = new Map([
  [400, "internal"],
  [401, "unauthenticated"],
  [403, "permission_denied"],
  [404, "unimplemented"],
  [429, "unavailable"],
  [502, "unavailable"],
  [503, "unavailable"],
  [504, "unavailable"],
]);

export class RpcError extends Error {
  constructor(code, message, { reachable = true } = {}) {
    super(message || code);
    this.name = "RpcError";
    this.code = code;
    this.reachable = reachable;
  }
}

// One signal that aborts when any of `signals` does (null entries are skipped; null when none is left).
// AbortSignal.any arrived in browsers in 2023 and AbortSignal.timeout in 2022; where a browser lacks them,
// a controller of our own does the same, with the same abort reasons, so callUnary tells a timeout from
// a cancellation either way.
export function anySignal(signals) {
  const given = signals.filter(Boolean);
  if (given.length <= 1) {
    return given[0] ?? null;
  }
  if (typeof AbortSignal.any === "function") {
    return AbortSignal.any(given);
  }
  const controller = new AbortController();
  const listeners = [];
  const abortWith = (signal) => {
    // The first abort wins; the listeners go with it, so a long-lived signal (the view's) keeps none.
    for (const [source, listener] of listeners) {
      source.removeEventListener("abort", listener);
    }
    controller.abort(signal.reason);
  };
  for (const signal of given) {
    if (signal.aborted) {
      abortWith(signal);
      break;
    }
    const listener = () => abortWith(signal);
    listeners.push([signal, listener]);
    signal.addEventListener("abort", listener);
  }
  return controller.signal;
}

// A signal that aborts with a TimeoutError after `ms` milliseconds.
export function timeoutSignal(ms) {
  if (typeof AbortSignal.timeout === "function") {
    return AbortSignal.timeout(ms);
  }
  const controller = new AbortController();
  setTimeout(() => controller.abort(new DOMException("the call timed out", "TimeoutError")), ms);
  return controller.signal;
}

// Joins a configured base URL and a procedure path without doubling or losing the slash.
export function procedureUrl(baseUrl, procedure) {
  return `${baseUrl.replace(/\/+$/, "")}/${procedure.replace(/^\/+/, "")}`;
}

// Calls one unary RPC. `procedure` is "package.Service/Method", `message` the request as a plain object.
// Options: get (use the GET form), token (sent as Authorization: Bearer), credentials (fetch's
// credentials mode; "omit" unless the caller needs cookies), timeoutMs, signal (an AbortSignal: a
// call whose answer is no longer wanted, such as a search the person has typed past, is cancelled
// and rejects with an RpcError whose code is "canceled").
export async function callUnary(baseUrl, procedure, message, options = {}) {
  const { get = false, token = "", credentials = "omit", timeoutMs = DEFAULT_TIMEOUT_MS, signal = null } = options;
  const body = JSON.stringify(message ?? {});
  const url = new URL(procedureUrl(baseUrl, procedure), document.baseURI);
  const timeout = timeoutSignal(timeoutMs);
  const init = {
    credentials,
    cache: "default",
    signal: anySignal([timeout, signal]),
    headers: {},
  };
  if (get) {
    url.searchParams.set("connect", "v1");
    url.searchParams.set("encoding", "json");
    url.searchParams.set("message", body);
    init.method = "GET";
  } else {
    init.method = "POST";
    init.body = body;
    init.headers["Content-Type"] = "application/json";
    init.headers["Connect-Protocol-Version"] = "1";
    init.headers["Connect-Timeout-Ms"] = String(timeoutMs);
  }
  if (token) {
    init.headers.Authorization = `Bearer ${token}`;
  }

  let response;
  try {
    response = await fetch(url, init);
  } catch (error) {
    if (signal && signal.aborted) {
      throw new RpcError("canceled", "the call was cancelled", { reachable: true });
    }
    // fetch rejects only when no HTTP answer was read: refused connection, CORS refusal, timeout.
    // Asked of the timeout's own signal: engines without abort reasons reject with a plain AbortError.
    const timedOut = timeout.aborted || (error && error.name === "TimeoutError");
    const reason = timedOut ? "the API did not answer in time" : "the API cannot be reached";
    throw new RpcError("unavailable", reason, { reachable: false });
  }
  let text;
  try {
    text = await response.text();
  } catch {
    const reason = signal && signal.aborted ? "the call was cancelled" : "the answer was cut off";
    throw new RpcError(signal && signal.aborted ? "canceled" : "unavailable", reason);
  }
  if (response.ok) {
    try {
      return text ? JSON.parse(text) : {};
    } catch {
      throw new RpcError("internal", "the API answered with something that is not JSON");
    }
  }
  throw errorFromResponse(response.status, text);
}

function errorFromResponse(status, text) {
  try {
    const parsed = JSON.parse(text);
    if (parsed && typeof parsed.code === "string") {
      return new RpcError(parsed.code, typeof parsed.message === "string" ? parsed.message : "");
    }
  } catch {
    // Not Connect's error JSON; fall through to the status mapping.
  }
  const code = HTTP_STATUS_CODES.get(status) ?? "unknown";
  return new RpcError(code, `HTTP ${status}`);
}
