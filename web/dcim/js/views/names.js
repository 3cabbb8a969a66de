// One way to name a tenant namespace on every page: its name in the database (what the person
// created, within its project) first, and its name on the shoot (what Kubernetes, kubectl and the
// ledger show: the project's 12-character prefix, "-", the name) beside it where the two differ.

import { h } from "/common/dom.js";

export function namespaceName(name, kubernetesName) {
  const database = name ?? "";
  const kubernetes = kubernetesName ?? "";
  if (!kubernetes || kubernetes === database) {
    return h("span", { class: "namespace", dataset: { namespace: database || kubernetes } }, database || kubernetes);
  }
  if (!database) {
    return h("span", { class: "namespace", dataset: { kubernetesName: kubernetes } }, h("code", {}, kubernetes));
  }
  return h(
    "span",
    { class: "namespace", dataset: { namespace: database, kubernetesName: kubernetes } },
    h("span", { class: "primary" }, database),
    h("code", { class: "secondary muted", title: "name in Kubernetes" }, kubernetes),
  );
}
