"""Pool and upsample ops under ``meshnn perf``'s capture: the Pool2D program (max, avg and the adaptive pools)
is timed by :mod:`meshnn.perf.pool` from its window, not as a copy marked estimated; a nearest upsample is the
copy its program is (each input stick read once, written scale_h x scale_w times), a bilinear one stays
estimated (its program tilizes and weighs four neighbours)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.ops.costs import ESTIMATED
from meshnn.perf import MathFidelity, MemoryLayout, OpFamily, predict
from meshnn.perf.pool import pool_cycles, predict_pool, window
from meshnn.perf.systems import machine

N, H, W, C = 2, 56, 56, 64


def image(mesh, rng, channels=C):
    values = rng.standard_normal((1, 1, N * H * W, channels)).astype(np.float32)
    return ttnn.from_torch(values, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh)


def captured(mesh, run):
    with ttnn.perf_capture() as capture:
        run()
    assert capture.skipped == []
    return capture.recorder(mesh).records


def test_pools_are_timed_from_their_window_not_estimated(open_mesh, rng):
    mesh = open_mesh((1, 1))
    x = image(mesh, rng)
    records = captured(
        mesh,
        lambda: (
            ttnn.max_pool2d(x, N, H, W, C, [3, 3], [2, 2], [1, 1], [1, 1]),
            ttnn.avg_pool2d(x, N, H, W, C, [2, 2], [2, 2], [0, 0]),
            ttnn.adaptive_avg_pool2d(x, N, H, W, C, [7, 7]),
            ttnn.adaptive_max_pool2d(x, N, H, W, C, [1, 1]),
        ),
    )
    assert [r.desc.op_code for r in records] == ["Pool2D"] * 4
    for record, kernel in zip(records, ("3x3", "2x2", "8x8", "56x56"), strict=True):
        desc = record.desc
        assert desc.family is OpFamily.REDUCTION and ESTIMATED not in desc.attributes
        assert dict(desc.attributes)["kernel_size"] == kernel
        assert record.prediction.kernel_ns > 0
        assert record.prediction.fidelity is MathFidelity.HiFi4  # the pool factory's default
        assert any(note.startswith("pool: ") for note in record.prediction.notes)


def test_a_pool_records_the_shard_scheme_it_was_given(open_mesh, rng):
    mesh = open_mesh((1, 1))
    x = image(mesh, rng)
    height = ttnn.TensorMemoryLayout.HEIGHT_SHARDED
    (record,) = captured(
        mesh, lambda: ttnn.max_pool2d(x, N, H, W, C, [3, 3], [2, 2], [1, 1], [1, 1], applied_shard_scheme=height)
    )
    assert dict(record.desc.attributes)["shard_scheme"] == "HEIGHT_SHARDED"


def test_pool_model_counts_the_window_reads_and_the_channel_tiles(open_mesh, rng):
    mesh = open_mesh((1, 1))
    x = image(mesh, rng)
    (record,) = captured(mesh, lambda: ttnn.max_pool2d(x, N, H, W, C, [3, 3], [2, 2], [1, 1], [1, 1]))
    desc, m = record.desc, machine("t3k", (1, 1))
    cores, reader, compute = pool_cycles(desc, m)
    assert cores == 64 and window(desc) == (3, 3)
    wider = dataclasses.replace(desc, attributes=(("kernel_size", "4x4"),))
    assert pool_cycles(wider, m)[1] > reader and pool_cycles(wider, m)[2] == compute  # more rows read, same reductions
    widest = dataclasses.replace(desc, attributes=(("kernel_size", "5x5"),))
    assert pool_cycles(widest, m)[2] == pytest.approx(2 * compute)  # 25 sticks fill all four faces of a tile
    lofi = dataclasses.replace(desc, fidelity=MathFidelity.LoFi)
    assert pool_cycles(lofi, m)[2] < compute  # the reduce's fidelity phases
    channels = dataclasses.replace(
        desc,
        inputs=(dataclasses.replace(desc.inputs[0], shape=(1, 1, N * H * W, 4 * C)),),
        outputs=(dataclasses.replace(desc.outputs[0], shape=(*desc.outputs[0].shape[:-1], 4 * C)),),
    )
    assert pool_cycles(channels, m)[2] == pytest.approx(4 * compute)  # one reduction a channel tile
    width = dataclasses.replace(desc, inputs=(dataclasses.replace(desc.inputs[0], memory=MemoryLayout.WIDTH_SHARDED),))
    assert pool_cycles(width, m)[2] > compute  # every core all the sticks (its channel share is under a tile)
    assert pool_cycles(width, m)[0] == 2  # one core a channel tile
    asked = dataclasses.replace(desc, attributes=(*desc.attributes, ("shard_scheme", "WIDTH_SHARDED")))
    assert pool_cycles(asked, m) == pool_cycles(width, m)  # an interleaved input sharded as the op was told
    assert predict_pool(desc, m).kernel_ns == predict(desc, "t3k", mesh_shape=(1, 1)).kernel_ns
    bare = dataclasses.replace(desc, attributes=())
    assert window(bare) == (1, 1) and predict(bare, "t3k", mesh_shape=(1, 1)).kernel_ns > 0


def test_nearest_upsample_is_a_copy_and_bilinear_stays_estimated(open_mesh, rng):
    mesh = open_mesh((1, 1))
    values = rng.standard_normal((N, 28, 28, C)).astype(np.float32)
    x = ttnn.from_torch(values, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh)
    nearest, bilinear = captured(mesh, lambda: (ttnn.upsample(x, 2), ttnn.upsample(x, 2, mode="bilinear")))
    assert nearest.desc.op_code == bilinear.desc.op_code == "UpSample"
    assert nearest.desc.family is OpFamily.COPY and ESTIMATED not in nearest.desc.attributes
    assert ESTIMATED in bilinear.desc.attributes
    assert nearest.desc.outputs[0].volume == 4 * nearest.desc.inputs[0].volume  # what it writes: every stick 4x
    assert nearest.prediction.kernel_ns > 0 and bilinear.prediction.kernel_ns > 0


def test_the_summary_names_the_ops_timed_as_estimated_copies(open_mesh, rng):
    mesh = open_mesh((1, 1))
    values = rng.standard_normal((N, 28, 28, C)).astype(np.float32)
    x = ttnn.from_torch(values, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh)
    with ttnn.perf_capture() as modelled:
        ttnn.upsample(x, 2)
    assert "estimated" not in modelled.summary()
    with ttnn.perf_capture() as capture:
        ttnn.upsample(x, 2)
        ttnn.upsample(x, 2, mode="bilinear")
    nearest, bilinear = capture.recorder(mesh).records
    share = 100 * bilinear.prediction.kernel_ns / (nearest.prediction.kernel_ns + bilinear.prediction.kernel_ns)
    line = next(line for line in capture.summary().splitlines() if "estimated" in line)
    assert (
        line
        == f"  estimated (timed as a copy, no model of its program): 1 op, {share:.1f}% of the kernel time: UpSample"
    )
