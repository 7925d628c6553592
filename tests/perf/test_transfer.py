"""Host <-> device transfers (meshnn.perf.transfer): a write's pages are pipelined (the longer of a
page's cost and its bytes), a read's are not (a page's cost, then its bytes); each figure names its
source; bad sizes are refused."""

from __future__ import annotations

import pytest

from meshnn.errors import MeshnnValueError
from meshnn.perf.transfer import BLACKHOLE, WORMHOLE_B0, host_read_ns, host_transfer, host_write_ns


@pytest.mark.parametrize("figures", [WORMHOLE_B0, BLACKHOLE])
def test_every_figure_has_a_source_and_is_positive(figures):
    assert figures.missing_sources() == []
    assert min(figures.write_page_ns, figures.read_page_ns) > 0
    assert min(figures.write_bytes_per_s, figures.read_bytes_per_s) > 1e9


def test_small_pages_are_bound_by_their_count_large_ones_by_their_bytes():
    wh = host_transfer("wormhole_b0")
    assert host_write_ns("wormhole_b0", 32 * 1000, 32) == pytest.approx(1000 * wh.write_page_ns)
    assert host_write_ns("wormhole_b0", 64 << 20, 2048) == pytest.approx((64 << 20) / wh.write_bytes_per_s * 1e9)
    # the same bytes in fewer, larger pages never take longer
    assert host_write_ns("wormhole_b0", 1 << 20, 2048) < host_write_ns("wormhole_b0", 1 << 20, 256)
    assert host_read_ns("blackhole", 1 << 20, 2048) < host_read_ns("blackhole", 1 << 20, 256)


def test_a_read_pays_each_page_and_its_bytes_in_turn():
    wh = WORMHOLE_B0
    per_page = wh.read_page_ns + 2048 * 1e9 / wh.read_bytes_per_s
    assert host_read_ns("wormhole_b0", 2048 * 10, 2048) == pytest.approx(10 * per_page)
    assert host_read_ns("wormhole_b0", 2048 * 10 + 1, 2048) == pytest.approx(11 * per_page)  # a partial page
    assert host_read_ns("wormhole_b0", 0, 2048) == 0.0


@pytest.mark.parametrize(("nbytes", "page"), [(-1, 32), (1024, 0), (1024, -32)])
def test_bad_sizes_are_refused(nbytes, page):
    with pytest.raises(MeshnnValueError, match="page size"):
        host_write_ns("wormhole_b0", nbytes, page)
    with pytest.raises(MeshnnValueError, match="page size"):
        host_read_ns("blackhole", nbytes, page)
