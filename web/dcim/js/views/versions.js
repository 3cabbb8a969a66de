// The Kubernetes version the database holds against the one the shoot runs (as reconcile last
// listed it). Reconcile reports a difference of minor versions as drift (version_mismatch); Gardener's
// maintenance moves patch versions on its own, so a patch difference is shown but is no drift.

// "1.30" of "v1.30.4"; null when it does not parse as major.minor.
export function minorVersion(version) {
  const match = /^v?(\d+)\.(\d+)(?:\.|$|[-+])/.exec(String(version ?? "").trim());
  return match ? `${Number(match[1])}.${Number(match[2])}` : null;
}

// {database, observed, minor} when the shoot's version differs from the database's, else null.
// `minor` is true when the minor versions differ (or either does not parse).
export function versionMismatch(cluster) {
  const database = cluster.kubernetesVersion ?? "";
  const observed = cluster.observedKubernetesVersion ?? "";
  if (!observed || observed === database) {
    return null;
  }
  const a = minorVersion(database);
  const b = minorVersion(observed);
  return { database, observed, minor: a === null || b === null || a !== b };
}
