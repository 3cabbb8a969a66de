"""What a paged list may gather across its `limit`/`continue` pages: items, values and pages.

Each page is bounded on its own (by bytes and values, in the client); these bounds hold the pages
together, so a chain of `continue` tokens that never ends, or pages that each stay under their bound
but add up to more than any fleet, is refused rather than read into memory.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from collector.kube.errors import BadResponse, TooLarge
from collector.kube.objects import ListMeta
from common.text import truncate

# Items a paged list may gather across its pages: five times the 50,000 clusters of the largest fleet
# this system is sized for.
MAX_PAGED_ITEMS = 250_000
# Pages a paged list may take: twice what MAX_PAGED_ITEMS needs at the page size (a label selector
# may leave pages short, even empty), so an endless chain of `continue` tokens ends.
MIN_PAGES = 10


@dataclass
class PagedList:
    """The pages of one list read so far, and the bounds they must keep together."""

    path: str
    page_size: int
    max_values: int
    """GARDENER_MAX_LIST_VALUES: JSON values across all pages."""
    items: list[dict[str, Any]] = field(default_factory=list)
    values: int = 0
    pages: int = 0

    @property
    def max_pages(self) -> int:
        return max(MIN_PAGES, 2 * -(-MAX_PAGED_ITEMS // self.page_size))

    def add(self, page: Mapping[str, Any], page_values: int) -> str | None:
        """Take one page holding `page_values` JSON values; the next page's continue token, or None
        when the list is whole. Raises TooLarge past a bound, BadResponse for items that are no array."""
        what = f"GET {self.path}"
        self.pages += 1
        self.values += page_values
        if self.values > self.max_values:
            raise TooLarge(
                f"{what}: more than {self.max_values:,} JSON values across its {self.pages} pages"
                " (GARDENER_MAX_LIST_VALUES); refused"
            )
        batch = page.get("items") or []
        if not isinstance(batch, list):
            raise BadResponse(f"{what}: the list's items are not an array")
        self.items.extend(batch)
        if len(self.items) > MAX_PAGED_ITEMS:
            raise TooLarge(f"{what}: more than {MAX_PAGED_ITEMS} items across its pages; refused")
        token = (page.get("metadata") or {}).get("continue")
        if not token:
            return None
        if self.pages >= self.max_pages:
            raise TooLarge(f"{what}: still a continue token after {self.pages} pages of {self.page_size}; refused")
        return str(token)


def list_meta(rest: Mapping[str, Any], what: str) -> ListMeta:
    """The `metadata` of a streamed list (what is left once its items went by). Raises BadResponse."""
    if rest.get("kind") == "Status":
        raise BadResponse(f"{what}: got a Status instead of a list: {truncate(str(rest.get('message', '')))}")
    meta = rest.get("metadata") or {}
    if not isinstance(meta, dict):
        raise BadResponse(f"{what}: the list's metadata is not an object")
    out: ListMeta = {}
    if isinstance(meta.get("resourceVersion"), str):
        out["resourceVersion"] = meta["resourceVersion"]
    if isinstance(meta.get("remainingItemCount"), int):
        out["remainingItemCount"] = meta["remainingItemCount"]
    return out
