// One organization's usage (ListUsage) over a calendar month in UTC, a chart per resource type with
// one bar per day, the month's totals, and the same figures as a CSV download.
//
//   #/organizations/<id>/usage?month=2026-11
//
// The figures follow the billing rule (docs/staff-api.md, 'Usage: the ledger added up'): each ledger
// row counts at least from `created` to `last_seen` and at most to `destroyed` (an active row to the
// API's read time); billable rows only. The months offered end at the API's time, not this browser's.
// The CSV has the columns `fleet usage --csv` writes (FOCUS names, hours, UTC), built here from the
// same answer, so the download and the charts never disagree.

import { h, table } from "/common/dom.js";
import { count, formatCount } from "/common/format.js";
import { fleet, serverNow } from "../api.js";
import { href } from "./links.js";

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 320;
const HEIGHT = 90;
const PAD = 4;
const DAY_SECONDS = 86400;
const MONTHS_OFFERED = 3;
const COLUMNS = [
  "ChargePeriodStart",
  "ChargePeriodEnd",
  "SubAccountId",
  "SubAccountName",
  "ResourceId",
  "ResourceName",
  "ResourceType",
  "ConsumedQuantity",
  "ConsumedUnit",
  "x_ConsumedQuantityLowerBound",
  "x_ConsumedQuantityUpperBound",
  "x_PeakCount",
];
const hoursFormat = new Intl.NumberFormat("en-US", { maximumFractionDigits: 1, minimumFractionDigits: 1 });

function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) {
    element.setAttribute(key, String(value));
  }
  for (const child of children.flat(Infinity)) {
    element.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return element;
}

const hours = (seconds) => Number(seconds ?? 0) / 3600;
const formatHours = (value) => `${hoursFormat.format(value)} h`;

// "2026-11" -> the month's first instant in UTC (ms); null when it is no month.
function monthStart(key) {
  const match = /^(\d{4})-(\d{2})$/.exec(key ?? "");
  if (!match) {
    return null;
  }
  const month = Number(match[2]);
  return month >= 1 && month <= 12 ? Date.UTC(Number(match[1]), month - 1, 1) : null;
}

function monthKey(ms) {
  const date = new Date(ms);
  return `${date.getUTCFullYear()}-${String(date.getUTCMonth() + 1).padStart(2, "0")}`;
}

function nextMonth(ms) {
  const date = new Date(ms);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
}

const monthFormat = new Intl.DateTimeFormat("en-US", { year: "numeric", month: "long", timeZone: "UTC" });

// A CSV cell: quoted when RFC 4180 needs it, and never a formula a spreadsheet would run.
function cell(value) {
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text)) {
    text = `'${text}`;
  }
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function isoSeconds(iso) {
  return new Date(iso).toISOString().replace(/\.000Z$/, "Z");
}

export function usageCsv(groups) {
  const lines = [COLUMNS.join(",")];
  for (const group of groups) {
    for (const step of group.steps ?? []) {
      const lower = hours(step.lowerResourceSeconds).toFixed(6);
      lines.push(
        [
          isoSeconds(step.start),
          isoSeconds(step.end),
          group.organizationId ?? "",
          group.organizationName ?? "",
          group.clusterId ?? "",
          group.clusterName ?? "",
          group.resourceType,
          lower,
          "Hours",
          lower,
          hours(step.upperResourceSeconds).toFixed(6),
          String(count(step.peak)),
        ]
          .map(cell)
          .join(","),
      );
    }
  }
  return `${lines.join("\r\n")}\r\n`;
}

// One type's month: a bar per day (at most hours, the lighter bar; at least hours, the darker one).
function chart(group, totals) {
  const steps = group.steps ?? [];
  const high = Math.max(...steps.map((s) => hours(s.upperResourceSeconds)), 0) || 1;
  const slot = (WIDTH - 2 * PAD) / Math.max(steps.length, 1);
  const bar = (value, index, kind) => {
    const height = (value / high) * (HEIGHT - 2 * PAD);
    return svg("rect", {
      x: (PAD + index * slot + slot * 0.1).toFixed(1),
      y: (HEIGHT - PAD - height).toFixed(1),
      width: (slot * 0.8).toFixed(1),
      height: height.toFixed(1),
      class: kind,
    });
  };
  const description =
    `${group.resourceType}: ${formatHours(totals.lower)} at least, ${formatHours(totals.upper)} at most, ` +
    `peak ${formatCount(totals.peak)} at once, over ${steps.length} days`;
  return h(
    "figure",
    {
      class: "chart usage-chart",
      dataset: {
        type: group.resourceType,
        steps: String(steps.length),
        lower: String(totals.lowerSeconds),
        upper: String(totals.upperSeconds),
        peak: String(totals.peak),
      },
    },
    h(
      "figcaption",
      {},
      h("span", { class: "label" }, group.resourceType),
      " ",
      h("span", { class: "value" }, formatHours(totals.upper)),
      h("span", { class: "range muted" }, ` at least ${formatHours(totals.lower)}, peak ${formatCount(totals.peak)}`),
    ),
    svg(
      "svg",
      { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, preserveAspectRatio: "none", class: "spark bars", role: "img", "aria-label": description },
      svg("title", {}, description),
      svg("line", { x1: PAD, x2: WIDTH - PAD, y1: HEIGHT - PAD, y2: HEIGHT - PAD, class: "axis" }),
      steps.map((s, i) => bar(hours(s.upperResourceSeconds), i, "upper")),
      steps.map((s, i) => bar(hours(s.lowerResourceSeconds), i, "lower")),
    ),
  );
}

function totalsOf(group) {
  const steps = group.steps ?? [];
  const lowerSeconds = steps.reduce((n, s) => n + Number(s.lowerResourceSeconds ?? 0), 0);
  const upperSeconds = steps.reduce((n, s) => n + Number(s.upperResourceSeconds ?? 0), 0);
  return {
    lowerSeconds,
    upperSeconds,
    lower: lowerSeconds / 3600,
    upper: upperSeconds / 3600,
    peak: Math.max(0, ...steps.map((s) => count(s.peak))),
  };
}

async function everyGroup(message) {
  const groups = [];
  let pageToken = "";
  do {
    const answer = await fleet("ListUsage", { ...message, pageToken });
    groups.push(...(answer.groups ?? []));
    pageToken = answer.nextPageToken ?? "";
  } while (pageToken);
  return groups;
}

export async function usageView(id, params = new URLSearchParams()) {
  const [answer, now] = await Promise.all([fleet("GetOrganization", { id }), serverNow()]);
  const org = answer.organization ?? {};
  const thisMonth = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), 1);
  const offered = [thisMonth];
  while (offered.length < MONTHS_OFFERED) {
    const last = new Date(offered[offered.length - 1]);
    offered.push(Date.UTC(last.getUTCFullYear(), last.getUTCMonth() - 1, 1));
  }
  const start = monthStart(params.get("month")) ?? thisMonth;
  const end = nextMonth(start);
  const key = monthKey(start);
  const path = `/organizations/${encodeURIComponent(id)}/usage`;
  const groups = await everyGroup({
    start: new Date(start).toISOString(),
    end: new Date(end).toISOString(),
    stepSeconds: DAY_SECONDS,
    aggregate: "USAGE_AGGREGATE_ORGANIZATION",
    organizationId: id,
  });
  const totals = groups.map(totalsOf);
  const csv = usageCsv(groups);
  const fileName = `usage-${org.name ?? id}-${key}.csv`;
  const columns = [
    { label: "Type", cell: (i) => groups[i].resourceType },
    { label: "At least (h)", cell: (i) => hoursFormat.format(totals[i].lower), numeric: true },
    { label: "At most (h)", cell: (i) => hoursFormat.format(totals[i].upper), numeric: true },
    { label: "Peak", cell: (i) => formatCount(totals[i].peak), numeric: true },
  ];
  return [
    h(
      "p",
      { class: "breadcrumbs" },
      h("a", { href: "#/organizations" }, "Organizations"),
      " › ",
      h("a", { href: `#/organizations/${encodeURIComponent(id)}` }, org.name),
      " › Usage",
    ),
    h("h1", { id: "usage-title" }, `Usage of ${org.alias || org.name}, ${monthFormat.format(new Date(start))}`),
    h(
      "p",
      { class: "ranges", id: "usage-months" },
      "Month: ",
      offered.map((ms) => [
        monthKey(ms) === key
          ? h("strong", { "aria-current": "true", dataset: { month: monthKey(ms) } }, monthFormat.format(new Date(ms)))
          : h("a", { href: href(path, { month: monthKey(ms) }), dataset: { month: monthKey(ms) } }, monthFormat.format(new Date(ms))),
        " ",
      ]),
    ),
    h(
      "p",
      { class: "muted", id: "usage-rule" },
      "Billable resources, per day in UTC. Each resource counts at least from when the inventory first saw it " +
        "to when it last saw it, and at most until it was gone (a running one: until now).",
    ),
    h(
      "p",
      {},
      h(
        "a",
        {
          id: "usage-csv",
          class: "button",
          download: fileName,
          href: `data:text/csv;charset=utf-8,${encodeURIComponent(csv)}`,
        },
        "Download CSV",
      ),
      h("span", { class: "muted" }, ` ${fileName}: one row per type and day, hours, FOCUS column names`),
    ),
    groups.length
      ? [
          h(
            "div",
            { class: "table-wrap" },
            table(null, columns, groups.map((_, i) => i), { id: "usage-totals", "aria-label": "Usage per type this month" }),
          ),
          h("div", { class: "charts", id: "usage-charts" }, groups.map((g, i) => chart(g, totals[i]))),
        ]
      : h("p", { class: "muted", id: "no-usage" }, "No billable resource of this organization ran in this month."),
  ];
}
