"""A line all_gather's workers on packets that carry their local copy (meshnn.perf.collectives.local_copy_ns): the
worker count by bytes a link, the bound on the line of 2, none on Wormhole."""

from __future__ import annotations

import pytest

from meshnn.perf import OpFamily, Topology, arch_perf
from meshnn.perf.collectives import gather_workers, local_copy_ns, phase
from meshnn.perf.desc import Fabric
from meshnn.perf.fabric import BLACKHOLE

BH, WH = arch_perf("blackhole"), arch_perf("wormhole_b0")
KIB = 1024


def test_the_workers_follow_the_programs_thresholds():
    assert gather_workers(4 * KIB) == 1
    assert gather_workers(4 * KIB + 1) == 2
    assert gather_workers(256 * KIB) == 2
    assert gather_workers(256 * KIB + 1) == 4


def test_the_copy_moves_a_devices_slice_over_its_workers():
    # line of 2 at 1 MiB over 2 links: 262,144 B a link (2 workers), each sending 131,072 B with its copy
    assert local_copy_ns(BH, 1024 * KIB, 2, 2) == 131072 / BLACKHOLE.copy_worker_bytes_per_s * 1e9
    # at 2 MiB the program runs 4 workers a link: half the bytes a worker
    assert local_copy_ns(BH, 2048 * KIB, 2, 2) == local_copy_ns(BH, 1024 * KIB, 2, 2)
    assert local_copy_ns(WH, 1024 * KIB, 2, 1) == 0.0  # not modelled on Wormhole


@pytest.mark.parametrize(("devices", "binds"), [(2, True), (4, False), (8, False)])
def test_the_copy_binds_on_the_line_of_2_only(devices, binds):
    whole = 1024 * KIB
    transfer = phase(BH, OpFamily.ALL_GATHER, whole, devices, (Topology.LINEAR, 2, Fabric.FABRIC_1D)).transfer_ns
    copy = local_copy_ns(BH, whole, devices, 2)
    assert (transfer == copy) is binds
    assert transfer >= copy
