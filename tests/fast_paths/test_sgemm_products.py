"""A product whose float32 sums are rounded to bfloat16 (a bfloat16 output, or a block-float one
packed from a 16-bit destination register) takes torch's bfloat16 ``matmul`` where torch has
oneDNN's bfloat16 kernels, and a float32 product of the same values, widened a block of columns
at a time and rounded once by meshnn, where it has not (torch's reference loop, 50 to 100 times
slower).  Both paths run here, whatever this CPU is: the operands are small integers, so every
float32 sum is exact and the expected bits are known (the sums need more than bfloat16's 8
significant bits, so the rounding is seen)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.ops import matmul_kernel, operands

TILE = ttnn.TILE_LAYOUT


@pytest.fixture(params=[True, False], ids=["native", "sgemm"])
def native(request, monkeypatch) -> bool:
    """Whether torch's bfloat16 product is taken (as on a CPU with oneDNN's bfloat16 kernels)."""
    monkeypatch.setitem(operands._NATIVE, id(torch), request.param)
    return request.param


def integers(rng: np.random.Generator, shape: tuple[int, ...]) -> torch.Tensor:
    """Integers in [-15, 15]: exact in bfloat16 and bfloat8_b; sums over K <= 256 exact in float32."""
    return torch.from_numpy(rng.integers(-15, 16, shape).astype(np.float32))


def rounded(values: torch.Tensor, dtype=ttnn.bfloat16) -> torch.Tensor:
    """``values`` as the host's encoder rounds them into ``dtype`` (golden-checked elsewhere)."""
    return ttnn.to_torch(ttnn.from_torch(values, dtype=dtype, layout=TILE)).float()


def _product(mesh, x, w, x_mapper, w_mapper, composer, dtype=ttnn.bfloat16) -> torch.Tensor:
    put = lambda t, m, d: ttnn.from_torch(t, dtype=d, layout=TILE, device=mesh, mesh_mapper=m)  # noqa: E731
    out = ttnn.linear(put(x, x_mapper, ttnn.bfloat16), put(w, w_mapper, ttnn.bfloat8_b), dtype=dtype)
    return ttnn.to_torch(out, mesh_composer=composer).float()


@pytest.mark.parametrize("out_dtype", ["bfloat16", "bfloat8_b"])
def test_a_column_parallel_product_is_its_sums_rounded_to_bfloat16(open_mesh, native, out_dtype):
    mesh = open_mesh((1, 4))
    rng = np.random.default_rng(11)
    x, w = integers(rng, (1, 1, 32, 256)), integers(rng, (256, 4 * 96))
    dtype = getattr(ttnn, out_dtype)
    got = _product(mesh, x, w, None, ttnn.ShardTensorToMesh(mesh, dim=1), ttnn.ConcatMeshToTensor(mesh, dim=-1), dtype)
    exact = (x.double() @ w.double()).float()
    assert not torch.equal(rounded(exact), exact), "the sums must need rounding"
    assert torch.equal(got, rounded(rounded(exact), dtype))


def test_a_row_parallel_product_is_each_devices_sums_rounded(open_mesh, native):
    mesh = open_mesh((1, 4))
    rng = np.random.default_rng(12)
    x, w = integers(rng, (1, 1, 32, 4 * 64)), integers(rng, (4 * 64, 96))
    cols, rows = ttnn.ShardTensorToMesh(mesh, dim=-1), ttnn.ShardTensorToMesh(mesh, dim=0)
    got = _product(mesh, x, w, cols, rows, ttnn.ConcatMeshToTensor(mesh, dim=0))
    parts = [x[..., d * 64 : (d + 1) * 64].double() @ w[d * 64 : (d + 1) * 64].double() for d in range(4)]
    assert torch.equal(got, rounded(torch.cat(parts).float()))


def test_the_blocks_cover_every_column(open_mesh, monkeypatch):
    """Blocks of 64 columns over a 224-wide weight: three whole blocks and a part one."""
    monkeypatch.setitem(operands._NATIVE, id(torch), False)
    monkeypatch.setattr(matmul_kernel, "SGEMM_CHUNK_VALUES", 128 * 64 + 100)
    mesh = open_mesh((1, 1))
    rng = np.random.default_rng(13)
    x, w = integers(rng, (1, 1, 64, 128)), integers(rng, (128, 224))
    assert torch.equal(_product(mesh, x, w, None, None, None), rounded((x.double() @ w.double()).float()))


def test_only_cpus_with_native_kernels_multiply_in_bfloat16(open_mesh, native, monkeypatch):
    seen: list[torch.dtype] = []
    matmul = torch.matmul

    def spy(a, b, **kwargs):
        seen.append(b.dtype)
        return matmul(a, b, **kwargs)

    monkeypatch.setattr(torch, "matmul", spy)
    rng = np.random.default_rng(14)
    _product(open_mesh((1, 1)), integers(rng, (1, 1, 32, 64)), integers(rng, (64, 64)), None, None, None)
    assert seen and set(seen) == {torch.bfloat16 if native else torch.float32}


def test_a_replay_equals_the_eager_product_of_new_inputs(open_mesh):
    """The float32 path (whatever this CPU has) traced: a replay reads the input written since."""
    mesh = open_mesh((1, 8), trace_region_size=1 << 20)
    rng = np.random.default_rng(15)
    shard = ttnn.ShardTensorToMesh(mesh, dim=1)
    x = ttnn.from_torch(torch.randn(1, 1, 32, 256), dtype=ttnn.bfloat16, layout=TILE, device=mesh)
    w = torch.from_numpy(rng.standard_normal((256, 8 * 64)).astype(np.float32))
    w = ttnn.from_torch(w, dtype=ttnn.bfloat8_b, layout=TILE, device=mesh, mesh_mapper=shard)

    def step():
        return [ttnn.linear(x, w, dtype=dtype) for dtype in (ttnn.bfloat16, ttnn.bfloat8_b)]

    def read(outs) -> list[torch.Tensor]:
        return [ttnn.to_torch(o, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=-1)) for o in outs]

    eager = read(step())
    trace = ttnn.begin_trace_capture(mesh, cq_id=0)
    outs = step()
    ttnn.end_trace_capture(mesh, trace, cq_id=0)
    ttnn.execute_trace(mesh, trace, cq_id=0, blocking=True)
    assert all(torch.equal(a, b) for a, b in zip(read(outs), eager, strict=True))
    ttnn.copy_host_to_device_tensor(ttnn.from_torch(torch.randn(1, 1, 32, 256), dtype=ttnn.bfloat16, layout=TILE), x)
    ttnn.execute_trace(mesh, trace, cq_id=0, blocking=True)
    replayed = read(outs)
    ttnn.release_trace(mesh, trace)
    again = read(step())
    assert all(torch.equal(a, b) and not torch.equal(a, e) for a, b, e in zip(replayed, again, eager, strict=True))
