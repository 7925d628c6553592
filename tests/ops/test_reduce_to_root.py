"""``ttnn.reduce_to_root`` (issue 30; flash-decode's partials merged over a line of four): the
root holds the tree's ``(l, s, m)`` within bfloat16's rounding of a float64 reference written
from the formulas (tt-metal's own test layout: 8 x 32 tiles, width-sharded L1, a chunk per core),
the other devices zeros; the tree's shape and tt-metal's checks refuse bad calls (1x2 and 2x4
meshes, a root at the line's end); the perf model times it as a point-to-point exchange."""

from __future__ import annotations

import math

import pytest
import torch

import meshnn as ttnn

CORES, ROWS = 8, 8


def _config(width):
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 3))})
    spec = ttnn.ShardSpec(grid, [ROWS, width], ttnn.ShardOrientation.ROW_MAJOR)
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.WIDTH_SHARDED, ttnn.BufferType.L1, spec)


def _put(mesh, per_device, width):
    stacked = torch.stack(per_device)
    mapper = ttnn.ShardTensorToMesh(mesh, dim=0)
    return ttnn.from_torch(stacked, device=mesh, layout=ttnn.TILE_LAYOUT, tile=ttnn.Tile((8, 32)),
                           dtype=ttnn.bfloat16, memory_config=_config(width), mesh_mapper=mapper)  # fmt: skip


def _partials(seed=0):
    g = torch.Generator().manual_seed(seed)
    ls = [(torch.randn(ROWS, 128 * CORES, generator=g) * 0.5 + d).bfloat16() for d in range(4)]
    ss = [(torch.rand(ROWS, 32 * CORES, generator=g) * 0.5 + 1 + d / 10).bfloat16() for d in range(4)]
    ms = [(torch.randn(ROWS, 32 * CORES, generator=g) * 0.5 + d).bfloat16() for d in range(4)]
    return ls, ss, ms


def _reference(ls, ss, ms, scale):
    """The tree in float64, chunk by chunk: per chunk, l scales by its first column's factor."""

    def merge(a, b):
        (l1, s1, m1), (l2, s2, m2) = a, b
        m = torch.maximum(m1, m2)
        e1, e2 = torch.exp((m1 - m) * scale), torch.exp((m2 - m) * scale)
        f1 = e1[:, ::32].repeat_interleave(128, dim=1)
        f2 = e2[:, ::32].repeat_interleave(128, dim=1)
        return l1 * f1 + l2 * f2, s1 * e1 + s2 * e2, m

    part = [(ls[d].double(), ss[d].double(), ms[d].double()) for d in range(4)]
    l_out, s_out, m_out = merge(merge(part[3], part[2]), merge(part[0], part[1]))
    return l_out / s_out[:, ::32].repeat_interleave(128, dim=1), s_out, m_out


@pytest.mark.parametrize("shape", [(1, 4), (4, 1)], ids=["1x4", "4x1"])
@pytest.mark.parametrize("scale", [1.0, 0.125])
def test_the_root_holds_the_merged_partials(open_mesh, shape, scale):
    mesh = open_mesh(shape, system="t3k")
    ls, ss, ms = _partials()
    root = ttnn.MeshCoordinate((0, 1) if shape == (1, 4) else (1, 0))
    outs = ttnn.reduce_to_root(_put(mesh, ls, 128), _put(mesh, ss, 32), _put(mesh, ms, 32), root, scale_fp32=scale)
    want = _reference(ls, ss, ms, scale)
    for out, ref in zip(outs, want, strict=True):
        devices = [ttnn.to_torch(d).double() for d in ttnn.get_device_tensors(out)]
        got = devices[1]
        assert torch.all((got - ref).abs() <= ref.abs() * 2**-8 + 1e-6)  # one rounding to bfloat16
        assert all(torch.count_nonzero(d) == 0 for i, d in enumerate(devices) if i != 1)


def test_the_trees_shape_and_tt_metals_checks_are_refused(open_mesh):
    line = open_mesh((1, 4), system="t3k")
    ls, ss, ms = _partials()
    l_t, s_t, m_t = _put(line, ls, 128), _put(line, ss, 32), _put(line, ms, 32)
    with pytest.raises(ValueError, match="second device"):
        ttnn.reduce_to_root(l_t, s_t, m_t, ttnn.MeshCoordinate((0, 0)))
    with pytest.raises(TypeError, match="root_coord"):
        ttnn.reduce_to_root(l_t, s_t, m_t, (0, 1))
    with pytest.raises(ValueError, match="Input mux cores size must be 4"):
        ttnn.reduce_to_root(l_t, s_t, m_t, ttnn.MeshCoordinate((0, 1)), input_mux_cores=[ttnn.CoreCoord(2, 0)])
    plain = ttnn.from_torch(torch.stack(ls), device=line, layout=ttnn.TILE_LAYOUT, dtype=ttnn.bfloat16,
                            mesh_mapper=ttnn.ShardTensorToMesh(line, dim=0))  # fmt: skip
    with pytest.raises(ValueError, match="must be sharded"):
        ttnn.reduce_to_root(plain, s_t, m_t, ttnn.MeshCoordinate((0, 1)))
    with pytest.raises(ValueError, match="spec"):
        ttnn.reduce_to_root(l_t, s_t, m_t, ttnn.MeshCoordinate((0, 1)), output_tensor_l=s_t)
    for shape in ((1, 2), (2, 4)):
        mesh = open_mesh(shape)
        n = math.prod(shape)
        per = [ls[d % 4] for d in range(n)]
        args = [_put(mesh, per, 128), _put(mesh, [ss[d % 4] for d in range(n)], 32)]
        args.append(_put(mesh, [ms[d % 4] for d in range(n)], 32))
        with pytest.raises(ValueError, match="line of 4"):
            ttnn.reduce_to_root(*args, ttnn.MeshCoordinate((0, 1)))


def test_the_perf_model_times_it_as_an_exchange(open_mesh):
    mesh = open_mesh((1, 4), system="t3k")
    ls, ss, ms = _partials()
    args = (_put(mesh, ls, 128), _put(mesh, ss, 32), _put(mesh, ms, 32))
    with ttnn.perf_capture() as capture:
        ttnn.reduce_to_root(*args, ttnn.MeshCoordinate((0, 1)))
    (entry, *_) = [e for r in capture.recorders for e in r.records]
    assert entry.desc.family is ttnn.perf.OpFamily.POINT_TO_POINT and entry.desc.op_code == "ReduceToRootOp"
    assert entry.prediction.link_bytes > 0 and entry.prediction.total_ns > 0
