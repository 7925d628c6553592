"""``ttnn.gather`` under ``meshnn perf``'s capture: timed as its GatherDeviceOperation program runs
(:mod:`meshnn.perf.gather`: each index tile's scalar loop over every input tile of its row), not as a copy
marked estimated; the gathered dim is recorded."""

from __future__ import annotations

import dataclasses

import numpy as np

import meshnn as ttnn
from meshnn.ops.costs import ESTIMATED
from meshnn.perf import OpFamily, predict
from meshnn.perf.gather import gather_tiles, predict_gather
from meshnn.perf.systems import machine


def put(mesh, values, dtype):
    return ttnn.from_torch(values, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh)


def test_gather_is_timed_as_its_program_along_its_dim(open_mesh, rng):
    mesh = open_mesh((1, 1))
    x = put(mesh, rng.standard_normal((1, 2, 128, 64)).astype(np.float32), ttnn.bfloat16)
    last = put(mesh, rng.integers(0, 64, (1, 2, 128, 32)).astype(np.int32), ttnn.uint32)
    rows = put(mesh, rng.integers(0, 128, (1, 2, 64, 64)).astype(np.int32), ttnn.uint32)
    with ttnn.perf_capture() as capture:
        ttnn.gather(x, -1, last)
        ttnn.gather(x, 2, rows)
    assert capture.skipped == []
    along_last, along_rows = capture.recorder(mesh).records
    for record, dim in ((along_last, "3"), (along_rows, "2")):
        desc = record.desc
        assert desc.op_code == "GatherDeviceOperation" and desc.family is OpFamily.COPY
        assert ESTIMATED not in desc.attributes and dict(desc.attributes)["dim"] == dim
        assert record.prediction.kernel_ns > 0 and record.prediction.notes[0].startswith("gather: ")
    assert gather_tiles(along_last.desc) == (8, 2, 1)  # rows of tiles over 2 x 128 rows, 64 / 32 input tiles, 1
    assert gather_tiles(along_rows.desc) == (4, 4, 2)  # along dim 2: 2 x 64 columns of tiles, 128 / 32, 64 / 32


def test_gather_model_loops_over_every_input_tile_of_a_row(open_mesh, rng):
    mesh = open_mesh((1, 1))
    x = put(mesh, rng.standard_normal((1, 1, 64, 256)).astype(np.float32), ttnn.bfloat16)
    index = put(mesh, rng.integers(0, 256, (1, 1, 64, 32)).astype(np.int32), ttnn.uint32)
    with ttnn.perf_capture() as capture:
        ttnn.gather(x, -1, index)
    (record,) = capture.recorder(mesh).records
    desc, m = record.desc, machine("t3k", (1, 1))
    wider = dataclasses.replace(
        desc, inputs=(dataclasses.replace(desc.inputs[0], shape=(1, 1, 64, 512)), desc.inputs[1])
    )
    assert predict_gather(wider, m).compute_ns == 2 * predict_gather(desc, m).compute_ns  # twice the input tiles
    assert predict_gather(desc, m).kernel_ns == predict(desc, "t3k", mesh_shape=(1, 1)).kernel_ns
