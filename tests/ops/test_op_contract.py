"""The op contract: validate first, allocate outputs as MeshBuffers, free exactly what was allocated.

- Every op checks its inputs before it allocates anything, and a bad input raises a meshnn error that
  names the op, the argument and the shapes; afterwards the live buffers and every device's DRAM and
  L1 memory views (block tables included) are exactly as before.
- An op that cannot get its output memory raises OutOfMemoryError (also a MemoryError) and leaves
  nothing allocated, the input included.
- Outputs are MeshBuffers that the memory views count.
- A chain of ops whose intermediates are deallocated returns every device's memory views to their
  state before the chain.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

import meshnn as ttnn

from .reference import BF16, BFP8, F32, RM, TILE

DRAM, L1 = ttnn.BufferType.DRAM, ttnn.BufferType.L1


def blocks(view) -> list[tuple[int, int, str]]:
    """A view's block table as (address, size, allocated), by address.  The block IDs (and the
    prevID / nextID links written with them) are the allocator's metadata slots: as in tt-metal, a
    merge keeps the lower neighbour's slot, so an allocate-then-free leaves the same blocks under other
    IDs.  The memory state is the blocks themselves."""
    return sorted((int(b["address"]), int(b["size"]), b["allocated"]) for b in view.block_table)


def view_state(view) -> tuple:
    return view.as_dict(with_blocks=False), blocks(view)


def snapshot(*meshes) -> list:
    """Everything an op could allocate: the live buffers and every device's DRAM and L1 view."""
    state = []
    for mesh in meshes:
        state.append([(b.buffer_type(), b.address(), b.device_local_size()) for b in mesh.live_buffers()])
        for coord in mesh.shape.coords():
            for kind in (DRAM, L1):
                state.append(view_state(mesh.get_memory_view(kind, coord)))
    return state


def on(mesh, values, dtype=F32, layout=TILE, *, shard=True, memory_config=None):
    mapper = ttnn.ShardTensorToMesh(mesh, dim=0) if shard else ttnn.ReplicateTensorToMesh(mesh)
    return ttnn.Tensor(
        np.ascontiguousarray(values), dtype, device=mesh, layout=layout, mesh_mapper=mapper, memory_config=memory_config
    )


@pytest.fixture(scope="module")
def env():
    """A 2x4 mesh with valid and invalid inputs (per-device shapes in the comments)."""
    rng = np.random.default_rng(20261206)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 4), system="t3k")
    other = ttnn.open_mesh_device(ttnn.MeshShape(2, 4), system="t3k")
    closed = ttnn.open_mesh_device(ttnn.MeshShape(2, 4), system="t3k")

    def normal(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    e = SimpleNamespace(mesh=mesh, other_mesh=other)
    e.a = on(mesh, normal(8, 3, 40))  # [1, 3, 40]
    e.b = on(mesh, normal(8, 5, 7))  # [1, 5, 7]
    e.w = on(mesh, normal(40, 24), shard=False)  # [40, 24]
    e.a4 = on(mesh, normal(8, 2, 3, 40))  # [1, 2, 3, 40]
    e.w4 = on(mesh, normal(1, 3, 40, 24), shard=False)  # [1, 3, 40, 24]
    e.row7 = on(mesh, normal(7), shard=False)  # [7]
    e.rm = on(mesh, normal(8, 3, 40), layout=RM)  # [1, 3, 40] ROW_MAJOR
    e.bfp8 = on(mesh, normal(8, 32, 32), BFP8)  # [1, 32, 32] bfloat8_b
    e.table = on(mesh, normal(50, 48), layout=RM, shard=False)  # [50, 48]
    ids = rng.integers(0, 50, (8, 7)).astype(np.uint32)
    ids[5, 3] = 59  # one bad id, on device 5
    e.ids_bad = on(mesh, ids, ttnn.uint32, RM)  # [1, 7]
    e.host = ttnn.Tensor(normal(8, 3, 40), F32)  # [8, 3, 40] on the host
    e.host_w = ttnn.Tensor(normal(40, 24), F32, layout=TILE)
    e.freed = on(mesh, normal(8, 3, 40))
    ttnn.deallocate(e.freed)  # the line the error must name
    e.other = on(other, normal(8, 3, 40))  # [1, 3, 40] on another mesh
    e.other_w = on(other, normal(40, 24), shard=False)
    e.closed = on(closed, normal(8, 3, 40))
    ttnn.close_mesh_device(closed)
    yield e
    mesh.close()
    other.close()


D = r"\[1, 3, 40\]"  # the per-device shape of env.a
BAD_INPUTS = {
    # id: (call, error type, message)
    "matmul inner dims": (
        lambda e: ttnn.matmul(e.a, e.b),
        ttnn.MeshnnValueError,
        rf"ttnn\.matmul: the inner dimensions must match: input_tensor_a {D} x input_tensor_b "
        r"\[1, 5, 7\] \(40 != 5\)",
    ),
    "matmul batch dims": (
        lambda e: ttnn.matmul(e.a4, e.w4),
        ttnn.MeshnnValueError,
        r"ttnn\.matmul: batch dimensions of \[1, 2, 3, 40\] and \[1, 3, 40, 24\] do not broadcast",
    ),
    "matmul transpose flag": (
        lambda e: ttnn.matmul(e.a, e.w, transpose_b=1),
        ttnn.MeshnnTypeError,
        r"ttnn\.matmul: transpose_a / transpose_b must be bools",
    ),
    "linear bias shape": (
        lambda e: ttnn.linear(e.a, e.w, bias=e.row7),
        ttnn.MeshnnValueError,
        r"ttnn\.linear: bias \[7\] does not broadcast to \[1, 3, 24\]",
    ),
    "linear activation": (
        lambda e: ttnn.linear(e.a, e.w, activation="swish"),
        ttnn.MeshnnValueError,
        r"ttnn\.linear: activation 'swish' is not one of",
    ),
    "add shapes": (
        lambda e: ttnn.add(e.a, e.b),
        ttnn.MeshnnValueError,
        rf"ttnn\.add: input_tensor_a {D} and input_tensor_b \[1, 5, 7\] cannot be broadcast together",
    ),
    "add scalar type": (
        lambda e: ttnn.add(e.a, "1"),
        ttnn.MeshnnTypeError,
        r"ttnn\.add: input_tensor_b must be a ttnn\.Tensor or a number, got str",
    ),
    "add two scalars": (
        lambda e: ttnn.add(1.0, 2.0),
        ttnn.MeshnnTypeError,
        r"ttnn\.add: at least one operand must be a ttnn\.Tensor",
    ),
    "exp of numpy": (
        lambda e: ttnn.exp(np.ones(3)),
        ttnn.MeshnnTypeError,
        r"ttnn\.exp: input_tensor must be a ttnn\.Tensor, got ndarray",
    ),
    "relu of host": (
        lambda e: ttnn.relu(e.host),
        ttnn.MeshnnValueError,
        r"ttnn\.relu: input_tensor \(shape \[8, 3, 40\]\) is on the host; move it with ttnn\.to_device",
    ),
    "matmul host b": (
        lambda e: ttnn.matmul(e.a, e.host_w),
        ttnn.MeshnnValueError,
        r"ttnn\.matmul: input_tensor_b \(shape \[40, 24\]\) is on the host",
    ),
    "softmax deallocated": (
        lambda e: ttnn.softmax(e.freed),
        ttnn.DeallocatedError,
        rf"ttnn\.softmax: input_tensor of shape {D} on MeshDevice.* was deallocated at "
        r".*test_op_contract\.py:\d+",
    ),
    "add deallocated b": (
        lambda e: ttnn.add(e.a, e.freed),
        ttnn.DeallocatedError,
        rf"ttnn\.add: input_tensor_b of shape {D} .*deallocated at .*test_op_contract\.py:\d+",
    ),
    "relu closed mesh": (
        lambda e: ttnn.relu(e.closed),
        ttnn.DeviceClosedError,
        rf"ttnn\.relu: input_tensor of shape {D} lives on a mesh device that was closed",
    ),
    "add two meshes": (
        lambda e: ttnn.add(e.a, e.other),
        ttnn.WrongMeshError,
        r"ttnn\.add: input_tensor_b is on another mesh device than input_tensor_a",
    ),
    "matmul two meshes": (
        lambda e: ttnn.matmul(e.a, e.other_w),
        ttnn.WrongMeshError,
        r"ttnn\.matmul: input_tensor_b is on another mesh device than input_tensor_a",
    ),
    "concat two meshes": (
        lambda e: ttnn.concat([e.a, e.other], dim=0),
        ttnn.WrongMeshError,
        r"ttnn\.concat: input_tensors\[1\] is on another mesh device than input_tensors\[0\]",
    ),
    "softmax dim": (
        lambda e: ttnn.softmax(e.a, dim=3),
        ttnn.MeshnnValueError,
        rf"ttnn\.softmax: dim 3 is out of range for input_tensor {D}",
    ),
    "sum dim": (
        lambda e: ttnn.sum(e.a, dim=-4),
        ttnn.MeshnnValueError,
        rf"ttnn\.sum: dim -4 is out of range for input_tensor {D}",
    ),
    "max repeated dims": (
        lambda e: ttnn.max(e.a, dim=[1, -2]),
        ttnn.MeshnnValueError,
        r"ttnn\.max: dims \[1, -2\] repeat a dimension",
    ),
    "argmax dim": (
        lambda e: ttnn.argmax(e.a, dim=5),
        ttnn.MeshnnValueError,
        rf"ttnn\.argmax: dim 5 is out of range for input_tensor {D}",
    ),
    "transpose dim": (
        lambda e: ttnn.transpose(e.a, 0, 3),
        ttnn.MeshnnValueError,
        rf"ttnn\.transpose: dim 3 is out of range for input_tensor {D}",
    ),
    "permute dims": (
        lambda e: ttnn.permute(e.a, (0, 1)),
        ttnn.MeshnnValueError,
        rf"ttnn\.permute: dims \[0, 1\] are not a permutation of the 3 dimensions of input_tensor {D}",
    ),
    "concat dim": (
        lambda e: ttnn.concat([e.a, e.a], dim=3),
        ttnn.MeshnnValueError,
        rf"ttnn\.concat: dim 3 is out of range for input_tensors\[0\] {D}",
    ),
    "concat shapes": (
        lambda e: ttnn.concat([e.a, e.b], dim=2),
        ttnn.MeshnnValueError,
        rf"ttnn\.concat: input_tensors\[1\] \[1, 5, 7\] does not match {D} outside dim 2",
    ),
    "slice ranks": (
        lambda e: ttnn.slice(e.a, [0, 0], [1, 1]),
        ttnn.MeshnnValueError,
        rf"ttnn\.slice: starts, ends and steps need 3 values each for input_tensor {D}",
    ),
    "repeat negative": (  # (fewer repeat_dims than dims repeat the trailing dims, as ttnn)
        lambda e: ttnn.repeat(e.a, (1, -2, 1)),
        ttnn.MeshnnValueError,
        r"ttnn\.repeat: repeat_dims \[1, -2, 1\] must be non-negative counts",
    ),
    "pad negative": (
        lambda e: ttnn.pad(e.a, [(0, 0), (0, 0), (-1, 0)], 0.0),
        ttnn.MeshnnValueError,
        r"ttnn\.pad: padding .* does not give \(before, after\) >= 0 for 3 dims",
    ),
    "layer_norm weight": (
        lambda e: ttnn.layer_norm(e.a, weight=e.row7),
        ttnn.MeshnnValueError,
        rf"ttnn\.layer_norm: weight has shape \[7\]; it needs 40 values \(the last dimension of "
        rf"input_tensor {D}\)",
    ),
    "add bfloat8_b row-major output": (
        lambda e: ttnn.add(e.rm, e.rm, dtype=BFP8),
        ttnn.MeshnnValueError,
        r"ttnn\.add: a DataType\.BFLOAT8_B output needs TILE layout; "
        r"the input of shape \[1, 3, 40\] is Layout\.ROW_MAJOR",
    ),
    "typecast row-major to bfloat8_b": (
        lambda e: ttnn.typecast(e.rm, BFP8),
        ttnn.MeshnnValueError,
        rf"ttnn\.typecast: DataType\.BFLOAT8_B needs a TILE tensor, input_tensor {D} "
        r"is Layout\.ROW_MAJOR",
    ),
    "bfloat8_b to row-major, bfloat8_b asked for": (  # without dtype= ttnn untilizes into bfloat16
        lambda e: ttnn.to_layout(e.bfp8, RM, dtype=ttnn.bfloat8_b),
        ttnn.MeshnnValueError,
        r"ttnn\.to_layout: a DataType\.BFLOAT8_B output needs TILE layout",
    ),
    "relu memory_config type": (
        lambda e: ttnn.relu(e.a, memory_config="L1"),
        ttnn.MeshnnTypeError,
        r"ttnn\.relu: memory_config must be a ttnn\.MemoryConfig, got 'L1'",
    ),
    "embedding float ids": (
        lambda e: ttnn.embedding(e.a, e.table),
        ttnn.MeshnnTypeError,
        r"ttnn\.embedding: input_tensor must hold integer \(or bfloat16\) ids, got DataType\.FLOAT32",
    ),
    "embedding ids out of range": (
        lambda e: ttnn.embedding(e.ids_bad, e.table),
        ttnn.MeshnnValueError,
        r"ttnn\.embedding: ids of input_tensor \[1, 7\] must lie in \[0, 50\) \(the rows "
        r"of weight\), got \d+\.\.59",
    ),
    "all_gather dim": (
        lambda e: ttnn.all_gather(e.a, dim=3),
        ttnn.MeshnnValueError,
        rf"ttnn\.all_gather: dim 3 is out of range for input_tensor of shape {D}",
    ),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_raises_a_named_error_and_allocates_nothing(env, case):
    call, error, message = BAD_INPUTS[case]
    before = snapshot(env.mesh, env.other_mesh)
    with pytest.raises(error, match=message) as caught:
        call(env)
    assert isinstance(caught.value, ttnn.MeshnnError)
    assert snapshot(env.mesh, env.other_mesh) == before


# ------------------------------------------------------------------------------ out of memory


def fill_l1(mesh) -> ttnn.Tensor:
    """An L1 tensor leaving less than one 4 KiB page free in every L1 bank."""
    view = mesh.get_memory_view(L1)
    pages = view.largest_contiguous_bytes_free_per_bank // 4096 * view.num_banks
    filler = ttnn.allocate_tensor_on_device(ttnn.Shape([pages * 32, 32]), F32, TILE, mesh, ttnn.L1_MEMORY_CONFIG)
    assert mesh.get_memory_view(L1).largest_contiguous_bytes_free_per_bank < 4096
    return filler


L1_OPS = {  # each asks for an L1 output of at least one float32 tile
    "relu": lambda t, w: ttnn.relu(t, memory_config=ttnn.L1_MEMORY_CONFIG),
    "add": lambda t, w: ttnn.add(t, t, memory_config=ttnn.L1_MEMORY_CONFIG),
    "matmul": lambda t, w: ttnn.matmul(t, w, memory_config=ttnn.L1_MEMORY_CONFIG),
    "linear": lambda t, w: ttnn.linear(t, w, memory_config=ttnn.L1_MEMORY_CONFIG),
    "softmax": lambda t, w: ttnn.softmax(t, memory_config=ttnn.L1_MEMORY_CONFIG),
    "layer_norm": lambda t, w: ttnn.layer_norm(t, memory_config=ttnn.L1_MEMORY_CONFIG),
    "sum": lambda t, w: ttnn.sum(t, dim=1, memory_config=ttnn.L1_MEMORY_CONFIG),
    "concat": lambda t, w: ttnn.concat([t, t], dim=1, memory_config=ttnn.L1_MEMORY_CONFIG),
    "typecast": lambda t, w: ttnn.typecast(t, BF16, memory_config=ttnn.L1_MEMORY_CONFIG),
    "to_memory_config": lambda t, w: ttnn.to_memory_config(t, ttnn.L1_MEMORY_CONFIG),
    "clone": lambda t, w: ttnn.clone(t, memory_config=ttnn.L1_MEMORY_CONFIG),
    "move": lambda t, w: ttnn.move(t, ttnn.L1_MEMORY_CONFIG),
    "all_gather": lambda t, w: ttnn.all_gather(t, dim=0, memory_config=ttnn.L1_MEMORY_CONFIG),
    "all_reduce": lambda t, w: ttnn.all_reduce(t, memory_config=ttnn.L1_MEMORY_CONFIG),
}


@pytest.mark.parametrize("shape", [(2, 4), (8, 4)], ids=["2x4", "8x4"])
def test_out_of_l1_raises_and_leaves_nothing_allocated(open_mesh, shape):
    mesh = open_mesh(shape)
    n = mesh.get_num_devices()
    x = np.arange(n * 64 * 64, dtype=np.float32).reshape(n, 64, 64) / 1000
    tensor = on(mesh, x)
    weight = on(mesh, np.eye(64, dtype=np.float32), shard=False)
    filler = fill_l1(mesh)
    for name, call in L1_OPS.items():
        before = snapshot(mesh)
        with pytest.raises(ttnn.OutOfMemoryError) as caught:
            call(tensor, weight)
        err = caught.value
        assert isinstance(err, MemoryError) and isinstance(err, ttnn.MeshnnError), name
        assert "L1" in str(err.buffer_type) and err.largest_free < err.size_per_bank, name
        assert snapshot(mesh) == before, name
        assert tensor.is_allocated(), f"{name} must not free its input"
    np.testing.assert_array_equal(ttnn.to_numpy(tensor, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)), x)
    ttnn.deallocate(filler)
    moved = ttnn.move(tensor, ttnn.L1_MEMORY_CONFIG)  # with room, the same op succeeds
    assert moved.memory_config().buffer_type is L1 and not tensor.is_allocated()
    np.testing.assert_array_equal(ttnn.to_numpy(moved, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)), x)


# ------------------------------------------------------------------------ outputs and lifetimes


def per_bank(tensor: ttnn.Tensor, view) -> int:
    """The bytes an interleaved tensor takes in each bank: its pages dealt round-robin."""
    return math.ceil(tensor.buffer_num_pages() / view.num_banks) * tensor.buffer_aligned_page_size()


OUTPUT_OPS = {
    "relu": (lambda t, w: ttnn.relu(t), DRAM),
    "matmul L1": (lambda t, w: ttnn.matmul(t, w, memory_config=ttnn.L1_MEMORY_CONFIG), L1),
    "softmax": (lambda t, w: ttnn.softmax(t), DRAM),
    "typecast": (lambda t, w: ttnn.typecast(t, BF16), DRAM),
    "to L1": (lambda t, w: ttnn.to_memory_config(t, ttnn.L1_MEMORY_CONFIG), L1),
    "all_gather": (lambda t, w: ttnn.all_gather(t, dim=1), DRAM),
    "reduce_scatter L1": (
        lambda t, w: ttnn.reduce_scatter(t, dim=2, cluster_axis=0, memory_config=ttnn.L1_MEMORY_CONFIG),
        L1,
    ),
}


@pytest.mark.parametrize("op", list(OUTPUT_OPS))
def test_outputs_are_mesh_buffers_counted_by_memory_views(open_mesh, op):
    mesh = open_mesh((2, 4))
    tensor = on(mesh, np.ones((8, 64, 64), np.float32))
    weight = on(mesh, np.ones((64, 96), np.float32), shard=False)
    call, kind = OUTPUT_OPS[op]
    before_view = ttnn.get_memory_view(mesh, kind)
    before_live = mesh.live_buffers()
    out = call(tensor, weight)
    mesh.clear_program_cache()  # frees what a cached program holds (a collective's own semaphores)
    buffer = out.mesh_buffer()
    assert isinstance(buffer, ttnn.MeshBuffer) and buffer.buffer_type() is kind
    assert out.device_coords() == list(mesh.shape.coords())
    live = mesh.live_buffers()
    assert len(live) == len(before_live) + 1 and any(b is buffer for b in live)
    after = ttnn.get_memory_view(mesh, kind)
    grown = after.total_bytes_allocated_per_bank - before_view.total_bytes_allocated_per_bank
    assert grown == per_bank(out, after)
    allocated = [int(b["size"]) for b in after.block_table if b["allocated"] == "yes"]
    assert len(allocated) == sum(b["allocated"] == "yes" for b in before_view.block_table) + 1
    assert grown in allocated
    for coord in mesh.shape.coords():  # lock-step: every device's view is the same
        assert view_state(mesh.get_memory_view(kind, coord)) == view_state(after)
    ttnn.deallocate(out)
    assert view_state(ttnn.get_memory_view(mesh, kind)) == view_state(before_view)


@pytest.mark.parametrize("shape", [(2, 4), (8, 4)], ids=["2x4", "8x4"])
def test_a_chain_with_deallocated_intermediates_frees_everything(open_mesh, shape):
    """A tensor-parallel chain over DRAM, L1 and sharded L1, freeing each intermediate once used (in an
    order that fragments the free lists), returns every device's DRAM and L1 views, block tables
    included, to their state before the chain."""
    mesh = open_mesh(shape)
    n = mesh.get_num_devices()
    rng = np.random.default_rng(20261207)
    x = on(mesh, rng.standard_normal((n, 64, 64)).astype(np.float32), BF16)
    w = on(mesh, rng.standard_normal((64, 64)).astype(np.float32), BF16, shard=False)
    bias = on(mesh, rng.standard_normal(64).astype(np.float32), BF16, shard=False)
    before = snapshot(mesh)

    h = ttnn.linear(x, w, bias=bias, activation="gelu", memory_config=ttnn.L1_MEMORY_CONFIG)
    s = ttnn.softmax(h, dim=-1)
    ttnn.deallocate(h)
    normed = ttnn.layer_norm(s, epsilon=1e-5, memory_config=ttnn.L1_MEMORY_CONFIG)
    gathered = ttnn.all_gather(normed, dim=1, cluster_axis=1)
    ttnn.deallocate(s)  # freed after a later allocation: a hole below it
    scattered = ttnn.reduce_scatter(gathered, dim=1, cluster_axis=1)
    ttnn.deallocate(gathered)
    ttnn.deallocate(normed)
    sharded_config = ttnn.create_sharded_memory_config((1, 64, 64), ttnn.CoreGrid(y=2, x=2), ttnn.ShardStrategy.BLOCK)
    wide = ttnn.typecast(scattered, F32)
    sharded = ttnn.to_memory_config(wide, sharded_config)
    ttnn.deallocate(wide)
    cast = ttnn.typecast(sharded, BFP8, memory_config=ttnn.DRAM_MEMORY_CONFIG)
    ttnn.deallocate(sharded)
    turned = ttnn.permute(cast, (0, 2, 1))
    joined = ttnn.concat([cast, turned], dim=1)
    ttnn.deallocate(turned)
    summed = ttnn.sum(joined, dim=-1, keepdim=True)
    final = ttnn.move(summed)  # frees summed itself
    assert not summed.is_allocated()
    assert snapshot(mesh) != before, "the chain must have allocated something"
    assert tuple(final.shape) == (1, 128, 1)
    for t in (scattered, cast, joined, final):
        ttnn.deallocate(t)
    assert snapshot(mesh) != before  # the collectives' semaphores, held with their cached programs
    mesh.clear_program_cache()
    assert snapshot(mesh) == before
