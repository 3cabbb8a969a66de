// Summary: the platform at a glance (GetFleetSummary), with how fresh its numbers are.
//
// Freshness: each worker loop records when it last completed a pass and its interval. A loop
// whose last pass is older than three intervals is flagged as late (the same three intervals after which
// a cluster's snapshot counts as stale); a loop that never completed a pass is flagged too.

import { h, table } from "/common/dom.js";
import { count, formatBytes, formatCount, formatDuration, formatMillicores, timeElement } from "/common/format.js";
import { fleet } from "../api.js";
import { DRIFT_KINDS, STATUSES, badge, kindLabel, statusBadge } from "../labels.js";
import { href } from "./links.js";
import { trendsSection } from "./trends.js";

const LOOPS = [
  ["inventory", "Inventory (collector)"],
  ["reconcile", "Reconcile (drift)"],
];
const LATE_AFTER_INTERVALS = 3;

function card(key, label, value, detail = null) {
  return h(
    "li",
    { class: "card", dataset: { summary: key } },
    h("span", { class: "value" }, value),
    h("span", { class: "label" }, label),
    detail ? h("span", { class: "detail muted" }, detail) : null,
  );
}

export function loopHealth(loop) {
  if (!loop) {
    return { state: "never", text: "never completed a pass" };
  }
  const age = count(loop.ageSeconds);
  const interval = count(loop.intervalSeconds);
  if (interval > 0 && age > LATE_AFTER_INTERVALS * interval) {
    return { state: "late", text: `late: more than ${LATE_AFTER_INTERVALS} intervals since the last pass` };
  }
  return { state: "ok", text: "on time" };
}

function freshness(loops) {
  const byName = new Map(loops.map((loop) => [loop.loop, loop]));
  const rows = LOOPS.map(([name, label]) => ({
    name,
    label,
    loop: byName.get(name),
    health: loopHealth(byName.get(name)),
  }));
  const warnings = rows
    .filter((row) => row.health.state !== "ok")
    .map((row) =>
      h(
        "p",
        { class: "notice warn loop-warning", dataset: { loop: row.name } },
        row.health.state === "never"
          ? `${row.label} has never completed a pass: its numbers are missing.`
          : `${row.label} is late: its last pass was ${formatDuration(row.loop.ageSeconds)} ago, more than ${LATE_AFTER_INTERVALS} intervals of ${formatDuration(row.loop.intervalSeconds)}. What it shows may be out of date.`,
      ),
    );
  const columns = [
    { label: "Loop", priority: true, cell: (row) => row.label },
    { label: "Last completed pass", cell: (row) => timeElement(row.loop?.lastCompleted) },
    { label: "Interval", cell: (row) => (row.loop ? formatDuration(row.loop.intervalSeconds) : "—"), numeric: true },
    { label: "Age", cell: (row) => (row.loop ? formatDuration(row.loop.ageSeconds) : "—"), numeric: true },
    {
      label: "State",
      priority: true,
      cell: (row) =>
        badge(row.health.text, row.health.state === "ok" ? "ok" : "bad", { dataset: { loopState: row.health.state } }),
    },
  ];
  const rendered = table("Freshness of the worker loops", columns, rows, { id: "freshness" });
  rows.forEach((row, index) => {
    rendered.tBodies[0].rows[index].dataset.loop = row.name;
  });
  return [warnings, h("div", { class: "table-wrap" }, rendered)];
}

// Set when the staff API read this answer from a hot standby: how far the standby trails the primary,
// beside the loops' freshness (everything above is at most that much older than on the primary).
function standbyNote(standby) {
  if (!standby) {
    return null;
  }
  const lag = formatDuration(count(standby.lagMilliseconds) / 1000);
  return h(
    "p",
    { class: "notice standby", id: "standby-lag" },
    `Read from a hot standby that trails the primary by ${lag}`,
    standby.lastReplayed ? [" (last replayed commit: ", timeElement(standby.lastReplayed), ")."] : ".",
  );
}

export async function summaryView(params = new URLSearchParams()) {
  const s = await fleet("GetFleetSummary");
  const trends = await trendsSection({ path: "/summary", rangeKey: params.get("range") });
  const statuses = new Map((s.clustersByStatus ?? []).map((entry) => [entry.status, count(entry.clusters)]));
  const kinds = new Map((s.openFindingsByKind ?? []).map((entry) => [entry.kind, count(entry.findings)]));
  const statusRows = STATUSES.filter(([status]) => statuses.has(status)).map(([status]) => ({
    status,
    clusters: statuses.get(status),
  }));
  const kindRows = DRIFT_KINDS.filter(([kind]) => kinds.has(kind)).map(([kind]) => ({
    kind,
    findings: kinds.get(kind),
  }));
  const openFindings = kindRows.reduce((sum, row) => sum + row.findings, 0);

  return [
    h("h1", {}, "Platform"),
    freshness(s.loops ?? []),
    standbyNote(s.standby),
    h(
      "ul",
      { class: "cards", id: "summary-cards" },
      card(
        "organizations",
        "Organizations",
        formatCount(s.organizations),
        `${formatCount(s.organizationsListed)} listed publicly`,
      ),
      card("clusters", "Clusters", formatCount(s.clusters), `${formatCount(s.clustersReady)} ready`),
      card("projects", "Projects", formatCount(s.projects)),
      card("namespaces", "Namespaces", formatCount(s.namespaces)),
      card("nodes", "Nodes", formatCount(s.nodes), `${formatCount(s.readyNodes)} ready`),
      card("pods", "Pods", formatCount(s.pods), `of ${formatCount(s.allocatablePods)} allocatable`),
      card("cpu", "Allocatable CPU", formatMillicores(s.cpuAllocatableMillicores)),
      card("memory", "Allocatable memory", formatBytes(s.memoryAllocatableBytes)),
    ),
    h(
      "ul",
      { class: "cards", id: "attention-cards" },
      card(
        "attention",
        "Clusters needing attention",
        h("a", { href: href("/clusters", { attention: true }) }, formatCount(s.clustersNeedingAttention)),
        "unhealthy, in error or lost",
      ),
      card(
        "stale",
        "Stale clusters",
        h("a", { href: href("/clusters", { stale: true }) }, formatCount(s.clustersStale)),
        "snapshot older than 3 inventory intervals",
      ),
      card("drift", "Open drift findings", h("a", { href: href("/drift") }, formatCount(openFindings))),
    ),
    h(
      "p",
      { class: "muted", id: "read" },
      "Read ",
      timeElement(s.read),
      ". Node, pod and capacity totals count ready clusters only.",
    ),
    trends,
    h("h2", {}, "Clusters by status"),
    statusRows.length
      ? table(
          null,
          [
            { label: "Status", cell: (row) => statusBadge(row.status) },
            {
              label: "Clusters",
              cell: (row) => h("a", { href: href("/clusters", { status: row.status }) }, formatCount(row.clusters)),
              numeric: true,
            },
          ],
          statusRows,
          { id: "clusters-by-status" },
        )
      : h("p", { class: "muted" }, "No live clusters."),
    h("h2", {}, "Open drift findings by kind"),
    kindRows.length
      ? table(
          null,
          [
            {
              label: "Kind",
              cell: (row) => h("span", { class: "kind", dataset: { kind: row.kind } }, kindLabel(row.kind)),
            },
            {
              label: "Findings",
              cell: (row) => h("a", { href: href("/drift", { kind: row.kind }) }, formatCount(row.findings)),
              numeric: true,
            },
          ],
          kindRows,
          { id: "findings-by-kind" },
        )
      : h("p", { class: "muted", id: "no-findings" }, "No open drift findings."),
  ];
}
