"""The tiled reshape and tiled pad programs are timed by their waits (meshnn.perf.movement_programs): a reshape
that moves the tiles' rows reads, for each output tile, its map page and each input tile it draws on, one at a
time; a view-like reshape keeps the copy's time; a tiled pad fills its padding tile a byte at a time first."""

from __future__ import annotations

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.perf import BufferType, Layout, OpDesc, OpFamily, TensorDesc, predict
from meshnn.perf.latency import WORMHOLE_B0
from meshnn.perf.movement_programs import _tile_map, is_tiled_pad, is_tiled_reshape_program, tiled_reshape_cycles
from meshnn.perf.page_programs import launch_cycles
from meshnn.perf.systems import machine
from meshnn.perf.transpose_hc import FACE_ROW_WRITE, WRITE_BARRIER, hc_transpose_cycles, is_hc_transpose


def l1(shape, logical=None, layout=Layout.TILE):
    return TensorDesc(shape, "BFLOAT16", layout, BufferType.L1, logical_shape=logical or shape)


def reshape(source: TensorDesc, out: TensorDesc) -> OpDesc:
    return OpDesc(OpFamily.COPY, (source,), (out,), op_code="ReshapeViewDeviceOperation")


Q_IN = l1((1, 1, 32, 3072))
Q_OUT = l1((32, 1, 32, 192), (32, 1, 16, 192))


def test_an_output_tile_draws_one_input_tile_a_row_two_face_segments_each():
    """[1, 1, 32, 3072] -> [32, 1, 16, 192]: output tile (c, 0, j)'s 16 rows are input row c at columns
    192 r + 32 j: 16 different input tiles, each row two 16-wide face segments."""
    assert _tile_map(0, Q_IN, Q_OUT) == (16, 32)
    assert _tile_map(191, Q_IN, Q_OUT) == (16, 32)
    v_in, v_out = l1((1, 32, 128, 128)), l1((1, 1, 32, 16384))
    assert _tile_map(5, v_in, v_out) == (32, 64)  # each output row from another of the 32 channels


def test_view_reshapes_keep_the_copy_model():
    assert is_tiled_reshape_program(reshape(Q_IN, Q_OUT))
    assert not is_tiled_reshape_program(reshape(l1((1, 4, 64, 128)), l1((1, 1, 256, 128))))  # same tiles
    assert is_tiled_reshape_program(reshape(l1((1, 4, 32, 128), (1, 4, 16, 128)), l1((1, 1, 64, 128))))
    rm = l1((1, 1, 32, 3072), layout=Layout.ROW_MAJOR)
    assert not is_tiled_reshape_program(reshape(rm, l1((32, 1, 16, 192), layout=Layout.ROW_MAJOR)))


def test_the_reshape_is_the_busiest_cores_serial_reads():
    m = machine("galaxy", (1, 1))
    desc = reshape(Q_IN, Q_OUT)
    per_tile = (
        WORMHOLE_B0.tile_round_trip_cycles + 32 * 16 / 30  # the map page, 32 entries of 16 B
        + 16 * (WORMHOLE_B0.tile_round_trip_cycles + 2048 / 30)  # 16 input tiles
        + 16 * 2 * 40  # the writer's wait for its own-L1 copies before it frees each (tt-npe's start-up, no hop)
        + 32 * (FACE_ROW_WRITE.issue_cycles + 32 / 30)  # 32 segments, issued without a wait
        + WRITE_BARRIER.cycles() + 2048 / 30  # the output tile, its flight and its acknowledgement waited for
    )  # fmt: skip
    assert tiled_reshape_cycles(desc, m, 72) == pytest.approx(3 * per_tile)  # 192 tiles over 72 cores
    p = predict(desc, "galaxy", mesh_shape=(1, 1), traced=True)
    assert p.kernel_ns == pytest.approx(3 * per_tile + p.fixed_ns)
    assert p.fixed_ns == pytest.approx(launch_cycles(72))  # no compute kernel: the data-movement launch (1 GHz)


def test_a_tiled_pad_pays_its_byte_loop_once_a_core():
    pad = OpDesc(OpFamily.PAD, (l1((1, 1, 32, 576)),), (l1((1, 32, 32, 576)),), op_code="PadDeviceOperation")
    assert is_tiled_pad(pad)
    p = predict(pad, "galaxy", mesh_shape=(1, 1), traced=True)
    fill = 2 * 2048 * WORMHOLE_B0.riscv_cycles_per_element
    writes = 8 * (WRITE_BARRIER.cycles() + 2048 / 30)  # 576 tiles over 72 cores, each write waited for
    assert p.compute_ns == pytest.approx(fill + writes)
    rm = TensorDesc((1, 1, 32), "UINT32", Layout.ROW_MAJOR)
    assert not is_tiled_pad(OpDesc(OpFamily.PAD, (rm,), (TensorDesc((1, 1, 64), "UINT32", Layout.ROW_MAJOR),)))


def test_the_capture_of_a_reshape_and_a_pad_times_them(open_mesh, rng):
    mesh = open_mesh((1, 1))
    x = ttnn.from_torch(
        rng.standard_normal((1, 1, 32, 3072)).astype(np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
        device=mesh, memory_config=ttnn.L1_MEMORY_CONFIG,
    )  # fmt: skip
    with ttnn.perf_capture() as capture:
        ttnn.reshape(x, (32, 1, 16, 192))
        ttnn.pad(x, ((0, 0), (0, 3), (0, 0), (0, 0)), 0.0)
    records = capture.recorder(mesh).records
    assert [r.desc.family for r in records] == [OpFamily.COPY, OpFamily.PAD]
    assert is_tiled_reshape_program(records[0].desc) and is_tiled_pad(records[1].desc)
    assert all(r.prediction.kernel_ns > r.prediction.fixed_ns > 0 for r in records)


HC = (("dims", "0,2,1,3"),)


def permute(source: TensorDesc, out: TensorDesc, attributes=HC) -> OpDesc:
    return OpDesc(OpFamily.PERMUTE, (source,), (out,), op_code="PermuteDeviceOperation", attributes=attributes)


def test_an_hc_permute_writes_each_face_row_to_its_page():
    """[1, 32, 32, 576] with C and H swapped: 576 tiles over 72 cores, 64 face-row writes a tile (no padding)."""
    m = machine("galaxy", (1, 1))
    desc = permute(l1((1, 32, 32, 576)), l1((1, 32, 32, 576)))
    assert is_hc_transpose(desc) and not is_hc_transpose(permute(l1((1, 32, 32, 576)), l1((1, 32, 32, 576)), ()))
    read = WORMHOLE_B0.dram_read_latency_cycles + 2048 / 30  # an L1 tile, waited for
    wait = 2 * 40 + 19.55 * 10  # the last write's flight and its acknowledgement's: tt-npe's start-up and hops
    assert WRITE_BARRIER.cycles() == pytest.approx(wait) and WRITE_BARRIER.cycles(local=True) == 80
    per_tile = 64 * (FACE_ROW_WRITE.issue_cycles + 32 / 30) + wait  # one wait a tile
    assert hc_transpose_cycles(desc, m, 72) == pytest.approx((read + 8 * per_tile, 72))  # the reads overlapped
    padded = permute(l1((1, 16, 32, 512)), l1((1, 32, 32, 512), (1, 32, 16, 512)))  # C = 16: the lower faces padded
    writes = 2 * (FACE_ROW_WRITE.issue_cycles + 16 * 32 / 30)
    tail = 8 * writes + wait  # 512 padded tiles, one wait at the end
    assert hc_transpose_cycles(padded, m, 72) == pytest.approx((read + 4 * per_tile + tail, 72))  # then 256 tiles
    # the HC program's kernels are on the whole grid: its launch spans every core, a tile or none
    p = predict(permute(l1((1, 1, 32, 64)), l1((1, 32, 32, 64), (1, 32, 1, 64))), "galaxy", traced=True)
    assert p.fixed_ns == pytest.approx(launch_cycles(72))


def test_the_capture_of_a_permute_carries_its_dims(open_mesh, rng):
    mesh = open_mesh((1, 1))
    x = ttnn.from_torch(
        rng.standard_normal((1, 4, 64, 64)).astype(np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
        device=mesh,
    )  # fmt: skip
    with ttnn.perf_capture() as capture:
        ttnn.permute(x, (0, 2, 1, 3))
        ttnn.transpose(x, -3, -2)
        ttnn.permute(x, (0, 1, 3, 2))
    descs = [r.desc for r in capture.recorder(mesh).records]
    assert [d.attributes for d in descs] == [HC, HC, (("dims", "0,1,3,2"),)]
    assert [is_hc_transpose(d) for d in descs] == [True, True, False]
    assert all(r.prediction.kernel_ns > 0 for r in capture.recorder(mesh).records)


def test_a_row_invariant_permute_is_timed_as_its_face_rows():
    """[32, 1, 16, 128] by dims (1, 2, 0, 3): the last dim stays, so tt-metal's row-invariant program: 128 tiles of
    16 real rows (32 face-row writes each) over 72 cores; the output's 32 rows need no padding."""
    m = machine("galaxy", (1, 1))
    desc = permute(l1((32, 1, 32, 128), (32, 1, 16, 128)), l1((1, 16, 32, 128)), (("dims", "1,2,0,3"),))
    assert is_hc_transpose(desc)
    read = WORMHOLE_B0.dram_read_latency_cycles + 2048 / 30  # an L1 tile, waited for
    writes = 32 * (FACE_ROW_WRITE.issue_cycles + 32 / 30) + WRITE_BARRIER.cycles()  # one wait a tile
    assert hc_transpose_cycles(desc, m, 72) == pytest.approx((read + 2 * writes, 72))  # 2 tiles a core
    cn = permute(l1((32, 1, 32, 64)), l1((1, 32, 32, 64)), (("dims", "1,0,2,3"),))  # tt-metal's transpose CN
    assert not is_hc_transpose(cn)
