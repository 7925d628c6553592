"""A matmul's block-float output is packed from its destination register's values: bfloat16 ones
with ``fp32_dest_acc_en`` off (ttnn's default for every output dtype but float32), float32 ones
with it on.  The operands here are small integers, so every float32 sum is exact and both
expectations are known bit for bit: the product rounded to bfloat16 and then to the block-float
format, or rounded once."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn

FP32_DEST = ttnn.WormholeComputeKernelConfig(fp32_dest_acc_en=True)
FP16_DEST = ttnn.WormholeComputeKernelConfig(fp32_dest_acc_en=False)


def integers(rng: np.random.Generator, shape: tuple[int, ...]) -> torch.Tensor:
    """Integers in [-15, 15]: exact in bfloat16 and in bfloat8_b (at most 4 significant bits
    below a row's largest of 15), their products' sums over K <= 256 exact in float32."""
    return torch.from_numpy(rng.integers(-15, 16, shape).astype(np.float32))


def rounded(values: torch.Tensor, dtype) -> torch.Tensor:
    """``values`` as the host's encoder rounds them into ``dtype`` (golden-checked elsewhere)."""
    return ttnn.to_torch(ttnn.from_torch(values, dtype=dtype, layout=ttnn.TILE_LAYOUT)).float()


@pytest.mark.parametrize("out_dtype", ["bfloat8_b", "bfloat4_b"])
@pytest.mark.parametrize("operands", ["bfloat16", "float32"])  # torch's bfloat16 product, numpy's float32 one
@pytest.mark.parametrize("shape", [(1, 1), (1, 4)])
def test_a_block_float_output_is_packed_from_the_destination_registers_values(open_mesh, shape, operands, out_dtype):
    mesh = open_mesh(shape)
    n = mesh.get_num_devices()
    rng = np.random.default_rng(7)
    a, b = integers(rng, (32, 256)), integers(rng, (256, 64 * n))
    in_dtype, dtype = getattr(ttnn, operands), getattr(ttnn, out_dtype)
    x = ttnn.from_torch(a[None, None], dtype=in_dtype, layout=ttnn.TILE_LAYOUT, device=mesh)
    w = ttnn.from_torch(
        b, dtype=in_dtype, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=1)
    )
    exact = a.double() @ b.double()  # every float32 sum on the way is exact
    once = rounded(exact.float(), dtype)
    twice = rounded(rounded(exact.float(), ttnn.bfloat16), dtype)
    assert not torch.equal(once, twice), "the data must tell the two roundings apart"

    def product(config) -> torch.Tensor:
        out = ttnn.linear(x, w, dtype=dtype, compute_kernel_config=config)
        return ttnn.to_torch(out, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=-1)).float().reshape(32, -1)

    assert torch.equal(product(None), twice), "ttnn's default: a 16-bit destination register"
    assert torch.equal(product(FP16_DEST), twice)
    assert torch.equal(product(FP32_DEST), once), "fp32_dest_acc_en: packed from the float32 sums"


def test_a_bias_or_activation_keeps_the_float32_product(open_mesh):
    """Only a plain product is packed from bfloat16 values here; with a bias the float32 sums take
    the bias before the one rounding (meshnn's model of those kernels is unchanged)."""
    mesh = open_mesh((1, 1))
    rng = np.random.default_rng(8)
    a, b, c = integers(rng, (32, 256)), integers(rng, (256, 64)), integers(rng, (1, 64))
    put = lambda t: ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)  # noqa: E731
    out = ttnn.linear(put(a[None, None]), put(b), bias=put(c), dtype=ttnn.bfloat8_b)
    want = rounded((a.double() @ b.double() + c.double()).float(), ttnn.bfloat8_b)
    assert torch.equal(ttnn.to_torch(out).float().reshape(32, 64), want)


def test_a_float32_output_defaults_to_a_32_bit_destination(open_mesh):
    """ttnn's default for a float32 output is fp32_dest_acc_en on: the sums are not rounded to
    bfloat16 (large integers here, past bfloat16's 8 significant bits)."""
    mesh = open_mesh((1, 1))
    rng = np.random.default_rng(9)
    a, b = integers(rng, (32, 256)), integers(rng, (256, 64))
    put = lambda t: ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)  # noqa: E731
    out = ttnn.to_torch(ttnn.linear(put(a[None, None]), put(b), dtype=ttnn.float32)).reshape(32, 64)
    assert torch.equal(out.double(), a.double() @ b.double())
