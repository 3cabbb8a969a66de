// One cluster's finding timeline: a lane per finding (kind and subject), a bar per time it was open,
// over the span from the earliest occurrence shown to the latest detection. Drawn as inline SVG; each
// lane says in words what it shows (its accessible name), so the picture is never the only account.

import { h } from "/common/dom.js";
import { formatCount, formatMoment } from "/common/format.js";
import { kindLabel } from "../labels.js";

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 600;
const HEIGHT = 14;
// More lanes than this are left to the table below the timeline.
const MAX_LANES = 12;

function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) {
    element.setAttribute(key, String(value));
  }
  element.append(...children);
  return element;
}

// `occurrences`: DriftFinding messages (open and resolved); `end`: the time the open ones run to (ms).
export function findingTimeline(occurrences, end) {
  if (!occurrences.length) {
    return h("p", { class: "muted", id: "finding-timeline" }, "No drift finding about this cluster so far.");
  }
  const lanes = new Map();
  for (const f of occurrences) {
    const key = `${f.kind}\u0000${f.subject}`;
    if (!lanes.has(key)) {
      lanes.set(key, { kind: f.kind, subject: f.subject, bars: [] });
    }
    const from = Date.parse(f.firstDetected);
    const to = f.resolved ? Date.parse(f.resolved) : Math.max(end, Date.parse(f.lastDetected));
    lanes.get(key).bars.push({ from, to, open: !f.resolved });
  }
  const start = Math.min(...occurrences.map((f) => Date.parse(f.firstDetected)));
  const stop = Math.max(end, ...[...lanes.values()].flatMap((l) => l.bars.map((b) => b.to)));
  const x = (t) => ((t - start) / (stop - start || 1)) * WIDTH;
  const ordered = [...lanes.values()]
    .sort((a, b) => Math.max(...b.bars.map((r) => r.from)) - Math.max(...a.bars.map((r) => r.from)))
    .slice(0, MAX_LANES);
  const items = ordered.map((lane) => {
    const open = lane.bars.some((b) => b.open);
    const said = `${kindLabel(lane.kind)}: open ${formatCount(lane.bars.length)} ${lane.bars.length === 1 ? "time" : "times"}${open ? ", open now" : ", resolved"}`;
    return h(
      "li",
      { dataset: { kind: lane.kind ?? "", subject: lane.subject ?? "", bars: String(lane.bars.length) } },
      h("span", { class: "lane-label" }, kindLabel(lane.kind), " ", h("span", { class: "muted" }, open ? "(open)" : "(resolved)")),
      svg(
        "svg",
        { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, preserveAspectRatio: "none", class: "lane", role: "img", "aria-label": said },
        svg("title", {}, said),
        svg("line", { x1: 0, x2: WIDTH, y1: HEIGHT / 2, y2: HEIGHT / 2, class: "lane-axis" }),
        ...lane.bars.map((b) =>
          svg("rect", {
            x: x(b.from).toFixed(1),
            y: 2,
            width: Math.max(2, x(b.to) - x(b.from)).toFixed(1),
            height: HEIGHT - 4,
            class: b.open ? "bar open" : "bar",
          }),
        ),
      ),
    );
  });
  return h(
    "figure",
    { class: "timeline", id: "finding-timeline", dataset: { lanes: String(ordered.length) } },
    h(
      "figcaption",
      { class: "muted" },
      `From ${formatMoment(new Date(start).toISOString())} to ${formatMoment(new Date(stop).toISOString())}: `,
      `one lane per finding, a bar for each time it was open`,
      lanes.size > MAX_LANES ? ` (the ${MAX_LANES} most recently opened of ${formatCount(lanes.size)})` : "",
      ".",
    ),
    h("ol", {}, items),
  );
}
