"""A binary op given no keyword (``ttnn.add(a, b)``) takes its plain path: the same checks, bytes
and errors as the call with its keywords spelled out; and an output dropped and made again at the
address its free gave back holds the new op's values; an op's program key noted again and again
is counted once, and again after the cache was cleared."""

from __future__ import annotations

import pytest
import torch

import meshnn as ttnn
from meshnn.errors import DeallocatedError, MeshnnTypeError, MeshnnValueError
from meshnn.ops.eltwise import binary_ops


def sharded(mesh, values, dtype=ttnn.bfloat16):
    mapper = ttnn.ShardTensorToMesh(mesh, dim=0)
    return ttnn.from_torch(values, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=mapper)


def host(mesh, tensor):
    return ttnn.to_torch(tensor, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "maximum", "eq"])
@pytest.mark.parametrize("dtype", [ttnn.bfloat16, ttnn.float32])
def test_the_plain_call_is_the_call_with_its_keywords(open_mesh, op, dtype):
    mesh = open_mesh((2, 4))
    a = sharded(mesh, torch.randn(8, 32, 64), dtype)
    b = sharded(mesh, torch.randn(8, 32, 64), dtype)
    function = getattr(ttnn, op)
    plain = function(a, b)
    spelled = function(a, b, memory_config=ttnn.DRAM_MEMORY_CONFIG, queue_id=0)
    assert plain.spec == spelled.spec
    assert torch.equal(host(mesh, plain).view(torch.int16 if dtype is ttnn.bfloat16 else torch.int32),
                       host(mesh, spelled).view(torch.int16 if dtype is ttnn.bfloat16 else torch.int32))  # fmt: skip
    assert torch.equal(host(mesh, function(a, 2.0)), host(mesh, function(a, 2.0, queue_id=0)))


def test_only_the_call_without_keywords_takes_the_plain_path(open_mesh, monkeypatch):
    mesh = open_mesh((1, 1))
    x = ttnn.from_torch(torch.randn(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)

    def general(*args, **kwargs):
        raise AssertionError("the general path")

    monkeypatch.setattr(binary_ops, "binary", general)
    assert torch.equal(ttnn.to_torch(ttnn.add(x, x)), ttnn.to_torch(x) * 2)
    with pytest.raises(AssertionError, match="the general path"):
        ttnn.add(x, x, dtype=ttnn.bfloat16)
    with pytest.raises(AssertionError, match="the general path"):
        ttnn.add_(x, x)  # the in-place form has no plain path


def test_the_plain_path_refuses_bad_operands_by_name_before_allocating(open_mesh):
    mesh = open_mesh((2, 4))
    x = sharded(mesh, torch.randn(8, 32, 32))
    gone = sharded(mesh, torch.randn(8, 32, 32))
    ttnn.deallocate(gone)
    before = mesh.buffer_counts()
    with pytest.raises(DeallocatedError, match="input_tensor_a"):
        ttnn.add(gone, x)
    with pytest.raises(DeallocatedError, match="input_tensor_b"):
        ttnn.add(x, gone)
    with pytest.raises(MeshnnValueError, match=r"input_tensor_b .* is on the host"):
        ttnn.add(x, ttnn.from_torch(torch.randn(32, 32), dtype=ttnn.bfloat16))
    with pytest.raises(MeshnnTypeError, match=r"input_tensor_b must be a ttnn\.Tensor or a number"):
        ttnn.add(x, "1")
    with pytest.raises(MeshnnValueError, match="cannot be broadcast"):
        ttnn.add(x, sharded(mesh, torch.randn(8, 64, 64)))
    assert mesh.buffer_counts() == before


@pytest.mark.parametrize("shape", [(1, 1), (8, 4)])
def test_an_output_made_again_where_the_last_was_freed_holds_the_new_values(open_mesh, shape):
    """The second add's output takes the address the first one's free gave back (first fit: the
    allocator's own answer, checked against a buffer of the same size allocated after a full free
    cycle), and reads the second add's values, not the first's."""
    mesh = open_mesh(shape)
    n = shape[0] * shape[1]
    first, second = torch.randn(n, 32, 32), torch.randn(n, 32, 32)
    a, b = sharded(mesh, first), sharded(mesh, second)
    out = ttnn.add(a, a)
    address = out.buffer_address()
    expected_first = host(mesh, a) * 2
    assert torch.equal(host(mesh, out), expected_first)
    del out  # freed: the next output of this size takes the block back
    again = ttnn.add(b, b)
    assert again.buffer_address() == address
    assert torch.equal(host(mesh, again), host(mesh, b) * 2)
    assert not torch.equal(host(mesh, again), expected_first)
    view = mesh.get_memory_view(ttnn.BufferType.DRAM)
    ttnn.deallocate(again)
    third = ttnn.add(a, b)  # after an explicit deallocate too
    assert third.buffer_address() == address
    assert torch.equal(host(mesh, third), (host(mesh, a).float() + host(mesh, b).float()).bfloat16())
    assert mesh.get_memory_view(ttnn.BufferType.DRAM) == view


def test_a_program_launched_again_after_the_cache_was_cleared_is_counted_again(open_mesh):
    mesh = open_mesh((1, 1))
    x = ttnn.from_torch(torch.randn(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    for _ in range(3):
        ttnn.add(x, x)
    assert mesh.num_program_cache_entries() == 1
    mesh.clear_program_cache()
    assert mesh.num_program_cache_entries() == 0
    ttnn.add(x, x)  # the same key as the last one noted: noted again, the set was emptied
    assert mesh.num_program_cache_entries() == 1
    mesh.disable_and_clear_program_cache()
    ttnn.add(x, x)
    assert mesh.num_program_cache_entries() == 0
    mesh.enable_program_cache()
    ttnn.add(x, x)
    ttnn.multiply(x, x)
    ttnn.add(x, x)
    assert mesh.num_program_cache_entries() == 2
