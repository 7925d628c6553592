"""A stateful property test of the public API against a plain numpy model.

A hypothesis ``RuleBasedStateMachine`` opens meshes of random shapes (1x1 to 8x4 on a simulated
galaxy), creates host and device tensors of random shapes, dtypes (bfloat16, float32, bfloat8_b,
uint32, int32), layouts, memory configs (DRAM / L1) and placements (no mapper,
ReplicateTensorToMesh, ShardTensorToMesh, ShardTensor2dMesh, including distributions over a
sub-box of the mesh); writes them (``from_torch(device=)``, ``to_device``,
``copy_host_to_device_tensor``), reads them (``to_numpy``, ``to_torch``, ``from_device``,
``copy_device_to_host_tensor``), runs ops (``add``, ``multiply`` by a scalar, ``relu``, ``matmul``,
``to_layout``) and collectives (``all_gather``, ``reduce_scatter``, ``all_reduce`` with every
``cluster_axis``), makes views (``reshape``, ``get_device_tensors``), deallocates (``force`` True
and False), drops references and closes meshes.

The model keeps, per MeshBuffer (or host storage), the values of every shard it holds, and per
tensor the coordinates and shape through which it views them.  Values are float64 with an
absolute error bound per element: 0 where the result is exactly predictable (float32, the
integers, and bfloat16 rounded to nearest even as ``torch.bfloat16`` / ml_dtypes round), and for
bfloat8_b the format's own bound, ``max |x| of the 16-value block x 2**-6`` (7 magnitude bits
under a shared exponent), carried through every later op.

After every step:

- every live tensor reads back as the model says (nothing lost, nothing overwritten), with the
  topology's coordinates in the model's order;
- on every open mesh the memory views add up and the live MeshBuffers are exactly the model's
  (``accounting.check_books``): a dropped tensor nobody else views frees its buffer at once;
- a deallocated tensor, or a tensor of a closed mesh, is refused with DeallocatedError /
  DeviceClosedError naming its shape, by reads and by ops.

At teardown every mesh closes and leaves its allocator empty.

Settings: CI runs ``CI_EXAMPLES`` examples of at most ``CI_STEPS`` steps each, derandomized and
without a database, so a run is deterministic (about two minutes on a 2-core machine; the test
prints the number of steps it ran and asserts a minimum).  ``MESHNN_STRESS=long`` runs
``LONG_EXAMPLES`` random (not derandomized) examples of ``LONG_STEPS`` steps for local soak runs::

    MESHNN_STRESS=long python -m pytest -q -s tests/reliability/test_state_machine.py
"""

from __future__ import annotations

import functools
import math
import os
from collections import Counter
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import meshnn as ttnn

from .accounting import all_free, check_books

CI_EXAMPLES, CI_STEPS = 300, 80
LONG_EXAMPLES, LONG_STEPS = 400, 120
LONG = os.environ.get("MESHNN_STRESS") == "long"
MIN_CI_STEPS = 10_000  # the CI setting must really run this many steps

MAX_MESHES = 3
MAX_OPENED = 4  # meshes opened per example (the first included)
MAX_LIVE = 10
MAX_DEAD = 6
MAX_SHARD_VALUES = 4096

F32, BF16, BFP8 = ttnn.float32, ttnn.bfloat16, ttnn.bfloat8_b
U32, I32 = ttnn.uint32, ttnn.int32
RM, TILE = ttnn.ROW_MAJOR_LAYOUT, ttnn.TILE_LAYOUT
DTYPES = (F32, BF16, BFP8, U32, I32)
FLOATS = (F32, BF16, BFP8)
MEMORY = (ttnn.DRAM_MEMORY_CONFIG, ttnn.L1_MEMORY_CONFIG)

STEPS = {"count": 0}
RULES: Counter[str] = Counter()  # rule name -> times it ran to completion (printed by the test)


def counted(function):
    """Count the completed runs of a rule (so a run reports what it really exercised)."""

    @functools.wraps(function)
    def run(self, *args, **kwargs) -> None:
        self.skipped = False
        function(self, *args, **kwargs)
        RULES[function.__name__ + (" (nothing to do)" if self.skipped else "")] += 1

    return run


# ------------------------------------------------------------------------------- value model


@dataclass
class Val:
    """Values (float64, or int64 for integer dtypes) and an absolute error bound per element."""

    v: np.ndarray
    t: np.ndarray

    @staticmethod
    def exact(values: np.ndarray) -> Val:
        return Val(values, np.zeros(values.shape))

    def reshape(self, shape: tuple[int, ...]) -> Val:
        return Val(self.v.reshape(shape), self.t.reshape(shape))

    @property
    def is_exact(self) -> bool:
        return not self.t.any()


def block_max(values: np.ndarray) -> np.ndarray:
    """Per element, the largest magnitude of its bfloat8_b block: the 16 values of its row
    starting at a multiple of 16 columns (a face row of its tile)."""
    a = np.abs(values)
    if a.ndim == 0:
        return a
    width = a.shape[-1]
    padded = -(-width // 16) * 16 if width else 0
    wide = np.zeros((*a.shape[:-1], padded))
    wide[..., :width] = a
    blocks = wide.reshape((*a.shape[:-1], padded // 16, 16)).max(axis=-1, initial=0.0)
    return np.repeat(blocks, 16, axis=-1)[..., :width]


def rounded(dtype: ttnn.DataType, value: Val) -> Val:
    """``value`` stored in ``dtype``: exact where the format rounding is reproducible, else bounded."""
    if dtype in (U32, I32):
        return Val(value.v.astype(np.int64), np.zeros(value.v.shape))
    if dtype is F32:
        if value.is_exact:
            return Val(value.v.astype(np.float32).astype(np.float64), value.t)
        return Val(value.v, value.t + (np.abs(value.v) + value.t) * 2.0**-23)
    if dtype is BF16:
        if value.is_exact:
            return Val.exact(value.v.astype(np.float32).astype(ml_dtypes.bfloat16).astype(np.float64))
        return Val(value.v, value.t + (np.abs(value.v) + value.t) * 2.0**-8)
    assert dtype is BFP8
    return Val(value.v, value.t + block_max(np.abs(value.v) + value.t) * 2.0**-6)


def random_values(rng: np.random.Generator, shape: tuple[int, ...], dtype: ttnn.DataType) -> np.ndarray:
    if dtype is U32:
        return rng.integers(0, 1000, shape).astype(np.uint32)
    if dtype is I32:
        return rng.integers(-1000, 1000, shape).astype(np.int32)
    return rng.uniform(-4, 4, shape).astype(np.float32)


def pick(data, items, label: str):
    """One of ``items``, drawn as an index (hypothesis keeps no reference to the item itself, so
    dropping it from the model really drops the last reference)."""
    items = list(items)
    return items[data.draw(st.integers(0, len(items) - 1), label=label)]


def wrapped(values: np.ndarray, dtype: ttnn.DataType) -> np.ndarray:
    """Integer results as the dtype holds them (two's complement wrap-around)."""
    if dtype is U32:
        return values % (1 << 32)
    return (values + (1 << 31)) % (1 << 32) - (1 << 31)


def numpy_of(values: np.ndarray) -> np.ndarray:
    return values.astype(np.float64) if values.dtype.kind == "f" or values.dtype == ml_dtypes.bfloat16 else values


# ------------------------------------------------------------------------------ model state


@dataclass(eq=False)
class MeshState:
    mesh: ttnn.MeshDevice
    shape: tuple[int, int]
    open: bool = True

    @property
    def coords(self) -> list[tuple[int, int]]:
        rows, cols = self.shape
        return [(r, c) for r in range(rows) for c in range(cols)]


@dataclass(eq=False)
class Group:
    """One storage: a MeshBuffer (``mesh`` set) or a host storage; the values of its shards."""

    mesh: MeshState | None
    shards: dict[tuple[int, int], Val]
    dtype: ttnn.DataType
    buffer: ttnn.MeshBuffer | None = None
    dead: str | None = None  # "deallocated" or "closed"


@dataclass(eq=False)
class Entry:
    """A tensor the user holds: which shards of which storage, seen with which shape."""

    tensor: ttnn.Tensor
    group: Group
    coords: tuple[tuple[int, int], ...]
    shape: tuple[int, ...]
    host_mesh_shape: tuple[int, int] | None = None  # a mapped host tensor: the mesh shape it is for
    dead_check: str = field(default="", repr=False)

    @property
    def on_device(self) -> bool:
        return self.group.mesh is not None

    def value(self, coord: tuple[int, int]) -> Val:
        return self.group.shards[coord].reshape(self.shape)

    @property
    def dtype(self) -> ttnn.DataType:
        return self.group.dtype


def composed(tensor: ttnn.Tensor, mesh_shape: tuple[int, int]) -> np.ndarray:
    """Every shard of ``tensor`` in topology order, concatenated along dim 0."""
    if len(tensor.tensor_topology().mesh_coords) == 1:
        return numpy_of(ttnn.to_numpy(tensor))
    composer = ttnn.ConcatMeshToTensor(ttnn.MeshShape(*mesh_shape), dim=0)
    return numpy_of(ttnn.to_numpy(tensor, mesh_composer=composer))


class MeshnnMachine(RuleBasedStateMachine):
    """See the module docstring."""

    def __init__(self) -> None:
        super().__init__()
        self.meshes: list[MeshState] = []
        self.live: list[Entry] = []
        self.dead: list[Entry] = []
        self.rng = np.random.default_rng(0)
        self.opened = 0
        self.skipped = False

    def skip(self) -> None:
        """This step found nothing to do (it is not counted as a run of its rule)."""
        self.skipped = True

    # ------------------------------------------------------------------------- helpers

    def open_meshes(self) -> list[MeshState]:
        return [m for m in self.meshes if m.open]

    def add(self, entry: Entry) -> Entry:
        self.live.append(entry)
        return entry

    def device_entries(self, full: bool = False) -> list[Entry]:
        found = [e for e in self.live if e.on_device]
        if full:
            found = [e for e in found if set(e.coords) == set(e.group.mesh.coords)]  # type: ignore[union-attr]
        return found

    def kill(self, group: Group, why: str) -> None:
        group.dead = why
        for entry in [e for e in self.live if e.group is group]:
            self.live.remove(entry)
            self.dead.append(entry)
        del self.dead[:-MAX_DEAD]

    def new_device_entry(self, tensor: ttnn.Tensor, mesh: MeshState, shards, coords, shape, dtype) -> Entry:
        group = Group(mesh, dict(shards), dtype, tensor.storage.mesh_buffer)
        return self.add(Entry(tensor, group, tuple(coords), tuple(shape)))

    def draw_shape(self, data, rank: int | None = None) -> tuple[int, ...]:
        rank = rank or data.draw(st.integers(1, 4), label="rank")
        dims = [data.draw(st.integers(1, 3), label="lead") for _ in range(rank - 2)]
        if rank >= 2:
            dims.append(pick(data, [1, 2, 5, 16, 32, 33, 40], label="height"))
        dims.append(pick(data, [1, 3, 16, 24, 32, 48, 64], label="width"))
        while math.prod(dims) > MAX_SHARD_VALUES:
            dims[-1] = max(1, dims[-1] // 2)
        return tuple(dims)

    # ----------------------------------------------------------------------- lifecycle

    @initialize(rows=st.integers(1, 8), cols=st.integers(1, 4))
    def first_mesh(self, rows: int, cols: int) -> None:
        self.open_mesh(rows, cols)

    @precondition(lambda self: len(self.open_meshes()) < MAX_MESHES and self.opened < MAX_OPENED)
    @rule(rows=st.integers(1, 8), cols=st.integers(1, 4))
    @counted
    def open_mesh(self, rows: int, cols: int) -> None:
        mesh = ttnn.open_mesh_device(ttnn.MeshShape(rows, cols), system="galaxy")
        mesh.disable_and_clear_program_cache()  # (the model holds no collective's cached semaphores)
        self.opened += 1
        self.meshes.append(MeshState(mesh, (rows, cols)))

    @precondition(lambda self: len(self.open_meshes()) > 1)
    @rule(data=st.data())
    @counted
    def close_mesh(self, data) -> None:
        state = pick(data, self.open_meshes(), label="mesh")
        allocator = state.mesh.allocator
        ttnn.close_mesh_device(state.mesh)
        state.open = False
        assert all_free(allocator), "closing a mesh must free every buffer on it"
        for group in {id(e.group): e.group for e in self.live if e.group.mesh is state}.values():
            self.kill(group, "closed")
        for entry in self.dead:
            if entry.group.mesh is state:
                entry.group.dead = "closed"  # a closed mesh is what a use of its tensors reports
        with pytest.raises(ttnn.DeviceClosedError, match="closed"):
            ttnn.from_torch(np.zeros((2, 2), np.float32), dtype=F32, device=state.mesh)

    # ------------------------------------------------------------------------ creation

    @precondition(lambda self: len(self.live) < MAX_LIVE)
    @rule(data=st.data())
    @counted
    def create(self, data) -> None:
        """A host or device tensor from a numpy array or torch tensor, with a random mapper."""
        state = pick(data, self.open_meshes(), label="mesh")
        dtype = pick(data, DTYPES, label="dtype")
        layout = TILE if dtype is BFP8 else pick(data, [RM, TILE], label="layout")
        shard_shape = self.draw_shape(data)
        rank = len(shard_shape)
        rows, cols = state.shape
        kind = pick(data, ["none", "replicate", "shard", "2d"], label="mapper")
        global_shape = list(shard_shape)
        mesh_cut: tuple[int, int] | None = None
        dims: tuple[int | None, int | None] = (None, None)
        if kind == "shard":
            dim = data.draw(st.integers(0, rank - 1), label="dim")
            global_shape[dim] *= rows * cols
            mapper = ttnn.ShardTensorToMesh(state.mesh, dim=dim)
        elif kind == "2d":
            cut_rows = data.draw(st.integers(1, rows), label="cut rows")
            cut_cols = data.draw(st.integers(1, cols), label="cut cols")
            choices = [None, *range(rank)]
            d0 = pick(data, choices, label="row dim")
            d1 = pick(data, [d for d in choices if d is None or d != d0], label="col dim")
            dims, mesh_cut = (d0, d1), (cut_rows, cut_cols)
            if d0 is not None:
                global_shape[d0] *= cut_rows
            if d1 is not None:
                global_shape[d1] *= cut_cols
            mapper = ttnn.ShardTensor2dMesh(state.mesh, mesh_shape=mesh_cut, dims=list(dims))
        elif kind == "replicate":
            mapper = ttnn.ReplicateTensorToMesh(state.mesh)
        else:
            mapper = None
        source = random_values(self.rng, tuple(global_shape), dtype)
        original = source.copy()
        on_device = data.draw(st.booleans(), label="on device")
        memory = pick(data, MEMORY, label="memory") if on_device else None
        as_torch = data.draw(st.booleans(), label="torch")
        given = torch.from_numpy(source) if as_torch and dtype is not U32 else source  # torch has no uint32
        tensor = ttnn.from_torch(
            given,
            dtype=dtype,
            layout=layout,
            device=state.mesh if on_device else None,
            memory_config=memory,
            mesh_mapper=mapper,
        )
        if dtype.is_integer:
            source[...] = 7  # the tensor owns its data: scribbling on the source changes nothing
        else:
            source[...] = np.nan
        shards, coords = self.cut(original, kind, state, shard_shape, dims, mesh_cut, dtype)
        if on_device and kind == "none":
            coords = state.coords
            shards = {c: shards[(0, 0)] for c in coords}
        if on_device:
            self.new_device_entry(tensor, state, shards, coords, shard_shape, dtype)
        else:
            group = Group(None, shards, dtype)
            host_shape = None if kind == "none" else state.shape
            self.add(Entry(tensor, group, tuple(coords), shard_shape, host_mesh_shape=host_shape))

    def cut(self, values, kind, state, shard_shape, dims, mesh_cut, dtype):
        """The model's shards of ``values`` under a mapper, rounded into ``dtype``."""
        value = rounded(dtype, Val.exact(numpy_of(values)))
        if kind == "none":
            return {(0, 0): value}, [(0, 0)]
        if kind == "replicate":
            return {c: value for c in state.coords}, state.coords
        if kind == "shard":
            n = len(state.coords)
            dim = next(d for d in range(len(shard_shape)) if values.shape[d] == shard_shape[d] * n)
            pieces = np.split(value.v, n, axis=dim), np.split(value.t, n, axis=dim)
            return {c: Val(pieces[0][i], pieces[1][i]) for i, c in enumerate(state.coords)}, state.coords
        cut_rows, cut_cols = mesh_cut
        coords = [(r, c) for r in range(cut_rows) for c in range(cut_cols)]
        shards = {}
        for r, c in coords:
            index = [slice(None)] * len(shard_shape)
            for d, k in zip(dims, (r, c), strict=True):
                if d is not None:
                    index[d] = slice(k * shard_shape[d], (k + 1) * shard_shape[d])
            shards[(r, c)] = Val(value.v[tuple(index)], value.t[tuple(index)])
        return shards, coords

    # ------------------------------------------------------------------------- movement

    @precondition(lambda self: any(not e.on_device for e in self.live) and len(self.live) < MAX_LIVE)
    @rule(data=st.data())
    @counted
    def to_device(self, data) -> None:
        host = pick(data, [e for e in self.live if not e.on_device], label="host")
        targets = [m for m in self.open_meshes() if host.host_mesh_shape in (None, m.shape)]
        if not targets:
            return self.skip()
        state = pick(data, targets, label="mesh")
        memory = pick(data, MEMORY, label="memory")
        tensor = ttnn.to_device(host.tensor, state.mesh, memory_config=memory)
        if host.host_mesh_shape is None:
            coords, shards = state.coords, {c: host.value(host.coords[0]) for c in state.coords}
        else:
            coords, shards = host.coords, {c: host.value(c) for c in host.coords}
        self.new_device_entry(tensor, state, shards, coords, host.shape, host.dtype)

    @precondition(lambda self: any(e.on_device for e in self.live) and len(self.live) < MAX_LIVE)
    @rule(data=st.data())
    @counted
    def from_device(self, data) -> None:
        entry = pick(data, self.device_entries(), label="tensor")
        host = ttnn.from_device(entry.tensor)
        group = Group(None, {c: entry.value(c) for c in entry.coords}, entry.dtype)
        mapped = entry.group.mesh.shape  # type: ignore[union-attr]
        self.add(Entry(host, group, entry.coords, entry.shape, host_mesh_shape=mapped))

    @precondition(lambda self: any(e.on_device for e in self.live))
    @rule(data=st.data())
    @counted
    def copy_host_to_device(self, data) -> None:
        """New values into an existing device tensor (every view of its buffer sees them)."""
        full = self.device_entries(full=True)
        if not full:
            return self.skip()
        entry = pick(data, full, label="tensor")
        state = entry.group.mesh
        kind = pick(data, ["none", "replicate", "shard"], label="mapper")
        shape = entry.shape
        dtype = entry.dtype
        if kind == "shard":
            n = len(state.coords)
            values = random_values(self.rng, (shape[0] * n, *shape[1:]), dtype)
            mapper = ttnn.ShardTensorToMesh(state.mesh, dim=0)
        else:
            values = random_values(self.rng, shape, dtype)
            mapper = ttnn.ReplicateTensorToMesh(state.mesh) if kind == "replicate" else None
        host = ttnn.from_torch(values, dtype=dtype, layout=entry.tensor.layout, mesh_mapper=mapper)
        ttnn.copy_host_to_device_tensor(host, entry.tensor)
        shards, coords = self.cut(values, kind, state, shape, (0, None), None, dtype)
        if kind == "none":
            coords, shards = state.coords, {c: shards[(0, 0)] for c in state.coords}
        base = next(iter(entry.group.shards.values())).v.shape
        for coord in coords:
            entry.group.shards[coord] = shards[coord].reshape(base)
        entry.coords = tuple(coords)

    @precondition(lambda self: any(e.on_device for e in self.live))
    @rule(data=st.data())
    @counted
    def copy_device_to_host(self, data) -> None:
        """Read a device tensor into a host tensor made for it by from_device (same spec)."""
        entry = pick(data, self.device_entries(), label="tensor")
        target = ttnn.from_device(entry.tensor)
        ttnn.copy_device_to_host_tensor(entry.tensor, target)
        got = composed(target, entry.group.mesh.shape)  # type: ignore[union-attr]
        self.compare(entry, got, "copy_device_to_host_tensor")

    @precondition(lambda self: bool(self.live))
    @rule(data=st.data())
    @counted
    def read_torch(self, data) -> None:
        entry = pick(data, self.live, label="tensor")
        mesh_shape = entry.group.mesh.shape if entry.on_device else (entry.host_mesh_shape or (1, 1))
        if len(entry.coords) == 1:
            got = ttnn.to_torch(entry.tensor)
        else:
            got = ttnn.to_torch(entry.tensor, mesh_composer=ttnn.ConcatMeshToTensor(ttnn.MeshShape(*mesh_shape), dim=0))
        expected_torch = {F32: torch.float32, BF16: torch.bfloat16, BFP8: torch.float32, U32: torch.uint32}
        assert got.dtype == expected_torch.get(entry.dtype, torch.int32)
        values = got.float().numpy().astype(np.float64) if entry.dtype.is_float else got.numpy()
        if entry.dtype is U32:
            values = values.view(np.uint32)
        self.compare(entry, values, "to_torch")

    # ------------------------------------------------------------------------------ ops

    def op_output(self, entry: Entry, tensor: ttnn.Tensor, values: dict, shape, dtype=None) -> None:
        self.new_device_entry(tensor, entry.group.mesh, values, entry.coords, shape, dtype or entry.dtype)

    @precondition(lambda self: any(e.on_device for e in self.live) and len(self.live) < MAX_LIVE)
    @rule(data=st.data())
    @counted
    def binary_add(self, data) -> None:
        a = pick(data, self.device_entries(), label="a")
        partners = [
            e
            for e in self.device_entries()
            if e.group.mesh is a.group.mesh
            and set(e.coords) == set(a.coords)
            and e.shape == a.shape
            and e.dtype is a.dtype
        ]
        b = pick(data, partners, label="b")
        out = ttnn.add(a.tensor, b.tensor)
        values = {}
        for c in a.coords:
            x, y = a.value(c), b.value(c)
            if a.dtype.is_integer:
                values[c] = Val.exact(wrapped(x.v + y.v, a.dtype))
            elif x.is_exact and y.is_exact:
                values[c] = rounded(a.dtype, Val.exact((x.v.astype(np.float32) + y.v.astype(np.float32)).astype(float)))
            else:
                values[c] = rounded(a.dtype, Val(x.v + y.v, x.t + y.t))
        self.op_output(a, out, values, a.shape)

    @precondition(lambda self: any(e.on_device and e.dtype.is_float for e in self.live) and len(self.live) < MAX_LIVE)
    @rule(data=st.data(), scalar=st.sampled_from([-1.5, 0.5, 2.0, 3.0]), relu=st.booleans())
    @counted
    def unary(self, data, scalar: float, relu: bool) -> None:
        a = pick(data, [e for e in self.device_entries() if e.dtype.is_float], label="a")
        out = ttnn.relu(a.tensor) if relu else ttnn.multiply(a.tensor, scalar)
        values = {}
        for c in a.coords:
            x = a.value(c)
            if x.is_exact:
                f32 = x.v.astype(np.float32)
                y = np.maximum(f32, np.float32(0)) if relu else f32 * np.float32(scalar)
                values[c] = rounded(a.dtype, Val.exact(y.astype(float)))
            elif relu:
                values[c] = rounded(a.dtype, Val(np.maximum(x.v, 0), x.t))
            else:
                values[c] = rounded(a.dtype, Val(x.v * scalar, x.t * abs(scalar)))
        self.op_output(a, out, values, a.shape)

    @precondition(lambda self: any(e.on_device and e.dtype.is_float for e in self.live) and len(self.live) < MAX_LIVE)
    @rule(data=st.data(), n=st.sampled_from([1, 8, 32]))
    @counted
    def matmul(self, data, n: int) -> None:
        """``a @ w`` with a replicated weight made for it."""
        choices = [e for e in self.device_entries(full=True) if e.dtype.is_float]
        if not choices:
            return self.skip()
        a = pick(data, choices, label="a")
        state = a.group.mesh
        k = a.shape[-1]
        w_dtype = pick(data, FLOATS, label="w dtype")
        w_values = random_values(self.rng, (k, n), w_dtype)
        w_tensor = ttnn.from_torch(
            w_values, dtype=w_dtype, layout=TILE, device=state.mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(state.mesh)
        )
        w_shards, _ = self.cut(w_values, "replicate", state, (k, n), (None, None), None, w_dtype)
        w = self.new_device_entry(w_tensor, state, w_shards, state.coords, (k, n), w_dtype)
        out = ttnn.matmul(a.tensor, w.tensor)
        shape = (*a.shape[:-1], n)
        values = {}
        for c in a.coords:
            x, y = a.value(c), w.value(c)
            v = x.v @ y.v
            mag = (np.abs(x.v) + x.t) @ (np.abs(y.v) + y.t)
            t = np.abs(x.v) @ y.t + x.t @ np.abs(y.v) + x.t @ y.t + (k + 2) * 2.0**-23 * mag
            values[c] = rounded(a.dtype, Val(v, t)) if a.dtype is not F32 else Val(v, t)
        self.op_output(a, out, values, shape)

    @precondition(
        lambda self: any(e.on_device and e.dtype is not BFP8 for e in self.live) and len(self.live) < MAX_LIVE
    )
    @rule(data=st.data())
    @counted
    def to_layout(self, data) -> None:
        a = pick(data, [e for e in self.device_entries() if e.dtype is not BFP8], label="a")
        layout = RM if a.tensor.layout is TILE else TILE
        out = ttnn.to_layout(a.tensor, layout)
        assert out.layout is layout
        self.op_output(a, out, {c: a.value(c) for c in a.coords}, a.shape)

    @precondition(lambda self: any(e.on_device for e in self.live) and len(self.live) < MAX_LIVE)
    @rule(data=st.data())
    @counted
    def clone(self, data) -> None:
        """A byte copy into another memory config (``ttnn.clone`` or ``ttnn.to_memory_config``)."""
        a = pick(data, self.device_entries(), label="a")
        memory = pick(data, MEMORY, label="memory")
        if data.draw(st.booleans(), label="clone"):
            out = ttnn.clone(a.tensor, memory_config=memory)
        else:
            out = ttnn.to_memory_config(a.tensor, memory)
            if memory == a.tensor.memory_config():  # tt-metal returns the tensor itself: no program, nothing new
                assert out.storage is a.tensor.storage  # (another Python handle on it, as ttnn's binding gives)
                return
        assert out.memory_config() == memory
        self.op_output(a, out, {c: a.value(c) for c in a.coords}, a.shape)

    @precondition(
        lambda self: any(e.on_device and e.dtype in (F32, BF16) for e in self.live) and len(self.live) < MAX_LIVE
    )
    @rule(data=st.data())
    @counted
    def typecast(self, data) -> None:
        """float32 <-> bfloat16 (to bfloat16: round to nearest even)."""
        a = pick(data, [e for e in self.device_entries() if e.dtype in (F32, BF16)], label="a")
        dtype = BF16 if a.dtype is F32 else F32
        out = ttnn.typecast(a.tensor, dtype)
        assert out.dtype is dtype
        self.new_device_entry(
            out, a.group.mesh, {c: rounded(dtype, a.value(c)) for c in a.coords}, a.coords, a.shape, dtype
        )

    @precondition(lambda self: any(e.on_device for e in self.live))
    @rule(data=st.data())
    @counted
    def reallocate(self, data) -> None:
        """``ttnn.reallocate``: the values move to a fresh buffer; the input is deallocated."""
        a = pick(data, self.device_entries(), label="a")
        out = ttnn.reallocate(a.tensor)
        assert not a.tensor.is_allocated()
        values = {c: a.value(c) for c in a.coords}
        state = a.group.mesh
        self.kill(a.group, "deallocated")
        self.new_device_entry(out, state, values, a.coords, a.shape, a.dtype)

    # -------------------------------------------------------------------------- collectives

    def groups_of(self, state: MeshState, axis: int | None) -> list[list[tuple[int, int]]]:
        rows, cols = state.shape
        if axis is None:
            return [state.coords]
        if axis == 1:
            return [[(r, c) for c in range(cols)] for r in range(rows)]
        return [[(r, c) for r in range(rows)] for c in range(cols)]

    @precondition(lambda self: any(e.on_device for e in self.live) and len(self.live) < MAX_LIVE)
    @rule(data=st.data())
    @counted
    def all_gather(self, data) -> None:
        self.collective(data, "all_gather")

    @precondition(lambda self: any(e.on_device for e in self.live) and len(self.live) < MAX_LIVE)
    @rule(data=st.data())
    @counted
    def reduce_scatter(self, data) -> None:
        self.collective(data, "reduce_scatter")

    @precondition(lambda self: any(e.on_device for e in self.live) and len(self.live) < MAX_LIVE)
    @rule(data=st.data())
    @counted
    def all_reduce(self, data) -> None:
        self.collective(data, "all_reduce")

    def collective(self, data, op: str) -> None:
        choices = self.device_entries(full=True)
        if not choices:
            return self.skip()
        a = pick(data, choices, label="a")
        state = a.group.mesh
        axis = pick(data, [None, 0, 1], label="cluster_axis")
        groups = self.groups_of(state, axis)
        n = len(groups[0])
        rank = len(a.shape)
        if op == "reduce_scatter":
            tile = a.tensor.tile.tile_shape
            dims = [
                d
                for d in range(rank)
                if a.shape[d] % (n * (tile[d - rank + 2] if a.tensor.layout is TILE and d >= rank - 2 else 1)) == 0
            ]
            if not dims:
                return self.skip()
            dim = pick(data, dims, label="dim")
        else:
            dim = data.draw(st.integers(-rank, rank - 1), label="dim")
        if op == "all_gather" and math.prod(a.shape) * n > 4 * MAX_SHARD_VALUES:
            return self.skip()
        d = dim % rank
        kwargs = {} if axis is None else {"cluster_axis": axis}
        if op == "all_gather":
            out = ttnn.all_gather(a.tensor, dim, **kwargs)
            shape = tuple(s * n if i == d else s for i, s in enumerate(a.shape))
        elif op == "reduce_scatter":
            out = ttnn.reduce_scatter(a.tensor, dim, **kwargs)
            shape = tuple(s // n if i == d else s for i, s in enumerate(a.shape))
        else:
            out = ttnn.all_reduce(a.tensor, **kwargs)
            shape = a.shape
        values: dict = {}
        for group in groups:
            members = [a.value(c) for c in group]
            if op == "all_gather":
                gathered = Val(
                    np.concatenate([m.v for m in members], axis=d), np.concatenate([m.t for m in members], axis=d)
                )
                result = gathered if a.dtype is not BFP8 else rounded(BFP8, gathered)
                for c in group:
                    values[c] = result
                continue
            total_v = sum(m.v for m in members)
            if a.dtype.is_integer:
                total = Val.exact(wrapped(total_v, a.dtype))
            else:
                mag = sum(np.abs(m.v) + m.t for m in members)
                total = rounded(a.dtype, Val(total_v, sum(m.t for m in members) + (n + 1) * 2.0**-23 * mag))
                if a.dtype is F32 and n == 1:
                    total = Val(total_v, sum(m.t for m in members))
            if op == "all_reduce":
                for c in group:
                    values[c] = total
            else:
                pieces_v, pieces_t = np.split(total.v, n, axis=d), np.split(total.t, n, axis=d)
                for i, c in enumerate(group):
                    values[c] = Val(pieces_v[i], pieces_t[i])
        self.op_output(a, out, values, shape)

    # ---------------------------------------------------------------------------- views

    @precondition(lambda self: bool(self.live) and len(self.live) < MAX_LIVE)
    @rule(data=st.data())
    @counted
    def reshape(self, data) -> None:
        """A view reshape: ROW_MAJOR any shape of the volume, TILE only the leading dims."""
        entry = pick(data, self.live, label="tensor")
        shape = entry.shape
        if entry.tensor.layout is TILE:
            if len(shape) < 2:
                return self.skip()
            lead, (height, width) = math.prod(shape[:-2]), shape[-2:]
            options = [(lead, height, width), (1, lead, height, width)]
            if lead == 1:
                options.append((height, width))
            if height % 32 == 0:
                options += [(lead * height, width), (1, lead * height, width)]
            new = pick(data, options, label="shape")
        else:
            volume = math.prod(shape)
            options = [(volume,), (1, volume)] + [(d, volume // d) for d in (2, 3, 4, 8) if volume % d == 0]
            new = pick(data, options, label="shape")
        view = ttnn.reshape(entry.tensor, new)
        assert tuple(view.shape) == new
        if entry.on_device:
            assert view.storage.mesh_buffer is entry.group.buffer, "a view reshape shares the MeshBuffer"
        self.add(Entry(view, entry.group, entry.coords, new, host_mesh_shape=entry.host_mesh_shape))

    @precondition(lambda self: any(e.on_device for e in self.live) and len(self.live) < MAX_LIVE)
    @rule(data=st.data())
    @counted
    def device_tensors(self, data) -> None:
        entry = pick(data, self.device_entries(), label="tensor")
        parts = ttnn.get_device_tensors(entry.tensor)
        assert len(parts) == len(entry.coords)
        keep = data.draw(st.integers(0, len(parts) - 1), label="kept")
        ordered = sorted(entry.coords)
        for i, part in enumerate(parts):
            assert part.storage.mesh_buffer is entry.group.buffer
            if i == keep:
                self.add(Entry(part, entry.group, (ordered[i],), entry.shape))
        del parts, part

    # ---------------------------------------------------------------------------- freeing

    @precondition(lambda self: bool(self.live))
    @rule(data=st.data(), force=st.booleans())
    @counted
    def deallocate(self, data, force: bool) -> None:
        entry = pick(data, self.live, label="tensor")
        ttnn.deallocate(entry.tensor, force=force)
        if not entry.on_device:
            return  # a no-op for host tensors
        others = [e for e in self.live if e.group is entry.group and e is not entry]
        if force or not others:
            assert not entry.tensor.is_allocated()
            self.kill(entry.group, "deallocated")
        else:
            assert entry.tensor.is_allocated(), "deallocate(force=False) must keep a buffer other views use"

    @precondition(lambda self: bool(self.live))
    @rule(data=st.data())
    @counted
    def drop(self, data) -> None:
        entry = pick(data, self.live, label="tensor")
        self.live.remove(entry)
        del entry  # the last reference of a storage nobody else views: its buffer must be freed now

    # ------------------------------------------------------------------------ invariants

    def compare(self, entry: Entry, got: np.ndarray, what: str) -> None:
        expected = [entry.value(c) for c in entry.coords]
        v = np.concatenate([e.v for e in expected], axis=0) if len(expected) > 1 else expected[0].v
        t = np.concatenate([e.t for e in expected], axis=0) if len(expected) > 1 else expected[0].t
        assert got.shape == v.shape, f"{what}: shape {got.shape} != model {v.shape}"
        error = np.abs(got.astype(np.float64) - v)
        bad = error > t
        assert not bad.any(), (
            f"{what} of a {entry.dtype} {entry.tensor.layout} tensor {entry.shape} at {entry.coords[:3]}: "
            f"{int(bad.sum())} values off the model, worst {float((error - t).max())}"
        )

    @invariant()
    def every_live_tensor_reads_back_as_modelled(self) -> None:
        STEPS["count"] += 1
        for entry in self.live:
            coords = tuple(ttnn.MeshCoordinate(*c) for c in entry.coords)
            if entry.on_device:
                assert entry.tensor.is_allocated()
                assert entry.tensor.tensor_topology().mesh_coords == coords
                mesh_shape = entry.group.mesh.shape
            else:
                mesh_shape = entry.host_mesh_shape or (1, 1)
            assert tuple(entry.tensor.shape) == entry.shape
            self.compare(entry, composed(entry.tensor, mesh_shape), "read")

    @invariant()
    def memory_adds_up(self) -> None:
        for state in self.open_meshes():
            buffers = {id(g.buffer): g.buffer for g in (e.group for e in self.live) if g.mesh is state}
            check_books(state.mesh, buffers.values())

    @invariant()
    def dead_tensors_are_refused(self) -> None:
        for entry in self.dead[-2:]:
            error = ttnn.DeviceClosedError if entry.group.dead == "closed" else ttnn.DeallocatedError
            assert not entry.tensor.is_allocated()
            shape = str(list(entry.shape))
            with pytest.raises(error) as caught:
                ttnn.to_numpy(entry.tensor)
            assert shape in str(caught.value)
            with pytest.raises(error) as caught:
                ttnn.relu(entry.tensor)
            assert shape in str(caught.value)
            del caught

    def teardown(self) -> None:
        allocators = [m.mesh.allocator for m in self.meshes]
        self.live.clear()
        self.dead.clear()
        for state in self.meshes:
            ttnn.close_mesh_device(state.mesh)
        assert all(all_free(a) for a in allocators)


def test_the_api_against_a_numpy_model() -> None:
    """Run the machine (CI: deterministic, about two minutes; see the module docstring)."""
    STEPS["count"] = 0
    RULES.clear()
    config = (
        settings(max_examples=LONG_EXAMPLES, stateful_step_count=LONG_STEPS, deadline=None, database=None)
        if LONG
        else settings(
            max_examples=CI_EXAMPLES,
            stateful_step_count=CI_STEPS,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
    )
    MeshnnMachine.TestCase.settings = config
    MeshnnMachine.TestCase().runTest()
    print(f"\nstate machine: {STEPS['count']} steps checked; rules run: {dict(sorted(RULES.items()))}")
    assert STEPS["count"] >= (MIN_CI_STEPS if not LONG else LONG_EXAMPLES)
