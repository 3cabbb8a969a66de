// A drift finding's details as sentences a person reads, with links to the cluster and the shoot.
//
// Reconcile records per kind what it expected and what it observed (`details`: reason, expected,
// observed, the shoot as {uid, namespace, name}, sync and shoot status, ...). Each kind gets a
// sentence built from the fields it records; any field this page does not know is still shown
// below as "name: value", so nothing reconcile recorded is hidden.

import { configuredUrl } from "/common/config.js";
import { h } from "/common/dom.js";
import { formatDuration, timeElement } from "/common/format.js";
import { clusterLink } from "./links.js";

const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);
const text = (value) => (typeof value === "string" ? value : value === null || value === undefined ? "" : JSON.stringify(value));

// The shoot `{namespace, name}` as a link to Gardener's dashboard when this DCIM knows one
// (config.js `gardenerDashboardUrl`), else as text; `namespace/name` either way.
export function shootLink(namespace, name, uid = "") {
  const label = namespace && name ? `${namespace}/${name}` : name || uid || "unknown shoot";
  const dashboard = configuredUrl("gardenerDashboardUrl").replace(/\/+$/, "");
  if (dashboard && namespace && name) {
    const url = `${dashboard}/namespace/${encodeURIComponent(namespace)}/shoots/${encodeURIComponent(name)}`;
    return h("a", { href: url, class: "shoot-link", rel: "noopener noreferrer", target: "_blank" }, label);
  }
  return h("code", { class: "shoot-name", title: uid || null }, label);
}

function shootOf(finding, ref) {
  if (isObject(ref) && (ref.name || ref.uid)) {
    return shootLink(text(ref.namespace), text(ref.name), text(ref.uid));
  }
  if (finding.shootName || finding.shootUid) {
    return shootLink(finding.shootNamespace ?? "", finding.shootName ?? "", finding.shootUid ?? "");
  }
  return null;
}

function clusterOf(finding) {
  return finding.clusterId ? clusterLink(finding.clusterId, finding.clusterName) : null;
}

function statusLine(details) {
  const parts = [];
  if (details.sync_status) parts.push(`sync ${text(details.sync_status)}`);
  if (details.shoot_status) parts.push(`shoot status ${text(details.shoot_status)}`);
  return parts.length ? `Provisioning side: ${parts.join(", ")}.` : null;
}

// One sentence (an array of nodes) per kind, from the fields that kind records.
const SENTENCES = {
  DRIFT_KIND_VERSION_MISMATCH(f, d) {
    const expected = isObject(d.expected) ? d.expected : {};
    const observed = Array.isArray(d.observed) ? d.observed : [];
    const database = text(expected.kubernetes_version);
    const lines = observed.filter(isObject).map((s) =>
      h(
        "li",
        {},
        "Shoot ",
        shootOf(f, s),
        ` runs Kubernetes ${text(s.kubernetes_version)}`,
        s.minor ? ` (minor ${text(s.minor)})` : "",
        ".",
      ),
    );
    return [
      h(
        "p",
        {},
        "The database holds Kubernetes ",
        h("strong", {}, database || "?"),
        expected.minor ? ` (minor ${text(expected.minor)})` : "",
        clusterOf(f) ? [" for cluster ", clusterOf(f)] : "",
        ".",
      ),
      lines.length ? h("ul", {}, lines) : null,
    ];
  },
  DRIFT_KIND_MISSING_SHOOT(f, d) {
    const expected = isObject(d.expected) && typeof d.expected.shoots === "string" ? d.expected.shoots : "a shoot";
    return [
      h("p", {}, "Cluster ", clusterOf(f) ?? "?", ` should have ${expected}; Gardener lists none.`),
      statusLine(d) ? h("p", {}, statusLine(d)) : null,
    ];
  },
  DRIFT_KIND_ORPHAN_SHOOT(f, d) {
    const observed = isObject(d.observed) ? d.observed : {};
    const label = observed.cluster_label;
    return h(
      "p",
      {},
      "Shoot ",
      shootOf(f, d.shoot) ?? "?",
      label ? [" names cluster ", h("code", {}, text(label)), ", which no cluster row has."] : " has a cluster label that matches no cluster.",
    );
  },
  DRIFT_KIND_SHOOT_OF_DELETED_CLUSTER(f, d) {
    const expected = isObject(d.expected) ? d.expected : {};
    return [
      h(
        "p",
        {},
        "Shoot ",
        shootOf(f, d.shoot) ?? "?",
        " still exists, but cluster ",
        clusterOf(f) ?? "?",
        expected.cluster_deleted ? [" was deleted ", timeElement(text(expected.cluster_deleted))] : " was deleted",
        ".",
      ),
      d.deletion_under_way_seconds !== undefined
        ? h("p", {}, `The deletion has been under way for ${formatDuration(d.deletion_under_way_seconds)}.`)
        : null,
      statusLine(d) ? h("p", {}, statusLine(d)) : null,
    ];
  },
  DRIFT_KIND_ORGANIZATION_MISMATCH(f, d) {
    const observed = isObject(d.observed) ? d.observed : {};
    const label = observed.organization_label;
    return h(
      "p",
      {},
      "Shoot ",
      shootOf(f, d.shoot) ?? "?",
      " of cluster ",
      clusterOf(f) ?? "?",
      label ? [" is labelled with organization ", h("code", {}, text(label))] : " carries no organization label",
      f.organizationName ? `, but the cluster belongs to ${f.organizationName}.` : ".",
    );
  },
  DRIFT_KIND_UNLABELED_SHOOT(f, d) {
    return h(
      "p",
      {},
      "Shoot ",
      shootOf(f, d.shoot) ?? "?",
      f.organizationName ? ` in ${f.organizationName}'s garden project` : "",
      " has no cluster-id label, so no cluster is known for it",
      d.shoot_created ? [" (created ", timeElement(text(d.shoot_created)), ")"] : "",
      ".",
    );
  },
};

// Fields the sentences above already say (the rest is listed as "name: value").
const SAID = new Set([
  "reason",
  "expected",
  "observed",
  "shoot",
  "sync_status",
  "shoot_status",
  "deletion_under_way_seconds",
  "shoot_created",
  "organization",
]);

function humanKey(key) {
  const words = key.replaceAll("_", " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function valueText(value) {
  if (Array.isArray(value)) {
    return value.map(valueText).join("; ");
  }
  if (isObject(value)) {
    return Object.entries(value)
      .map(([k, v]) => `${k.replaceAll("_", " ")} ${valueText(v)}`)
      .join(", ");
  }
  return value === null ? "none" : String(value);
}

function capitalized(sentence) {
  const trimmed = sentence.trim();
  const first = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(first) ? first : `${first}.`;
}

// The details of finding `f`, readable: why (reconcile's reason), what disagrees, the rest.
export function findingDetails(f) {
  const d = isObject(f.details) ? f.details : {};
  // What reconcile writes always has a reason or a shoot; anything else is listed field by field.
  const known = Object.hasOwn(SENTENCES, f.kind ?? "") && (typeof d.reason === "string" || isObject(d.shoot));
  const rest = Object.entries(d).filter(([key]) => !(known && SAID.has(key)) && key !== "reason");
  return h(
    "div",
    { class: "finding-details" },
    d.reason ? h("p", { class: "reason" }, capitalized(text(d.reason))) : null,
    known ? SENTENCES[f.kind](f, d) : null,
    rest.map(([key, value]) =>
      h("p", { class: "detail-field" }, h("span", { class: "muted" }, `${humanKey(key)}: `), valueText(value)),
    ),
  );
}
