"""The data-movement-only page programs (meshnn.perf.page_programs): sharded-to-interleaved writes its shard's tiles
back to back, interleaved-to-sharded reads them with a wait every so many, the tiled slice / concat and the CN
transpose wait on each tile; all with the launch of a program without a compute kernel."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.perf import BufferType, Layout, MemoryLayout, OpDesc, OpFamily, TensorDesc, predict
from meshnn.perf.latency import WORMHOLE_B0
from meshnn.perf.page_programs import (
    PAGE_FIGURES,
    RESHARD,
    S2I_PROGRAM_ATTRIBUTE,
    S2IProgram,
    is_cn_transpose,
    is_page_program,
    launch_cycles,
    page_cycles,
    read_barrier_every,
    shard_cores,
    sharded_reads_cycles,
)
from meshnn.perf.systems import machine
from meshnn.perf.transpose_hc import WRITE_BARRIER

H, W = MemoryLayout.HEIGHT_SHARDED, MemoryLayout.WIDTH_SHARDED
BYTES = 2048 / 30  # a bfloat16 tile at one core's NoC rate (tt-npe: 30 B a cycle)
WRITE = PAGE_FIGURES.write_issue_cycles + BYTES
LAND = WORMHOLE_B0.noc_write_latency_cycles
L1_READ = WORMHOLE_B0.dram_read_latency_cycles + BYTES
ISSUE = PAGE_FIGURES.write_issue_cycles  # a page's cost to its core beyond its bytes, read or written


def l1(shape, memory=MemoryLayout.INTERLEAVED, *, dtype="BFLOAT16", layout=Layout.TILE, buffer=BufferType.L1,
       logical=None):  # fmt: skip
    return TensorDesc(shape, dtype, layout, buffer, memory, logical_shape=logical or shape)


def op(code: str, inputs, out, family=OpFamily.COPY, **config) -> OpDesc:
    return OpDesc(family, tuple(inputs), (out,), op_code=code, **config)


S2I, I2S = "ShardedToInterleavedDeviceOperation", "InterleavedToShardedDeviceOperation"
CN = (("dims", "1,0,2,3"),)
GALAXY = machine("galaxy", (1, 1))


def test_which_programs_are_timed_page_by_page():
    assert is_page_program(op(S2I, [l1((1, 1, 32, 512), W)], l1((1, 1, 32, 512))))
    assert not is_page_program(op(S2I, [l1((1, 1, 32, 512), W)], l1((1, 1, 32, 512), dtype="BFLOAT8_B")))  # compute
    assert not is_page_program(op(I2S, [l1((1, 1, 64, 512))], l1((1, 1, 64, 512), MemoryLayout.BLOCK_SHARDED)))
    dram_shard = l1((1, 1, 64, 512), W, buffer=BufferType.DRAM)  # its program runs on the banks' workers
    assert not is_page_program(op(I2S, [l1((1, 1, 64, 512))], dram_shard))
    assert is_page_program(op("SliceDeviceOperation", [l1((1, 1, 32, 2112))], l1((32, 1, 32, 64), H), OpFamily.SLICE))
    rm = l1((1, 1, 32, 2112), layout=Layout.ROW_MAJOR)
    assert not is_page_program(op("SliceDeviceOperation", [rm], l1((1, 1, 32, 64), layout=Layout.ROW_MAJOR)))
    pair = [l1((1, 1, 32, 512)), l1((1, 1, 32, 64))]
    assert is_page_program(op("ConcatDeviceOperation", pair, l1((1, 1, 32, 576)), OpFamily.CONCAT))
    padded = [l1((1, 1, 32, 64), logical=(1, 1, 32, 48)), l1((1, 1, 32, 32), logical=(1, 1, 32, 16))]
    assert not is_page_program(op("ConcatDeviceOperation", padded, l1((1, 1, 32, 64)), OpFamily.CONCAT))  # untilized
    sharded_pair = [l1((1, 1, 32, 512), H), l1((1, 1, 32, 64), H)]  # tt-metal's sharded concat programs
    assert not is_page_program(op("ConcatDeviceOperation", sharded_pair, l1((1, 1, 32, 576), H), OpFamily.CONCAT))
    cn = op("TransposeDeviceOperation", [l1((32, 1, 32, 64))], l1((1, 32, 32, 64)), OpFamily.PERMUTE, attributes=CN)
    hc = dataclasses.replace(cn, attributes=(("dims", "0,2,1,3"),))
    assert is_cn_transpose(cn) and is_page_program(cn) and not is_page_program(hc)


def test_shards_are_the_even_split_in_whole_tiles_and_only_cores_with_data_run():
    assert shard_cores(l1((1, 4, 128, 576), H), 64) == (16, 18)  # 16 tile rows over a 64-core grid: 16 shards
    assert shard_cores(l1((1, 32, 32, 64), H), 32) == (32, 2)
    assert shard_cores(l1((1, 1, 32, 512), W), 16) == (16, 1)
    assert shard_cores(l1((1, 1, 32, 512), W), 5) == (4, 4)  # 16 tile columns over 5 cores: 4 a shard


def test_the_interleaved_to_sharded_reader_waits_as_tt_metal_counts():
    """((512 / readers) * 1152) / tile bytes reads between waits (reader_unary_sharded_blocks_interleaved_start_id)."""
    assert [read_barrier_every(2048, n) for n in (4, 16, 64)] == [72, 18, 4]
    assert read_barrier_every(1088, 64) == 8  # a bfloat8_b tile
    flash = op(I2S, [l1((1, 4, 128, 576))], l1((1, 4, 128, 576), H), core_grid=(64, 1))
    cycles, cores = page_cycles(flash, GALAXY)
    assert cores == 16  # 16 readers: a wait after 18 reads, the shard's last
    assert cycles == pytest.approx(17 * ISSUE + BYTES + WORMHOLE_B0.dram_read_latency_cycles)


def test_the_interleaved_to_sharded_reads_leave_one_issue_apart_and_wait_by_batch():
    """Each read in a batch leaves a page's cost after the one before (140 cycles, more than a 2 KB tile's 68 at
    the NoC's rate), the reads before it in flight; a batch ends with the last read's round trip."""
    src = l1((1, 4, 128, 576))
    trip = WORMHOLE_B0.dram_read_latency_cycles
    assert sharded_reads_cycles(GALAXY, src, 18, 72) == pytest.approx(17 * ISSUE + BYTES + trip)
    assert sharded_reads_cycles(GALAXY, src, 18, 4) == pytest.approx(
        4 * (3 * ISSUE + BYTES + trip) + ISSUE + BYTES + trip
    )
    assert sharded_reads_cycles(GALAXY, src, 1, 4) == pytest.approx(BYTES + trip)  # the first read's issue: the launch
    big = l1((1, 4, 128, 576), dtype="FLOAT32")  # a 4 KB tile: its bytes (137 cycles) about an issue
    four_kb = 4096 / 30
    assert sharded_reads_cycles(GALAXY, big, 3, 72) == pytest.approx(max(3 * four_kb, 2 * ISSUE + four_kb) + trip)
    dram = l1((1, 4, 128, 576), buffer=BufferType.DRAM)
    assert sharded_reads_cycles(GALAXY, dram, 2, 72) == pytest.approx(
        ISSUE + BYTES + WORMHOLE_B0.tile_round_trip_cycles
    )


def test_a_sharded_to_interleaved_core_writes_its_shard_back_to_back_and_waits_once():
    out = op(S2I, [l1((1, 4, 128, 512), H)], l1((1, 4, 128, 512)), core_grid=(64, 1))
    cycles, cores = page_cycles(out, GALAXY)
    assert (cores, cycles) == (16, pytest.approx(16 * WRITE + LAND))


def test_a_slice_waits_on_each_read_and_its_writer_overlaps():
    one = op("SliceDeviceOperation", [l1((1, 1, 32, 2112))], l1((1, 1, 32, 1536)), OpFamily.SLICE)
    assert page_cycles(one, GALAXY) == (pytest.approx(L1_READ + WRITE + LAND), 48)  # one tile a core
    two = op("SliceDeviceOperation", [l1((32, 1, 32, 192))], l1((32, 1, 32, 128)), OpFamily.SLICE)
    second = L1_READ + ISSUE  # a read after the core's first pays the page's cost too
    assert page_cycles(two, GALAXY) == (pytest.approx(L1_READ + second + WRITE + LAND), 72)  # 128 tiles over 72
    dram = dataclasses.replace(one, inputs=(l1((1, 1, 32, 2112), buffer=BufferType.DRAM),))
    trip = WORMHOLE_B0.tile_round_trip_cycles + BYTES
    assert page_cycles(dram, GALAXY)[0] == pytest.approx(trip + WRITE + LAND)


def test_the_cn_transpose_waits_on_each_write_too():
    cn = op("TransposeDeviceOperation", [l1((32, 1, 32, 64))], l1((1, 32, 32, 64)), OpFamily.PERMUTE, attributes=CN)
    assert page_cycles(cn, GALAXY) == (pytest.approx(L1_READ + WRITE + 2 * LAND), 64)


def test_the_launch_grows_with_the_programs_cores_and_stays_under_the_generic_one():
    arch = GALAXY.system.arch
    s2i = op(S2I, [l1((1, 1, 32, 512), W)], l1((1, 1, 32, 512)), core_grid=(16, 1))
    p = predict(s2i, "galaxy", mesh_shape=(1, 1), traced=True)
    assert p.fixed_ns == pytest.approx(arch.cycles_ns(launch_cycles(16)))
    assert launch_cycles(16) == pytest.approx(PAGE_FIGURES.launch_cycles + 16 * PAGE_FIGURES.launch_per_core_cycles)
    assert 0 < arch.cycles_ns(launch_cycles(GALAXY.system.compute_cores)) < arch.op_launch_ns
    assert p.kernel_ns == pytest.approx(p.fixed_ns + (WRITE + LAND))  # one tile a core, its writes the longest part
    bh = predict(s2i, "p150", traced=True)
    assert 0 < bh.kernel_ns < p.kernel_ns  # the same cycles at Blackhole's 1.35 GHz, its faster NoC


def test_every_page_figure_names_its_source():
    names = [f.name for f in dataclasses.fields(PAGE_FIGURES) if f.name != "sources"]
    assert sorted(PAGE_FIGURES.sources) == sorted(names)


def test_the_capture_of_reshards_a_slice_a_concat_and_a_cn_permute_times_them(open_mesh, rng):
    mesh = open_mesh((1, 1))
    x = ttnn.from_torch(
        rng.standard_normal((1, 4, 32, 576)).astype(np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
        device=mesh, memory_config=ttnn.L1_MEMORY_CONFIG,
    )  # fmt: skip
    sharded = ttnn.create_sharded_memory_config(
        (32, 576), ttnn.CoreGrid(x=4, y=1), ttnn.ShardStrategy.HEIGHT, use_height_and_width_as_shard_shape=True
    )
    with ttnn.perf_capture() as capture:
        y = ttnn.to_memory_config(x, sharded)
        ttnn.to_memory_config(y, ttnn.L1_MEMORY_CONFIG)
        ttnn.slice(x, (0, 0, 0, 0), (1, 4, 32, 512))
        ttnn.concat([x, x], dim=-1)
        ttnn.permute(x, (1, 0, 2, 3))
    records = capture.recorder(mesh).records
    assert [r.desc.op_code for r in records] == [
        I2S, S2I, "SliceDeviceOperation", "ConcatDeviceOperation", "TransposeDeviceOperation"
    ]  # fmt: skip
    assert all(is_page_program(r.desc) for r in records)
    assert all(r.prediction.kernel_ns > r.prediction.fixed_ns > 0 for r in records)


def test_a_row_major_pad_fills_its_stick_then_moves_its_sticks_in_2_kb_batches():
    """DeepSeek's id pad: [1, 1, 1] -> [1, 1, 32] uint32 in DRAM: one stick on one core (a 128 B fill, two bytes a
    step), one waited read, one write; 4096 sticks of 64 B split over 72 cores, 32 a batch."""
    ids = l1((1, 1, 1), dtype="UINT32", layout=Layout.ROW_MAJOR, buffer=BufferType.DRAM)
    pad = op("PadDeviceOperation", [ids], dataclasses.replace(ids, shape=(1, 1, 32), logical_shape=(1, 1, 32)),
             OpFamily.PAD)  # fmt: skip
    assert is_page_program(pad)
    fill = 64 * WORMHOLE_B0.riscv_cycles_per_element
    one = fill + 4 / 30 + WORMHOLE_B0.tile_round_trip_cycles + PAGE_FIGURES.write_issue_cycles + 128 / 30 + LAND
    assert page_cycles(pad, GALAXY) == (pytest.approx(one), 1)
    wide = l1((1, 4096, 16), layout=Layout.ROW_MAJOR)
    many = op("PadDeviceOperation", [wide], l1((1, 4096, 32), layout=Layout.ROW_MAJOR), OpFamily.PAD)
    sticks, batches = 57, 2  # ceil(4096 / 72) sticks a core, 32 of 64 B a batch
    reads = sticks * 32 / 30 + batches * WORMHOLE_B0.dram_read_latency_cycles
    writes = sticks * (PAGE_FIGURES.write_issue_cycles + 64 / 30) + batches * LAND
    assert page_cycles(many, GALAXY) == (pytest.approx(32 * WORMHOLE_B0.riscv_cycles_per_element + reads + writes), 72)
    tiled = op("PadDeviceOperation", [l1((1, 1, 32, 576))], l1((1, 32, 32, 576)), OpFamily.PAD)
    assert not is_page_program(tiled)  # the tiled pad: meshnn.perf.movement_programs


def test_a_write_to_dram_waits_for_its_acknowledgement_from_the_bank():
    """The barrier after a write to a DRAM page waits for the write's flight and its acknowledgement's
    (transpose_hc.WRITE_BARRIER), not a neighbour's landing."""
    dram = l1((1, 1, 32, 256), buffer=BufferType.DRAM)
    desc = op(S2I, [l1((1, 1, 32, 256), W)], dram, core_grid=(8, 1))
    cycles, cores = page_cycles(desc, GALAXY)
    assert (cores, cycles) == (8, pytest.approx(WRITE + WRITE_BARRIER.cycles()))
    assert WRITE_BARRIER.cycles() > LAND


def test_the_2025_writer_waits_after_every_tile():
    """Before tt-metal #27430 (2025-09-04) writer_unary_sharded_blocks_interleaved_start_id.cpp waited a tile."""
    x = l1((1, 1, 32, 16384), W, dtype="BFLOAT8_B")
    dram = l1((1, 1, 32, 16384), dtype="BFLOAT8_B", buffer=BufferType.DRAM)
    today = op(S2I, [x], dram, core_grid=(8, 4))
    dated = dataclasses.replace(today, attributes=((S2I_PROGRAM_ATTRIBUTE, S2IProgram.BARRIER_A_TILE.value),))
    write = PAGE_FIGURES.write_issue_cycles + 1088 / 30
    assert page_cycles(today, GALAXY) == (pytest.approx(16 * write + WRITE_BARRIER.cycles()), 32)
    assert page_cycles(dated, GALAXY) == (pytest.approx(16 * (write + WRITE_BARRIER.cycles())), 32)


def test_a_reshard_reads_each_output_cores_pages_and_waits_once():
    """reshard_multi_core_generic: an output core's runs of pages read from the sources' L1, one barrier."""
    source, out = l1((1, 1, 32, 2048), W, dtype="BFLOAT8_B"), l1((1, 1, 32, 2304), W, dtype="BFLOAT8_B")
    desc = op(RESHARD, [source], out, core_grid=(8, 3))
    assert is_page_program(desc)
    assert page_cycles(desc, GALAXY) == (pytest.approx(3 * 1088 / 30 + WORMHOLE_B0.dram_read_latency_cycles), 24)
    p = predict(desc, "galaxy", mesh_shape=(1, 1), traced=True)
    assert p.fixed_ns == pytest.approx(GALAXY.system.arch.cycles_ns(launch_cycles(24)))
    assert not is_page_program(op(RESHARD, [source], l1((1, 1, 32, 2304), W), core_grid=(8, 3)))  # a dtype change
    assert not is_page_program(op(RESHARD, [source], l1((1, 1, 32, 2304), MemoryLayout.BLOCK_SHARDED)))
