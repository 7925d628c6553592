"""``ttnn.experimental.deepseek_moe_reduce_scatter``: the 8 last-dim pieces of each device's tensor
summed over a ring of 8, member m keeping piece m; tt-metal's checks; eight intermediates allocated
before the output and freed; replayed bit for bit.  Sums of bfloat16 values are compared with
torch's float32 sums of the same values in the same order, rounded once to bfloat16: exactly."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn

L1 = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.INTERLEAVED, ttnn.BufferType.L1)


def _nd(cores: int, width: int = 128) -> ttnn.MemoryConfig:
    grid = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(cores - 1, 0))])
    spec = ttnn.NdShardSpec(
        ttnn.Shape([1, 1, 32, width]),
        grid,
        ttnn.ShardOrientation.ROW_MAJOR,
        ttnn.ShardDistributionStrategy.ROUND_ROBIN_1D,
    )
    return ttnn.MemoryConfig(ttnn.BufferType.L1, spec)


@pytest.fixture
def ring(open_mesh):
    return open_mesh((1, 8))


def _pieces(mesh, width=2048, memory=None, seed=0):
    """The 8 pieces ``[1, 1, 32, width / 8]`` of each device's ``[1, 1, 32, width]`` (device d's:
    ``x[d]``), ND-sharded in L1 (``memory``, else shards of 128 columns), and ``x``."""
    n = mesh.get_num_devices()
    x = torch.randn(n, 1, 32, width, generator=torch.Generator().manual_seed(seed)).bfloat16()
    whole = ttnn.from_torch(
        x.permute(1, 2, 0, 3).reshape(1, 1, 32, n * width),  # device d's columns: x[d]
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=mesh,
        memory_config=L1,
        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=-1),
    )
    return ttnn.split(whole, width // 8, dim=-1, memory_config=memory or _nd(2)), x


def _expected(x: torch.Tensor, member: int, width: int) -> torch.Tensor:
    """Member ``member``'s piece summed over the 8 devices in member order, float32, rounded once."""
    step = width // 8
    total = x[0, ..., member * step : (member + 1) * step].float()
    for d in range(1, 8):
        total = total + x[d, ..., member * step : (member + 1) * step].float()
    return total.bfloat16()[None]  # [1, 1, 32, width / 8]


def test_each_member_keeps_its_piece_summed_over_the_ring(ring):
    pieces, x = _pieces(ring)
    out = ttnn.experimental.deepseek_moe_reduce_scatter(pieces, output_memory_config=L1, dim=3, num_links=1)
    assert list(out.shape) == [1, 1, 32, 256] and out.memory_config() == L1
    for member, t in enumerate(ttnn.get_device_tensors(out)):
        assert torch.equal(ttnn.to_torch(t), _expected(x, member, 2048)), member


def test_the_intermediates_are_freed_and_only_the_output_stays(ring):
    pieces, _ = _pieces(ring)
    before = len(ring.live_buffers())
    used = ring.allocator.memory_view(ttnn.BufferType.L1).total_bytes_allocated_per_bank
    out = ttnn.experimental.deepseek_moe_reduce_scatter(pieces, output_memory_config=L1, dim=-1)
    assert len(ring.live_buffers()) == before + 1  # the eight intermediates are gone
    assert ring.allocator.memory_view(ttnn.BufferType.L1).total_bytes_allocated_per_bank > used
    ttnn.deallocate(out)
    assert ring.allocator.memory_view(ttnn.BufferType.L1).total_bytes_allocated_per_bank == used


def test_a_trace_replays_the_eager_bytes(ring):
    pieces, _ = _pieces(ring, seed=1)
    eager = ttnn.to_torch(
        ttnn.experimental.deepseek_moe_reduce_scatter(pieces, output_memory_config=L1, dim=3),
        mesh_composer=ttnn.ConcatMeshToTensor(ring, dim=0),
    )
    trace = ttnn.begin_trace_capture(ring, cq_id=0)
    out = ttnn.experimental.deepseek_moe_reduce_scatter(pieces, output_memory_config=L1, dim=3)
    ttnn.end_trace_capture(ring, trace, cq_id=0)
    ttnn.execute_trace(ring, trace, cq_id=0, blocking=True)
    assert torch.equal(ttnn.to_torch(out, mesh_composer=ttnn.ConcatMeshToTensor(ring, dim=0)), eager)
    ttnn.release_trace(ring, trace)


@pytest.mark.parametrize(
    "change, error, message",
    [
        (lambda p: p[:7], ttnn.MeshnnValueError, "8 input tensors"),
        (lambda p: "pieces", ttnn.MeshnnTypeError, "list of ttnn.Tensor"),
    ],
)
def test_the_list_is_checked_first(ring, change, error, message):
    pieces, _ = _pieces(ring)
    with pytest.raises(error, match=message):
        ttnn.experimental.deepseek_moe_reduce_scatter(change(pieces), output_memory_config=L1, dim=3)


def test_tt_metals_checks(ring, open_mesh):
    pieces, _ = _pieces(ring)
    call = ttnn.experimental.deepseek_moe_reduce_scatter
    with pytest.raises(ttnn.MeshnnValueError, match="last dim"):
        call(pieces, output_memory_config=L1, dim=2)
    with pytest.raises(ttnn.MeshnnValueError, match=r"Topology\.Ring"):
        call(pieces, output_memory_config=L1, dim=3, topology=ttnn.Topology.Linear)
    interleaved = [ttnn.to_memory_config(p, L1) for p in pieces]
    with pytest.raises(ttnn.MeshnnValueError, match="nd sharded"):
        call(interleaved, output_memory_config=L1, dim=3)
    dram = [ttnn.to_memory_config(p, ttnn.DRAM_MEMORY_CONFIG) for p in pieces]
    with pytest.raises(ttnn.MeshnnValueError, match="L1"):
        call(dram, output_memory_config=L1, dim=3)
    odd, _ = _pieces(ring, width=512, memory=_nd(1, 32))  # shards of 1 page
    with pytest.raises(ttnn.MeshnnValueError, match="even number"):
        call(odd, output_memory_config=L1, dim=3)
    many, _ = _pieces(ring, memory=_nd(4, 64))  # 4 shards of 2 pages: over 2 a link
    with pytest.raises(ttnn.MeshnnValueError, match="num_links"):
        call(many, output_memory_config=L1, dim=3, num_links=1)
    mixed = [*pieces[:7], ttnn.to_memory_config(pieces[7], _nd(1, 64))]
    with pytest.raises(ttnn.MeshnnValueError, match="same tensor spec"):
        call(mixed, output_memory_config=L1, dim=3)
    line = open_mesh((1, 2))
    few, _ = _pieces(line)
    with pytest.raises(ttnn.MeshnnValueError, match="8 devices"):
        call(few, output_memory_config=L1, dim=3)
