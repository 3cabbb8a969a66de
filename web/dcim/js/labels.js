// Names a person reads for the API's enum values, and the small badges built from them.

import { h } from "/common/dom.js";

// fleet.v1.ClusterStatus, in the order the console lists them
// (docs/architecture.md, 'Status is computed, in Python and SQL').
export const STATUSES = [
  ["CLUSTER_STATUS_PROVISIONING", "Provisioning"],
  ["CLUSTER_STATUS_STARTING", "Starting"],
  ["CLUSTER_STATUS_RUNNING", "Running"],
  ["CLUSTER_STATUS_UPGRADING", "Upgrading"],
  ["CLUSTER_STATUS_UNHEALTHY", "Unhealthy"],
  ["CLUSTER_STATUS_ERROR", "Error"],
  ["CLUSTER_STATUS_LOST", "Lost"],
  ["CLUSTER_STATUS_STOPPING", "Stopping"],
  ["CLUSTER_STATUS_STOPPED", "Stopped"],
  ["CLUSTER_STATUS_DELETING", "Deleting"],
  ["CLUSTER_STATUS_DELETED", "Deleted"],
];
const STATUS_LABELS = new Map(STATUSES);
// Needs attention = UNHEALTHY, ERROR, LOST.
const ATTENTION = new Set(["CLUSTER_STATUS_UNHEALTHY", "CLUSTER_STATUS_ERROR", "CLUSTER_STATUS_LOST"]);
const CALM = new Set(["CLUSTER_STATUS_RUNNING"]);

// fleet.v1.DriftKind (docs/architecture.md, 'Drift kinds and the lifecycle of a finding').
export const DRIFT_KINDS = [
  ["DRIFT_KIND_ORPHAN_SHOOT", "Orphan shoot"],
  ["DRIFT_KIND_SHOOT_OF_DELETED_CLUSTER", "Shoot of a deleted cluster"],
  ["DRIFT_KIND_MISSING_SHOOT", "Missing shoot"],
  ["DRIFT_KIND_VERSION_MISMATCH", "Version mismatch"],
  ["DRIFT_KIND_ORGANIZATION_MISMATCH", "Organization mismatch"],
  ["DRIFT_KIND_UNLABELED_SHOOT", "Unlabeled shoot"],
];
const KIND_LABELS = new Map(DRIFT_KINDS);

// The ledger's sources (docs/collector.md, 'The infrastructure ledger'); the API accepts any type
// string, these are the known ones.
export const RESOURCE_TYPES = [
  "kubernetes.node",
  "kubernetes.persistentvolume",
  "kubernetes.loadbalancer",
  "kubernetes.ingress",
  "kubernetes.certificate",
  "gardener.cluster",
  "gardener.workerpool",
  "gardener.extension",
  "gardener.addon",
];

export function statusLabel(status) {
  return STATUS_LABELS.get(status) ?? "Unknown";
}

export function needsAttention(status) {
  return ATTENTION.has(status);
}

export function statusBadge(status) {
  const tone = needsAttention(status) ? "bad" : CALM.has(status) ? "ok" : "neutral";
  return h("span", { class: `badge ${tone}`, dataset: { status: status ?? "" } }, statusLabel(status));
}

export function kindLabel(kind) {
  return KIND_LABELS.get(kind) ?? "Unknown kind";
}

export function badge(text, tone, attributes = {}) {
  return h("span", { class: `badge ${tone}`, ...attributes }, text);
}
