"""Host <-> device transfers (meshnn.perf.transfer): a page costs the longest of the device's stage (a
write's pages pipelined, a read's a page's cost then its bytes), the host's copy (gone with pinned
memory) and, on a remote chip, the Ethernet tunnel; each figure names its source; bad sizes and
unmeasured tunnels are refused."""

from __future__ import annotations

import pytest

from meshnn.errors import MeshnnValueError
from meshnn.perf.transfer import (
    BLACKHOLE,
    HOSTS,
    WORMHOLE_B0,
    TransferHost,
    host_copy,
    host_read_ns,
    host_transfer,
    host_write_ns,
)

MIB64 = 64 << 20


@pytest.mark.parametrize("figures", [WORMHOLE_B0, BLACKHOLE])
def test_every_device_figure_has_a_source_and_is_positive(figures):
    assert figures.missing_sources() == []
    assert min(figures.write_page_ns, figures.read_page_ns) > 0
    assert figures.read_bytes_per_s > 1e9
    assert figures.write_bytes_per_s is None or figures.write_bytes_per_s > 1e9


@pytest.mark.parametrize("host", list(TransferHost))
def test_every_host_has_its_copy_rates_with_sources(host):
    copy = host_copy(host.value)
    assert copy is HOSTS[host] and copy.missing_sources() == []
    assert all(rate is None or rate > 1e9 for rate in (copy.write_bytes_per_s, copy.read_bytes_per_s))


def test_small_pages_are_bound_by_their_count_large_ones_by_their_bytes():
    wh = host_transfer("wormhole_b0")
    assert host_write_ns("wormhole_b0", 32 * 1000, 32) == pytest.approx(1000 * wh.write_page_ns)
    ci = host_copy(TransferHost.WORMHOLE_CI)
    assert host_write_ns("wormhole_b0", MIB64, 2048) == pytest.approx(MIB64 / ci.write_bytes_per_s * 1e9)
    # the same bytes in fewer, larger pages never take longer
    assert host_write_ns("wormhole_b0", 1 << 20, 2048) < host_write_ns("wormhole_b0", 1 << 20, 256)
    assert host_read_ns("blackhole", 1 << 20, 2048) < host_read_ns("blackhole", 1 << 20, 256)


def test_a_read_pays_each_page_and_its_bytes_in_turn():
    wh = WORMHOLE_B0
    per_page = wh.read_page_ns + 2048 * 1e9 / wh.read_bytes_per_s
    assert host_read_ns("wormhole_b0", 2048 * 10, 2048) == pytest.approx(10 * per_page)
    assert host_read_ns("wormhole_b0", 2048 * 10 + 1, 2048) == pytest.approx(11 * per_page)  # a partial page
    assert host_read_ns("wormhole_b0", 0, 2048) == 0.0


def test_the_host_copy_bounds_large_pages_and_pinned_memory_skips_it():
    iommu = host_copy("n300_iommu")
    # the IOMMU host's copy out of the completion queue is slower than the device's 2 KiB pages
    assert host_read_ns("wormhole_b0", MIB64, 2048, host="n300_iommu") == pytest.approx(
        MIB64 / iommu.read_bytes_per_s * 1e9
    )
    pinned = host_read_ns("wormhole_b0", MIB64, 2048, host="n300_iommu", pinned=True)
    assert pinned == pytest.approx(host_read_ns("wormhole_b0", MIB64, 2048, host=TransferHost.WORMHOLE_CI))
    assert pinned < host_read_ns("wormhole_b0", MIB64, 2048, host="n300_iommu")
    # pinned writes run at the device's stream, above the host's copy
    assert host_write_ns("wormhole_b0", MIB64, 2048, pinned=True) == pytest.approx(
        MIB64 / WORMHOLE_B0.write_bytes_per_s * 1e9
    )
    # the P150's reads: the device's stage at small pages, the host's copy at large ones
    bh = BLACKHOLE
    assert host_read_ns("blackhole", 320, 32) == pytest.approx(10 * (bh.read_page_ns + 32e9 / bh.read_bytes_per_s))
    assert host_read_ns("blackhole", 2048, 2048) == pytest.approx(2048e9 / host_copy("p150").read_bytes_per_s)


def test_a_remote_chip_is_capped_by_the_tunnel_not_below_its_page_cost():
    wh = WORMHOLE_B0
    for page in (1024, 2048):
        assert host_write_ns("wormhole_b0", MIB64, page, remote=True) == pytest.approx(
            MIB64 / wh.tunnel_write_bytes_per_s * 1e9
        )
        assert host_read_ns("wormhole_b0", MIB64, page, remote=True) == pytest.approx(
            MIB64 / wh.tunnel_read_bytes_per_s * 1e9
        )
    # small pages: the page cost bounds a remote chip as it bounds a local one
    assert host_write_ns("wormhole_b0", MIB64, 32, remote=True) == host_write_ns("wormhole_b0", MIB64, 32)
    assert host_read_ns("wormhole_b0", MIB64, 64, remote=True) == host_read_ns("wormhole_b0", MIB64, 64)


def test_an_unmeasured_tunnel_and_an_unknown_host_are_refused():
    with pytest.raises(MeshnnValueError, match="no remote blackhole chip"):
        host_write_ns("blackhole", 1024, 32, remote=True)
    with pytest.raises(MeshnnValueError, match="no remote blackhole chip"):
        host_read_ns("blackhole", 1024, 32, remote=True)
    with pytest.raises(MeshnnValueError, match="no measured transfer host 'galaxy'"):
        host_read_ns("wormhole_b0", 1024, 32, host="galaxy")


@pytest.mark.parametrize(("nbytes", "page"), [(-1, 32), (1024, 0), (1024, -32)])
def test_bad_sizes_are_refused(nbytes, page):
    with pytest.raises(MeshnnValueError, match="page size"):
        host_write_ns("wormhole_b0", nbytes, page)
    with pytest.raises(MeshnnValueError, match="page size"):
        host_read_ns("blackhole", nbytes, page)
