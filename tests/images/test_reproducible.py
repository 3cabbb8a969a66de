"""Two builds of the images give the same digests: a fresh one, in its own folder with empty caches,
under a clock two days ahead (faketime), against the build tests/fixtures/images.py made or reused for
these inputs, at another time, in another folder, with other caches. SOURCE_DATE_EPOCH is the same for
both, as it is for two builds of one commit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deploy.images.spec import IMAGES
from tests.fixtures.images import build, built_images, digests
from tests.fixtures.tools import needs, tool_path


@needs("faketime")
@pytest.mark.slow
def test_a_second_build_elsewhere_later_gives_the_same_digests(tmp_path: Path) -> None:
    first = digests(built_images())
    assert set(first) == {image.name for image in IMAGES}
    # +2 days, not more: the downloads check TLS certificates against this clock.
    second = build(tmp_path / "out", tmp_path / "empty-cache", clock=[tool_path("faketime"), "-f", "+2d"])
    assert second == first
