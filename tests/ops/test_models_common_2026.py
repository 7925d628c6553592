"""What tt-metal 2026-06's ``models/common`` (its sampling's log-probs) calls and meshnn refused
(stop 48): ``remainder`` and ``gather`` take ``sub_core_grids`` (recorded, part of the program's
key; values unchanged), and ``gather`` writes an INT32 input's words into a UINT32 ``out`` (ttnn
checks only ``out``'s shape; the kernel copies 32-bit words).  Integer results: exact."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn

CORES = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(3, 3))])


@pytest.fixture
def single(open_mesh):
    return open_mesh((1, 1))


def put(mesh, values, dtype):
    return ttnn.from_torch(torch.as_tensor(values), dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh)


def test_remainder_takes_sub_core_grids_in_its_program_key(single):
    x = torch.arange(-512, 512, dtype=torch.float32).reshape(1, 1, 32, 32)
    single.enable_program_cache()
    before = single.num_program_cache_entries()
    got = ttnn.remainder(put(single, x, ttnn.float32), 7.0, sub_core_grids=CORES)
    assert torch.equal(ttnn.to_torch(got), torch.remainder(x, 7.0))
    assert single.num_program_cache_entries() == before + 1
    assert torch.equal(ttnn.to_torch(ttnn.remainder(put(single, x, ttnn.float32), 7.0)), torch.remainder(x, 7.0))
    assert single.num_program_cache_entries() == before + 2  # without the cores: another program


def test_gather_takes_sub_core_grids(single):
    x = torch.arange(32 * 64, dtype=torch.int32).reshape(1, 1, 32, 64)
    index = (torch.arange(32 * 32, dtype=torch.int32).reshape(1, 1, 32, 32) * 7) % 64
    got = ttnn.gather(put(single, x, ttnn.int32), dim=-1, index=put(single, index, ttnn.uint32), sub_core_grids=CORES)
    assert torch.equal(ttnn.to_torch(got), torch.gather(x, -1, index.long()))


def test_gather_into_a_uint32_out_keeps_an_int32_inputs_words(single):
    x = torch.tensor([[5, -3, 7, 2**31 - 1] * 8] * 32, dtype=torch.int32).reshape(1, 1, 32, 32)
    index = torch.tensor([[1, 0, 3, 2] * 8] * 32, dtype=torch.int32).reshape(1, 1, 32, 32)
    out = put(single, torch.zeros(1, 1, 32, 32, dtype=torch.int32), ttnn.uint32)
    ttnn.gather(put(single, x, ttnn.int32), dim=-1, index=put(single, index, ttnn.uint32), out=out)
    assert out.dtype is ttnn.uint32
    words = torch.gather(x, -1, index.long())  # to_torch reads UINT32 back as int32: the same words
    assert torch.equal(ttnn.to_torch(out).to(torch.int32), words)


def test_gather_refuses_an_out_of_another_kind(single):
    x = put(single, torch.zeros(1, 1, 32, 32, dtype=torch.int32), ttnn.int32)
    index = put(single, torch.zeros(1, 1, 32, 32, dtype=torch.int32), ttnn.uint32)
    out = put(single, torch.zeros(1, 1, 32, 32), ttnn.bfloat16)
    with pytest.raises(ttnn.MeshnnValueError, match="must have index's shape and input's dtype"):
        ttnn.gather(x, dim=-1, index=index, out=out)
