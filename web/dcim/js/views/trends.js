// Trend charts (GetFleetTrends): how clusters, clusters needing attention, nodes, pods and open
// findings moved over a range, fleet-wide or for one organization, drawn as inline SVG (no library).
//
// The range ends at the API's time, not this browser's, and is one of RANGES (fragment parameter
// `range`); each has a step that keeps a chart at a few hundred points at most. The history holds
// what the inventory loop recorded after each round (fleet-wide) and each hour (per organization), so
// a range older than its retention shows no points.

import { h } from "/common/dom.js";
import { count, formatCount, formatDuration, formatTime } from "/common/format.js";
import { fleet, serverNow } from "../api.js";
import { href } from "./links.js";

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 320;
const HEIGHT = 90;
const PAD = 4;

// Each range's step keeps a chart at 60 to 120 points. Ranges under a day read the fleet's per-round
// history (kept 48 hours by default): at a one-minute step every inventory round is a point of its own.
// An organization has hourly history only, so its short ranges hold at most a few points.
export const RANGES = {
  "1h": { label: "1 hour", seconds: 3600, step: 60 },
  "6h": { label: "6 hours", seconds: 6 * 3600, step: 300 },
  "24h": { label: "24 hours", seconds: 86400, step: 900 },
  "7d": { label: "7 days", seconds: 7 * 86400, step: 3600 },
  "30d": { label: "30 days", seconds: 30 * 86400, step: 6 * 3600 },
};
// Addresses written before the ranges were renamed keep working.
const ALIASES = { "1d": "24h" };
const DEFAULT_RANGE = "7d";
// History shorter than this share of the range is called out as short.
const SHORT_SHARE = 0.5;

const ATTENTION = new Set(["CLUSTER_STATUS_UNHEALTHY", "CLUSTER_STATUS_ERROR", "CLUSTER_STATUS_LOST"]);

const SERIES = [
  ["clusters", "Clusters", (p) => count(p.clusters)],
  [
    "attention",
    "Needing attention",
    (p) => (p.clustersByStatus ?? []).filter((s) => ATTENTION.has(s.status)).reduce((n, s) => n + count(s.clusters), 0),
  ],
  ["nodes", "Nodes", (p) => count(p.nodes)],
  ["pods", "Pods", (p) => count(p.pods)],
  ["findings", "Open drift findings", (p) => (p.openFindingsByKind ?? []).reduce((n, k) => n + count(k.findings), 0)],
];

function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) {
    element.setAttribute(key, String(value));
  }
  for (const child of children) {
    element.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return element;
}

// One series as a line over the range [start, end] (milliseconds), scaled to its own min and max.
function chart(key, label, values, times, start, end) {
  const low = Math.min(...values);
  const high = Math.max(...values);
  const span = high - low || 1;
  const x = (t) => PAD + ((t - start) / (end - start || 1)) * (WIDTH - 2 * PAD);
  const y = (v) => (high === low ? HEIGHT / 2 : HEIGHT - PAD - ((v - low) / span) * (HEIGHT - 2 * PAD));
  const points = values.map((v, i) => `${x(times[i]).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  const last = values[values.length - 1];
  const description = `${label}: ${formatCount(last)} at the latest point, between ${formatCount(low)} and ${formatCount(high)} over ${values.length} points`;
  const picture = svg(
    "svg",
    {
      viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
      preserveAspectRatio: "none",
      class: "spark",
      role: "img",
      "aria-label": description,
    },
    svg("title", {}, description),
    svg("line", { x1: PAD, x2: WIDTH - PAD, y1: HEIGHT - PAD, y2: HEIGHT - PAD, class: "axis" }),
    values.length > 1
      ? svg("polyline", { points, class: "line", "vector-effect": "non-scaling-stroke" })
      : svg("circle", { cx: x(times[0]), cy: y(values[0]), r: 2.5, class: "dot" }),
  );
  return h(
    "figure",
    { class: "chart", dataset: { series: key, points: String(values.length), last: String(last) } },
    h(
      "figcaption",
      {},
      h("span", { class: "label" }, label),
      " ",
      h("span", { class: "value" }, formatCount(last)),
      h("span", { class: "range muted" }, ` ${formatCount(low)}–${formatCount(high)}`),
    ),
    picture,
  );
}

function rangeLinks(path, params, current) {
  return h(
    "p",
    { class: "ranges", id: "trend-ranges" },
    "Range: ",
    Object.entries(RANGES).map(([key, range]) => [
      key === current
        ? h("strong", { "aria-current": "true", dataset: { range: key } }, range.label)
        : h("a", { href: href(path, { ...params, range: key }), dataset: { range: key } }, range.label),
      " ",
    ]),
  );
}

// The trends section for `organizationId` (empty: the whole fleet). `path` and `params` build the
// range links (the view's own fragment). Never rejects for the trends alone: a failure is shown in
// the section, and the rest of the view stays.
export async function trendsSection({ organizationId = "", path, params = {}, rangeKey }) {
  const asked = rangeKey ?? "";
  const known = Object.hasOwn(RANGES, asked) ? asked : Object.hasOwn(ALIASES, asked) ? ALIASES[asked] : null;
  const section = h("section", { id: "trends", "aria-labelledby": "trends-title", dataset: { range: known ?? "" } });
  if (asked && !known) {
    // A range this page does not know is refused in plain sight, never replaced by another one.
    section.dataset.points = "0";
    section.dataset.refused = asked;
    section.append(
      h("h2", { id: "trends-title" }, "Trends"),
      h(
        "p",
        { class: "notice bad", id: "trends-refused", role: "alert" },
        `“${asked}” is not a range this page knows. Pick one of: `,
        Object.values(RANGES)
          .map((r) => r.label)
          .join(", "),
        ".",
      ),
      rangeLinks(path, params, ""),
    );
    return section;
  }
  const key = known ?? DEFAULT_RANGE;
  const range = RANGES[key];
  section.dataset.range = key;
  section.append(h("h2", { id: "trends-title" }, `Trends, last ${range.label}`), rangeLinks(path, params, key));
  let points;
  let start;
  let end;
  try {
    end = await serverNow();
    start = end - range.seconds * 1000;
    const answer = await fleet("GetFleetTrends", {
      start: new Date(start).toISOString(),
      end: new Date(end).toISOString(),
      stepSeconds: range.step,
      organizationId,
    });
    points = answer.points ?? [];
  } catch (error) {
    if (error.code === "canceled" || error.code === "unauthenticated") {
      throw error;
    }
    section.dataset.points = "0";
    section.append(h("p", { class: "notice", id: "trends-failed" }, `Trends could not be read: ${error.message}`));
    return section;
  }
  section.dataset.points = String(points.length);
  if (!points.length) {
    section.append(
      h(
        "p",
        { class: "muted", id: "no-trends" },
        "No history recorded in this range: the inventory loop records totals after each round.",
      ),
    );
    return section;
  }
  // The x axis is the whole range asked for, so a gap or a short history shows as such.
  const times = points.map((p) => Date.parse(p.at));
  const recorded = end - times[0];
  if (points.length < 2 || recorded < range.seconds * 1000 * SHORT_SHARE) {
    section.dataset.short = "yes";
    section.append(
      h(
        "p",
        { class: "notice warn", id: "short-history" },
        h("strong", {}, "History is still short: "),
        `${formatCount(points.length)} ${points.length === 1 ? "point" : "points"} since ${formatTime(points[0].at)}, `,
        `${formatDuration(recorded / 1000)} of the ${range.label} shown.`,
        organizationId
          ? " An organization's totals are recorded once an hour."
          : key === "1h" || key === "6h"
            ? ""
            : " The 1 hour and 6 hours ranges show every inventory round.",
      ),
    );
  }
  section.append(
    h(
      "div",
      { class: "charts" },
      SERIES.map(([name, label, read]) => chart(name, label, points.map(read), times, start, end)),
    ),
    h(
      "p",
      { class: "muted trend-span" },
      `From ${formatTime(new Date(start).toISOString())} to ${formatTime(new Date(end).toISOString())}: `,
      `${formatCount(points.length)} points, the first ${formatTime(points[0].at)}`,
      organizationId ? " (hourly)." : range.step < 3600 ? ` (every inventory round, one point per ${formatDuration(range.step)} at most).` : ".",
    ),
  );
  return section;
}
