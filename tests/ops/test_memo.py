"""Values memos: an op's output (or a decoded input) remembers the float values its bytes decode to,
until anything may change the bytes.  Every test compares against the same work with memos off:
a memo may only save time, never change a byte."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.mesh.buffer_config import BufferRegion
from meshnn.mesh.transfers import ShardDataTransfer
from meshnn.mesh.workload import MeshWorkload, Program
from meshnn.ops.decoded import DECODED, Decoded
from meshnn.ops.memo import VALUES_MEMO, Known, ValuesMemo
from meshnn.ops.values import logical_values
from meshnn.tensor.spec import TensorSpec

BF16 = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)


@pytest.fixture
def memos():
    """Memos on (with the default bound), emptied before and after."""
    limit = VALUES_MEMO.limit
    VALUES_MEMO.limit = 256 << 20
    VALUES_MEMO.clear()
    yield VALUES_MEMO
    VALUES_MEMO.limit = limit
    VALUES_MEMO.clear()


def memo_of(tensor: ttnn.Tensor):
    return tensor.storage.mesh_buffer.memo


def raw(tensor: ttnn.Tensor) -> list[bytes]:
    return [np.asarray(ttnn.to_numpy(t)).tobytes() for t in ttnn.get_device_tensors(tensor)]


def chain(mesh, x, w):
    """A small chain of ops that read each other's outputs (bfloat16 tiles, 34 rows: padding)."""
    h = ttnn.rms_norm(x, epsilon=1e-5)
    y = ttnn.linear(h, w)
    z = ttnn.multiply(ttnn.silu(y), y)
    s = ttnn.softmax(ttnn.add(z, 0.5), dim=-1)
    return ttnn.all_gather(ttnn.permute(ttnn.reshape(s, (1, 34, 2, 256)), (0, 2, 1, 3)), dim=3)


def put(mesh, rng, shape, mapper=None):
    values = torch.from_numpy(rng.standard_normal(shape).astype(np.float32))
    return ttnn.from_torch(values, device=mesh, mesh_mapper=mapper, **BF16)


@pytest.mark.parametrize("shape", [(2, 4), (1, 1)])
def test_a_chain_gives_the_same_bytes_with_memos_on_and_off(open_mesh, rng, memos, shape):
    mesh = open_mesh(shape)
    x = put(mesh, rng, (1, 34, 512), ttnn.ReplicateTensorToMesh(mesh))
    w = put(mesh, rng, (512, 512 * mesh.get_num_devices()), ttnn.ShardTensorToMesh(mesh, dim=1))
    hits = memos.hits
    with_memos = raw(chain(mesh, x, w))
    assert memos.hits > hits, "the chain's ops must read their inputs from memos"
    memos.limit = 0
    memos.clear()
    assert raw(chain(mesh, x, w)) == with_memos


def test_an_output_remembers_its_rounded_values(open_mesh, rng, memos):
    mesh = open_mesh((1, 2))
    a = put(mesh, rng, (64, 512), ttnn.ShardTensorToMesh(mesh, dim=0))
    out = ttnn.softmax(a, dim=-1)
    known = memo_of(out)
    assert isinstance(known, Known) and known.spec == out.spec and not known.values.flags.writeable
    rows = out.storage.mesh_buffer.slab()  # the decoded bytes are exactly the remembered values
    assert memo_of(out) is None, "slab() hands out writable bytes: the memo must go"
    np.testing.assert_array_equal(logical_values(rows, out.spec).view(np.uint32), known.values.view(np.uint32))


@pytest.mark.parametrize("pad_value", [0.1, -3.3])
def test_moved_values_keep_their_bytes_and_pad_rounds_its_own(open_mesh, rng, memos, pad_value):
    """Data movement skips the rounding of values it only moves (they are bfloat16 already);
    pad's own value is not one (0.1 is not a bfloat16) and must be rounded, in the memo as in
    the bytes, exactly as with memos off."""
    mesh = open_mesh((1, 2))
    a = put(mesh, rng, (2, 128, 512), ttnn.ShardTensorToMesh(mesh, dim=0))

    def moved():
        padded = ttnn.pad(a, [(0, 0), (0, 0), (0, 64)], pad_value)
        twice = ttnn.add(padded, padded)  # reads the pad's memo
        moved = ttnn.permute(ttnn.reshape(padded, (1, 128, 2, 288)), (0, 2, 1, 3))
        return padded, twice, moved

    outs = moved()
    assert isinstance(memo_of(outs[0]), Known)
    with_memos = [raw(t) for t in outs]
    memos.limit = 0
    memos.clear()
    assert [raw(t) for t in moved()] == with_memos
    host = ttnn.to_numpy(outs[0], mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
    want = ttnn.to_numpy(ttnn.from_torch(torch.tensor([pad_value]), dtype=ttnn.bfloat16))
    assert np.all(host[..., 512:] == want[0]) and want[0] != np.float32(pad_value)


def test_a_column_parallel_linear_is_one_product_with_memos_on_and_off(open_mesh, rng, memos):
    """x the same on every device times a weight sharded by columns: one product of x with the
    shards side by side; the weight's memo keeps them so (no copy the next time); the bytes are
    those of memos off, and each device's are its own product."""
    mesh = open_mesh((2, 4))
    x = put(mesh, rng, (1, 64, 256), ttnn.ReplicateTensorToMesh(mesh))
    w = put(mesh, rng, (256, 96 * 8), ttnn.ShardTensorToMesh(mesh, dim=1))
    first = raw(ttnn.linear(x, w))
    laid = memo_of(w)  # bfloat16 operands: a Decoded memo (tests/fast_paths/test_decoded.py), side by side
    assert isinstance(laid, Decoded) and laid.sides and tuple(laid.values.shape) == (256, 96 * 8)
    assert raw(ttnn.linear(x, w)) == first and memo_of(w) is laid
    memos.limit = 0
    memos.clear()
    limit, DECODED.limit = DECODED.limit, 0
    try:
        DECODED.clear()
        assert raw(ttnn.linear(x, w)) == first
    finally:
        DECODED.limit = limit
    xs = ttnn.to_numpy(ttnn.get_device_tensors(x)[0]).astype(np.float64)
    ws = [ttnn.to_numpy(t).astype(np.float64) for t in ttnn.get_device_tensors(w)]
    products = [ttnn.to_numpy(t).astype(np.float64) for t in ttnn.get_device_tensors(ttnn.linear(x, w))]
    for product, shard in zip(products, ws, strict=True):
        want = xs @ shard
        assert np.abs(product - want).max() <= 2.0**-8 * np.abs(want).max() + 1e-6  # one bfloat16 rounding


def test_a_linear_whose_input_differs_between_devices_multiplies_each_device_s_own(open_mesh, rng, memos):
    """A replicated x whose bytes were changed on one device (its topology still says replicated):
    the one-product path is taken only when the values really are the same everywhere."""
    mesh = open_mesh((1, 2))
    x = put(mesh, rng, (1, 64, 256), ttnn.ReplicateTensorToMesh(mesh))
    w = put(mesh, rng, (256, 128 * 2), ttnn.ShardTensorToMesh(mesh, dim=1))
    other = ttnn.from_torch(torch.from_numpy(rng.standard_normal((1, 64, 256)).astype(np.float32)), **BF16)
    buffer = x.storage.mesh_buffer
    data = np.asarray(other.host_buffer().get_shard(ttnn.MeshCoordinate(0, 0)))
    mesh.mesh_command_queue(0).enqueue_write_shards(
        buffer, [ShardDataTransfer(ttnn.MeshCoordinate(0, 1), data)], blocking=True
    )
    got = [ttnn.to_numpy(t).astype(np.float64) for t in ttnn.get_device_tensors(ttnn.linear(x, w))]
    xs = [ttnn.to_numpy(t).astype(np.float64) for t in ttnn.get_device_tensors(x)]
    ws = [ttnn.to_numpy(t).astype(np.float64) for t in ttnn.get_device_tensors(w)]
    assert not np.array_equal(xs[0], xs[1])
    for out, xd, wd in zip(got, xs, ws, strict=True):
        want = xd @ wd
        assert np.abs(out - want).max() <= 2.0**-8 * np.abs(want).max() + 1e-6


def test_a_write_through_the_queue_drops_the_memo(open_mesh, rng, memos):
    mesh = open_mesh((1, 2))
    x = put(mesh, rng, (32, 1024), ttnn.ReplicateTensorToMesh(mesh))
    w1, w2 = (rng.standard_normal((1024, 1024)).astype(np.float32) for _ in range(2))
    shard = ttnn.ShardTensorToMesh(mesh, dim=1)
    tw = ttnn.from_torch(torch.from_numpy(w1), device=mesh, mesh_mapper=shard, **BF16)
    composer = ttnn.ConcatMeshToTensor(mesh, dim=1)
    first = ttnn.to_torch(ttnn.linear(x, tw), mesh_composer=composer)
    assert isinstance(memo_of(tw), (Known, Decoded)), "a decoded weight keeps its values"
    hits = memos.hits + DECODED.hits
    again = ttnn.to_torch(ttnn.linear(x, tw), mesh_composer=composer)
    assert torch.equal(first, again) and memos.hits + DECODED.hits > hits
    host = ttnn.from_torch(torch.from_numpy(w2), mesh_mapper=shard, **BF16)
    ttnn.copy_host_to_device_tensor(host, tw)
    assert memo_of(tw) is None
    updated = ttnn.to_torch(ttnn.linear(x, tw), mesh_composer=composer)
    memos.limit = 0
    memos.clear()
    assert torch.equal(updated, ttnn.to_torch(ttnn.linear(x, tw), mesh_composer=composer))
    assert not torch.equal(updated, first)


def test_a_program_that_writes_a_buffer_drops_its_memo(open_mesh, rng, memos):
    mesh = open_mesh((1, 2))
    a = ttnn.softmax(put(mesh, rng, (64, 512), ttnn.ShardTensorToMesh(mesh, dim=0)), dim=-1)
    b = ttnn.softmax(put(mesh, rng, (64, 512), ttnn.ShardTensorToMesh(mesh, dim=0)), dim=-1)
    buffer = a.storage.mesh_buffer

    def zero(ctx):
        ctx.buffers[0][...] = 0

    reader = Program(lambda ctx: None, [b.storage.mesh_buffer], writes=[])  # reads only: keeps b's memo
    for program in (Program(zero, [buffer]), reader):
        queue = mesh.mesh_command_queue(0)
        queue.enqueue_mesh_workload(MeshWorkload(program, mesh.full_range), blocking=True)
    assert memo_of(a) is None and isinstance(memo_of(b), Known)
    exp = ttnn.to_torch(ttnn.exp(a), mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
    assert float(exp.min()) == float(exp.max()) == 1.0, "exp must read the zeros, not the remembered softmax"


def test_output_tensor_that_is_an_input(open_mesh, memos):
    mesh = open_mesh((1, 2))
    shard = ttnn.ShardTensorToMesh(mesh, dim=0)

    def sequence() -> list[bytes]:
        rng = np.random.default_rng(7)
        a, b = (ttnn.softmax(put(mesh, rng, (64, 512), shard), dim=-1) for _ in range(2))  # with memos
        assert isinstance(memo_of(a), Known) or VALUES_MEMO.limit == 0
        ttnn.multiply(a, b, output_tensor=a)
        ttnn.add(a, b, output_tensor=a)
        return raw(ttnn.neg(a))

    got = sequence()
    memos.limit = 0
    memos.clear()
    assert sequence() == got


def test_replicated_results_know_every_device_holds_them(open_mesh, rng, memos):
    mesh = open_mesh((2, 4))
    x = put(mesh, rng, (1, 64, 512), ttnn.ReplicateTensorToMesh(mesh))
    y = ttnn.rms_norm(x, epsilon=1e-6)
    known = memo_of(y)
    assert known.equal_rows and known.values.shape[0] == 1
    shards = raw(y)
    assert all(s == shards[0] for s in shards), "the one row was copied to every device"


def test_the_bound_holds_and_freed_buffers_give_their_bytes_back(open_mesh, rng):
    store = ValuesMemo(3 * (256 << 10))  # three 256 KiB memos
    mesh = open_mesh((1, 1))
    spec = TensorSpec((256, 256), ttnn.bfloat16, ttnn.TILE_LAYOUT)
    tensors = [ttnn.allocate_tensor_on_device(spec, mesh) for _ in range(4)]
    values = [np.full((1, 256, 256), i, np.float32) for i in range(4)]
    for t, v in zip(tensors, values, strict=True):
        store.put(t.storage.mesh_buffer, spec, v)
    assert store.nbytes == 3 * (256 << 10)
    assert memo_of(tensors[0]) is None, "the least recently used memo is dropped first"
    assert all(isinstance(memo_of(t), Known) for t in tensors[1:])
    assert store.get(tensors[1].storage.mesh_buffer, spec) is not None
    store.put(tensors[0].storage.mesh_buffer, spec, values[0].copy())
    assert memo_of(tensors[2]) is None and isinstance(memo_of(tensors[1]), Known), "get counts as a use"
    other = TensorSpec((256, 256), ttnn.float32, ttnn.TILE_LAYOUT)
    assert store.get(tensors[1].storage.mesh_buffer, other) is None, "another spec's values are not these"
    for t in tensors:
        ttnn.deallocate(t)
    assert store.nbytes == 0
    small = ttnn.allocate_tensor_on_device(TensorSpec((32, 32), ttnn.bfloat16, ttnn.TILE_LAYOUT), mesh)
    store.put(small.storage.mesh_buffer, small.spec, np.zeros((1, 32, 32), np.float32))
    assert memo_of(small) is None and store.nbytes == 0, "small tensors decode every time"


# ------------------------------------------------------------------- deferred writes of outputs


def test_an_output_may_leave_its_bytes_to_its_memo(open_mesh, rng, memos):
    mesh = open_mesh((2, 4))
    x = put(mesh, rng, (1, 64, 512), ttnn.ShardTensorToMesh(mesh, dim=1))
    y = ttnn.softmax(x, dim=-1)
    buffer = y.storage.mesh_buffer
    assert buffer.has_deferred_write(), "a new output on the calling thread defers its bytes"
    report = ttnn.memory_report(mesh)  # sizing needs no bytes
    assert buffer.has_deferred_write() and "DRAM" in report
    got = raw(y)  # reading writes them first
    assert not buffer.has_deferred_write()
    memos.limit = 0
    memos.clear()
    assert raw(ttnn.softmax(x, dim=-1)) == got


def test_a_partial_write_lands_on_the_deferred_bytes(open_mesh, rng, memos):
    mesh = open_mesh((1, 2))
    x = put(mesh, rng, (64, 512), ttnn.ShardTensorToMesh(mesh, dim=0))

    def run() -> list[bytes]:
        y = ttnn.softmax(x, dim=-1)
        queue, buffer = mesh.mesh_command_queue(0), y.storage.mesh_buffer
        patch = np.full(64, 0x3F, np.uint8)  # 64 bytes at the start of device (0, 1) only
        transfer = ShardDataTransfer(ttnn.MeshCoordinate(0, 1), patch, BufferRegion(0, 64))
        queue.enqueue_write_shards(buffer, [transfer], blocking=True)
        return raw(y)

    with_memos = run()
    memos.limit = 0
    memos.clear()
    without = run()
    assert with_memos == without and with_memos[0] != with_memos[1]


def test_freeing_a_deferred_output_writes_nothing_and_frees_its_address(open_mesh, rng, memos):
    mesh = open_mesh((1, 2))
    x = put(mesh, rng, (64, 512), ttnn.ShardTensorToMesh(mesh, dim=0))
    before = ttnn.memory_report(mesh)
    y = ttnn.softmax(x, dim=-1)
    assert y.storage.mesh_buffer.has_deferred_write()
    ttnn.deallocate(y)
    assert ttnn.memory_report(mesh) == before
    assert memos.nbytes == memo_of(x).values.nbytes, "only the decoded input's memo is left"


def test_a_memo_pushed_out_by_the_bound_writes_its_bytes_first(open_mesh, rng, memos):
    mesh = open_mesh((1, 2))
    x = put(mesh, rng, (64, 512), ttnn.ShardTensorToMesh(mesh, dim=0))
    memos.limit = (64 * 512 * 4) + 1  # room for one output's values
    first = ttnn.softmax(x, dim=-1)
    assert first.storage.mesh_buffer.has_deferred_write()
    second = ttnn.softmax(ttnn.neg(x), dim=-1)
    assert memo_of(first) is None and not first.storage.mesh_buffer.has_deferred_write()
    got = raw(first), raw(second)
    memos.limit = 0
    memos.clear()
    assert got == (raw(ttnn.softmax(x, dim=-1)), raw(ttnn.softmax(ttnn.neg(x), dim=-1)))


@pytest.mark.parametrize("dtype", ["bfloat16", "bfloat8_b"])
def test_the_demo_model_gives_the_same_bytes_with_memos_on_and_off(open_mesh, memos, dtype):
    from meshnn.cli.demo import DemoConfig, MeshModel, make_weights

    config = DemoConfig(dtype=dtype, layers=1, hidden=256, seq=64, heads=8, vocab=512)
    mesh = open_mesh((2, 4))
    model = MeshModel(config, make_weights(config), mesh, lambda _: None)
    tokens = np.random.default_rng(3).integers(0, config.vocab, config.seq)
    hits = memos.hits
    with_memos = raw(model.forward(tokens, lambda _: None))
    assert memos.hits > hits
    memos.limit = 0
    memos.clear()
    assert raw(model.forward(tokens, lambda _: None)) == with_memos


def test_the_memo_bound_comes_from_the_environment(monkeypatch):
    from meshnn.errors import MeshnnValueError
    from meshnn.ops.memo import memo_limit_from_env

    monkeypatch.delenv("MESHNN_VALUES_MEMO_BYTES", raising=False)
    assert memo_limit_from_env() == 256 << 20
    monkeypatch.setenv("MESHNN_VALUES_MEMO_BYTES", "0")
    assert memo_limit_from_env() == 0
    monkeypatch.setenv("MESHNN_VALUES_MEMO_BYTES", "1.5GB")
    with pytest.raises(MeshnnValueError, match="MESHNN_VALUES_MEMO_BYTES must be a non-negative integer"):
        memo_limit_from_env()


@pytest.mark.parametrize("per_device", [1, 3, 8, 40])
def test_same_values_on_every_device_compares_each_device_s_own_values(per_device):
    """Found by the state machine: a device holding fewer than 8 values compared against the next
    device's values.  Every device's values against the first's, whatever their number."""
    from meshnn.ops.shared_rows import same_values_on_every_device

    values = np.arange(per_device, dtype=np.float32)
    same = np.stack([values] * 4)
    assert same_values_on_every_device(same)
    assert same_values_on_every_device(np.broadcast_to(values, (4, per_device)))
    other = same.copy()
    other[2, -1] = -1.0
    assert not same_values_on_every_device(other)
    signed = same.copy()
    signed[3, 0] = -0.0 if values[0] == 0 else values[0]
    assert same_values_on_every_device(signed) == (values[0] != 0)  # -0.0 differs from 0.0 in its bits
