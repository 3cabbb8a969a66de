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


@dataclass(frozen=True, slots=True)
class ResponseLimits:
    """The byte bounds of one client's answers (collector/settings.py builds them from the environment)."""

    max_list_bytes: int = DEFAULT_LIST_BYTES
    """INVENTORY_MAX_LIST_BYTES: bytes of one streamed list answer."""
    max_item_bytes: int = DEFAULT_ITEM_BYTES
    """INVENTORY_MAX_ITEM_BYTES: bytes of one item of a streamed list."""
    max_answer_bytes: int = DEFAULT_ANSWER_BYTES
    """GARDENER_MAX_ANSWER_BYTES: bytes of one answer parsed whole (a garden page, a minted credential)."""


DEFAULT_LIMITS = ResponseLimits()


def describe_bytes(count: int) -> str:
    """`1.5 MiB`, `512 MiB`, `900 bytes`: a bound as people read it."""
    if count >= MIB:
        return f"{count / MIB:g} MiB"
    return f"{count} bytes"
