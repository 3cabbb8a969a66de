"""How much of an API server's answer the collector reads before it gives up: the response bounds.

A tenant controls what its cluster's API server answers, so every body the collector reads is
bounded in bytes, whatever the server sends; time is bounded by the request timeout and the
cluster's INVENTORY_TIMEOUT_SECONDS. The defaults are sized from Kubernetes' own limits:

- one object is at most about 1.5 MiB in etcd (its default request size limit); its JSON form can be
  larger than the stored form, so an item of a list may be twice that (`max_item_bytes`);
- a list read from the watch cache (`resourceVersion=0`) ignores `limit` and arrives as one body:
  150,000 pods' metadata are well over 100 MB, so a list may be large (`max_list_bytes`) while its
  items are parsed in bounded batches and never held together;
- a garden answer (a page of 500 shoots, a minted kubeconfig) is parsed whole, so it is bounded
  tightly (`max_answer_bytes`); a minted kubeconfig is a few KiB (`CREDENTIAL_ANSWER_BYTES`).

Bodies are asked for uncompressed (`Accept-Encoding: identity`) and a compressed one is refused
unread, so no decompression can inflate a small body into a large one.

Bytes do not bound memory by themselves (`[],[],…` turns every 3 bytes into a Python list), so each
kind of answer is bounded in JSON values too, counted before it is parsed (kube/values.py), each
bound several times what a legitimate answer of that kind holds:

| answer | values | a legitimate one holds |
|---|---|---|
| one object (a monitoring secret, a minted kubeconfig) | `ONE_OBJECT_VALUES` | tens |
| a page of the garden's shoot or project list | `GARDEN_PAGE_VALUES` | 500 shoots of a few hundred each |
| every page of one garden list together | GARDENER_MAX_LIST_VALUES | a few hundred per shoot |
| one parsed batch of a streamed shoot list | `LIST_BATCH_VALUES` (a denser batch is cut smaller) | any |
| one instant query of a shoot's Prometheus | `PROMETHEUS_ANSWER_VALUES` | a few per series |
"""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1 << 20
ETCD_OBJECT_BYTES = 3 * MIB // 2
DEFAULT_ITEM_BYTES = 2 * ETCD_OBJECT_BYTES  # collector/settings.py keeps the same defaults in MiB
DEFAULT_LIST_BYTES = 512 * MIB
DEFAULT_ANSWER_BYTES = 16 * MIB
# An AdminKubeconfigRequest answer: a kubeconfig of a few KiB; one etcd object at most.
CREDENTIAL_ANSWER_BYTES = ETCD_OBJECT_BYTES

# Values: what a parsed value costs at worst (an empty list, about 72 bytes with its slot) times the
# bound is what one answer of the kind may cost, whatever it says.
ONE_OBJECT_VALUES = 50_000
"""A single object (a secret, a kubeconfig request's answer): a Node, the largest object read, holds a few thousand."""
GARDEN_PAGE_VALUES = 1_000_000
"""One page of a garden list: 500 shoots of up to 2,000 values each (about 72 MB at worst)."""
DEFAULT_LIST_VALUES = 2_000_000
"""GARDENER_MAX_LIST_VALUES: every page of one garden list together (about 7,000 shoots as fleet-sim
renders them, about 140 MB at worst); larger gardens raise it with the worker's memory limit."""
LIST_BATCH_VALUES = 250_000
"""One parsed batch of a streamed list (about 18 MB at worst); an item holding more is refused."""
PROMETHEUS_ANSWER_VALUES = 200_000
"""One instant query: 20,000 series (queries.MAX_SERIES) of up to 10 values each."""


@dataclass(frozen=True, slots=True)
class ResponseLimits:
    """The byte bounds of one client's answers (collector/settings.py builds them from the environment)."""

    max_list_bytes: int = DEFAULT_LIST_BYTES
    """INVENTORY_MAX_LIST_BYTES: bytes of one streamed list answer."""
    max_item_bytes: int = DEFAULT_ITEM_BYTES
    """INVENTORY_MAX_ITEM_BYTES: bytes of one item of a streamed list."""
    max_answer_bytes: int = DEFAULT_ANSWER_BYTES
    """GARDENER_MAX_ANSWER_BYTES: bytes of one answer parsed whole (a garden page, a minted credential)."""
    max_list_values: int = DEFAULT_LIST_VALUES
    """GARDENER_MAX_LIST_VALUES: JSON values of every page of one garden list together."""


DEFAULT_LIMITS = ResponseLimits()


def describe_bytes(count: int) -> str:
    """`1.5 MiB`, `512 MiB`, `900 bytes`: a bound as people read it."""
    if count >= MIB:
        return f"{count / MIB:g} MiB"
    return f"{count} bytes"
