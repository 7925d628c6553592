"""The bad-input table: every public function, given what it cannot take, says so by name.

Each row of ``TABLE`` is one call with one thing wrong: a wrong type, a wrong rank, a dim out of
range, tensors on different meshes, a shape a mapper or shard spec cannot split, a dtype/layout
pair ttnn refuses, a negative or absurd size, a closed mesh or a deallocated tensor.  The call must
raise the row's meshnn error, which is also the matching builtin (``ValueError``, ``TypeError``,
``MemoryError``, ``RuntimeError``), with a message that names the offending argument; never an
IndexError, AttributeError, ZeroDivisionError or a numpy error from inside.  Afterwards nothing has
changed: the open meshes' live buffers and memory views (block tables included) and the number of live threads
(a mesh's dispatch threads) are as before.

The table is data: the general rows are generated per family of ops (unary, binary, reduction) from
one list of faults each, the rest are written out.  ``test_every_public_callable_has_a_row`` keeps
it growing with the API: a new public function without a row fails it, unless it is listed in
``EXEMPT`` with the reason it takes no input that could be wrong.
"""

from __future__ import annotations

import enum
import functools
import importlib
import inspect
import os
import re
import threading
from collections.abc import Callable
from types import SimpleNamespace

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.ops import registry
from meshnn.ops.eltwise import binary_tables, unary_tables
from meshnn.ops.eltwise.binary_defs import Keywords
from meshnn.ops.registry import OpKind
from meshnn.ops.signatures import REQUIRED

from .accounting import snapshot
from .cases import (
    BF16,
    BFP4,
    BFP8,
    BUILTIN,
    CLOSED,
    DEAD,
    DRAM_MC,
    F32,
    I32,
    L1_MC,
    OOM,
    RM,
    TILE,
    TYPE,
    U32,
    VALUE,
    WRONG_MESH,
    Case,
)
from .rows import exchange as exchange_rows
from .rows import family_rows
from .rows import moe_remap as moe_remap_rows
from .rows import sockets as socket_rows


def mapper(e, dim=0):
    return ttnn.ShardTensorToMesh(e.mesh, dim=dim)


# --------------------------------------------------------------------------------- the families


def _registered(kind) -> tuple[str, ...]:
    """The top-level ops of one kind, from the op registry (every op declared there gets the rows)."""
    return tuple(e.name for e in registry.entries() if e.kind is kind and not e.namespace)


def _example(param) -> object:
    """A good value for a required parameter of a unary op (an int where the op checks for one)."""
    return 1 if getattr(param.check, "__name__", "") == "_int" else 0.5


def _unary_op(name: str):
    """``ttnn.<name>`` with its required parameters given good values, so a fault is the only fault."""
    function = getattr(ttnn, name)
    required = {p.name: _example(p) for p in unary_tables.DEFS[name].params if p.default is REQUIRED}
    return functools.partial(function, **required) if required else function


UNARY = tuple(  # the table ops of ttnn's common unary signature, any dtype (the others: rows/eltwise*.py)
    n for n in _registered(OpKind.UNARY) if n in unary_tables.DEFS and unary_tables.DEFS[n].dtypes is None
)
UNARY_FAULTS = (  # (what, call of the op, error, argument)
    ("input is a numpy array", lambda op, e: op(np.ones((32, 32), np.float32)), TYPE, "input_tensor"),
    ("input is None", lambda op, e: op(None), TYPE, "input_tensor"),
    ("input is a torch tensor", lambda op, e: op(torch.ones(4)), TYPE, "input_tensor"),
    ("input is on the host", lambda op, e: op(e.host), VALUE, "input_tensor"),
    ("input was deallocated", lambda op, e: op(e.freed), DEAD, "input_tensor"),
    ("input's mesh is closed", lambda op, e: op(e.closed), CLOSED, "input_tensor"),
    ("memory_config is a string", lambda op, e: op(e.a, memory_config="L1"), TYPE, "memory_config"),
    ("queue_id out of range", lambda op, e: op(e.a, queue_id=2), VALUE, "queue_id"),
    ("output_tensor is not a tensor", lambda op, e: op(e.a, output_tensor=3), TYPE, "output_tensor"),
    ("output_tensor of another shape", lambda op, e: op(e.a, output_tensor=e.b), VALUE, "output_tensor"),
    ("output_tensor was deallocated", lambda op, e: op(e.a, output_tensor=e.freed), DEAD, "output_tensor"),
)

BINARY_DEFS = {d.name: d for d in binary_tables.BINARY_DEFS if d.dtypes is None and d.public}  # others: rows/
BINARY = tuple(
    n for n in _registered(OpKind.BINARY) if n in BINARY_DEFS and BINARY_DEFS[n].keywords is Keywords.NG
) + tuple(n for n in _registered(OpKind.BINARY) for d in BINARY_DEFS.values() if n in d.aliases and not n.endswith("_"))
PLAIN_BINARY = tuple(
    n for n in _registered(OpKind.BINARY) if n in BINARY_DEFS and BINARY_DEFS[n].keywords is not Keywords.NG
)
INPLACE_BINARY = tuple(
    n
    for n in _registered(OpKind.BINARY)
    if n.endswith("_") and (n[:-1] in BINARY_DEFS or any(n in d.aliases for d in BINARY_DEFS.values()))
)
BINARY_FAULTS = (
    ("shapes do not broadcast", lambda op, e: op(e.a, e.b), VALUE, "input_tensor_a .* input_tensor_b"),
    ("b on another mesh", lambda op, e: op(e.a, e.other), WRONG_MESH, "input_tensor_b"),
    ("b is a string", lambda op, e: op(e.a, "2"), TYPE, "input_tensor_b"),
    ("a is a list", lambda op, e: op([1.0], e.a), TYPE, "input_tensor_a"),
    ("b is a bool", lambda op, e: op(e.a, True), TYPE, "input_tensor_b"),
    ("two scalars", lambda op, e: op(1.0, 2.0), TYPE, "operand"),
    ("a was deallocated", lambda op, e: op(e.freed, e.a), DEAD, "input_tensor_a"),
    ("b's mesh is closed", lambda op, e: op(e.a, e.closed), CLOSED, "input_tensor_b"),
    ("b is on the host", lambda op, e: op(e.a, e.host), VALUE, "input_tensor_b"),
    ("dtype is a string", lambda op, e: op(e.a, e.a, dtype="float32"), TYPE, "dtype"),
    ("memory_config is a dict", lambda op, e: op(e.a, e.a, memory_config={}), TYPE, "memory_config"),
    ("queue_id negative", lambda op, e: op(e.a, e.a, queue_id=-1), VALUE, "queue_id"),
    ("output_tensor of another layout", lambda op, e: op(e.a, e.a, output_tensor=e.rm), VALUE, "output_tensor"),
)

PLAIN_BINARY_FAULTS = tuple(
    f for f in BINARY_FAULTS if f[0] not in ("queue_id negative", "output_tensor of another layout")
)
INPLACE_BINARY_FAULTS = (
    ("b does not broadcast into a", lambda op, e: op(e.a, e.b), VALUE, "input_tensor_b"),
    ("b on another mesh", lambda op, e: op(e.a, e.other), WRONG_MESH, "input_tensor_b"),
    ("a is a number", lambda op, e: op(1.0, e.a), TYPE, "input_tensor_a"),
    ("a was deallocated", lambda op, e: op(e.freed, e.a), DEAD, "input_tensor_a"),
    ("a is on the host", lambda op, e: op(e.host, e.a), VALUE, "input_tensor_a"),
    ("b is a string", lambda op, e: op(e.a, "2"), TYPE, "input_tensor_b"),
    ("dtype is not taken", lambda op, e: op(e.a, e.a, dtype=ttnn.float32), TYPE, "dtype"),
)

REDUCTIONS = ("sum", "mean", "max", "min", "argmax")
REDUCTION_FAULTS = (
    ("dim past the rank", lambda op, e: op(e.a, dim=3), VALUE, "dim"),
    ("dim below -rank", lambda op, e: op(e.a, dim=-4), VALUE, "dim"),
    ("dim is a string", lambda op, e: op(e.a, dim="1"), TYPE, "dim"),
    ("dim is a float", lambda op, e: op(e.a, dim=1.0), TYPE, "dim"),
    ("input is a numpy array", lambda op, e: op(np.ones((2, 2)), dim=0), TYPE, "input_tensor"),
    ("input was deallocated", lambda op, e: op(e.freed, dim=0), DEAD, "input_tensor"),
    ("input's mesh is closed", lambda op, e: op(e.closed, dim=0), CLOSED, "input_tensor"),
    ("memory_config is a string", lambda op, e: op(e.a, dim=0, memory_config="DRAM"), TYPE, "memory_config"),
)


def unary_family(names, faults) -> list[Case]:
    return [
        Case(name, what, (lambda e, f=fault, n=name: f(_unary_op(n), e)), error, argument)
        for name in names
        for what, fault, error, argument in faults
    ]


def family(names, faults) -> list[Case]:
    return [
        Case(name, what, (lambda e, f=fault, n=name: f(getattr(ttnn, n), e)), error, argument)
        for name in names
        for what, fault, error, argument in faults
    ]


# ------------------------------------------------------------------------------ the written rows


def written() -> list[Case]:
    c: list[Case] = []

    def row(target, what, call, error, names):
        c.append(Case(target, what, call, error, names))

    # -- creating tensors on the host and on the mesh
    t = torch.ones(8, 32, 32)
    row("from_torch", "a string", lambda e: ttnn.from_torch("abc"), TYPE, "tensor")
    row("from_torch", "a dict", lambda e: ttnn.from_torch({"a": 1}), TYPE, "tensor")
    row("from_torch", "ragged list", lambda e: ttnn.from_torch([[1, 2], [3]]), VALUE, "tensor")
    row("from_torch", "dtype is a string", lambda e: ttnn.from_torch(t, dtype="bfloat16"), TYPE, "dtype")
    row("from_torch", "dtype is a torch dtype", lambda e: ttnn.from_torch(t, dtype=torch.float32), TYPE, "dtype")
    row("from_torch", "layout is a string", lambda e: ttnn.from_torch(t, layout="TILE"), TYPE, "layout")
    row(
        "from_torch",
        "bfloat8_b row-major",
        lambda e: ttnn.from_torch(t, dtype=BFP8, layout=RM),
        VALUE,
        "[Ll]ayout",
    )
    row(
        "from_torch",
        "bfloat4_b row-major",
        lambda e: ttnn.from_torch(t, dtype=BFP4, layout=RM),
        VALUE,
        "[Ll]ayout",
    )
    row("from_torch", "device is a string", lambda e: ttnn.from_torch(t, device="cpu"), TYPE, "device")
    row("from_torch", "device is closed", lambda e: ttnn.from_torch(t, device=e.closed_mesh), CLOSED, "device")
    row(
        "from_torch",
        "memory_config is a string",
        lambda e: ttnn.from_torch(t, device=e.mesh, memory_config="DRAM"),
        TYPE,
        "memory_config",
    )
    row("from_torch", "tile is a tuple", lambda e: ttnn.from_torch(t, layout=TILE, tile=(32, 32)), TYPE, "tile")
    row(
        "from_torch",
        "shard dim past the rank",
        lambda e: ttnn.from_torch(t, device=e.mesh, mesh_mapper=mapper(e, 3)),
        VALUE,
        "dim",
    )
    row(
        "from_torch",
        "mapper of another mesh",
        lambda e: ttnn.from_torch(t, device=e.mesh, mesh_mapper=ttnn.ShardTensorToMesh(e.small, dim=0)),
        VALUE,
        "mapper",
    )
    row(
        "from_torch",
        "mapper is a string",
        lambda e: ttnn.from_torch(t, device=e.mesh, mesh_mapper="shard"),
        TYPE,
        "mesh_mapper",
    )
    row(
        "from_torch",
        "2-D mapper chunks do not match the mesh",
        lambda e: ttnn.from_torch(
            torch.ones(3, 64), device=e.mesh, mesh_mapper=ttnn.ShardTensor2dMesh(e.mesh, (2, 4), dims=(0, 1))
        ),
        VALUE,
        "chunks|[Ss]hard",
    )
    row(
        "from_torch",
        "uneven 2-D shards",
        lambda e: ttnn.from_torch(
            torch.ones(10, 64), device=e.mesh, mesh_mapper=ttnn.ShardTensor2dMesh(e.mesh, (2, 4), dims=(None, 0))
        ),
        VALUE,
        "[Ss]hard shape",
    )
    row(
        "from_torch",
        "spec is a shape",
        lambda e: ttnn.from_torch(t, spec=(8, 32, 32)),
        TYPE,
        "spec",
    )
    row(
        "from_torch",
        "pad_value is a string",
        lambda e: ttnn.from_torch(t, layout=TILE, pad_value="0"),
        TYPE,
        "pad_value",
    )
    row("as_tensor", "a string", lambda e: ttnn.as_tensor("abc"), TYPE, "tensor")
    row("as_tensor", "dtype is a string", lambda e: ttnn.as_tensor(t, dtype="f32"), TYPE, "dtype")
    row("as_tensor", "bfloat8_b row-major", lambda e: ttnn.as_tensor(t, dtype=BFP8, layout=RM), VALUE, "[Ll]ayout")
    row("as_tensor", "device is an int", lambda e: ttnn.as_tensor(t, device=0), TYPE, "device")
    row("Tensor", "data is a set", lambda e: ttnn.Tensor({1, 2}, F32), TYPE, "tensor|data")
    row("Tensor", "dtype is a string", lambda e: ttnn.Tensor(np.ones(4, np.float32), "float32"), TYPE, "dtype")
    row(
        "Tensor",
        "bfloat8_b row-major",
        lambda e: ttnn.Tensor(np.ones((32, 32), np.float32), BFP8, layout=RM),
        VALUE,
        "[Ll]ayout",
    )
    for name in ("zeros", "ones", "empty"):
        fn = getattr(ttnn, name)
        row(name, "negative dim", lambda e, fn=fn: fn([-1, 3]), VALUE, "shape")
        row(name, "shape is a string", lambda e, fn=fn: fn("abc"), TYPE, "shape")
        row(name, "shape holds floats", lambda e, fn=fn: fn([2.5, 3]), TYPE, "shape")
        row(name, "absurd host shape", lambda e, fn=fn: fn([1 << 31, 1 << 31]), VALUE, "shape")
        row(name, "host shape larger than memory", lambda e, fn=fn: fn([1 << 20, 1 << 20]), VALUE, "shape")
        row(name, "absurd device shape", lambda e, fn=fn: fn([1 << 17, 1 << 16], device=e.mesh), OOM, "DRAM")
        row(name, "dtype is a string", lambda e, fn=fn: fn([2, 3], dtype="bf16"), TYPE, "dtype")
        row(name, "layout is an int", lambda e, fn=fn: fn([2, 3], layout=1), TYPE, "layout")
        row(name, "bfloat8_b row-major", lambda e, fn=fn: fn([32, 32], dtype=BFP8, layout=RM), VALUE, "[Ll]ayout")
        row(name, "device is closed", lambda e, fn=fn: fn([2, 3], device=e.closed_mesh), CLOSED, "device")
    row("full", "fill_value is a string", lambda e: ttnn.full([2, 3], "x"), TYPE, "fill_value")
    row("full", "negative dim", lambda e: ttnn.full([2, -3], 1.0), VALUE, "shape")
    row("full", "device is a string", lambda e: ttnn.full([2, 3], 1.0, device="mesh"), TYPE, "device")
    row("full", "absurd device shape", lambda e: ttnn.full([1 << 17, 1 << 16], 1.0, device=e.mesh), OOM, "DRAM")
    for name in ("zeros_like", "ones_like", "empty_like"):
        fn = getattr(ttnn, name)
        row(name, "not a tensor", lambda e, fn=fn: fn(np.ones(3)), TYPE, "tensor")
        row(name, "deallocated", lambda e, fn=fn: fn(e.freed), DEAD, "tensor")
        row(name, "dtype is a string", lambda e, fn=fn: fn(e.a, dtype="f32"), TYPE, "dtype")
    row("full_like", "not a tensor", lambda e: ttnn.full_like([1, 2], 3.0), TYPE, "tensor")
    row("full_like", "fill_value is None", lambda e: ttnn.full_like(e.a, None), TYPE, "fill_value")
    row("full_like", "closed mesh", lambda e: ttnn.full_like(e.closed, 1.0), CLOSED, "tensor")
    row("arange", "step zero", lambda e: ttnn.arange(0, 10, 0), VALUE, "step")
    row("arange", "end is a string", lambda e: ttnn.arange(0, "10"), TYPE, "end")
    row("arange", "absurd length", lambda e: ttnn.arange(0, 1e15, 1), VALUE, "end|length|shape")
    row("arange", "dtype is a string", lambda e: ttnn.arange(0, 10, 1, dtype="int"), TYPE, "dtype")
    row("arange", "device is closed", lambda e: ttnn.arange(0, 10, 1, device=e.closed_mesh), CLOSED, "device")
    spec = ttnn.TensorSpec((64, 64), F32, TILE)
    row(
        "allocate_tensor_on_device",
        "shape is a string",
        lambda e: ttnn.allocate_tensor_on_device("ab", F32, TILE, e.mesh),
        TYPE,
        "[Ss]hape",
    )
    row(
        "allocate_tensor_on_device",
        "negative dim",
        lambda e: ttnn.allocate_tensor_on_device([-2, 32], F32, TILE, e.mesh),
        VALUE,
        "[Ss]hape",
    )
    row("allocate_tensor_on_device", "no device", lambda e: ttnn.allocate_tensor_on_device(spec), TYPE, "device")
    row(
        "allocate_tensor_on_device",
        "device is closed",
        lambda e: ttnn.allocate_tensor_on_device(spec, e.closed_mesh),
        CLOSED,
        "device",
    )
    row(
        "allocate_tensor_on_device",
        "dtype is a string",
        lambda e: ttnn.allocate_tensor_on_device([32, 32], "f32", TILE, e.mesh),
        TYPE,
        "dtype",
    )
    row(
        "allocate_tensor_on_device",
        "bfloat8_b row-major",
        lambda e: ttnn.allocate_tensor_on_device([32, 32], BFP8, RM, e.mesh),
        VALUE,
        "[Ll]ayout",
    )
    row(
        "allocate_tensor_on_device",
        "absurd size",
        lambda e: ttnn.allocate_tensor_on_device([1 << 16, 1 << 16], F32, TILE, e.mesh),
        OOM,
        "DRAM",
    )
    row(
        "allocate_tensor_on_device",
        "L1 is full",
        lambda e: ttnn.allocate_tensor_on_device([64, 64], F32, TILE, e.mesh, L1_MC),
        OOM,
        "L1",
    )
    row(
        "allocate_tensor_on_device",
        "memory_config is a buffer type",
        lambda e: ttnn.allocate_tensor_on_device([32, 32], F32, TILE, e.mesh, ttnn.BufferType.L1),
        TYPE,
        "memory_config",
    )
    row(
        "allocate_tensor_on_host",
        "shape is a string",
        lambda e: ttnn.allocate_tensor_on_host("ab", F32, TILE, e.mesh),
        TYPE,
        "[Ss]hape",
    )
    row(
        "allocate_tensor_on_host",
        "negative dim",
        lambda e: ttnn.allocate_tensor_on_host([32, -32], F32, TILE, e.mesh),
        VALUE,
        "[Ss]hape",
    )
    row(
        "allocate_tensor_on_host",
        "absurd size",
        lambda e: ttnn.allocate_tensor_on_host([1 << 31, 1 << 31], F32, TILE, e.mesh),
        VALUE,
        "shape",
    )
    row(
        "allocate_tensor_on_host",
        "no device",
        lambda e: ttnn.allocate_tensor_on_host([32, 32], F32, TILE),
        TYPE,
        "MeshDevice|device",
    )
    row(
        "allocate_tensor_on_host",
        "dtype is a layout",
        lambda e: ttnn.allocate_tensor_on_host([32, 32], TILE, TILE, e.mesh),
        TYPE,
        "dtype",
    )

    # -- moving tensors
    row("to_device", "not a tensor", lambda e: ttnn.to_device(np.ones(3), e.mesh), TYPE, "tensor")
    row("to_device", "device is a string", lambda e: ttnn.to_device(e.host, "mesh"), TYPE, "device")
    row("to_device", "device is closed", lambda e: ttnn.to_device(e.host, e.closed_mesh), CLOSED, "device")
    row("to_device", "memory_config is a string", lambda e: ttnn.to_device(e.host, e.mesh, "L1"), TYPE, "memory_config")
    row("to_device", "already on another mesh", lambda e: ttnn.to_device(e.a, e.other_mesh), WRONG_MESH, "tensor")
    row("to_device", "L1 is full", lambda e: ttnn.to_device(e.host_tile, e.mesh, L1_MC), OOM, "L1")
    row(
        "to_device",
        "queue_id out of range",
        lambda e: ttnn.to_device(e.host, e.mesh, queue_id=3),
        VALUE,
        "queue_id|cq_id",
    )
    row("from_device", "not a tensor", lambda e: ttnn.from_device("t"), TYPE, "tensor")
    row("from_device", "deallocated", lambda e: ttnn.from_device(e.freed), DEAD, "tensor")
    row("from_device", "closed mesh", lambda e: ttnn.from_device(e.closed), CLOSED, "tensor")
    row("from_device", "cq_id out of range", lambda e: ttnn.from_device(e.a, cq_id=2), VALUE, "cq_id")
    comp = lambda e: ttnn.ConcatMeshToTensor(e.mesh, dim=0)  # noqa: E731
    row("to_torch", "not a tensor", lambda e: ttnn.to_torch(np.ones(3)), TYPE, "tensor")
    row("to_torch", "deallocated", lambda e: ttnn.to_torch(e.freed, mesh_composer=comp(e)), DEAD, "tensor")
    row("to_torch", "closed mesh", lambda e: ttnn.to_torch(e.closed), CLOSED, "tensor")
    row(
        "to_torch",
        "composer dim past the rank",
        lambda e: ttnn.to_torch(e.a, mesh_composer=ttnn.ConcatMeshToTensor(e.mesh, dim=3)),
        VALUE,
        "dim",
    )
    row(
        "to_torch",
        "composer of another mesh shape",
        lambda e: ttnn.to_torch(e.a, mesh_composer=ttnn.ConcatMeshToTensor(e.small, dim=0)),
        VALUE,
        "mesh_composer|mesh",
    )
    row("to_torch", "composer is a string", lambda e: ttnn.to_torch(e.a, mesh_composer="concat"), TYPE, "mesh_composer")
    row("to_torch", "replicated tensor without a composer", lambda e: ttnn.to_torch(e.w), VALUE, "composer")
    row("to_torch", "dtype is a string", lambda e: ttnn.to_torch(e.host, dtype="float"), TYPE, "dtype")
    row("to_torch", "torch_rank below the rank", lambda e: ttnn.to_torch(e.host, torch_rank=1), VALUE, "rank")
    row("to_torch", "cq_id out of range", lambda e: ttnn.to_torch(e.a, mesh_composer=comp(e), cq_id=5), VALUE, "cq_id")
    row("to_numpy", "not a tensor", lambda e: ttnn.to_numpy([1, 2]), TYPE, "tensor")
    row("to_numpy", "deallocated", lambda e: ttnn.to_numpy(e.freed, mesh_composer=comp(e)), DEAD, "tensor")
    row(
        "to_numpy",
        "composer dim negative past rank",
        lambda e: ttnn.to_numpy(e.a, mesh_composer=ttnn.ConcatMeshToTensor(e.mesh, dim=-4)),
        VALUE,
        "dim",
    )
    row("to_numpy", "dtype is not a numpy dtype", lambda e: ttnn.to_numpy(e.host, dtype="nonsense"), TYPE, "dtype")
    row("to_layout", "layout is a string", lambda e: ttnn.to_layout(e.a, "ROW_MAJOR"), TYPE, "layout")
    row("to_layout", "bfloat8_b row-major output", lambda e: ttnn.to_layout(e.bfp8, RM, dtype=BFP8), VALUE, "[Ll]ayout")
    row("to_layout", "deallocated", lambda e: ttnn.to_layout(e.freed, RM), DEAD, "tensor")
    row("to_layout", "not a tensor", lambda e: ttnn.to_layout(np.ones(3), RM), TYPE, "tensor")
    row("to_layout", "dtype is a string", lambda e: ttnn.to_layout(e.a, RM, dtype="f32"), TYPE, "dtype")
    row("to_layout", "closed mesh", lambda e: ttnn.to_layout(e.closed, RM), CLOSED, "tensor")
    row("to_dtype", "dtype is a string", lambda e: ttnn.to_dtype(e.host, "bfloat16"), TYPE, "dtype")
    row("to_dtype", "bfloat8_b of a row-major tensor", lambda e: ttnn.to_dtype(e.host, BFP8), VALUE, "[Ll]ayout|TILE")
    row("to_dtype", "not a tensor", lambda e: ttnn.to_dtype(3, BF16), TYPE, "tensor")
    row("typecast", "dtype is a string", lambda e: ttnn.typecast(e.a, "bfloat16"), TYPE, "dtype")
    row("typecast", "row-major to bfloat8_b", lambda e: ttnn.typecast(e.rm, BFP8), VALUE, "TILE")
    row("typecast", "deallocated", lambda e: ttnn.typecast(e.freed, BF16), DEAD, "tensor")
    row(
        "to_memory_config",
        "memory_config is a string",
        lambda e: ttnn.to_memory_config(e.a, "L1"),
        TYPE,
        "memory_config",
    )
    row("to_memory_config", "memory_config missing", lambda e: ttnn.to_memory_config(e.a, None), TYPE, "memory_config")
    row("to_memory_config", "deallocated", lambda e: ttnn.to_memory_config(e.freed, L1_MC), DEAD, "tensor")
    row("to_memory_config", "L1 is full", lambda e: ttnn.to_memory_config(e.a, L1_MC), OOM, "L1")
    row(
        "to_memory_config",
        "shard spec that does not divide",
        lambda e: ttnn.to_memory_config(e.a, e.bad_shard_config),
        VALUE,
        "shard",
    )
    row("clone", "deallocated", lambda e: ttnn.clone(e.freed), DEAD, "input_tensor")
    row("clone", "dtype is a string", lambda e: ttnn.clone(e.a, dtype="f32"), TYPE, "dtype")
    row("clone", "not a tensor", lambda e: ttnn.clone(np.ones(3)), TYPE, "input_tensor")
    row("clone", "L1 is full", lambda e: ttnn.clone(e.a, memory_config=L1_MC), OOM, "L1")
    row("move", "deallocated", lambda e: ttnn.move(e.freed), DEAD, "input_tensor")
    row("move", "memory_config is a string", lambda e: ttnn.move(e.a, "L1"), TYPE, "memory_config")
    row("move", "host tensor", lambda e: ttnn.move(e.host), VALUE, "input_tensor")
    row("reallocate", "deallocated", lambda e: ttnn.reallocate(e.freed), DEAD, "input_tensor")
    row("reallocate", "not a tensor", lambda e: ttnn.reallocate(None), TYPE, "input_tensor")
    row("reallocate", "memory_config is a string", lambda e: ttnn.reallocate(e.a, "L1"), TYPE, "memory_config")
    row("deallocate", "not a tensor", lambda e: ttnn.deallocate(np.ones(3)), TYPE, "(?i)tensor")
    row("deallocate", "a mesh", lambda e: ttnn.deallocate(e.mesh), TYPE, "(?i)tensor")
    row("deallocate", "force is a string", lambda e: ttnn.deallocate(e.victim, force="yes"), TYPE, "force")
    row(
        "copy_host_to_device_tensor",
        "shapes differ",
        lambda e: ttnn.copy_host_to_device_tensor(e.host_other_shape, e.a),
        VALUE,
        "host_tensor",
    )
    row(
        "copy_host_to_device_tensor",
        "host is on device",
        lambda e: ttnn.copy_host_to_device_tensor(e.a, e.a2),
        VALUE,
        "host_tensor",
    )
    row(
        "copy_host_to_device_tensor",
        "device is on host",
        lambda e: ttnn.copy_host_to_device_tensor(e.host, e.host),
        VALUE,
        "device_tensor",
    )
    row(
        "copy_host_to_device_tensor",
        "device deallocated",
        lambda e: ttnn.copy_host_to_device_tensor(e.host_like_a, e.freed),
        DEAD,
        "device_tensor",
    )
    row(
        "copy_host_to_device_tensor",
        "not a tensor",
        lambda e: ttnn.copy_host_to_device_tensor(np.ones(3), e.a),
        TYPE,
        "host_tensor",
    )
    row(
        "copy_host_to_device_tensor",
        "dtypes differ",
        lambda e: ttnn.copy_host_to_device_tensor(e.host_like_a_bf16, e.a),
        VALUE,
        "dtype|host_tensor",
    )
    row(
        "copy_host_to_device_tensor",
        "cq_id out of range",
        lambda e: ttnn.copy_host_to_device_tensor(e.host_like_a, e.a, cq_id=4),
        VALUE,
        "cq_id",
    )
    row(
        "copy_host_to_device_tensor_partial",
        "filter a list",
        lambda e: ttnn.copy_host_to_device_tensor_partial(e.host_like_a, e.a, [ttnn.CoreCoord(0, 0)]),
        TYPE,
        "logical_core_filter",
    )
    row(
        "copy_host_to_device_tensor_partial",
        "interleaved device tensor",
        lambda e: ttnn.copy_host_to_device_tensor_partial(e.host_like_a, e.a, e.grid),
        VALUE,
        "interleaved",
    )
    row(
        "copy_host_to_device_tensor_partial",
        "device deallocated",
        lambda e: ttnn.copy_host_to_device_tensor_partial(e.host_like_a, e.freed, e.grid),
        DEAD,
        "device_tensor",
    )
    row("from_buffer", "no device", lambda e: ttnn.from_buffer([1.0, 2.0], [2], F32, None), TYPE, "device")
    row("from_buffer", "values too few", lambda e: ttnn.from_buffer([1.0], [2], F32, e.mesh), VALUE, "shape")
    row("from_buffer", "a block float", lambda e: ttnn.from_buffer([1.0], [1], BFP8, e.mesh), VALUE, "Unreachable")
    row("from_buffer", "buffer a string", lambda e: ttnn.from_buffer("12", [2], F32, e.mesh), TYPE, "buffer")
    row("tile_size", "dtype a string", lambda e: ttnn.tile_size("bfloat16"), TYPE, "dtype")
    row("element_size", "a block float", lambda e: ttnn.element_size(BFP8), VALUE, "block float")
    row("element_size", "dtype an int", lambda e: ttnn.element_size(0), TYPE, "dtype")
    row("TensorAccessorArgs", "host tensor", lambda e: ttnn.TensorAccessorArgs(e.host), VALUE, "host")
    row("TensorAccessorArgs", "deallocated", lambda e: ttnn.TensorAccessorArgs(e.freed), DEAD, "deallocated")
    row("TensorAccessorArgs", "not a tensor", lambda e: ttnn.TensorAccessorArgs("t"), TYPE, "ttnn.Tensor")
    row(
        "copy_device_to_host_tensor",
        "shapes differ",
        lambda e: ttnn.copy_device_to_host_tensor(e.a, e.host_other_shape),
        VALUE,
        "host_tensor",
    )
    row(
        "copy_device_to_host_tensor",
        "device deallocated",
        lambda e: ttnn.copy_device_to_host_tensor(e.freed, e.host_like_a),
        DEAD,
        "device_tensor",
    )
    row(
        "copy_device_to_host_tensor",
        "host is on device",
        lambda e: ttnn.copy_device_to_host_tensor(e.a, e.a2),
        VALUE,
        "host_tensor",
    )
    row(
        "copy_device_to_host_tensor",
        "not a tensor",
        lambda e: ttnn.copy_device_to_host_tensor(e.a, None),
        TYPE,
        "host_tensor",
    )
    row(
        "copy_device_to_host_tensor",
        "cq_id out of range",
        lambda e: ttnn.copy_device_to_host_tensor(e.a, e.host_like_a, cq_id=-1),
        VALUE,
        "cq_id",
    )

    # -- tensors over the mesh
    row("get_device_tensors", "not a tensor", lambda e: ttnn.get_device_tensors(np.ones(3)), TYPE, "tensor")
    row("get_device_tensors", "deallocated", lambda e: ttnn.get_device_tensors(e.freed), DEAD, "tensor")
    row("get_device_tensors", "closed mesh", lambda e: ttnn.get_device_tensors(e.closed), CLOSED, "tensor")
    row("aggregate_tensor", "composer is a string", lambda e: ttnn.aggregate_tensor(e.a, "concat"), TYPE, "composer")
    row("aggregate_tensor", "not tensors", lambda e: ttnn.aggregate_tensor([1, 2], comp(e)), TYPE, "tensor")
    row("aggregate_tensor", "empty list", lambda e: ttnn.aggregate_tensor([], comp(e)), VALUE, "tensor")
    row(
        "aggregate_tensor",
        "composer dim past the rank",
        lambda e: ttnn.aggregate_tensor(e.a, ttnn.ConcatMeshToTensor(e.mesh, dim=7)),
        VALUE,
        "dim",
    )
    row("combine_device_tensors", "empty list", lambda e: ttnn.combine_device_tensors([]), VALUE, "tensors")
    row(
        "combine_device_tensors",
        "not tensors",
        lambda e: ttnn.combine_device_tensors([1, 2]),
        TYPE,
        "tensors|tensor shard",
    )
    row(
        "combine_device_tensors",
        "two meshes",
        lambda e: ttnn.combine_device_tensors([e.a_dev0, e.other_dev0]),
        VALUE,
        "tensors|tensor shards|mesh",
    )
    row(
        "combine_device_tensors",
        "a host tensor",
        lambda e: ttnn.combine_device_tensors([e.host]),
        VALUE,
        "tensors|host",
    )
    row(
        "combine_device_tensors",
        "deallocated",
        lambda e: ttnn.combine_device_tensors([e.freed]),
        DEAD,
        "tensors|tensor shard",
    )
    row(
        "from_host_shards",
        "count does not match the shape",
        lambda e: ttnn.from_host_shards([e.host] * 3, ttnn.MeshShape(2, 2)),
        VALUE,
        "tensor shards|mesh_shape",
    )
    row(
        "from_host_shards",
        "a device tensor",
        lambda e: ttnn.from_host_shards([e.a, e.a], ttnn.MeshShape(1, 2)),
        VALUE,
        "tensors|host",
    )
    row(
        "from_host_shards",
        "specs differ",
        lambda e: ttnn.from_host_shards([e.host, e.host_other_shape], ttnn.MeshShape(1, 2)),
        VALUE,
        "tensors|spec|shape",
    )
    row(
        "from_host_shards",
        "not tensors",
        lambda e: ttnn.from_host_shards([1, 2], ttnn.MeshShape(1, 2)),
        TYPE,
        "(?i)tensors",
    )
    row("distribute_tensor", "mapper is a string", lambda e: ttnn.distribute_tensor(e.host, "shard"), TYPE, "mapper")
    row("distribute_tensor", "not a tensor", lambda e: ttnn.distribute_tensor(np.ones(4), mapper(e)), TYPE, "tensor")
    row(
        "distribute_tensor",
        "shard dim past the rank",
        lambda e: ttnn.distribute_tensor(e.host, mapper(e, 5)),
        VALUE,
        "dim",
    )
    row(
        "distribute_tensor",
        "device is closed",
        lambda e: ttnn.distribute_tensor(e.host, ttnn.ReplicateTensorToMesh(e.mesh), e.closed_mesh),
        CLOSED,
        "mesh_device|device",
    )
    row("distribute_tensor", "a device tensor", lambda e: ttnn.distribute_tensor(e.a, mapper(e)), VALUE, "host")

    # -- mappers and composers
    for name in ("ShardTensorToMesh", "shard_tensor_to_mesh_mapper"):
        fn = getattr(ttnn, name)
        row(name, "mesh is a string", lambda e, fn=fn: fn("mesh", 0), TYPE, "mesh")
        row(name, "dim is a string", lambda e, fn=fn: fn(e.mesh, "0"), TYPE, "dim")
    for name in ("ReplicateTensorToMesh", "replicate_tensor_to_mesh_mapper"):
        fn = getattr(ttnn, name)
        row(name, "mesh is None", lambda e, fn=fn: fn(None), TYPE, "mesh")
    for name in ("ShardTensor2dMesh", "shard_tensor_to_2d_mesh_mapper"):
        fn = getattr(ttnn, name)
        row(name, "mesh_shape larger than the mesh", lambda e, fn=fn: fn(e.mesh, (4, 4), (0, 1)), VALUE, "mesh_shape")
        row(name, "three dims", lambda e, fn=fn: fn(e.mesh, (2, 4), (0, 1, 2)), VALUE, "dims")
        row(name, "dims is an int", lambda e, fn=fn: fn(e.mesh, (2, 4), 0), TYPE, "dims")
        row(name, "mesh_shape of one value", lambda e, fn=fn: fn(e.mesh, (8,), (0, 1)), VALUE, "mesh_shape")
    for name in ("ConcatMeshToTensor", "concat_mesh_to_tensor_composer"):
        fn = getattr(ttnn, name)
        row(name, "mesh is a string", lambda e, fn=fn: fn("mesh", 0), TYPE, "mesh")
        row(name, "dim is None", lambda e, fn=fn: fn(e.mesh, None), TYPE, "dim")
    row(
        "ConcatMesh2dToTensor",
        "mesh_shape differs from the mesh",
        lambda e: ttnn.ConcatMesh2dToTensor(e.mesh, (4, 4), (0, 1)),
        VALUE,
        "mesh_shape",
    )
    row("ConcatMesh2dToTensor", "one dim", lambda e: ttnn.ConcatMesh2dToTensor(e.mesh, (2, 4), (0,)), VALUE, "dims")
    row(
        "ConcatMesh2dToTensor",
        "same dim twice",
        lambda e: ttnn.ConcatMesh2dToTensor(e.mesh, (2, 4), (1, 1)),
        VALUE,
        "dims",
    )
    row(
        "concat_2d_mesh_to_tensor_composer",
        "dims is a string",
        lambda e: ttnn.concat_2d_mesh_to_tensor_composer(e.mesh, "01"),
        TYPE,
        "dims",
    )
    row("MeshMapperConfig", "placements are strings", lambda e: ttnn.MeshMapperConfig(["shard"]), TYPE, "placements")
    row(
        "MeshMapperConfig",
        "mesh_shape_override is a string",
        lambda e: ttnn.MeshMapperConfig([ttnn.PlacementReplicate()], mesh_shape_override="2x4"),
        TYPE,
        "mesh_shape_override",
    )
    row("create_mesh_mapper", "config is a dict", lambda e: ttnn.create_mesh_mapper(e.mesh, {"dim": 0}), TYPE, "config")
    row(
        "create_mesh_mapper",
        "placements do not match the mesh's rank",
        lambda e: ttnn.create_mesh_mapper(e.mesh, ttnn.MeshMapperConfig([ttnn.PlacementShard(0)] * 3)),
        VALUE,
        "placements",
    )
    row(
        "create_mesh_mapper",
        "override larger than the mesh",
        lambda e: ttnn.create_mesh_mapper(
            e.mesh, ttnn.MeshMapperConfig([ttnn.PlacementShard(0)], mesh_shape_override=ttnn.MeshShape(16))
        ),
        VALUE,
        "mesh_shape_override|distribution shape",
    )
    row(
        "create_mesh_mapper",
        "mesh is a string",
        lambda e: ttnn.create_mesh_mapper("mesh", ttnn.MeshMapperConfig([ttnn.PlacementReplicate()] * 2)),
        TYPE,
        "mesh",
    )
    row("TensorToMesh", "config is None", lambda e: ttnn.TensorToMesh(e.mesh, None), TYPE, "config")
    row("MeshComposerConfig", "dims are strings", lambda e: ttnn.MeshComposerConfig(["0"]), TYPE, "dims")
    row("create_mesh_composer", "config is a list", lambda e: ttnn.create_mesh_composer(e.mesh, [0, 1]), TYPE, "config")
    row(
        "create_mesh_composer",
        "dims do not match the mesh's rank",
        lambda e: ttnn.create_mesh_composer(e.mesh, ttnn.MeshComposerConfig([0, 1, 2])),
        VALUE,
        "dims",
    )
    row("MeshToTensor", "mesh is an int", lambda e: ttnn.MeshToTensor(3, ttnn.MeshComposerConfig([0, 1])), TYPE, "mesh")
    row("PlacementShard", "dim is a string", lambda e: ttnn.PlacementShard("0"), TYPE, "dim")
    row(
        "compute_distribution_to_mesh_mapping",
        "distribution larger than the mesh",
        lambda e: ttnn.compute_distribution_to_mesh_mapping(ttnn.MeshShape(16), e.mesh.shape),
        VALUE,
        "distribution",
    )
    row("distribute", "not a mapper", lambda e: ttnn.distribute("shard").__enter__(), TYPE, "mapper")

    # -- data movement and other ops
    row("reshape", "shape holds strings", lambda e: ttnn.reshape(e.a, "ab"), TYPE, "shape")
    row("reshape", "volume differs", lambda e: ttnn.reshape(e.a, (5, 5)), VALUE, "shape")
    row("reshape", "two -1", lambda e: ttnn.reshape(e.a, (-1, -1)), VALUE, "shape")
    row("reshape", "negative dim", lambda e: ttnn.reshape(e.a, (-2, 60)), VALUE, "shape")
    row("reshape", "not a tensor", lambda e: ttnn.reshape([1, 2], (2,)), TYPE, "tensor")
    row("reshape", "deallocated", lambda e: ttnn.reshape(e.freed, (120,)), DEAD, "tensor")
    row("reshape", "closed mesh", lambda e: ttnn.reshape(e.closed, (120,)), CLOSED, "tensor")
    row("Tensor.reshape", "volume differs", lambda e: e.a.reshape(7, 7), VALUE, "shape")
    row("Tensor.reshape", "float dims", lambda e: e.a.reshape(1.5, 80), TYPE, "shape")
    row("permute", "not a permutation", lambda e: ttnn.permute(e.a, (0, 0, 1)), VALUE, "dims")
    row("permute", "too few dims", lambda e: ttnn.permute(e.a, (1, 0)), VALUE, "dims")
    row("permute", "dims out of range", lambda e: ttnn.permute(e.a, (0, 1, 3)), VALUE, "dims")
    row("permute", "dims is an int", lambda e: ttnn.permute(e.a, 1), TYPE, "dims")
    row("permute", "deallocated", lambda e: ttnn.permute(e.freed, (0, 2, 1)), DEAD, "input_tensor")
    row("transpose", "dim0 out of range", lambda e: ttnn.transpose(e.a, 3, 0), VALUE, "dim")
    row("transpose", "dim1 is a string", lambda e: ttnn.transpose(e.a, 0, "1"), TYPE, "dim")
    row("transpose", "host tensor", lambda e: ttnn.transpose(e.host, 0, 1), VALUE, "input_tensor")
    row("slice", "wrong number of starts", lambda e: ttnn.slice(e.a, [0, 0], [1, 1]), VALUE, "starts|slice_start")
    row("slice", "step zero", lambda e: ttnn.slice(e.a, [0, 0, 0], [1, 3, 40], [1, 1, 0]), VALUE, "step")
    row("slice", "starts are strings", lambda e: ttnn.slice(e.a, ["0"] * 3, [1, 3, 40]), TYPE, "slice_start|starts")
    row("slice", "deallocated", lambda e: ttnn.slice(e.freed, [0, 0, 0], [1, 1, 1]), DEAD, "input_tensor")
    row("concat", "one tensor is a list", lambda e: ttnn.concat([e.a, [1]], dim=0), TYPE, "input_tensors")
    row("concat", "empty list", lambda e: ttnn.concat([], dim=0), VALUE, "input_tensors")
    row("concat", "dim out of range", lambda e: ttnn.concat([e.a, e.a], dim=3), VALUE, "dim")
    row("concat", "shapes differ", lambda e: ttnn.concat([e.a, e.b], dim=0), VALUE, "input_tensors")
    row("concat", "two meshes", lambda e: ttnn.concat([e.a, e.other], dim=0), WRONG_MESH, "input_tensors")
    row("concat", "dtypes differ", lambda e: ttnn.concat([e.a, e.a_bf16], dim=0), VALUE, "input_tensors|dtype")
    row("concat", "not a list", lambda e: ttnn.concat(e.a, dim=0), TYPE, "input_tensors")
    # (a shorter repeat_dims repeats the trailing dims and a 0 empties a dim, as ttnn: not bad input)
    row("repeat", "empty repeat_dims", lambda e: ttnn.repeat(e.a, ()), VALUE, "repeat_dims")
    row("repeat", "negative", lambda e: ttnn.repeat(e.a, (1, -1, 1)), VALUE, "repeat_dims")
    row("repeat", "strings", lambda e: ttnn.repeat(e.a, ("1", "1", "1")), TYPE, "repeat_dims")
    row("repeat", "absurd", lambda e: ttnn.repeat(e.a, (1 << 20, 1 << 20, 1)), OOM, "DRAM")
    row("roll", "shifts and dims differ in length", lambda e: ttnn.roll(e.a, [1, 2], [0]), VALUE, "same length")
    row("roll", "dim past the rank", lambda e: ttnn.roll(e.a, 1, 3), VALUE, "Invalid dimension")
    row("roll", "a list of shifts without dims", lambda e: ttnn.roll(e.a, [1]), TYPE, "shifts")
    row("expand", "a dim not of size 1", lambda e: ttnn.expand(e.a, (1, 6, 40)), VALUE, "Only size 1")
    row("expand", "fewer dims", lambda e: ttnn.expand(e.a, (3, 40)), VALUE, "Only size 1")
    row("expand", "strings", lambda e: ttnn.expand(e.a, ("1", "3", "40")), TYPE, "output_shape")
    row("expand", "absurd", lambda e: ttnn.expand(e.a, (1 << 24, 3, 40)), OOM, "DRAM")
    row("pad", "negative padding", lambda e: ttnn.pad(e.a, [(0, 0), (0, 0), (-1, 0)], 0.0), VALUE, "padding")
    row("pad", "wrong rank", lambda e: ttnn.pad(e.a, [(0, 1)] * 4, 0.0), VALUE, "padding")
    row("pad", "value is a string", lambda e: ttnn.pad(e.a, [(0, 0), (0, 0), (0, 8)], "0"), TYPE, "value")
    row("pad", "padding is an int", lambda e: ttnn.pad(e.a, 3, 0.0), TYPE, "padding")
    row("squeeze", "dim out of range", lambda e: ttnn.squeeze(e.a, 3), VALUE, "dim")
    row("squeeze", "dim is a string", lambda e: ttnn.squeeze(e.a, "0"), TYPE, "dim")
    row("unsqueeze", "dim out of range", lambda e: ttnn.unsqueeze(e.a, 5), VALUE, "dim")
    row("unsqueeze", "not a tensor", lambda e: ttnn.unsqueeze(np.ones(3), 0), TYPE, "input_tensor")
    row("where", "predicate not a tensor", lambda e: ttnn.where(True, e.a, e.a), TYPE, "predicate")
    row("where", "shapes do not broadcast", lambda e: ttnn.where(e.a, e.b, e.a), VALUE, "true_value|predicate")
    row("where", "false_value on another mesh", lambda e: ttnn.where(e.a, e.a, e.other), WRONG_MESH, "false_value")
    row("where", "true_value is a string", lambda e: ttnn.where(e.a, "1", e.a), TYPE, "true_value")
    row("softmax", "dim out of range", lambda e: ttnn.softmax(e.a, dim=3), VALUE, "dim")
    row("softmax", "dim is a string", lambda e: ttnn.softmax(e.a, dim="last"), TYPE, "dim")
    row("softmax", "deallocated", lambda e: ttnn.softmax(e.freed), DEAD, "input_tensor")
    row("softmax", "integer input", lambda e: ttnn.softmax(e.ids), TYPE, "input_tensor")
    for name in ("layer_norm", "rms_norm"):
        fn = getattr(ttnn, name)
        row(name, "weight of the wrong width", lambda e, fn=fn: fn(e.a, weight=e.row7), VALUE, "weight")
        row(name, "bias of the wrong width", lambda e, fn=fn: fn(e.a, bias=e.row7), VALUE, "bias")
        row(name, "epsilon is a string", lambda e, fn=fn: fn(e.a, epsilon="1e-5"), TYPE, "epsilon")
        row(name, "negative epsilon", lambda e, fn=fn: fn(e.a, epsilon=-1.0), VALUE, "epsilon")
        row(
            name,
            "residual of another shape",
            lambda e, fn=fn: fn(e.a, residual_input_tensor=e.b),
            VALUE,
            "residual_input_tensor",
        )
        row(name, "weight on another mesh", lambda e, fn=fn: fn(e.a, weight=e.other_row40), WRONG_MESH, "weight")
        row(name, "weight is numpy", lambda e, fn=fn: fn(e.a, weight=np.ones(40)), TYPE, "weight")
        row(name, "deallocated", lambda e, fn=fn: fn(e.freed), DEAD, "input_tensor")
    for name in ("matmul", "linear"):
        fn = getattr(ttnn, name)
        row(name, "inner dims differ", lambda e, fn=fn: fn(e.a, e.b), VALUE, "input_tensor_a .*input_tensor_b")
        row(name, "b on another mesh", lambda e, fn=fn: fn(e.a, e.other_w), WRONG_MESH, "input_tensor_b")
        row(name, "b is numpy", lambda e, fn=fn: fn(e.a, np.ones((40, 24))), TYPE, "input_tensor_b")
        row(name, "a is a rank-0 list", lambda e, fn=fn: fn(3.0, e.w), TYPE, "input_tensor_a")
        row(name, "transpose_b is an int", lambda e, fn=fn: fn(e.a, e.w, transpose_b=1), TYPE, "transpose")
        row(name, "dtype is a string", lambda e, fn=fn: fn(e.a, e.w, dtype="bf16"), TYPE, "dtype")
        row(name, "a deallocated", lambda e, fn=fn: fn(e.freed, e.w), DEAD, "input_tensor_a")
        row(name, "b closed", lambda e, fn=fn: fn(e.a, e.closed), CLOSED, "input_tensor_b")
        row(name, "rank-1 operand", lambda e, fn=fn: fn(e.a, e.row7), VALUE, "input_tensor_b|inner")
        row(name, "L1 is full", lambda e, fn=fn: fn(e.a, e.w, memory_config=L1_MC), OOM, "L1")
        row(name, "queue_id out of range", lambda e, fn=fn: fn(e.a, e.w, queue_id=3), VALUE, "queue_id")
        row(name, "queue_id is a string", lambda e, fn=fn: fn(e.a, e.w, queue_id="0"), TYPE, "queue_id")
        row(
            name,
            "output of another shape",
            lambda e, fn=fn: fn(e.a, e.w, optional_output_tensor=e.a),
            VALUE,
            "output_tensor",
        )
        row(
            name,
            "output is numpy",
            lambda e, fn=fn: fn(e.a, e.w, optional_output_tensor=np.ones(3)),
            TYPE,
            "output_tensor",
        )
    row("linear", "bias of the wrong width", lambda e: ttnn.linear(e.a, e.w, bias=e.row7), VALUE, "bias")
    row("linear", "activation unknown", lambda e: ttnn.linear(e.a, e.w, activation="swish"), VALUE, "activation")
    row("linear", "bias is numpy", lambda e: ttnn.linear(e.a, e.w, bias=np.ones(24)), TYPE, "bias")
    row("embedding", "float ids", lambda e: ttnn.embedding(e.a, e.table), TYPE, "input_tensor")
    row("embedding", "ids out of range", lambda e: ttnn.embedding(e.ids_bad, e.table), VALUE, "input_tensor")
    row("embedding", "weight is numpy", lambda e: ttnn.embedding(e.ids, np.ones((50, 48))), TYPE, "weight")
    row("embedding", "weight of rank 1", lambda e: ttnn.embedding(e.ids, e.row7), VALUE, "weight")
    row("embedding", "weight on another mesh", lambda e: ttnn.embedding(e.ids, e.other_table), WRONG_MESH, "weight")
    row("embedding", "layout is a string", lambda e: ttnn.embedding(e.ids, e.table, layout="TILE"), TYPE, "layout")
    row(
        "embedding", "pad_token is a string", lambda e: ttnn.embedding(e.ids, e.table, pad_token="0"), TYPE, "pad_token"
    )
    row("argmax", "keepdim is a string", lambda e: ttnn.argmax(e.a, dim=2, keepdim="yes"), TYPE, "keepdim")
    row("max", "repeated dims", lambda e: ttnn.max(e.a, dim=[1, -2]), VALUE, "dims")

    # -- collectives
    for name in ("all_gather", "reduce_scatter"):
        fn = getattr(ttnn, name)
        row(name, "dim out of range", lambda e, fn=fn: fn(e.a, dim=3), VALUE, "dim")
        row(name, "dim is a string", lambda e, fn=fn: fn(e.a, dim="0"), TYPE, "dim")
        row(
            name, "cluster_axis 2 on a 2-D mesh", lambda e, fn=fn: fn(e.a, dim=0, cluster_axis=2), VALUE, "cluster_axis"
        )
        row(name, "cluster_axis is a string", lambda e, fn=fn: fn(e.a, dim=0, cluster_axis="0"), TYPE, "cluster_axis")
        row(name, "host tensor", lambda e, fn=fn: fn(e.host, dim=0), VALUE, "input_tensor")
        row(name, "deallocated", lambda e, fn=fn: fn(e.freed, dim=0), DEAD, "input_tensor")
        row(name, "closed mesh", lambda e, fn=fn: fn(e.closed, dim=0), CLOSED, "input_tensor")
        row(
            name,
            "mesh_device of another mesh",
            lambda e, fn=fn: fn(e.a, dim=0, mesh_device=e.other_mesh),
            WRONG_MESH,
            "mesh_device",
        )
        row(name, "topology is a string", lambda e, fn=fn: fn(e.a, dim=0, topology="ring"), TYPE, "topology")
        row(name, "num_links zero", lambda e, fn=fn: fn(e.a, dim=0, num_links=0), VALUE, "num_links")
        row(
            name,
            "memory_config is a string",
            lambda e, fn=fn: fn(e.a, dim=0, memory_config="L1"),
            TYPE,
            "memory_config",
        )
    row("all_gather", "L1 is full", lambda e: ttnn.all_gather(e.a, dim=0, memory_config=L1_MC), OOM, "L1")
    row("reduce_scatter", "dim not divisible by the devices", lambda e: ttnn.reduce_scatter(e.a, dim=1), VALUE, "dim")
    row("all_reduce", "cluster_axis 3", lambda e: ttnn.all_reduce(e.a, cluster_axis=3), VALUE, "cluster_axis")
    row("all_reduce", "host tensor", lambda e: ttnn.all_reduce(e.host), VALUE, "input_tensor")
    row("all_reduce", "deallocated", lambda e: ttnn.all_reduce(e.freed), DEAD, "input_tensor")
    row("all_reduce", "not a tensor", lambda e: ttnn.all_reduce(np.ones(4)), TYPE, "input_tensor")
    row(
        "all_reduce",
        "mesh_device of another mesh",
        lambda e: ttnn.all_reduce(e.a, mesh_device=e.other_mesh),
        WRONG_MESH,
        "mesh_device",
    )
    row("all_reduce", "topology is an int", lambda e: ttnn.all_reduce(e.a, topology=1), TYPE, "topology")
    row("all_reduce", "L1 is full", lambda e: ttnn.all_reduce(e.a, memory_config=L1_MC), OOM, "L1")

    # -- files
    row("dump_tensor", "not a tensor", lambda e: ttnn.dump_tensor(e.tmp / "x.tensorbin", np.ones(3)), TYPE, "tensor")
    row("dump_tensor", "deallocated", lambda e: ttnn.dump_tensor(e.tmp / "x.tensorbin", e.freed), DEAD, "tensor")
    row("dump_tensor", "file_name is an int", lambda e: ttnn.dump_tensor(3, e.host), TYPE, "file_name")
    row(
        "dump_tensor",
        "directory missing",
        lambda e: ttnn.dump_tensor(e.tmp / "no" / "x.tensorbin", e.host),
        ttnn.TensorFileError,
        "x.tensorbin",
    )
    row(
        "load_tensor",
        "missing file",
        lambda e: ttnn.load_tensor(e.tmp / "missing.tensorbin"),
        ttnn.TensorFileError,
        "missing.tensorbin",
    )
    row(
        "load_tensor",
        "not a tensor file",
        lambda e: ttnn.load_tensor(e.garbage),
        ttnn.TensorFileError,
        "garbage.tensorbin",
    )
    row("load_tensor", "truncated file", lambda e: ttnn.load_tensor(e.truncated), ttnn.TensorFileError, "truncated")
    row("load_tensor", "file_name is a list", lambda e: ttnn.load_tensor(["x"]), TYPE, "file_name")
    row(
        "load_tensor",
        "device is closed",
        lambda e: ttnn.load_tensor(e.good_file, device=e.closed_mesh),
        CLOSED,
        "device",
    )
    row("load_tensor", "device is a string", lambda e: ttnn.load_tensor(e.good_file, device="mesh"), TYPE, "device")

    # -- meshes
    row(
        "open_mesh_device",
        "larger than the system",
        lambda e: ttnn.open_mesh_device(ttnn.MeshShape(4, 4), system="t3k"),
        VALUE,
        "4x4|mesh",
    )
    row(
        "open_mesh_device",
        "mesh_type a string",
        lambda e: ttnn.open_mesh_device(ttnn.MeshShape(1, 2), mesh_type="Ring", system="t3k"),
        TYPE,
        "mesh_type",
    )
    row(
        "open_mesh_device",
        "negative l1_small_size",
        lambda e: ttnn.open_mesh_device(ttnn.MeshShape(1, 1), l1_small_size=-1, system="t3k"),
        VALUE,
        "l1_small_size",
    )
    row(
        "open_mesh_device",
        "absurd l1_small_size",
        lambda e: ttnn.open_mesh_device(ttnn.MeshShape(1, 1), l1_small_size=1 << 40, system="t3k"),
        VALUE,
        "l1_small_size",
    )
    row(
        "open_mesh_device",
        "absurd trace_region_size",
        lambda e: ttnn.open_mesh_device(ttnn.MeshShape(1, 1), trace_region_size=1 << 40, system="t3k"),
        VALUE,
        "trace_region_size",
    )
    row(
        "open_mesh_device",
        "three command queues",
        lambda e: ttnn.open_mesh_device(ttnn.MeshShape(1, 1), num_command_queues=3, system="t3k"),
        VALUE,
        "num_command_queues",
    )
    row(
        "open_mesh_device",
        "unknown system",
        lambda e: ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="dgx"),
        VALUE,
        "system",
    )
    row(
        "open_mesh_device",
        "mesh_shape is a string",
        lambda e: ttnn.open_mesh_device("2x4", system="t3k"),
        TYPE,
        "mesh_shape",
    )
    row(
        "open_mesh_device",
        "l1_small_size is a float",
        lambda e: ttnn.open_mesh_device(ttnn.MeshShape(1, 1), l1_small_size=1.5, system="t3k"),
        TYPE,
        "l1_small_size",
    )
    row(
        "open_mesh_device",
        "offset outside the system",
        lambda e: ttnn.open_mesh_device(ttnn.MeshShape(2, 4), offset=ttnn.MeshCoordinate(1, 0), system="t3k"),
        VALUE,
        "offset",
    )
    row(
        "open_mesh_device",
        "zero-size mesh",
        lambda e: ttnn.open_mesh_device(ttnn.MeshShape(0, 4), system="t3k"),
        VALUE,
        "mesh_shape|0x4",
    )
    row("close_mesh_device", "not a mesh", lambda e: ttnn.close_mesh_device("mesh"), TYPE, "mesh_device|MeshDevice")
    row("MeshShape", "negative", lambda e: ttnn.MeshShape(-1, 2), VALUE, "MeshShape")
    row("MeshShape", "strings", lambda e: ttnn.MeshShape("a"), TYPE, "MeshShape")
    row("MeshShape", "floats", lambda e: ttnn.MeshShape(2.0, 4.0), TYPE, "MeshShape")
    row("MeshCoordinate", "negative", lambda e: ttnn.MeshCoordinate(-1, 0), VALUE, "MeshCoordinate")
    row("MeshCoordinate", "strings", lambda e: ttnn.MeshCoordinate("0", "1"), TYPE, "MeshCoordinate")
    row(
        "MeshCoordinateRange",
        "end before start",
        lambda e: ttnn.MeshCoordinateRange(ttnn.MeshCoordinate(1, 1), ttnn.MeshCoordinate(0, 0)),
        VALUE,
        "start|end",
    )
    row(
        "MeshCoordinateRange",
        "ranks differ",
        lambda e: ttnn.MeshCoordinateRange(ttnn.MeshCoordinate(0, 0), ttnn.MeshCoordinate(1, 1, 1)),
        VALUE,
        "dimensions",
    )
    row(
        "MeshCoordinateRangeSet",
        "holds a coordinate",
        lambda e: ttnn.MeshCoordinateRangeSet([ttnn.MeshCoordinate(0, 0)]),
        TYPE,
        "MeshCoordinateRange",
    )
    row(
        "MeshDevice.create_submesh",
        "larger than the mesh",
        lambda e: e.mesh.create_submesh(ttnn.MeshShape(4, 4)),
        VALUE,
        "submesh|shape",
    )
    row(
        "MeshDevice.create_submesh",
        "offset pushes it out",
        lambda e: e.mesh.create_submesh(ttnn.MeshShape(2, 2), ttnn.MeshCoordinate(1, 3)),
        VALUE,
        "offset",
    )
    row(
        "MeshDevice.create_submeshes",
        "does not divide the mesh",
        lambda e: e.mesh.create_submeshes(ttnn.MeshShape(2, 3)),
        VALUE,
        "submesh|shape",
    )
    row(
        "MeshDevice.reshape",
        "device count differs",
        lambda e: e.mesh.reshape(ttnn.MeshShape(3, 3)),
        VALUE,
        "shape|devices",
    )
    row("MeshDevice.reshape", "shape is a string", lambda e: e.mesh.reshape("4x2"), TYPE, "MeshShape|shape")
    row("MeshDevice.mesh_command_queue", "cq_id out of range", lambda e: e.mesh.mesh_command_queue(2), VALUE, "cq_id")
    row("MeshDevice.mesh_command_queue", "closed mesh", lambda e: e.closed_mesh.mesh_command_queue(0), CLOSED, "mesh")
    row(
        "get_memory_view",
        "buffer_type is a string",
        lambda e: ttnn.get_memory_view(e.mesh, "DRAM"),
        TYPE,
        "buffer_type",
    )
    row(
        "get_memory_view",
        "mesh is a tensor",
        lambda e: ttnn.get_memory_view(e.a, ttnn.BufferType.DRAM),
        TYPE,
        "mesh_device",
    )
    row(
        "get_memory_view",
        "closed mesh",
        lambda e: ttnn.get_memory_view(e.closed_mesh, ttnn.BufferType.DRAM),
        CLOSED,
        "mesh",
    )
    row(
        "MeshDevice.get_memory_view",
        "coordinate outside the mesh",
        lambda e: e.mesh.get_memory_view(ttnn.BufferType.DRAM, ttnn.MeshCoordinate(2, 0)),
        VALUE,
        "Coordinate",
    )
    row("memory_report", "not a mesh", lambda e: ttnn.memory_report("mesh"), TYPE, "mesh_device")
    row("memory_report", "closed mesh", lambda e: ttnn.memory_report(e.closed_mesh), CLOSED, "mesh")
    row("dump_device_memory_state", "not a mesh", lambda e: ttnn.dump_device_memory_state(None), TYPE, "mesh_device")
    row(
        "dump_device_memory_state",
        "prefix is an int",
        lambda e: ttnn.dump_device_memory_state(e.mesh, prefix=3),
        TYPE,
        "prefix",
    )
    row("plot_memory", "not a mesh", lambda e: ttnn.plot_memory(3, e.tmp / "m.png"), TYPE, "mesh_device")
    row("plot_memory", "path is an int", lambda e: ttnn.plot_memory(e.mesh, 3), TYPE, "path")
    row("planning", "active is a str", lambda e: ttnn.planning("yes"), TYPE, "active")
    row(
        "open_mesh_device",
        "execute is a str",
        lambda e: ttnn.open_mesh_device(ttnn.MeshShape(1, 1), execute="no", system="t3k"),
        TYPE,
        "execute",
    )
    row("synchronize_device", "not a mesh", lambda e: ttnn.synchronize_device("mesh"), TYPE, "device")
    row("synchronize_device", "cq_id out of range", lambda e: ttnn.synchronize_device(e.mesh, cq_id=2), VALUE, "cq_id")
    row("synchronize_device", "closed mesh", lambda e: ttnn.synchronize_device(e.closed_mesh), CLOSED, "mesh")
    row("event_synchronize", "not an event", lambda e: ttnn.event_synchronize("event"), TYPE, "[Ee]vent")
    row("event_query", "not an event", lambda e: ttnn.event_query(None), TYPE, "event")
    row("system_spec", "unknown system", lambda e: ttnn.system_spec("nope"), VALUE, "system")
    row("system_spec", "system is an int", lambda e: ttnn.system_spec(8), TYPE, "system|name")
    row("set_fabric_config", "a string", lambda e: ttnn.set_fabric_config("x"), TYPE, "set_fabric_config|config")
    row("set_rank_rows", "not a mapping", lambda e: ttnn.set_rank_rows([1, 2]), TYPE, "mapping")
    row("set_rank_rows", "negative rows", lambda e: ttnn.set_rank_rows({0: (-1, 2)}), VALUE, "mapping|rows")

    # -- mesh buffers and workloads
    dram_local = ttnn.DeviceLocalBufferConfig(page_size=1024, buffer_type=ttnn.BufferType.DRAM)
    row(
        "MeshBuffer.create",
        "config is a dict",
        lambda e: ttnn.MeshBuffer.create({"size": 1024}, dram_local, e.mesh),
        TYPE,
        "config",
    )
    row(
        "MeshBuffer.create",
        "local config is None",
        lambda e: ttnn.MeshBuffer.create(ttnn.ReplicatedBufferConfig(1024), None, e.mesh),
        TYPE,
        "device_local_config|local",
    )
    row(
        "MeshBuffer.create",
        "mesh is closed",
        lambda e: ttnn.MeshBuffer.create(ttnn.ReplicatedBufferConfig(1024), dram_local, e.closed_mesh),
        CLOSED,
        "mesh",
    )
    row(
        "MeshBuffer.create",
        "absurd size",
        lambda e: ttnn.MeshBuffer.create(ttnn.ReplicatedBufferConfig(1 << 40), dram_local, e.mesh),
        OOM,
        "DRAM",
    )
    row(
        "MeshBuffer.create",
        "size not a multiple of the page",
        lambda e: ttnn.MeshBuffer.create(ttnn.ReplicatedBufferConfig(1000), dram_local, e.mesh),
        VALUE,
        "page_size|size",
    )
    row(
        "MeshBuffer.create",
        "address not allocated",
        lambda e: ttnn.MeshBuffer.create(ttnn.ReplicatedBufferConfig(1024), dram_local, e.mesh, address=-64),
        VALUE,
        "address",
    )
    row(
        "MeshBuffer.create",
        "sharded shape does not cover the size",
        lambda e: ttnn.MeshBuffer.create(ttnn.ShardedBufferConfig(4096, (64, 48), (32, 48)), dram_local, e.mesh),
        VALUE,
        "global|shard",
    )
    row(
        "MeshBuffer.create",
        "shard larger than the buffer",
        lambda e: ttnn.MeshBuffer.create(ttnn.ShardedBufferConfig(64 * 64, (32, 32), (64, 64)), dram_local, e.mesh),
        VALUE,
        "shard",
    )
    row("ReplicatedBufferConfig", "negative size", lambda e: ttnn.ReplicatedBufferConfig(-1), VALUE, "size")
    row("ReplicatedBufferConfig", "size is a string", lambda e: ttnn.ReplicatedBufferConfig("1024"), TYPE, "size")
    row(
        "ShardedBufferConfig",
        "negative global_size",
        lambda e: ttnn.ShardedBufferConfig(-1, (32, 32), (32, 32)),
        VALUE,
        "global_size",
    )
    row(
        "ShardedBufferConfig",
        "shard_shape of one value",
        lambda e: ttnn.ShardedBufferConfig(1024, (32, 32), (32,)),
        VALUE,
        "shard_shape",
    )
    row(
        "ShardedBufferConfig",
        "orientation is a string",
        lambda e: ttnn.ShardedBufferConfig(1024, (32, 32), (32, 32), "row"),
        TYPE,
        "shard_orientation",
    )
    row(
        "DeviceLocalBufferConfig",
        "page_size zero",
        lambda e: ttnn.DeviceLocalBufferConfig(page_size=0),
        VALUE,
        "page_size",
    )
    row(
        "DeviceLocalBufferConfig",
        "negative page_size",
        lambda e: ttnn.DeviceLocalBufferConfig(page_size=-4),
        VALUE,
        "page_size",
    )
    row(
        "DeviceLocalBufferConfig",
        "buffer_type is a string",
        lambda e: ttnn.DeviceLocalBufferConfig(page_size=1024, buffer_type="DRAM"),
        TYPE,
        "buffer_type",
    )
    row(
        "MeshBuffer.get_device_buffer",
        "coordinate outside the mesh",
        lambda e: e.buffer.get_device_buffer(ttnn.MeshCoordinate(5, 5)),
        VALUE,
        "Coordinate",
    )
    row(
        "MeshBuffer.get_device_buffer",
        "coordinate of rank 3",
        lambda e: e.buffer.get_device_buffer(ttnn.MeshCoordinate(0, 0, 0)),
        VALUE,
        "coord",
    )
    row(
        "MeshCommandQueue.enqueue_write_shards",
        "coordinate outside the mesh",
        lambda e: e.mesh.mesh_command_queue(0).enqueue_write_shards(
            e.buffer, [ttnn.ShardDataTransfer(ttnn.MeshCoordinate(9, 9), np.zeros(1024, np.uint8))], blocking=True
        ),
        VALUE,
        "Coordinate",
    )
    row(
        "MeshCommandQueue.enqueue_write_shards",
        "buffer deallocated",
        lambda e: e.mesh.mesh_command_queue(0).enqueue_write_shards(
            e.freed_buffer, [ttnn.ShardDataTransfer(ttnn.MeshCoordinate(0, 0), np.zeros(1024, np.uint8))], blocking=True
        ),
        DEAD,
        "buffer|MeshBuffer",
    )
    row(
        "MeshCommandQueue.enqueue_read_shards",
        "region past the end",
        lambda e: e.mesh.mesh_command_queue(0).enqueue_read_shards(
            [
                ttnn.ShardDataTransfer(
                    ttnn.MeshCoordinate(0, 0), np.zeros(2048, np.uint8), ttnn.BufferRegion(1024, 2048)
                )
            ],
            e.buffer,
            blocking=True,
        ),
        VALUE,
        "region",
    )
    row(
        "MeshCommandQueue.enqueue_read_shards",
        "buffer on another mesh",
        lambda e: e.mesh.mesh_command_queue(0).enqueue_read_shards(
            [ttnn.ShardDataTransfer(ttnn.MeshCoordinate(0, 0), np.zeros(1024, np.uint8))], e.other_buffer, blocking=True
        ),
        WRONG_MESH,
        "buffer|mesh",
    )
    row(
        "MeshCommandQueue.wait_for_event",
        "not an event",
        lambda e: e.mesh.mesh_command_queue(0).enqueue_wait_for_event("e"),
        TYPE,
        "[Ee]vent",
    )
    row(
        "ShardDataTransfer",
        "region is a tuple",
        lambda e: ttnn.ShardDataTransfer(ttnn.MeshCoordinate(0, 0), np.zeros(4, np.uint8), (0, 4)),
        TYPE,
        "region",
    )
    row("DistributedHostBuffer", "shape is a string", lambda e: ttnn.DistributedHostBuffer("2x4"), TYPE, "shape")
    row("BufferRegion", "negative offset", lambda e: ttnn.BufferRegion(-1, 16), VALUE, "BufferRegion")
    row("BufferRegion", "size is a string", lambda e: ttnn.BufferRegion(0, "16"), TYPE, "BufferRegion")
    row("HostBuffer", "data is a list", lambda e: ttnn.HostBuffer([1, 2]), TYPE, "HostBuffer")
    row("Program", "kernel is not callable", lambda e: ttnn.Program("kernel"), TYPE, "kernel")
    row("Program", "buffers are not MeshBuffers", lambda e: ttnn.Program(lambda ctx: None, [1]), TYPE, "buffers")
    row(
        "MeshWorkload",
        "program is a function",
        lambda e: ttnn.MeshWorkload(lambda ctx: None, e.mesh.full_range),
        TYPE,
        "program",
    )
    row(
        "MeshWorkload.add_program",
        "range outside the mesh",
        lambda e: e.mesh.mesh_command_queue(0).enqueue_mesh_workload(
            ttnn.MeshWorkload(
                ttnn.Program(lambda ctx: None, [e.buffer]), ttnn.MeshCoordinateRange(ttnn.MeshShape(4, 4))
            ),
            blocking=True,
        ),
        VALUE,
        "range|coord",
    )

    # -- specs and configs
    row("Shape", "negative dim", lambda e: ttnn.Shape([2, -1]), VALUE, "Shape|shape")
    row("Shape", "strings", lambda e: ttnn.Shape(["a"]), TYPE, "Shape|shape")
    row("Tile", "unsupported shape", lambda e: ttnn.Tile((3, 32)), VALUE, "tile")
    row("Tile", "shape is an int", lambda e: ttnn.Tile(32), TYPE, "tile_shape")
    row("TensorSpec", "dtype is a string", lambda e: ttnn.TensorSpec((32, 32), "bf16"), TYPE, "dtype")
    row("TensorSpec", "bfloat8_b row-major", lambda e: ttnn.TensorSpec((32, 32), BFP8, RM), VALUE, "[Ll]ayout")
    row("TensorSpec", "negative dim", lambda e: ttnn.TensorSpec((32, -32), F32), VALUE, "[Ss]hape")
    row("TensorSpec", "layout is a string", lambda e: ttnn.TensorSpec((32, 32), F32, "TILE"), TYPE, "layout")
    row("MemoryConfig", "buffer_type is a string", lambda e: ttnn.MemoryConfig(buffer_type="L1"), TYPE, "buffer_type")
    row("MemoryConfig", "memory_layout is a string", lambda e: ttnn.MemoryConfig("INTERLEAVED"), TYPE, "memory_layout")
    row(
        "MemoryConfig",
        "sharded without a shard spec",
        lambda e: ttnn.allocate_tensor_on_device(
            [64, 64], F32, TILE, e.mesh, ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1)
        ),
        VALUE,
        "shard spec|shard_spec",
    )
    row(
        "MemoryConfig",
        "interleaved with a shard spec",
        lambda e: ttnn.MemoryConfig(ttnn.TensorMemoryLayout.INTERLEAVED, ttnn.BufferType.L1, e.shard_spec),
        VALUE,
        "shard_spec",
    )
    row("ShardSpec", "grid is a CoreRange list", lambda e: ttnn.ShardSpec("grid", (32, 32)), TYPE, "grid")
    row("ShardSpec", "shape of one value", lambda e: ttnn.ShardSpec(e.grid, (32,)), VALUE, "shape")
    row("ShardSpec", "negative shape", lambda e: ttnn.ShardSpec(e.grid, (32, -32)), VALUE, "shape")
    row("NdShardSpec", "a zero in the shard shape", lambda e: ttnn.NdShardSpec([0, 32], e.grid), VALUE, "shard_shape")
    row("NdShardSpec", "grid is a CoreRange", lambda e: ttnn.NdShardSpec([32, 32], "grid"), TYPE, "grid")
    row(
        "create_layer_norm_reciprocals",
        "width of zero",
        lambda e: ttnn.create_layer_norm_reciprocals(e.mesh, e.grid, 0),
        VALUE,
        "width",
    )
    row("CoreCoord", "negative", lambda e: ttnn.CoreCoord(-1, 0), VALUE, "x|CoreCoord")
    row("CoreCoord", "strings", lambda e: ttnn.CoreCoord("0", 0), TYPE, "x|CoreCoord")
    row("CoreGrid", "zero", lambda e: ttnn.CoreGrid(x=0, y=2), VALUE, "x|CoreGrid")
    row(
        "CoreRange",
        "end before start",
        lambda e: ttnn.CoreRange(ttnn.CoreCoord(2, 2), ttnn.CoreCoord(1, 1)),
        VALUE,
        "start|end",
    )
    row(
        "CoreRange",
        "start is a triple",
        lambda e: ttnn.CoreRange((0, 0, 0), ttnn.CoreCoord(1, 1)),
        TYPE,
        "CoreRange|start",
    )
    row(
        "CoreRangeSet",
        "overlapping ranges",
        lambda e: ttnn.CoreRangeSet(
            [
                ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 1)),
                ttnn.CoreRange(ttnn.CoreCoord(1, 1), ttnn.CoreCoord(2, 2)),
            ]
        ),
        VALUE,
        "overlap|ranges",
    )
    row("CoreRangeSet", "holds a coord", lambda e: ttnn.CoreRangeSet([ttnn.CoreCoord(0, 0)]), TYPE, "ranges|CoreRange")
    row(
        "create_sharded_memory_config",
        "grid larger than the device",
        lambda e: ttnn.allocate_tensor_on_device(
            [400 * 32, 64],
            F32,
            TILE,
            e.mesh,
            ttnn.create_sharded_memory_config((400 * 32, 64), ttnn.CoreGrid(x=20, y=20), ttnn.ShardStrategy.HEIGHT),
        ),
        VALUE,
        "shards|grid|core",
    )
    row(
        "create_sharded_memory_config",
        "strategy is a string",
        lambda e: ttnn.create_sharded_memory_config((64, 64), ttnn.CoreGrid(x=2, y=1), "height"),
        TYPE,
        "strategy",
    )
    row(
        "create_sharded_memory_config",
        "shape of rank 0",
        lambda e: ttnn.create_sharded_memory_config((), ttnn.CoreGrid(x=2, y=1), ttnn.ShardStrategy.HEIGHT),
        VALUE,
        "shape",
    )
    row(
        "create_sharded_memory_config",
        "core_grid is a tuple",
        lambda e: ttnn.create_sharded_memory_config((64, 64), (2, 1), ttnn.ShardStrategy.HEIGHT),
        TYPE,
        "core_grid",
    )
    row(
        "create_sharded_memory_config",
        "height does not split over the cores",
        lambda e: ttnn.allocate_tensor_on_device(
            [48, 64],
            F32,
            TILE,
            e.mesh,
            ttnn.create_sharded_memory_config((48, 64), ttnn.CoreGrid(x=5, y=1), ttnn.ShardStrategy.HEIGHT),
        ),
        VALUE,
        "shard|cores",
    )
    # -- transformer ops and fused activations
    sdpa = ttnn.transformer.scaled_dot_product_attention
    row(
        "SDPAProgramConfig",
        "q_chunk_size not whole tiles",
        lambda e: ttnn.SDPAProgramConfig(q_chunk_size=48),
        VALUE,
        "q_chunk_size",
    )
    row(
        "SDPAProgramConfig",
        "k_chunk_size a string",
        lambda e: ttnn.SDPAProgramConfig(k_chunk_size="32"),
        TYPE,
        "k_chunk_size",
    )
    row("UnaryWithParam", "op_type a string", lambda e: ttnn.UnaryWithParam("relu"), TYPE, "op_type")
    row("UnaryWithParam", "param a string", lambda e: ttnn.UnaryWithParam(ttnn.UnaryOpType.GELU, "fast"), TYPE, "param")
    row("transformer.scaled_dot_product_attention", "float32 q", lambda e: sdpa(e.a, e.a, e.a), TYPE, "input_tensor_q")
    row(
        "transformer.scaled_dot_product_attention",
        "q deallocated",
        lambda e: sdpa(e.freed, e.a, e.a),
        DEAD,
        "input_tensor_q",
    )
    row(
        "transformer.scaled_dot_product_attention",
        "k on another mesh",
        lambda e: sdpa(e.heads, e.other_heads, e.heads),
        WRONG_MESH,
        "input_tensor_k",
    )
    ring = ttnn.transformer.ring_distributed_scaled_dot_product_attention
    ring_op = "transformer.ring_distributed_scaled_dot_product_attention"
    row(ring_op, "ring_size odd", lambda e: ring(e.heads, e.heads, e.heads, 3), VALUE, "ring_size")
    row(ring_op, "ring_size a string", lambda e: ring(e.heads, e.heads, e.heads, "4"), TYPE, "ring_size")
    row(ring_op, "ring_id past the ring", lambda e: ring(e.heads, e.heads, e.heads, 4, 4), VALUE, "ring_id")
    row(ring_op, "float32 q", lambda e: ring(e.a, e.a, e.a, 4), TYPE, "input_tensor_q")
    row(ring_op, "q deallocated", lambda e: ring(e.freed, e.heads, e.heads, 4), DEAD, "input_tensor_q")
    row(ring_op, "k on another mesh", lambda e: ring(e.heads, e.other_heads, e.heads, 4), WRONG_MESH, "input_tensor_k")
    row(ring_op, "one tile for 8 chunks", lambda e: ring(e.heads, e.heads, e.heads, 4), VALUE, "ring_size")
    row(ring_op, "unknown keyword", lambda e: ring(e.heads, e.heads, e.heads, 4, mask=None), TYPE, "mask")
    mla = ttnn.transformer.flash_mla_prefill
    row(
        "transformer.flash_mla_prefill", "head_dim_v past d", lambda e: mla(e.heads, e.heads, 4096), VALUE, "head_dim_v"
    )
    row("transformer.flash_mla_prefill", "float32 q", lambda e: mla(e.a, e.a, 32), TYPE, "input_tensor_q")
    windowed = ttnn.transformer.windowed_scaled_dot_product_attention
    windowed_op = "transformer.windowed_scaled_dot_product_attention"
    row(windowed_op, "float32 q", lambda e: windowed(e.a, e.a, e.a, e.a), TYPE, "input_tensor_q")
    row(
        windowed_op,
        "bounds not 1-D",
        lambda e: windowed(e.heads, e.heads, e.heads, e.heads),
        VALUE,
        "cu_window_seqlens",
    )
    row(
        "experimental.rotary_embedding",
        "head dim not pairs of tiles",
        lambda e: ttnn.experimental.rotary_embedding(e.a, e.a, e.a),
        VALUE,
        "input_tensor",
    )
    row(
        "experimental.rotary_embedding",
        "input on the host",
        lambda e: ttnn.experimental.rotary_embedding(e.host, e.a, e.a),
        VALUE,
        "input_tensor",
    )
    row(
        "transformer.split_query_key_value_and_split_heads",
        "num_heads zero",
        lambda e: ttnn.transformer.split_query_key_value_and_split_heads(e.a, num_heads=0),
        VALUE,
        "num_heads",
    )
    row(
        "transformer.concatenate_heads",
        "rank 3",
        lambda e: ttnn.transformer.concatenate_heads(e.a),
        VALUE,
        "input_tensor",
    )
    row(
        "experimental.nlp_create_qkv_heads",
        "rank 3",
        lambda e: ttnn.experimental.nlp_create_qkv_heads(e.a_bf16, num_heads=1),
        VALUE,
        "input",
    )
    uneven, grid1 = ttnn.create_sharded_memory_config_, ttnn.CoreGrid(x=1, y=1)
    row("create_sharded_memory_config_", "shape an int", lambda e: uneven(5, grid1, ttnn.ShardStrategy.HEIGHT,
        ttnn.ShardOrientation.ROW_MAJOR), TYPE, "shape")  # fmt: skip
    row("create_sharded_memory_config_", "orientation None", lambda e: uneven([32, 32], grid1,
        ttnn.ShardStrategy.HEIGHT, None), TYPE, "orientation")  # fmt: skip
    row("create_sharded_memory_config_", "INTERLEAVED", lambda e: uneven([32, 32], grid1,
        ttnn.TensorMemoryLayout.INTERLEAVED, ttnn.ShardOrientation.ROW_MAJOR), VALUE, "INTERLEAVED")  # fmt: skip
    row("get_conv_output_dim", "stride 0", lambda e: ttnn.get_conv_output_dim(64, 3, 0), VALUE, "stride")
    row("get_conv_output_dim", "window a string", lambda e: ttnn.get_conv_output_dim(64, "3"), TYPE, "window")
    segformer = ttnn.experimental.nlp_create_qkv_heads_segformer
    row("experimental.nlp_create_qkv_heads_segformer", "rank 3", lambda e: segformer(e.a_bf16), VALUE, "input")
    row("experimental.nlp_create_qkv_heads_segformer", "dim 1 is 2", lambda e: segformer(e.heads), VALUE, "input")
    row(
        "experimental.nlp_create_qkv_heads_segformer",
        "float32 row-major",
        lambda e: segformer(e.rm),
        VALUE,
        "TILE",
    )
    row(
        "experimental.nlp_concat_heads",
        "rank 3",
        lambda e: ttnn.experimental.nlp_concat_heads(e.a_bf16),
        VALUE,
        "input_tensor",
    )
    # -- issue 22: config vocabulary, cluster queries, global semaphores (more rows in tests/ops/test_issue22_*.py)
    wh, grid8 = ttnn.WormholeComputeKernelConfig, ttnn.CoreCoord(8, 8)
    row(
        "WormholeComputeKernelConfig",
        "math_fidelity a string",
        lambda e: wh(math_fidelity="HiFi2"),
        TYPE,
        "math_fidelity",
    )
    row(
        "WormholeComputeKernelConfig",
        "fp32_dest_acc_en an int",
        lambda e: wh(fp32_dest_acc_en=1),
        TYPE,
        "fp32_dest_acc_en",
    )
    row(
        "BlackholeComputeKernelConfig",
        "packer_l1_acc None",
        lambda e: ttnn.BlackholeComputeKernelConfig(packer_l1_acc=None),
        TYPE,
        "packer_l1_acc",
    )
    row(
        "init_device_compute_kernel_config",
        "arch a string",
        lambda e: ttnn.init_device_compute_kernel_config("wormhole_b0"),
        TYPE,
        "arch",
    )
    mc = dict(
        compute_with_storage_grid_size=grid8,
        in0_block_w=2,
        out_subblock_h=1,
        out_subblock_w=2,
        per_core_M=2,
        per_core_N=4,
    )
    row(
        "MatmulMultiCoreReuseProgramConfig",
        "per_core_N not whole sub-blocks",
        lambda e: ttnn.MatmulMultiCoreReuseProgramConfig(**{**mc, "per_core_N": 3}),
        VALUE,
        "per_core_N",
    )
    row(
        "MatmulMultiCoreReuseProgramConfig",
        "allowed_worker_cores a CoreRange",
        lambda e: ttnn.MatmulMultiCoreReuseProgramConfig(
            **mc, allowed_worker_cores=ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 1))
        ),
        TYPE,
        "allowed_worker_cores",
    )
    row(
        "MatmulMultiCoreReuseMultiCastProgramConfig",
        "transpose_mcast an int",
        lambda e: ttnn.MatmulMultiCoreReuseMultiCastProgramConfig(**mc, transpose_mcast=0),
        TYPE,
        "transpose_mcast",
    )
    row(
        "MatmulMultiCoreReuseMultiCastProgramConfig",
        "grid of three",
        lambda e: ttnn.MatmulMultiCoreReuseMultiCastProgramConfig(
            **{**mc, "compute_with_storage_grid_size": (8, 8, 1)}, transpose_mcast=False
        ),
        TYPE,
        "compute_with_storage_grid_size",
    )
    row(
        "MatmulMultiCoreReuseMultiCast1DProgramConfig",
        "in0_block_w zero",
        lambda e: ttnn.MatmulMultiCoreReuseMultiCast1DProgramConfig(
            **{**mc, "in0_block_w": 0}, fuse_batch=True, mcast_in0=True
        ),
        VALUE,
        "in0_block_w",
    )
    row(
        "MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig",
        "per_core_M a float",
        lambda e: ttnn.MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig(
            in0_block_w=1, per_core_M=1.0, per_core_N=1
        ),
        TYPE,
        "per_core_M",
    )
    row(
        "MinimalMatmulConfig",
        "M_block_size negative",
        lambda e: ttnn.MinimalMatmulConfig(M_block_size=-1),
        VALUE,
        "M_block_size",
    )
    row(
        "LayerNormDefaultProgramConfig",
        "use_welford a string",
        lambda e: ttnn.LayerNormDefaultProgramConfig(use_welford="yes"),
        TYPE,
        "use_welford",
    )
    row(
        "LayerNormShardedMultiCoreProgramConfig",
        "block_w not whole sub-blocks",
        lambda e: ttnn.LayerNormShardedMultiCoreProgramConfig(
            compute_with_storage_grid_size=(8, 2), subblock_w=3, block_h=1, block_w=4, inplace=False
        ),
        VALUE,
        "block_w",
    )
    row(
        "num_cores_to_corerangeset",
        "more cores than the grid",
        lambda e: ttnn.num_cores_to_corerangeset(65, grid8, True),
        VALUE,
        "target_num_cores",
    )
    row(
        "num_cores_to_corerangeset",
        "grid a string",
        lambda e: ttnn.num_cores_to_corerangeset(4, "88"),
        TYPE,
        "grid_size",
    )
    row("set_printoptions", "an unknown profile", lambda e: ttnn.set_printoptions(profile="long"), VALUE, "profile")
    row(
        "set_printoptions",
        "precision a float",
        lambda e: ttnn.set_printoptions(profile="short", precision=2.5),
        TYPE,
        "precision",
    )
    row("grid_to_cores", "more cores than the grid", lambda e: ttnn.grid_to_cores(65, 8, 8), VALUE, "exceeds")
    row("grid_to_cores", "a count as a string", lambda e: ttnn.grid_to_cores("4", 8, 8), TYPE, "num_cores")
    row(
        "grid_to_cores",
        "an end before the start",
        lambda e: ttnn.grid_to_cores(grid8, ttnn.CoreCoord(1, 1)),
        VALUE,
        "before",
    )
    row("split_work_to_cores", "negative units", lambda e: ttnn.split_work_to_cores(grid8, -1), TYPE, "units_to_divide")
    row("split_work_to_cores", "grid a triple", lambda e: ttnn.split_work_to_cores((8, 8, 8), 4), TYPE, "grid_size")
    row(
        "create_global_semaphore",
        "cores outside the grid",
        lambda e: ttnn.create_global_semaphore(
            e.mesh, ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(8, 0))]), 0
        ),
        VALUE,
        "cores",
    )
    row(
        "create_global_semaphore",
        "initial_value negative",
        lambda e: ttnn.create_global_semaphore(e.mesh, e.grid, -1),
        VALUE,
        "initial_value",
    )
    row(
        "create_global_semaphore",
        "buffer_type DRAM",
        lambda e: ttnn.create_global_semaphore(e.mesh, e.grid, 0, ttnn.BufferType.DRAM),
        VALUE,
        "buffer_type",
    )
    row(
        "create_global_semaphore",
        "closed mesh",
        lambda e: ttnn.create_global_semaphore(e.closed_mesh, e.grid, 0),
        CLOSED,
        "closed|MeshDevice",
    )
    row(
        "reset_global_semaphore_value",
        "not a semaphore",
        lambda e: ttnn.reset_global_semaphore_value(e.grid, 0),
        TYPE,
        "global_semaphore",
    )
    row(
        "get_global_semaphore_address",
        "not a semaphore",
        lambda e: ttnn.get_global_semaphore_address(None),
        TYPE,
        "global_semaphore",
    )
    row(
        "matmul",
        "program grid larger than the device's",
        lambda e: ttnn.matmul(
            e.a,
            e.w,
            program_config=ttnn.MatmulMultiCoreReuseMultiCastProgramConfig(
                **{**mc, "compute_with_storage_grid_size": (9, 8)}, transpose_mcast=False
            ),
        ),
        VALUE,
        "compute_with_storage_grid_size",
    )
    row("matmul", "program_config a dict", lambda e: ttnn.matmul(e.a, e.w, program_config={}), TYPE, "program_config")
    row(
        "linear",
        "compute_kernel_config a string",
        lambda e: ttnn.linear(e.a, e.w, compute_kernel_config="HiFi4"),
        TYPE,
        "compute_kernel_config",
    )
    row(
        "rms_norm",
        "sharded program config on an interleaved input",
        lambda e: ttnn.rms_norm(
            e.a,
            program_config=ttnn.LayerNormShardedMultiCoreProgramConfig(
                compute_with_storage_grid_size=(2, 1), subblock_w=1, block_h=1, block_w=1, inplace=False
            ),
        ),
        VALUE,
        "sharded input_tensor",
    )
    # -- issue 22: sharding and layout helpers, distributed norms, async collectives
    row(
        "interleaved_to_sharded",
        "interleaved target config",
        lambda e: ttnn.interleaved_to_sharded(e.a, L1_MC),
        VALUE,
        "sharded",
    )
    row(
        "interleaved_to_sharded",
        "grid a string",
        lambda e: ttnn.interleaved_to_sharded(
            e.a, "8x8", [32, 32], ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.ShardOrientation.ROW_MAJOR
        ),
        TYPE,
        "grid",
    )
    row(
        "sharded_to_interleaved",
        "memory_config a string (an interleaved input is given back, as ttnn does: branch galaxy42)",
        lambda e: ttnn.sharded_to_interleaved(e.a, "DRAM"),
        TYPE,
        "memory_config",
    )
    row("tilize", "input already TILE", lambda e: ttnn.tilize(e.a), VALUE, "input_tensor")
    row("tilize", "rows not whole tiles", lambda e: ttnn.tilize(e.rm), VALUE, "tiles")
    row("untilize", "input row-major", lambda e: ttnn.untilize(e.rm), VALUE, "input_tensor")
    row(
        "untilize_with_unpadding",
        "an end past the padded shape",
        lambda e: ttnn.untilize_with_unpadding(e.a, [0, 3, 64]),
        VALUE,
        "output_tensor_end",
    )
    row(
        "tilize_with_val_padding",
        "padded shape smaller",
        lambda e: ttnn.tilize_with_val_padding(e.rm, [1, 32, 32], 0.0),
        VALUE,
        "output_tensor_shape",
    )
    row(
        "tilize_with_val_padding",
        "pad_value a string",
        lambda e: ttnn.tilize_with_val_padding(e.rm, [1, 32, 64], "0"),
        TYPE,
        "pad_value",
    )
    row(
        "tilize_with_zero_padding",
        "input already TILE",
        lambda e: ttnn.tilize_with_zero_padding(e.a),
        VALUE,
        "input_tensor",
    )
    row("split", "sizes do not add up", lambda e: ttnn.split(e.a, [1, 1], 2), VALUE, "split_size")
    row("split", "split_size zero", lambda e: ttnn.split(e.a, 0, 2), VALUE, "split_size")
    row("chunk", "chunks zero", lambda e: ttnn.chunk(e.a, 0, 2), VALUE, "chunks")
    row("chunk", "dim out of range", lambda e: ttnn.chunk(e.a, 2, 5), VALUE, "dim")
    row(
        "unsqueeze_to_4D",
        "rank 5",
        lambda e: ttnn.unsqueeze_to_4D(ttnn.reshape(e.host, (1, 1, 8, 3, 40))),
        VALUE,
        "rank",
    )
    row("unsqueeze_to_4D", "not a tensor", lambda e: ttnn.unsqueeze_to_4D(np.ones(3)), TYPE, "input_tensor")
    row("rms_norm_pre_all_gather", "row-major input", lambda e: ttnn.rms_norm_pre_all_gather(e.rm), VALUE, "TILE")
    row(
        "layer_norm_pre_all_gather",
        "dtype a string",
        lambda e: ttnn.layer_norm_pre_all_gather(e.a, dtype="bf16"),
        TYPE,
        "dtype",
    )
    row(
        "rms_norm_post_all_gather",
        "stats of another height",
        lambda e: ttnn.rms_norm_post_all_gather(e.a, e.heads),
        VALUE,
        "stats",
    )
    row(
        "layer_norm_post_all_gather",
        "weight of another width",
        lambda e: ttnn.layer_norm_post_all_gather(e.a, e.ln_stats, weight=e.row7),
        VALUE,
        "weight",
    )
    sems = lambda e, n: e.sems[:n]  # noqa: E731
    ag = ttnn.experimental.all_gather_async
    row(
        "experimental.all_gather_async",
        "one semaphore",
        lambda e: ag(e.a, None, 2, sems(e, 1)),
        VALUE,
        "multi_device_global_semaphore",
    )
    row(
        "experimental.all_gather_async",
        "semaphore of another mesh",
        lambda e: ag(e.a, None, 2, [e.other_sem] * 2),
        VALUE,
        "multi_device_global_semaphore",
    )
    row(
        "experimental.all_gather_async",
        "num_links beyond the rows",
        lambda e: ag(e.a, None, 2, sems(e, 2), num_links=9),
        VALUE,
        "num_links",
    )
    row(
        "experimental.all_gather_async",
        "persistent buffer of another shape",  # another rank (narrower along dim only is tt-metal's: accepted)
        lambda e: ag(e.a, e.heads, 2, sems(e, 2)),
        VALUE,
        "persistent_output_buffer",
    )
    row("experimental.all_gather_async", "no dim", lambda e: ag(e.a, sems(e, 2)), TYPE, "incompatible")
    agr, agr_op = ttnn.experimental.all_gather_async_reversed, "experimental.all_gather_async_reversed"
    row(agr_op, "one semaphore", lambda e: agr(e.a, None, 2, sems(e, 1)), VALUE, "multi_device_global_semaphore")
    row(agr_op, "persistent buffer of another shape", lambda e: agr(e.a, e.heads, 2, sems(e, 2)), VALUE, "persistent")
    row(agr_op, "dim out of range", lambda e: agr(e.a, None, 5, sems(e, 2)), VALUE, "dim")
    row(agr_op, "no dim", lambda e: agr(e.a, sems(e, 2)), TYPE, "incompatible")
    # -- issue 35 (helper cclf): ttnn.experimental.matmul_reduce_scatter_async
    mrs, mrs_op = ttnn.experimental.matmul_reduce_scatter_async, "experimental.matmul_reduce_scatter_async"
    row(mrs_op, "dim 2", lambda e: mrs(e.heads, e.heads, e.heads, e.heads, 2, sems(e, 3), (0, 6)), VALUE, "dim=3")
    row(
        mrs_op,
        "two semaphores",
        lambda e: mrs(e.heads, e.heads, e.heads, e.heads, 3, sems(e, 2), (0, 6)),
        VALUE,
        "sema",
    )
    row(
        mrs_op,
        "offset a string",
        lambda e: mrs(e.heads, e.heads, e.heads, e.heads, 3, sems(e, 3), "0,6"),
        TYPE,
        "offset",
    )
    row(
        mrs_op,
        "width not divisible over the mesh",
        lambda e: mrs(e.heads, e.heads, e.heads, e.heads, 3, sems(e, 3), (0, 6)),
        VALUE,
        "divisible",
    )
    row(
        mrs_op,
        "weight on another mesh",
        lambda e: mrs(e.heads, e.other_heads, e.heads, e.heads, 3, sems(e, 3), (0, 6)),
        WRONG_MESH,
        "weight",
    )
    rs = ttnn.experimental.reduce_scatter_minimal_async
    row(
        "experimental.reduce_scatter_minimal_async",
        "two semaphores",
        lambda e: rs(e.a, None, 2, sems(e, 2)),
        VALUE,
        "multi_device_global_semaphore",
    )
    row(
        "experimental.reduce_scatter_minimal_async",
        "topology Mesh",
        lambda e: rs(e.a, None, 2, sems(e, 3), topology=ttnn.Topology.Mesh),
        VALUE,
        "topology",
    )
    row(
        "experimental.reduce_scatter_minimal_async",
        "chunks_per_sync zero",
        lambda e: rs(e.a, None, 2, sems(e, 3), chunks_per_sync=0),
        VALUE,
        "chunks_per_sync",
    )
    row(
        "experimental.all_reduce_async",
        "math_op Max",
        lambda e: ttnn.experimental.all_reduce_async(e.a, 8, sems(e, 1), sems(e, 1), sems(e, 1), ttnn.ReduceType.Max),
        VALUE,
        "math_op",
    )
    row(
        "experimental.all_reduce_async",
        "num_devices wrong",
        lambda e: ttnn.experimental.all_reduce_async(e.a, 4, sems(e, 1), sems(e, 1), sems(e, 1), ttnn.ReduceType.Sum),
        VALUE,
        "num_devices",
    )
    row(
        "experimental.all_gather_matmul_async",
        "inner dims differ",
        lambda e: ttnn.experimental.all_gather_matmul_async(e.a, e.w, None, 2, sems(e, 2), (0, 4)),
        VALUE,
        "inner dimension",
    )
    row(
        "experimental.all_gather_matmul_async",
        "offset a string",
        lambda e: ttnn.experimental.all_gather_matmul_async(e.a, e.w, None, 2, sems(e, 2), "0,4"),
        TYPE,
        "all_gather_core_grid_offset",
    )
    row(
        "experimental.fast_reduce_nc",
        "a tile dim",
        lambda e: ttnn.experimental.fast_reduce_nc(e.a, dims=[2]),
        VALUE,
        "dims",
    )
    row(
        "experimental.fast_reduce_nc",
        "row-major input",
        lambda e: ttnn.experimental.fast_reduce_nc(e.rm, dims=[0]),
        VALUE,
        "TILE",
    )
    row(
        "experimental.minimal_matmul",
        "batched weight",
        lambda e: ttnn.experimental.minimal_matmul(e.a, e.heads),
        VALUE,
        "weight_tensor",
    )
    row(
        "experimental.minimal_matmul",
        "config grid too large",
        lambda e: ttnn.experimental.minimal_matmul(
            e.a, e.w, config=ttnn.MinimalMatmulConfig(compute_with_storage_grid_size=(9, 9))
        ),
        VALUE,
        "compute_with_storage_grid_size",
    )
    row("multiply", "unknown activation", lambda e: ttnn.multiply(e.a, e.a, activations=["swish"]), TYPE, "activations")
    row(
        "add",
        "activation with a stray parameter",
        lambda e: ttnn.add(e.a, e.a, input_tensor_a_activations=[ttnn.UnaryWithParam(ttnn.UnaryOpType.RELU, 1.0)]),
        VALUE,
        "input_tensor_a_activations",
    )
    row("begin_perf_capture", "traced not a bool", lambda e: ttnn.begin_perf_capture(traced="yes"), TYPE, "traced")
    row("end_perf_capture", "none running", lambda e: ttnn.end_perf_capture(), ttnn.MeshnnError, "perf capture")
    row("perf_capture", "traced not a bool", lambda e: ttnn.perf_capture(traced=1).__enter__(), TYPE, "traced")
    row("PerfCapture", "traced not a bool", lambda e: ttnn.PerfCapture(traced="x"), TYPE, "traced")
    row("PerfCapture.recorder", "no op recorded", lambda e: ttnn.PerfCapture().recorder(e.mesh), VALUE, "mesh_device")
    row("PerfCapture.retimed", "traced not a bool", lambda e: ttnn.PerfCapture().retimed(traced=None), TYPE, "traced")

    # -- issue 31: the performance model's measured profiles and whole steps (meshnn.perf)
    from meshnn.perf import Recorder
    from meshnn.perf.calibrate import measured_machine
    from meshnn.perf.host import step_time
    from meshnn.perf.measured import read_ops_perf_csv

    three = "OP CODE,DEVICE ID,DEVICE ARCH\n" + "".join(f"UnaryDeviceOperation,{d},wormhole_b0\n" for d in range(3))
    row("read_ops_perf_csv", "not an ops-perf CSV", lambda e: read_ops_perf_csv(e.garbage), VALUE, "OP CODE")
    row("read_ops_perf_csv", "no such file", lambda e: read_ops_perf_csv(e.tmp / "missing.csv"), VALUE, "missing")
    row("measured_machine", "3 devices", lambda e: measured_machine(read_ops_perf_csv(three)), VALUE, "--system")
    row("step_time", "a recorder of no ops", lambda e: step_time(Recorder("n150"), traced=True), VALUE, "no ops")

    # -- ttnn.CONFIG and reports (ttnn.graph's functions: tests/capture/test_graph_capture.py)
    row("Config", "unknown attribute", lambda e: ttnn.Config(enable_logs=True), VALUE, "enable_logs")
    row("Config", "flag is an int", lambda e: ttnn.Config(enable_logging=1), TYPE, "enable_logging")
    row("Config", "path is a number", lambda e: ttnn.Config(root_report_path=3), TYPE, "root_report_path")
    row("Config", "pcc above 1", lambda e: ttnn.Config(comparison_mode_pcc=2.0), VALUE, "comparison_mode_pcc")
    row("manage_config", "unknown attribute", lambda e: ttnn.manage_config("nope", 1).__enter__(), VALUE, "nope")
    row("manage_config", "name not a str", lambda e: ttnn.manage_config(3, 1).__enter__(), TYPE, "name")
    row(
        "manage_config",
        "report_name a number",
        lambda e: ttnn.manage_config("report_name", 5).__enter__(),
        TYPE,
        "report_name",
    )
    return c


def decode_rows() -> list[Case]:
    """Issue 23: trace capture, sub-devices, KV caches and the decode ops."""
    c: list[Case] = []

    def row(target, what, call, error, names):
        c.append(Case(target, what, call, error, names))

    x, trace_err = ttnn.experimental, ttnn.TraceError
    row("begin_trace_capture", "mesh is a string", lambda e: ttnn.begin_trace_capture("mesh"), TYPE, "mesh_device")
    row("begin_trace_capture", "cq_id out of range", lambda e: ttnn.begin_trace_capture(e.mesh, 3), VALUE, "cq_id")
    row("end_trace_capture", "nothing captured", lambda e: ttnn.end_trace_capture(e.mesh, 0), trace_err, "trace_id")
    row("execute_trace", "trace_id a string", lambda e: ttnn.execute_trace(e.mesh, "0"), TYPE, "trace_id")
    row("execute_trace", "unknown trace", lambda e: ttnn.execute_trace(e.mesh, 123456), trace_err, "Trace instance")
    row("release_trace", "unknown trace", lambda e: ttnn.release_trace(e.mesh, 123456), trace_err, "Trace instance")
    row("release_trace", "mesh is None", lambda e: ttnn.release_trace(None, 0), TYPE, "mesh_device")
    row("MeshTraceId", "negative", lambda e: ttnn.MeshTraceId(-1), TYPE, "value")
    row("SubDevice", "cores a string", lambda e: ttnn.SubDevice("0-7"), TYPE, "cores")
    row("SubDeviceId", "a string", lambda e: ttnn.SubDeviceId("a"), TYPE, "value")
    row("SubDeviceManagerId", "negative", lambda e: ttnn.SubDeviceManagerId(-2), TYPE, "value")
    row(
        "MeshDevice.create_sub_device_manager",
        "no sub-devices",
        lambda e: e.mesh.create_sub_device_manager([], 0),
        TYPE,
        "sub_devices",
    )
    row(
        "MeshDevice.set_sub_device_stall_group",
        "index past the sub-devices",
        lambda e: e.mesh.set_sub_device_stall_group([ttnn.SubDeviceId(3)]),
        VALUE,
        "SubDevice index",
    )
    row("fill_cache", "input of rank 3", lambda e: ttnn.fill_cache(e.heads, e.a, 0), VALUE, "input_tensor")
    row("fill_cache", "batch_idx past the users", lambda e: ttnn.fill_cache(e.heads, e.heads, 5), VALUE, "batch_idx")
    row("fill_cache", "cache row-major", lambda e: ttnn.fill_cache(e.rm, e.heads, 0), VALUE, "[Cc]ache")
    row("update_cache", "input of rank 3", lambda e: ttnn.update_cache(e.heads, e.a_bf16, 0), VALUE, "input_tensor")
    row("plus_one", "float positions", lambda e: ttnn.plus_one(e.a), TYPE, "input_tensor")
    row("topk", "k zero", lambda e: ttnn.topk(e.heads, 0), VALUE, "k")
    row("topk", "row-major input", lambda e: ttnn.topk(e.rm, 2), TYPE, "Input tensor")
    row(
        "sampling",
        "float32 values",
        lambda e: ttnn.sampling(e.a, e.a, k=e.a, p=e.a, temp=e.a),
        TYPE,
        "input_values_tensor",
    )
    row(
        "experimental.paged_update_cache",
        "input not sharded",
        lambda e: x.paged_update_cache(e.heads, e.heads, update_idxs=[0]),
        VALUE,
        "input_tensor",
    )
    row(
        "transformer.scaled_dot_product_attention_decode",
        "k's users are not q's",
        lambda e: ttnn.transformer.scaled_dot_product_attention_decode(e.heads, e.heads, e.heads, cur_pos=[0, 0]),
        VALUE,
        "input_tensor_k",
    )
    row(
        "experimental.rotary_embedding_llama",
        "float32 input",
        lambda e: x.rotary_embedding_llama(e.a, e.a, e.a, e.a),
        TYPE,
        "input_tensor",
    )
    row(
        "experimental.nlp_create_qkv_heads_decode",
        "not [1, 1, users, width]",
        lambda e: x.nlp_create_qkv_heads_decode(e.heads, num_heads=2),
        VALUE,
        "input_tensor",
    )
    return c


def hostile() -> list[Case]:
    """What an adversarial pass found accepted (issue 26): mappers and composers of another or a
    closed mesh, 2-D mesh shapes that are not the mesh's, conversions bigger than host memory,
    files that are not regular files or have a NUL in their name, a submesh of a closed parent."""
    c: list[Case] = []

    def row(target, what, call, error, names):
        c.append(Case(target, what, call, error, names))

    t = torch.ones(8, 32, 32)
    huge = np.broadcast_to(np.float32(0), (1 << 20, 1 << 18))  # 1 TiB of float32, no memory behind it
    row(
        "ShardTensor2dMesh",
        "mesh_shape (4, 2) on a 2x4 mesh",
        lambda e: ttnn.ShardTensor2dMesh(e.mesh, (4, 2), (0, 1)),
        VALUE,
        "mesh_shape",
    )
    row(
        "ConcatMesh2dToTensor",
        "mesh_shape (4, 2) on a 2x4 mesh",
        lambda e: ttnn.ConcatMesh2dToTensor(e.mesh, (4, 2), (0, 1)),
        VALUE,
        "mesh_shape",
    )
    row(
        "from_torch",
        "mapper of a closed mesh",
        lambda e: ttnn.from_torch(t[:1], mesh_mapper=e.closed_mapper),
        CLOSED,
        "mesh_mapper",
    )
    row(
        "from_torch",
        "mapper of another mesh of the same shape",
        lambda e: ttnn.from_torch(t, device=e.mesh, mesh_mapper=ttnn.ShardTensorToMesh(e.other_mesh, dim=0)),
        WRONG_MESH,
        "mesh_mapper",
    )
    row(
        "to_torch",
        "composer of another mesh of the same shape",
        lambda e: ttnn.to_torch(e.a, mesh_composer=ttnn.ConcatMeshToTensor(e.other_mesh, dim=0)),
        WRONG_MESH,
        "mesh_composer",
    )
    row(
        "to_torch",
        "composer of a closed mesh",
        lambda e: ttnn.to_torch(e.host, mesh_composer=e.closed_composer),
        CLOSED,
        "mesh_composer",
    )
    row(
        "from_torch",
        "1 TiB onto a 2x4 mesh: more than host memory",
        lambda e: ttnn.from_torch(huge, device=e.mesh, mesh_mapper=mapper(e)),
        ttnn.HostMemoryError,
        "host memory",
    )
    row(
        "from_torch",
        "1 TiB on the host: more than host memory",
        lambda e: ttnn.from_torch(huge),
        ttnn.HostMemoryError,
        "host memory",
    )
    row("load_tensor", "a FIFO", lambda e: ttnn.load_tensor(e.fifo), ttnn.TensorFileError, "regular file")
    row("load_tensor", "a directory", lambda e: ttnn.load_tensor(e.folder), ttnn.TensorFileError, "regular file")
    row("load_tensor", "a NUL in the path", lambda e: ttnn.load_tensor("a\0b"), ttnn.TensorFileError, "NUL")
    row("dump_tensor", "a NUL in the path", lambda e: ttnn.dump_tensor("a\0b", e.host), ttnn.TensorFileError, "NUL")
    row(
        "as_tensor",
        "a NUL in the cache path",
        lambda e: ttnn.as_tensor(t, ttnn.float32, cache_file_name="a\0b"),
        ttnn.TensorFileError,
        "NUL",
    )
    row(
        "MeshBuffer.create",
        "on a submesh of a closed mesh",
        lambda e: ttnn.MeshBuffer.create(
            ttnn.ReplicatedBufferConfig(2048),
            ttnn.DeviceLocalBufferConfig(page_size=1024, buffer_type=ttnn.BufferType.DRAM),
            e.closed_sub,
        ),
        CLOSED,
        "closed",
    )
    row("end_all_ranks", "message is an int", lambda e: ttnn.end_all_ranks(3), TYPE, "message")
    return c


def device_entry_rows() -> list[Case]:
    """Issue 21's names: device entry points and configs, events, legacy tensor names, visualisation."""
    c: list[Case] = []

    def row(target, what, call, error, names):
        c.append(Case(target, what, call, error, names))

    axis = ttnn.DispatchCoreAxis
    row("DispatchCoreConfig", "type is a string", lambda e: ttnn.DispatchCoreConfig("ETH"), VALUE, "dispatch core type")
    row(
        "DispatchCoreConfig",
        "ETH with COL",
        lambda e: ttnn.DispatchCoreConfig(ttnn.DispatchCoreType.ETH, axis.COL),
        VALUE,
        "COL axis",
    )
    row("open_device", "device_id is a string", lambda e: ttnn.open_device(device_id="0"), TYPE, "device_id")
    row("open_device", "device_id out of range", lambda e: ttnn.open_device(device_id=8), VALUE, "device_id 8")
    row("CreateDevice", "device_id negative", lambda e: ttnn.CreateDevice(-1), VALUE, "device_id -1")
    row(
        "CreateDevice",
        "bad dispatch config",
        lambda e: ttnn.CreateDevice(0, dispatch_core_config="ROW"),
        VALUE,
        "dispatch_core_config",
    )
    row("CreateDevices", "device_ids is a string", lambda e: ttnn.CreateDevices("01"), TYPE, "device_ids")
    row("CreateDevices", "an id twice", lambda e: ttnn.CreateDevices([2, 2]), VALUE, "device_ids")
    row("CloseDevice", "not a device", lambda e: ttnn.CloseDevice("dev"), TYPE, "device")
    row("CloseDevices", "a list, not a dict", lambda e: ttnn.CloseDevices([e.small]), TYPE, "devices")
    row("CloseDevices", "a value is not a device", lambda e: ttnn.CloseDevices({0: e.small, 1: "dev"}), TYPE, "device")
    row("close_device", "not a device", lambda e: ttnn.close_device(3), TYPE, "device")
    row("ReadDeviceProfiler", "not a device", lambda e: ttnn.ReadDeviceProfiler("dev"), TYPE, "device")
    row("SetDefaultDevice", "not a device", lambda e: ttnn.SetDefaultDevice("dev"), TYPE, "device")
    row("ReadDeviceProfiler", "closed", lambda e: ttnn.ReadDeviceProfiler(e.closed_mesh), CLOSED, "mesh")
    row("close_device", "closed", lambda e: ttnn.close_device(e.closed_mesh), CLOSED, "mesh")
    row("manage_device", "device_id is a string", lambda e: ttnn.manage_device("0").__enter__(), TYPE, "device_id")
    row(
        "create_mesh_device",
        "shape is a string",
        lambda e: ttnn.create_mesh_device("2x4").__enter__(),
        TYPE,
        "mesh_shape",
    )
    row("record_event", "not a mesh", lambda e: ttnn.record_event("mesh", 0), TYPE, "mesh_device")
    row("record_event", "cq_id out of range", lambda e: ttnn.record_event(e.mesh, 1), VALUE, "cq_id")
    row("record_event", "closed mesh", lambda e: ttnn.record_event(e.closed_mesh, 0), CLOSED, "mesh")
    row(
        "record_event",
        "device_range is a tuple",
        lambda e: ttnn.record_event(e.mesh, 0, None, (0, 0)),
        TYPE,
        "device_range",
    )
    row("wait_for_event", "not an event", lambda e: ttnn.wait_for_event(0, None), TYPE, "event")
    own = "a queue's own event"
    row(
        "wait_for_event",
        own,
        lambda e: ttnn.wait_for_event(0, e.mesh.mesh_command_queue(0).enqueue_record_event()),
        VALUE,
        "record_event",
    )
    row("aggregate_as_tensor", "not a list", lambda e: ttnn.aggregate_as_tensor(e.a), TYPE, "tensors")
    row(
        "aggregate_as_tensor",
        "a numpy shard",
        lambda e: ttnn.aggregate_as_tensor([e.host, np.ones(3)]),
        TYPE,
        r"tensors\[1\]",
    )
    row(
        "aggregate_as_tensor", "deallocated shard", lambda e: ttnn.aggregate_as_tensor([e.freed]), DEAD, r"tensors\[0\]"
    )
    row(
        "aggregate_as_tensor",
        "host and device",
        lambda e: ttnn.aggregate_as_tensor([e.host, e.a_dev0]),
        VALUE,
        "tensors",
    )
    row("get_device_tensor", "device is a string", lambda e: ttnn.get_device_tensor(e.a, "dev0"), TYPE, "device")
    row("get_device_tensor", "device of another mesh", lambda e: ttnn.get_device_tensor(e.a, 9), VALUE, "device 9")
    row("get_device_tensor", "host tensor", lambda e: ttnn.get_device_tensor(e.host, 0), VALUE, "device tensor")
    row("get_memory_config", "not a tensor", lambda e: ttnn.get_memory_config("t"), TYPE, "tensor")
    row("get_memory_config", "deallocated", lambda e: ttnn.get_memory_config(e.freed), DEAD, "tensor")
    row("CppReplicateTensorToMesh", "not a mesh", lambda e: ttnn.CppReplicateTensorToMesh("m"), TYPE, "mesh_device")
    row("CppShardTensorToMesh", "dim is a string", lambda e: ttnn.CppShardTensorToMesh(e.mesh, "3"), TYPE, "dim")
    row("visualize_mesh_device", "not a mesh", lambda e: ttnn.visualize_mesh_device(None), TYPE, "mesh_device")
    row("visualize_mesh_device", "closed mesh", lambda e: ttnn.visualize_mesh_device(e.closed_mesh), CLOSED, "mesh")
    row(
        "visualize_mesh_device",
        "tensor is a list",
        lambda e: ttnn.visualize_mesh_device(e.mesh, tensor=[1]),
        TYPE,
        "tensor",
    )
    row("visualize_tensor", "not a tensor", lambda e: ttnn.visualize_tensor(np.ones(3)), TYPE, "tensor")
    row("visualize_tensor", "deallocated", lambda e: ttnn.visualize_tensor(e.freed), DEAD, "tensor")
    overlapped = "MeshDevice.create_overlapped_submeshes"
    row(
        overlapped,
        "a range, not a list",
        lambda e: e.mesh.create_overlapped_submeshes(ttnn.MeshCoordinateRange(ttnn.MeshShape(1, 1))),
        TYPE,
        "coordinate_ranges",
    )
    row(
        overlapped,
        "outside the mesh",
        lambda e: e.mesh.create_overlapped_submeshes([ttnn.MeshCoordinateRange(ttnn.MeshShape(3, 4))]),
        VALUE,
        r"coordinate_ranges\[0\]",
    )
    row("MeshDevice.enable_async", "an int", lambda e: e.mesh.enable_async(1), TYPE, "enable")
    row(
        "set_fabric_config",
        "num_planes is zero",
        lambda e: ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_1D, num_planes=0),
        TYPE,
        "num_planes",
    )
    row(
        "reduce_scatter",
        "math_op is Max",
        lambda e: ttnn.reduce_scatter(e.a, 2, math_op=ttnn.ReduceType.Max),
        VALUE,
        "math_op",
    )
    row("reduce_scatter", "math_op is a string", lambda e: ttnn.reduce_scatter(e.a, 2, math_op="sum"), TYPE, "math_op")
    row(
        "dump_tensor",
        "not .tensorbin",
        lambda e: ttnn.dump_tensor(e.tmp / "x.bin", e.host),
        ttnn.TensorFileError,
        r"x\.bin.*\.tensorbin",
    )
    row(
        "load_tensor",
        "not .tensorbin",
        lambda e: ttnn.load_tensor(e.tmp / "x.npy"),
        ttnn.TensorFileError,
        r"x\.npy.*\.tensorbin",
    )
    return c


# ttnn's bindings refuse a keyword they do not know: a typo is refused by name, before anything runs
KEYWORD_CALLS = {  # a call of each, given the keywords k (the keyword is refused before the inputs are read)
    "sum": lambda e, **k: ttnn.sum(e.a, 2, **k),
    "mean": lambda e, **k: ttnn.mean(e.a, 2, **k),
    "max": lambda e, **k: ttnn.max(e.a, 2, **k),
    "min": lambda e, **k: ttnn.min(e.a, 2, **k),
    "argmax": lambda e, **k: ttnn.argmax(e.rm, dim=2, **k),
    "add": lambda e, **k: ttnn.add(e.a, e.a, **k),
    "relu": lambda e, **k: ttnn.relu(e.a, **k),
    "gelu": lambda e, **k: ttnn.gelu(e.a, **k),
    "to_layout": lambda e, **k: ttnn.to_layout(e.a, RM, **k),
    "typecast": lambda e, **k: ttnn.typecast(e.a, BF16, **k),
    "reshape": lambda e, **k: ttnn.reshape(e.a, (3, 40), **k),
    "permute": lambda e, **k: ttnn.permute(e.a, (0, 2, 1), **k),
    "transpose": lambda e, **k: ttnn.transpose(e.a, 1, 2, **k),
    "concat": lambda e, **k: ttnn.concat([e.a, e.a2], 1, **k),
    "slice": lambda e, **k: ttnn.slice(e.a, (0, 0, 0), (1, 3, 40), **k),
    "pad": lambda e, **k: ttnn.pad(e.a, ((0, 0), (0, 1), (0, 0)), 0.0, **k),
    "repeat": lambda e, **k: ttnn.repeat(e.a, (1, 2, 1), **k),
    "to_memory_config": lambda e, **k: ttnn.to_memory_config(e.a, DRAM_MC, **k),
    "clone": lambda e, **k: ttnn.clone(e.a, **k),
    "move": lambda e, **k: ttnn.move(e.a, **k),
    "reallocate": lambda e, **k: ttnn.reallocate(e.a, **k),
    "split": lambda e, **k: ttnn.split(e.a, 20, 2, **k),
    "chunk": lambda e, **k: ttnn.chunk(e.a, 2, 2, **k),
    "where": lambda e, **k: ttnn.where(e.a, e.a, e.a2, **k),
    "tilize": lambda e, **k: ttnn.tilize(e.rm, **k),
    "untilize": lambda e, **k: ttnn.untilize(e.a, **k),
    "untilize_with_unpadding": lambda e, **k: ttnn.untilize_with_unpadding(e.a, (0, 2, 31), **k),
    "tilize_with_val_padding": lambda e, **k: ttnn.tilize_with_val_padding(e.rm, (1, 32, 64), 0.0, **k),
    "tilize_with_zero_padding": lambda e, **k: ttnn.tilize_with_zero_padding(e.rm, **k),
    "interleaved_to_sharded": lambda e, **k: ttnn.interleaved_to_sharded(e.a, e.bad_shard_config, **k),
    "sharded_to_interleaved": lambda e, **k: ttnn.sharded_to_interleaved(e.a, DRAM_MC, **k),
    "softmax": lambda e, **k: ttnn.softmax(e.a, **k),
    "layer_norm": lambda e, **k: ttnn.layer_norm(e.a, **k),
    "rms_norm": lambda e, **k: ttnn.rms_norm(e.a, **k),
    "rms_norm_pre_all_gather": lambda e, **k: ttnn.rms_norm_pre_all_gather(e.a, **k),
    "layer_norm_post_all_gather": lambda e, **k: ttnn.layer_norm_post_all_gather(e.a, e.ln_stats, **k),
    "embedding": lambda e, **k: ttnn.embedding(e.ids, e.table, **k),
    "all_gather": lambda e, **k: ttnn.all_gather(e.a, 0, **k),
    "reduce_scatter": lambda e, **k: ttnn.reduce_scatter(e.a, 0, **k),
    "all_reduce": lambda e, **k: ttnn.all_reduce(e.a, **k),
}


def keyword_rows() -> list[Case]:
    c = [
        Case(name, "unknown keyword memroy_config", (lambda e, f=f: f(e, memroy_config=L1_MC)), TYPE, "memroy_config")
        for name, f in KEYWORD_CALLS.items()
    ]
    bad = (  # a hardware-only keyword of the wrong type, or a value meshnn cannot honour
        ("sum", "sub_core_grids is a string", {"sub_core_grids": "all"}, TYPE, "sub_core_grids"),
        ("sum", "scalar is a string", {"scalar": "2"}, TYPE, "scalar"),
        ("mean", "output_layout is not taken", {"output_layout": RM}, TYPE, "output_layout"),
        ("add", "use_legacy is a string", {"use_legacy": "no"}, TYPE, "use_legacy"),
        ("typecast", "queue_id is a string", {"queue_id": "0"}, TYPE, "queue_id"),
        ("typecast", "output_tensor is a string", {"output_tensor": "out"}, TYPE, "output_tensor"),
        ("permute", "pad_value is a string", {"pad_value": "0"}, TYPE, "pad_value"),
        ("concat", "groups of 2", {"groups": 2}, VALUE, "groups"),
        ("repeat", "unknown implementation", {"implementation": "fast"}, VALUE, "implementation"),
        (
            "clone",
            "compute_kernel_config is a string",
            {"compute_kernel_config": "HiFi4"},
            TYPE,
            "compute_kernel_config",
        ),
        ("pad", "use_multicore is an int", {"use_multicore": 1}, TYPE, "use_multicore"),
        ("layer_norm", "recip_tensor is numpy", {"recip_tensor": np.ones(4)}, TYPE, "recip_tensor"),
        ("all_gather", "num_workers_per_link negative", {"num_workers_per_link": -1}, VALUE, "num_workers_per_link"),
        ("all_gather", "output_tensor of the input's shape", {"output_tensor": "a2"}, VALUE, "output_tensor"),
        ("reduce_scatter", "subdevice_id is a string", {"subdevice_id": "0"}, TYPE, "subdevice_id"),
        (
            "all_reduce",
            "use_l1_small_for_semaphores is None-like string",
            {"use_l1_small_for_semaphores": "y"},
            TYPE,
            "use_l1",
        ),
        ("reshape", "memory_config is a string", {"memory_config": "L1"}, TYPE, "memory_config"),
        ("embedding", "padding_idx differs from pad_token", {"padding_idx": 3, "pad_token": 1}, VALUE, "padding_idx"),
    )
    for name, what, kwargs, error, names in bad:
        c.append(Case(name, what, (lambda e, f=KEYWORD_CALLS[name], k=kwargs: f(e, **_resolved(e, k))), error, names))
    return c


def _resolved(e, kwargs: dict) -> dict:
    """``kwargs`` with the env's tensors put in for their names ("a2" -> e.a2)."""
    return {k: getattr(e, v) if k == "output_tensor" and hasattr(e, str(v)) else v for k, v in kwargs.items()}


def registry_rows() -> list[Case]:
    """The op registry's public functions: golden functions looked up, attached and declared."""
    return [
        Case("get_golden_function", "not an op", lambda e: ttnn.get_golden_function(3), TYPE, "operation"),
        Case(
            "get_golden_function",
            "an op without one",
            lambda e: ttnn.get_golden_function(ttnn.experimental.all_gather_async),
            VALUE,
            "all_gather_async",
        ),
        Case(
            "register_pre_operation_hook",
            "hook is not callable",
            lambda e: ttnn.register_pre_operation_hook("print"),
            TYPE,
            "must be callable",
        ),
        Case(
            "register_post_operation_hook",
            "hook is not callable",
            lambda e: ttnn.register_post_operation_hook(None),
            TYPE,
            "must be callable",
        ),
        Case(
            "attach_golden_function",
            "golden is not callable",
            lambda e: ttnn.attach_golden_function(ttnn.add, golden_function=3),
            TYPE,
            "golden_function",
        ),
        Case(
            "attach_golden_function",
            "operation is not callable",
            lambda e: ttnn.attach_golden_function("add", golden_function=abs),
            TYPE,
            "operation",
        ),
        Case(
            "register_python_operation",
            "name is not a str",
            lambda e: ttnn.register_python_operation(name=3),
            TYPE,
            "name",
        ),
        Case(
            "register_python_operation",
            "a name already declared",
            lambda e: ttnn.register_python_operation(name="ttnn.add")(lambda x: x),
            VALUE,
            "ttnn.add",
        ),
    ]


# -- issue 32 (reliability round 3): rows of one helper, kept together for merges ------------------


def _edited_file(e, name: str, change: Callable[[dict], None]):
    """``e.good_file`` with its header changed by ``change`` (its checksum redone), as ``name``."""
    import json
    import struct
    import zlib

    good = e.good_file.read_bytes()
    length = struct.unpack_from("<I", good, 12)[0]
    header = json.loads(good[20 : 20 + length])
    change(header)
    raw = json.dumps(header).encode()
    path = e.tmp / name
    path.write_bytes(good[:12] + struct.pack("<II", len(raw), zlib.crc32(raw)) + raw + good[20 + length :])
    return path


def _report_in(folder: str) -> None:
    """Switch a report on in ``folder`` (the config is put back whatever happens)."""
    with (
        ttnn.manage_config("enable_fast_runtime_mode", False),
        ttnn.manage_config("enable_logging", True),
        ttnn.manage_config("root_report_path", folder),
        ttnn.manage_config("report_name", "bad_input"),
    ):
        pass


def round3_rows() -> list[Case]:
    """Issue 32: the smaller items of the adversarial pass, each refused by name."""
    c: list[Case] = []

    def row(target, what, call, error, names):
        c.append(Case(target, what, call, error, names))

    t = torch.ones(8, 32, 32)
    row(
        "ShardTensor2dMesh",
        "mesh_shape (0, 4)",
        lambda e: ttnn.ShardTensor2dMesh(e.mesh, (0, 4), (0, 1)),
        VALUE,
        "mesh_shape",
    )
    row(
        "ConcatMesh2dToTensor",
        "mesh_shape (0, 4)",
        lambda e: ttnn.ConcatMesh2dToTensor(e.mesh, (0, 4), (0, 1)),
        VALUE,
        "mesh_shape",
    )
    row(
        "create_mesh_mapper",
        "distribution shape with a 0",
        lambda e: ttnn.create_mesh_mapper(
            e.mesh, ttnn.MeshMapperConfig([ttnn.PlacementShard(0)], mesh_shape_override=ttnn.MeshShape(0))
        ),
        VALUE,
        "distribution shape",
    )
    row(
        "all_gather",
        "subdevice_id 7 of a 1-sub-device manager",
        lambda e: ttnn.all_gather(e.a, dim=2, subdevice_id=ttnn.SubDeviceId(7)),
        VALUE,
        "subdevice_id",
    )
    row(
        "open_mesh_device",
        "num_command_queues True",
        lambda e: ttnn.open_mesh_device(ttnn.MeshShape(1, 1), num_command_queues=True, system="n150"),
        VALUE,
        "num_command_queues",
    )
    row(
        "open_mesh_device",
        "worker_l1_size True",
        lambda e: ttnn.open_mesh_device(ttnn.MeshShape(1, 1), worker_l1_size=True, system="n150"),
        TYPE,
        "worker_l1_size",
    )
    row(
        "load_tensor",
        "a shard coordinate outside the mesh",
        lambda e: ttnn.load_tensor(_edited_file(e, "outside.tensorbin", lambda h: h["shards"][0].update(coord=[5, 9]))),
        ttnn.TensorFileError,
        r"shard coordinate .*\(5, 9\).* outside",
    )
    row(
        "load_tensor",
        "a host shape of 2^39 x 2^39",
        lambda e: ttnn.load_tensor(
            _edited_file(e, "huge.tensorbin", lambda h: h.update(host_buffer_shape=[1 << 39, 1 << 39]))
        ),
        ttnn.TensorFileError,
        "host_buffer_shape",
    )
    row(
        "dump_tensor",
        "a folder that cannot be written",
        lambda e: ttnn.dump_tensor("/proc/bad_input.tensorbin", e.host),
        ttnn.TensorFileError,
        "/proc/bad_input.tensorbin: cannot be written",
    )
    row(
        "as_tensor",
        "a cache folder that cannot be made",
        lambda e: ttnn.as_tensor(t, ttnn.float32, cache_file_name="/proc/no/such/cache"),
        ttnn.TensorFileError,
        "/proc/no/such/cache.*cannot be written",
    )
    row(
        "manage_config",
        "a report folder that cannot be made",
        lambda e: _report_in("/proc/no/reports"),
        VALUE,
        "report folder '/proc/no/reports",
    )
    return c


# -- branch prefetch: the DRAM prefetcher's global circular buffer, dram_prefetcher, matmul's global_cb
def prefetcher_rows() -> list[Case]:
    """ttnn.create_global_circular_buffer / dram_prefetcher / matmul_batched_weights and matmul's
    global_cb / sub_device_id, each refused by name (``e.gcb``: a global CB made before L1 fills)."""
    c: list[Case] = []

    def row(target, what, call, error, names):
        c.append(Case(target, what, call, error, names))

    core = ttnn.CoreCoord
    pair = [(core(0, 0), ttnn.CoreRangeSet([ttnn.CoreRange(core(1, 0), core(2, 0))]))]
    gcb, name = ttnn.create_global_circular_buffer, "create_global_circular_buffer"
    row(name, "device not a mesh", lambda e: gcb("mesh", pair, 4096), TYPE, "device")
    row(name, "size 0", lambda e: gcb(e.mesh, pair, 0), VALUE, "size")
    row(name, "size a float", lambda e: gcb(e.mesh, pair, 4096.0), TYPE, "size")
    row(name, "DRAM buffer", lambda e: gcb(e.mesh, pair, 4096, ttnn.BufferType.DRAM), VALUE, "L1 buffer types")
    row(name, "a sender twice", lambda e: gcb(e.mesh, pair * 2, 4096), VALUE, "duplicate cores")
    row(name, "mapping empty", lambda e: gcb(e.mesh, [], 4096), VALUE, "sender_receiver_core_mapping")
    row(name, "mapping entry a core", lambda e: gcb(e.mesh, [core(0, 0)], 4096), TYPE, "mapping entry")
    outside = [(core(0, 0), ttnn.CoreRangeSet([ttnn.CoreRange(core(8, 0), core(8, 0))]))]
    row(name, "receiver outside the grid", lambda e: gcb(e.mesh, outside, 4096), VALUE, "compute grid")
    row(name, "no room in L1", lambda e: gcb(e.mesh, pair, 4096), OOM, "L1")
    row(name, "closed mesh", lambda e: gcb(e.closed_mesh, pair, 4096), CLOSED, "closed")
    prefetch = "dram_prefetcher"
    row(prefetch, "tensors a tensor", lambda e: ttnn.dram_prefetcher(e.a, 1, e.gcb), TYPE, "tensors")
    row(prefetch, "no address tensor", lambda e: ttnn.dram_prefetcher([e.a], 1, e.gcb), VALUE, "tensors")
    row(prefetch, "num_layers 0", lambda e: ttnn.dram_prefetcher([e.a, e.a], 0, e.gcb), VALUE, "num_layers")
    row(prefetch, "no global_cb", lambda e: ttnn.dram_prefetcher([e.a, e.a], 1, None), VALUE, "global circular")
    row(prefetch, "global_cb a str", lambda e: ttnn.dram_prefetcher([e.a, e.a], 1, "cb"), TYPE, "global_cb")
    row(prefetch, "weight interleaved", lambda e: ttnn.dram_prefetcher([e.a, e.a], 1, e.gcb), VALUE, "width sharded")
    row(prefetch, "weight freed", lambda e: ttnn.dram_prefetcher([e.freed, e.a], 1, e.gcb), DEAD, "tensors")
    row(
        prefetch,
        "weight on another mesh",
        lambda e: ttnn.dram_prefetcher([e.other, e.a], 1, e.gcb),
        WRONG_MESH,
        "tensors",
    )
    row("matmul", "global_cb a str", lambda e: ttnn.matmul(e.a, e.w, global_cb="cb"), TYPE, "global_cb")
    row(
        "matmul",
        "sub_device_id 5",
        lambda e: ttnn.matmul(e.a, e.w, sub_device_id=ttnn.SubDeviceId(5)),
        VALUE,
        "sub_device_id",
    )
    batched = "matmul_batched_weights"
    row(batched, "weights a tensor", lambda e: ttnn.matmul_batched_weights(e.a, e.w), TYPE, "input_tensors_b")
    row(
        batched,
        "weights of two shapes",
        lambda e: ttnn.matmul_batched_weights(e.a, [e.w, e.row7]),
        VALUE,
        "logical_shape",
    )
    return c


# -- the nightly op tests (issue 35's check on tt-metal files it did not name): one block of rows
def nightly_rows() -> list[Case]:
    """ttnn.experimental.wan_fused_rmsnorm_pre_allgather / _post_allgather (``e.wan_x``: a bfloat16
    ``[1, 1, 32, 64]`` per device, ``e.wan_stats`` its stats) and the other ops the nightly files need."""
    c: list[Case] = []

    def row(target, what, call, error, names):
        c.append(Case(target, what, call, error, names))

    pre, post = ttnn.experimental.wan_fused_rmsnorm_pre_allgather, ttnn.experimental.wan_fused_rmsnorm_post_allgather
    name = "experimental.wan_fused_rmsnorm_pre_allgather"
    row(name, "float32 input", lambda e: pre(e.a), TYPE, "input_tensor")
    row(name, "row-major input", lambda e: pre(e.rm), VALUE, "TILE")
    row(name, "dtype a str", lambda e: pre(e.wan_x, dtype="bf16"), TYPE, "dtype")
    row(name, "input freed", lambda e: pre(e.freed), DEAD, "input_tensor")
    row(name, "input on the host", lambda e: pre(e.host), VALUE, "input_tensor")
    name = "experimental.wan_fused_rmsnorm_post_allgather"
    row(name, "input [1, 2, 32, 32]", lambda e: post(e.heads, e.wan_stats), VALUE, "input_tensor")
    row(name, "3 heads of 64", lambda e: post(e.wan_x, e.wan_stats, num_heads_per_device=3), VALUE, "num_heads")
    row(name, "no heads", lambda e: post(e.wan_x, e.wan_stats, num_heads_per_device=0), VALUE, "num_heads")
    row(name, "stats of other rows", lambda e: post(e.wan_x, e.heads), VALUE, "stats")
    row(name, "weight [1, 3, 40]", lambda e: post(e.wan_x, e.wan_stats, weight=e.a_bf16), VALUE, "weight")
    row(name, "rope_cos alone", lambda e: post(e.wan_x, e.wan_stats, rope_cos=e.wan_x), VALUE, "transformation_mat")
    row(name, "epsilon negative", lambda e: post(e.wan_x, e.wan_stats, epsilon=-1.0), VALUE, "epsilon")
    row(name, "stats on another mesh", lambda e: post(e.wan_x, e.other_heads), WRONG_MESH, "stats")
    ps, box, one = ttnn.padded_slice, [1, 2, 32, 32], [1, 1, 1, 1]
    row(
        "padded_slice",
        "interleaved output",
        lambda e: ps(e.heads, [0] * 4, box, one, memory_config=DRAM_MC),
        VALUE,
        "memory_config",
    )
    row(
        "padded_slice",
        "step 2",
        lambda e: ps(e.heads, [0] * 4, box, [1, 1, 2, 1], memory_config=e.bad_shard_config),
        VALUE,
        "padded_slice_step",
    )
    row(
        "padded_slice",
        "3-D input",
        lambda e: ps(e.a, [0] * 3, [1, 3, 40], [1] * 3, memory_config=e.bad_shard_config),
        VALUE,
        "4D",
    )
    row(
        "padded_slice",
        "end past the shape",
        lambda e: ps(e.heads, [0] * 4, [1, 2, 64, 32], one, memory_config=e.bad_shard_config),
        VALUE,
        "padded shape",
    )
    row(
        "padded_slice",
        "input freed",
        lambda e: ps(e.freed, [0] * 3, [1, 3, 40], [1] * 3, memory_config=e.bad_shard_config),
        DEAD,
        "input_tensor",
    )
    gs = ttnn.grid_sample
    row(
        "grid_sample",
        "channels batched, K = 1",
        lambda e: gs(e.nhwc, e.grid2, batch_output_channels=True),
        VALUE,
        "batch_output_channels",
    )
    return c


# ----------------------------------------------------------- moreh's training ops (moreh2 helper)
# ttnn.operations.moreh: the softmax family, nll_loss forms, adam / adamw / sgd, clip_grad_norm,
# layer / group norms.  e.a_bf16 is BFLOAT16 TILE [1, 3, 40] per device, e.a FLOAT32, e.rm ROW_MAJOR.


def moreh_train_rows() -> list[Case]:
    m = importlib.import_module("meshnn.ops.loading").moreh
    strategy = m.SoftmaxOpParallelizationStrategy
    c = [
        Case("moreh.softmax", "input on the host", lambda e: m.softmax(e.host, 1), VALUE, "input_tensor"),
        Case("moreh.softmax", "input ROW_MAJOR", lambda e: m.softmax(e.rm, 1), VALUE, "input_tensor.*TILE"),
        Case("moreh.softmax", "input freed", lambda e: m.softmax(e.freed, 1), DEAD, "input_tensor"),
        Case("moreh.softmax", "dim 3 of rank 3", lambda e: m.softmax(e.a_bf16, 3), VALUE, "dim 3"),
        Case("moreh.softmax", "dim -1 (a uint32)", lambda e: m.softmax(e.a_bf16, -1), TYPE, "dim"),
        Case(
            "moreh.softmax",
            "LARGE_C for dim W",
            lambda e: m.softmax(e.a_bf16, 2, strategy=strategy.LARGE_C),
            VALUE,
            "strategy|LARGE_C",
        ),
        Case(
            "moreh.softmax",
            "output on another mesh",
            lambda e: m.softmax(e.a_bf16, 2, output_tensor=e.other),
            WRONG_MESH,
            "output_tensor",
        ),
        Case("moreh.softmin", "dim a str", lambda e: m.softmin(e.a_bf16, "2"), TYPE, "dim"),
        Case(
            "moreh.logsoftmax",
            "compute_kernel_config a str",
            lambda e: m.logsoftmax(e.a_bf16, 2, compute_kernel_config="hifi4"),
            TYPE,
            "compute_kernel_config",
        ),
        Case(
            "moreh.softmax_backward",
            "output_grad of another shape",
            lambda e: m.softmax_backward(e.a_bf16, e.heads, 1),
            VALUE,
            "output_grad_tensor",
        ),
        Case(
            "moreh.softmin_backward",
            "output FLOAT32",
            lambda e: m.softmin_backward(e.a, e.a_bf16, 1),
            TYPE,
            "output_tensor",
        ),
        Case("moreh.nll_loss", "input FLOAT32", lambda e: m.nll_loss(e.a, e.i32, "sum"), TYPE, "input_tensor"),
        Case(
            "moreh.nll_loss", "target BFLOAT16", lambda e: m.nll_loss(e.a_bf16, e.a_bf16, "sum"), TYPE, "target_tensor"
        ),
        Case("moreh.nll_loss", "reduction avg", lambda e: m.nll_loss(e.a_bf16, e.i32, "avg"), VALUE, "reduction"),
        Case(
            "moreh.nll_loss",
            "mean without a divisor",
            lambda e: m.nll_loss(e.a_bf16, e.i32, "mean"),
            VALUE,
            "divisor_tensor",
        ),
        Case(
            "moreh.nll_loss_backward",
            "no input_grad_tensor",
            lambda e: m.nll_loss_backward(e.i32, e.a_bf16, False),
            VALUE,
            "input_grad_tensor",
        ),
        Case(
            "moreh.nll_loss_backward",
            "reduction_mean 1",
            lambda e: m.nll_loss_backward(e.i32, e.a_bf16, 1),
            TYPE,
            "reduction_mean",
        ),
        Case(
            "moreh.nll_loss_unreduced_backward",
            "no input_grad_tensor",
            lambda e: m.nll_loss_unreduced_backward(e.i32, e.a_bf16),
            VALUE,
            "input_grad_tensor",
        ),
        Case("moreh.adam", "param FLOAT32", lambda e: m.adam(e.a, e.a_bf16, e.a_bf16, e.a_bf16), TYPE, "param_in"),
        Case("moreh.adam", "grad freed", lambda e: m.adam(e.a_bf16, e.freed, e.a_bf16, e.a_bf16), DEAD, "grad"),
        Case(
            "moreh.adam",
            "amsgrad without max_exp_avg_sq_in",
            lambda e: m.adam(e.a_bf16, e.a_bf16, e.a_bf16, e.a_bf16, amsgrad=True),
            VALUE,
            "max_exp_avg_sq_in",
        ),
        Case("moreh.adam", "step -1", lambda e: m.adam(e.a_bf16, e.a_bf16, e.a_bf16, e.a_bf16, step=-1), TYPE, "step"),
        Case("moreh.adamw", "lr a str", lambda e: m.adamw(e.a_bf16, e.a_bf16, e.a_bf16, e.a_bf16, "0.1"), TYPE, "lr"),
        Case(
            "moreh.adamw",
            "exp_avg of another shape",
            lambda e: m.adamw(e.a_bf16, e.a_bf16, e.heads, e.a_bf16),
            VALUE,
            "exp_avg_in",
        ),
        Case("moreh.sgd", "no momentum_initialized", lambda e: m.sgd(e.a_bf16, e.a_bf16), TYPE, "momentum_initialized"),
        Case(
            "moreh.sgd",
            "initialized momentum without a buffer",
            lambda e: m.sgd(e.a_bf16, e.a_bf16, momentum=0.9, momentum_initialized=True),
            VALUE,
            "momentum_buffer_in",
        ),
        Case("moreh.clip_grad_norm", "inputs a tensor", lambda e: m.clip_grad_norm(e.a_bf16, 1.0), TYPE, "inputs"),
        Case("moreh.clip_grad_norm", "inputs empty", lambda e: m.clip_grad_norm([], 1.0), TYPE, "inputs"),
        Case("moreh.clip_grad_norm", "max_norm a str", lambda e: m.clip_grad_norm([e.a_bf16], "1"), TYPE, "max_norm"),
        Case("moreh.layer_norm", "normalized_dims 0", lambda e: m.layer_norm(e.a_bf16, 0), VALUE, "normalized_dims"),
        Case(
            "moreh.layer_norm",
            "normalized_dims past the rank",
            lambda e: m.layer_norm(e.a_bf16, 4),
            VALUE,
            "normalized_dims",
        ),
        Case(
            "moreh.layer_norm",
            "gamma of another size",
            lambda e: m.layer_norm(e.a_bf16, 1, gamma=e.heads),
            VALUE,
            "gamma",
        ),
        Case(
            "moreh.layer_norm_backward",
            "output_grad of another shape",
            lambda e: m.layer_norm_backward(e.heads, e.a_bf16, e.a_bf16, e.a_bf16, 1),
            VALUE,
            "output_grad",
        ),
        Case("moreh.group_norm", "input of rank 3", lambda e: m.group_norm(e.a_bf16, 1), VALUE, "input"),
        Case("moreh.group_norm", "num_groups not dividing C", lambda e: m.group_norm(e.heads, 3), VALUE, "num_groups"),
        Case(
            "moreh.group_norm",
            "are_required_outputs of one",
            lambda e: m.group_norm(e.heads, 1, are_required_outputs=(True,)),
            TYPE,
            "are_required_outputs",
        ),
        Case(
            "moreh.group_norm_backward",
            "mean of another group count",
            lambda e: m.group_norm_backward(e.heads, e.heads, e.heads, e.heads, 2),
            VALUE,
            "mean",
        ),
    ]
    return c


# -- ttnn.operations.moreh (moreh1: products, reductions, norm, cumsum, arange, getitem, fold) ------


def moreh_rows() -> list[Case]:
    """moreh's ops refuse what moreh's checks refuse, naming the argument (``e.heads``: bfloat16
    [1, 2, 32, 32] per device, ``e.a_bf16``: bfloat16 [1, 3, 40])."""
    from meshnn.ops.loading import moreh

    c: list[Case] = []

    def row(target, what, call, error, names):
        c.append(Case(f"operations.moreh.{target}", what, call, error, names))

    cfg = ttnn.WormholeComputeKernelConfig
    row("matmul", "input is float32", lambda e: moreh.matmul(e.a, e.heads), TYPE, "input")
    row("matmul", "K differs", lambda e: moreh.matmul(e.a_bf16, e.heads), VALUE, "K")
    row("matmul", "other on another mesh", lambda e: moreh.matmul(e.heads, e.other_heads), WRONG_MESH, "other")
    row("matmul", "transpose_input an int", lambda e: moreh.matmul(e.heads, e.heads, transpose_input=1), TYPE,
        "transpose_input")  # fmt: skip
    row("matmul", "config a dict", lambda e: moreh.matmul(e.heads, e.heads, compute_kernel_config={}), TYPE,
        "compute_kernel_config")  # fmt: skip
    row("matmul", "output of another shape", lambda e: moreh.matmul(e.heads, e.heads, output=e.a_bf16), VALUE,
        "output")  # fmt: skip
    row("matmul_backward", "are_required_outputs one bool",
        lambda e: moreh.matmul_backward(e.heads, e.heads, e.heads, are_required_outputs=(True,)), TYPE,
        "are_required_outputs")  # fmt: skip
    row("bmm", "rank-4 input", lambda e: moreh.bmm(e.heads, e.heads), VALUE, "input")
    row("bmm_backward", "rank-4 mat2", lambda e: moreh.bmm_backward(e.a_bf16, e.a_bf16, e.heads), VALUE, "mat2")
    row("linear", "bias of 120 values", lambda e: moreh.linear(e.heads, e.heads, bias=e.a_bf16), VALUE, "bias")
    row("linear_backward", "weight not [out, in]",
        lambda e: moreh.linear_backward(e.heads, e.heads, e.heads), VALUE, "weight")  # fmt: skip
    row("dot", "input not [1, 1, 1, W]", lambda e: moreh.dot(e.heads, e.heads), VALUE, "input")
    row("dot_backward", "output_grad of many values",
        lambda e: moreh.dot_backward(e.heads, e.heads, e.heads), VALUE, "output_grad")  # fmt: skip
    row("sum", "dim out of range", lambda e: moreh.sum(e.heads, 4), VALUE, "dim")
    row("sum", "float32 input", lambda e: moreh.sum(e.a, 1), TYPE, "input")
    row("sum", "ROW_MAJOR input", lambda e: moreh.sum(e.rm, 1), VALUE, "input")
    row("sum", "keepdim a str", lambda e: moreh.sum(e.heads, 1, keepdim="yes"), TYPE, "keepdim")
    row("sum_backward", "no input shape", lambda e: moreh.sum_backward(e.heads, dim=1), VALUE, "input")
    row("mean", "divisor", lambda e: moreh.mean(e.heads, dim=1, divisor=3), VALUE, "divisor")
    row("mean_backward", "output_grad too big",
        lambda e: moreh.mean_backward(e.heads, dim=1, input_grad_shape=[1, 2, 32, 32]), VALUE,
        "output_grad")  # fmt: skip
    row("norm", "p a str", lambda e: moreh.norm(e.heads, "fro"), TYPE, "p")
    row("norm_backward", "output of the input's shape",
        lambda e: moreh.norm_backward(e.heads, e.heads, e.heads, 2.0, dim=1), VALUE, "output")  # fmt: skip
    row("cumsum", "input on the host", lambda e: moreh.cumsum(e.host, 0), VALUE, "input")
    row("cumsum_backward", "a freed output_grad", lambda e: moreh.cumsum_backward(e.freed, 0), DEAD, "output_grad")
    row("arange", "step 0", lambda e: moreh.arange(0, 10, 0, e.mesh), VALUE, "step")
    row("arange", "any a number", lambda e: moreh.arange(0, 10, 1, 3), TYPE, "any")
    row("arange", "bounds against the step", lambda e: moreh.arange(10, 0, 1, e.mesh), VALUE, "bound")
    row("arange", "bfloat8_b", lambda e: moreh.arange(0, 10, 1, e.mesh, dtype=BFP8), VALUE, "dtype")
    row("getitem", "index_dims not consecutive",
        lambda e: moreh.getitem(e.i32, [e.i32, e.i32], [0, 2]), VALUE, "index_dims")  # fmt: skip
    row("getitem", "float index", lambda e: moreh.getitem(e.heads, [e.a_bf16], [1]), TYPE, "index_tensors")
    row("fold", "kernel_size of 3", lambda e: moreh.fold(e.rm, None, [4, 4], [2, 2, 2]), VALUE, "kernel_size")
    row("fold", "TILE input", lambda e: moreh.fold(e.a, None, [4, 4], [2, 2]), VALUE, "ROW_MAJOR")
    row("matmul", "config's fp32 flag read from a bad config",
        lambda e: moreh.matmul(e.heads, e.heads, compute_kernel_config=cfg), TYPE, "compute_kernel_config")  # fmt: skip
    return c


# -- branch ccl2: fabric collectives on a tensor populating some devices, llama_all_gather_matmul_async
def ccl2_rows() -> list[Case]:
    """``e.half``: a tensor populating 4 of the 2x4 mesh's 8 devices (a 1x4 mapper)."""
    c: list[Case] = []

    def row(target, what, call, error, names):
        c.append(Case(target, what, call, error, names))

    ag, op = ttnn.experimental.all_gather_async, "experimental.all_gather_async"
    row(
        op,
        "partial tensor one device along its cluster_axis",
        lambda e: ag(e.half, None, 2, e.sems[:2], cluster_axis=0),
        VALUE,
        "cluster_axis 0 of the \\[1, 4\\] mesh has 1",
    )
    row("all_gather", "partial tensor", lambda e: ttnn.all_gather(e.half, 2), VALUE, "populates 4 of 8")
    lagmm, op = ttnn.experimental.llama_all_gather_matmul_async, "experimental.llama_all_gather_matmul_async"
    linear = ttnn.Topology.Linear
    row(op, "intermediate not the gathered shape", lambda e: lagmm(e.a, e.w, e.a, 2, 1, e.mesh, linear, e.sems[0]),
        VALUE, "intermediate_tensor")  # fmt: skip
    row(op, "two semaphores", lambda e: lagmm(e.a, e.w, e.a, 2, 1, e.mesh, linear, e.sems[:2]), VALUE, "semaphore")
    row(op, "cluster_axis None", lambda e: lagmm(e.a, e.w, e.a, 2, None, e.mesh, linear, e.sems[0]), TYPE, "cluster")
    row(op, "topology a str", lambda e: lagmm(e.a, e.w, e.a, 2, 1, e.mesh, "Linear", e.sems[0]), TYPE, "topology")
    row(op, "mesh_device another", lambda e: lagmm(e.a, e.w, e.a, 2, 1, e.other_mesh, linear, e.sems[0]),
        WRONG_MESH, "mesh_device")  # fmt: skip
    row(op, "weight freed", lambda e: lagmm(e.a, e.freed, e.a, 2, 1, e.mesh, linear, e.sems[0]), DEAD, "input_tensor1")
    return c


# -- branch models (issue 30): names the newest tt_transformers (tt-metal 2026-06) calls --------------
def models_rows() -> list[Case]:
    """ttnn.div's newer keywords (``rounding_mode``, ``fast_and_approximate_mode``)."""
    c: list[Case] = []

    def row(target, what, call, error, names):
        c.append(Case(target, what, call, error, names))

    row("div", "rounding_mode not a mode", lambda e: ttnn.div(e.a, 2.0, rounding_mode="round"), VALUE, "rounding_mode")
    row("div", "round_mode and rounding_mode disagree", lambda e: ttnn.div(e.a, 2.0, round_mode="trunc",
        rounding_mode="floor"), VALUE, "disagree")  # fmt: skip
    row("div", "fast_and_approximate_mode not a bool", lambda e: ttnn.div(e.a, e.a2, fast_and_approximate_mode="yes"),
        TYPE, "fast_and_approximate_mode")  # fmt: skip
    row("scatter_add", "src bfloat16", lambda e: ttnn.scatter_add(e.rm, 0, e.ids, e.a_bf16), VALUE, "rank|dtype")
    row("scatter_add", "fp32 tiles", lambda e: ttnn.scatter_add(e.a, 0, e.ids, e.a), VALUE, "rank|fp32")
    row("scatter_add", "reduce is not its keyword", lambda e: ttnn.scatter_add(e.rm, -1, e.ids, e.rm, reduce="add"),
        TYPE, "reduce")  # fmt: skip
    row("scatter_add", "index freed", lambda e: ttnn.scatter_add(e.rm, -1, e.freed, e.rm), DEAD, "index")
    row("slice", "output_tensor not the slice's shape", lambda e: ttnn.slice(e.a, [0, 0, 0], [1, 2, 40],
        output_tensor=e.a2), VALUE, "output_tensor")  # fmt: skip
    row("slice", "output_tensor freed", lambda e: ttnn.slice(e.a, [0, 0, 0], [1, 3, 40], output_tensor=e.freed),
        DEAD, "output_tensor")  # fmt: skip
    row("slice", "output_tensor on another mesh", lambda e: ttnn.slice(e.a, [0, 0, 0], [1, 3, 40],
        output_tensor=e.other), WRONG_MESH, "output_tensor")  # fmt: skip
    hf, op = ttnn.experimental.rotary_embedding_hf, "experimental.rotary_embedding_hf"
    row(op, "cos and sin shapes differ", lambda e: hf(e.heads, e.heads, e.a_bf16), VALUE, "Sin shapes")
    row(op, "prefill cos batch 2", lambda e: hf(e.heads, e.heads, e.heads), VALUE, "batch dim")
    row(op, "decode input interleaved", lambda e: hf(e.heads, e.heads, e.heads, is_decode_mode=True), VALUE, "sharded")
    row(op, "is_decode_mode a str", lambda e: hf(e.heads, e.heads, e.heads, is_decode_mode="no"), TYPE, "is_decode")
    row(op, "cos freed", lambda e: hf(e.heads, e.freed, e.heads), DEAD, "cos_cache")
    row(op, "sin on another mesh", lambda e: hf(e.heads, e.heads, e.other_heads), WRONG_MESH, "sin_cache|mesh")
    row("argmax", "output_tensor float", lambda e: ttnn.argmax(e.rm, dim=-1, output_tensor=e.a2), TYPE, "UINT32")
    row("argmax", "output_tensor freed", lambda e: ttnn.argmax(e.rm, dim=-1, output_tensor=e.freed), DEAD, "output")
    row("topk", "indices_tensor freed", lambda e: ttnn.topk(e.heads, 2, indices_tensor=e.freed), DEAD, "indices_tensor")
    return c


# -- branch misc41 (issue 30's launcher and reports): graph report files, sub-contexts ------------------
def misc41_rows() -> list[Case]:
    """``ttnn.graph``'s report files and levelized graphs, ``ttnn.graph_report``, tt-run's sub-contexts."""
    c: list[Case] = []

    def row(target, what, call, error, names):
        c.append(Case(target, what, call, error, names))

    graph, report = ttnn.graph, ttnn.graph_report
    row("graph.end_graph_capture_to_file", "report_path an int", lambda e: graph.end_graph_capture_to_file(42),
        TYPE, "report_path")  # fmt: skip
    row("graph.end_graph_capture_to_file", "report_path a folder", lambda e: graph.end_graph_capture_to_file(e.tmp),
        TYPE, "report_path")  # fmt: skip
    row("graph.extract_levelized_graph", "max_level 0", lambda e: graph.extract_levelized_graph([], max_level=0),
        VALUE, "max_level")  # fmt: skip
    row("graph.extract_levelized_graph", "trace not a node list", lambda e: graph.extract_levelized_graph("x"),
        TYPE, "trace")  # fmt: skip
    row("graph.visualize", "file_name .txt", lambda e: graph.visualize([], file_name="g.txt"), VALUE, "suffix")
    row("graph_report.import_report", "report_path an int", lambda e: report.import_report(42, e.tmp),
        TYPE, "report_path")  # fmt: skip
    row("graph_report.import_report", "no such report", lambda e: report.import_report(e.tmp / "none.json", e.tmp),
        VALUE, "neither a report file nor a folder")  # fmt: skip
    row("SubcontextId", "a str", lambda e: ttnn.SubcontextId("0"), TYPE, "value")
    row("FabricRouterConfig", "payload negative", lambda e: setattr(ttnn.FabricRouterConfig(),
        "max_packet_payload_size_bytes", -1), VALUE, "max_packet_payload_size_bytes")  # fmt: skip
    row("set_fabric_config", "router_config an int", lambda e: ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_1D,
        router_config=9000), TYPE, "router_config")  # fmt: skip
    row("distributed_context_subcontext_size", "id past the sub-contexts",
        lambda e: ttnn.distributed_context_subcontext_size(1), ttnn.MeshnnError, "subcontext_id")  # fmt: skip
    row("distributed_context_local_to_world_rank", "local rank past the sub-context",
        lambda e: ttnn.distributed_context_local_to_world_rank(0, 1), ttnn.MeshnnError, "local_rank")  # fmt: skip
    row("distributed_context_local_to_world_rank", "id negative",
        lambda e: ttnn.distributed_context_local_to_world_rank(-1, 0), ttnn.MeshnnError, "subcontext_id")  # fmt: skip
    return c


# -- branch moe41 (issue 30): what tt_transformers' Mixtral tests (tt-metal 2026-06) pass ---------------
def moe41_rows() -> list[Case]:
    """``set_fabric_config`` given an int (tt-metal's Mixtral tests pass ``fabric_config: True``)."""
    c: list[Case] = []
    row = lambda *r: c.append(Case(*r))  # noqa: E731
    row("set_fabric_config", "an int of no member", lambda e: ttnn.set_fabric_config(99), VALUE, "FabricConfig")
    row("set_fabric_config", "a float", lambda e: ttnn.set_fabric_config(1.0), TYPE, "FabricConfig")
    return c


# -- branch galaxy42 (issue 30): the Llama-70B Galaxy whole TtTransformer's prefill ----------------------
def galaxy42_tensors(mesh) -> SimpleNamespace:
    """A bfloat8_b paged cache [8 blocks, 2 heads, 32, 64], a fill [1, 2, 64, 64] and an INT32
    [2, 4] page table, replicated (DRAM): the valid arguments the rows below keep."""

    def rep(t, dtype, layout=TILE):
        return ttnn.from_torch(t, dtype, layout=layout, device=mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh))

    return SimpleNamespace(
        cache=rep(torch.zeros(8, 2, 32, 64), BFP8),
        fill=rep(torch.ones(1, 2, 64, 64), BF16),
        table=rep(torch.arange(8).reshape(2, 4).int(), I32, RM),
        user=rep(torch.tensor([1.0]), F32, RM),
    )


def galaxy42_rows() -> list[Case]:
    """``paged_fill_cache``'s ``batch_idx_tensor``: one UINT32 / INT32 element (tt-metal's checks)."""
    c: list[Case] = []
    fill = ttnn.experimental.paged_fill_cache
    op = "experimental.paged_fill_cache"
    c.append(Case(op, "batch_idx_tensor float", lambda e: fill(e.g42.cache, e.g42.fill, e.g42.table,
        batch_idx_tensor=e.g42.user), TYPE, "integer type"))  # fmt: skip
    c.append(Case(op, "batch_idx_tensor of 7 ids", lambda e: fill(e.g42.cache, e.g42.fill, e.g42.table,
        batch_idx_tensor=e.ids), VALUE, "single element"))  # fmt: skip
    c.append(Case(op, "batch_idx_tensor freed", lambda e: fill(e.g42.cache, e.g42.fill, e.g42.table,
        batch_idx_tensor=e.freed), DEAD, "batch_idx_tensor"))  # fmt: skip
    return c


# -- branch gptoss42 (issue 30): what gpt-oss's module tests (tt-metal 2026-06) pass -------------------
def gptoss42_rows() -> list[Case]:
    """Prefill SDPA's ``attention_sink`` and ``sliding_window_size`` (gpt-oss's prefill attention)."""
    c: list[Case] = []
    row = lambda *r: c.append(Case(*r))  # noqa: E731
    sdpa = ttnn.transformer.scaled_dot_product_attention
    row("transformer.scaled_dot_product_attention", "attention_sink of q's shape",
        lambda e: sdpa(e.heads, e.heads, e.heads, attention_sink=e.heads), VALUE, "Attention sink")  # fmt: skip
    row("transformer.scaled_dot_product_attention", "attention_sink on the host",
        lambda e: sdpa(e.heads, e.heads, e.heads, attention_sink=e.host_tile), VALUE, "attention_sink")  # fmt: skip
    row("transformer.scaled_dot_product_attention", "sliding_window_size negative",
        lambda e: sdpa(e.heads, e.heads, e.heads, sliding_window_size=-4), TYPE, "sliding_window_size")  # fmt: skip
    row("transformer.scaled_dot_product_attention", "sliding_window_size a float",
        lambda e: sdpa(e.heads, e.heads, e.heads, sliding_window_size=4.0), TYPE, "sliding_window_size")  # fmt: skip
    meta = ttnn.experimental.all_to_all_dispatch_metadata
    op = "experimental.all_to_all_dispatch_metadata"
    row(op, "TILE tokens", lambda e: meta(e.a, e.a, e.a, e.a, cluster_axis=0), VALUE, "Input tensor")
    row("moe_routing_remap", "TILE weights", lambda e: ttnn.moe_routing_remap(e.a, 2, 2, 0), VALUE, "row major")
    row("moe_routing_remap", "weights of rank 3", lambda e: ttnn.moe_routing_remap(e.rm, 2, 2, 0), VALUE, "\\[1,E\\]")
    row("moe_routing_remap", "cluster_axis a float",
        lambda e: ttnn.moe_routing_remap(e.rm, 2, 2, 0.5), TYPE, "cluster_axis")  # fmt: skip
    row(op, "scores of the tokens' shape",
        lambda e: meta(e.moe[0], e.moe[1], e.moe[0], e.moe[2], cluster_axis=0), VALUE, "Scores tensor")  # fmt: skip
    return c


# -- branch ops45b (stop 45): tt-metal 2026-06's eltwise names ---------------------------------------
def eltwise45_rows() -> list[Case]:
    """ttnn.xielu, ttnn.bitcast and ttnn.snake_beta (newer ttnn's)."""
    c: list[Case] = []

    def row(target, what, call, error, names):
        c.append(Case(target, what, call, error, names))

    row("xielu", "alpha_p a str", lambda e: ttnn.xielu(e.a, alpha_p="big"), TYPE, "alpha_p")
    row("xielu", "input freed", lambda e: ttnn.xielu(e.freed), DEAD, "input_tensor")
    row("bitcast", "dtype a str", lambda e: ttnn.bitcast(e.a, "uint16"), TYPE, "dtype")
    row("bitcast", "a block-float dtype", lambda e: ttnn.bitcast(e.a, ttnn.bfloat8_b), VALUE, "no bitcast")
    row("snake_beta", "alpha row-major", lambda e: ttnn.snake_beta(e.a, e.rm, e.a), VALUE, "tile layout|dtype|shape")
    row("snake_beta", "alpha freed", lambda e: ttnn.snake_beta(e.a, e.freed, e.a), DEAD, "alpha")
    return c


# -- branch moe46 (stop 46): gpt-oss's fused decode combine --------------------------------------------
def moe46_rows() -> list[Case]:
    """``experimental.selective_reduce_combine`` and ``corerange_to_cores``."""
    c: list[Case] = []
    row = lambda *r: c.append(Case(*r))  # noqa: E731
    op, combine = "experimental.selective_reduce_combine", ttnn.experimental.selective_reduce_combine
    mux = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(5, 0), ttnn.CoreCoord(5, 1))])
    tail = (40, 8, 1, 2, 1, ttnn.Topology.Ring, 1, 1, 1, [ttnn.CoreCoord(0, 0)], mux)
    row(op, "TILE dense input", lambda e: combine(e.a, e.rm, e.rm, e.rm, *tail), VALUE, "dense_input_tensor")
    row(op, "float32 dense input", lambda e: combine(e.rm, e.rm, e.rm, e.rm, *tail), VALUE, "bfloat16")
    row(op, "interleaved dense input", lambda e: combine(e.moe[0], e.rm, e.rm, e.rm, *tail), VALUE, "HEIGHT_SHARDED")
    row(op, "dense input freed", lambda e: combine(e.freed, e.rm, e.rm, e.rm, *tail), DEAD, "input_tensor")
    row("corerange_to_cores", "a list of cores", lambda e: ttnn.corerange_to_cores([ttnn.CoreCoord(0, 0)]), TYPE,
        "CoreRangeSet")  # fmt: skip
    return c


# -- branch moe47 (stop 47): gpt-oss's fused decode experts ----------------------------------------------
def moe47_rows() -> list[Case]:
    """``experimental.moe_gpt``: its weights' rank, a freed input, its integer attributes."""
    c: list[Case] = []
    op = "experimental.moe_gpt"

    def call(e, **changes):
        given = dict(expert_indices=e.rm, expert_scores=e.rm, expert_mapping=e.rm, w0_w1_tensor=e.a, w2_tensor=e.a)
        first = changes.pop("input_tensor", e.rm)
        return ttnn.experimental.moe_gpt(first, **{**given, **changes})

    c.append(Case(op, "w0_w1 of rank 4", lambda e: call(e), VALUE, "rank 6"))
    c.append(Case(op, "input freed", lambda e: call(e, input_tensor=e.freed), DEAD, "input_tensor"))
    c.append(Case(op, "hidden_size a str", lambda e: call(e, hidden_size="2880"), TYPE, "hidden_size"))
    c.append(Case(op, "output_width_shard_dim 0", lambda e: call(e, output_width_shard_dim=0), VALUE,
                  "output_width_shard_dim"))  # fmt: skip
    return c


# -- branch moe48 (stop 48): DeepSeek's fused experts ------------------------------------------------------
def moe48_rows() -> list[Case]:
    """``experimental.moe_compute``, its core helpers, ``quantize_weights_via_host`` and
    ``deepseek_moe_fast_reduce_nc``."""
    c: list[Case] = []
    row = lambda *r: c.append(Case(*r))  # noqa: E731
    op, compute = "experimental.moe_compute", ttnn.experimental.moe_compute
    kw = dict(layer_id=0, output_height_shard_dim=4, intermediate_size=2048, cluster_axis=1)
    row(op, "float32 tokens", lambda e: compute(e.rm, e.rm, e.rm, e.rm, e.a, e.a, **kw), VALUE, "bfloat16")
    row(op, "tokens freed", lambda e: compute(e.freed, e.rm, e.rm, e.rm, e.a, e.a, **kw), DEAD, "tilize_input_tensor")
    cores = ttnn.experimental.get_moe_combine_cores
    row("experimental.get_moe_combine_cores", "a str mesh", lambda e: cores("mesh", 4, 4), TYPE, "MeshDevice")
    row("experimental.get_moe_combine_cores", "0 token cores", lambda e: cores(e.mesh, 0, 4), VALUE,
        "combine_token_parallel_cores")  # fmt: skip
    box = ttnn.experimental.get_moe_worker_mcast_bounding_box
    row("experimental.get_moe_worker_mcast_bounding_box", "a str hidden size", lambda e: box(e.mesh, 4, 4, "7168"),
        TYPE, "hidden_size")  # fmt: skip
    reduce = ttnn.experimental.deepseek_moe_fast_reduce_nc
    row("experimental.deepseek_moe_fast_reduce_nc", "ROW_MAJOR input", lambda e: reduce(e.rm, 0, split_size=32),
        VALUE, "TILE")  # fmt: skip
    row("experimental.deepseek_moe_fast_reduce_nc", "a str split", lambda e: reduce(e.a, 0, split_size="32"), TYPE,
        "split_size")  # fmt: skip
    quantize = ttnn.experimental.quantize_weights_via_host
    row("experimental.quantize_weights_via_host", "a str dtype",
        lambda e: quantize(e.a, dtype="bfloat4_b", memory_config=None), VALUE, "DataType")  # fmt: skip
    return c


# -- branch ds48 (stop 48): DeepSeek-V3's collectives ---------------------------------------------------
def ds48_rows() -> list[Case]:
    """``experimental.all_to_all_async_generic``, ``mesh_partition``: layout, axis, dims, divisibility, freed input."""
    op, a2a = "experimental.all_to_all_async_generic", ttnn.experimental.all_to_all_async_generic
    return [
        Case(op, "ROW_MAJOR input", lambda e: a2a(e.rm, 1, 2, cluster_axis=1), VALUE, "layout"),
        Case(op, "in_dim -1", lambda e: a2a(e.heads, -1, 2, cluster_axis=1), VALUE, "in_dim"),
        Case(op, "out_dim of 2 over 4 devices", lambda e: a2a(e.heads, 2, 1, cluster_axis=1), VALUE, "num_devices"),
        Case(op, "memory_config a str", lambda e: a2a(e.heads, 2, 3, memory_config="L1"), TYPE, "memory_config"),
        Case(op, "input freed", lambda e: a2a(e.freed, 1, 2, cluster_axis=1), DEAD, "input_tensor"),
        Case("mesh_partition", "cluster_axis 2", lambda e: ttnn.mesh_partition(e.heads, 1, 2), VALUE, "cluster axis"),
        Case("mesh_partition", "dim a str", lambda e: ttnn.mesh_partition(e.heads, "1", 1), TYPE, "dim"),
        Case("mesh_partition", "2 heads over 4", lambda e: ttnn.mesh_partition(e.heads, 1, 1), VALUE, "divisible"),
        Case("mesh_partition", "input freed", lambda e: ttnn.mesh_partition(e.freed, 1, 1), DEAD, "input_tensor"),
    ]


TABLE: list[Case] = (
    unary_family(UNARY, UNARY_FAULTS)
    + family(BINARY, BINARY_FAULTS)
    + family(PLAIN_BINARY, PLAIN_BINARY_FAULTS)
    + family(INPLACE_BINARY, INPLACE_BINARY_FAULTS)
    + family(REDUCTIONS, REDUCTION_FAULTS)
)
TABLE += written() + hostile()
TABLE += decode_rows()
TABLE += device_entry_rows()
TABLE += keyword_rows()
TABLE += registry_rows()
TABLE += family_rows()
TABLE += round3_rows()
TABLE += prefetcher_rows()
TABLE += nightly_rows()
TABLE += moreh_train_rows()  # moreh's training ops (moreh2)
TABLE += moe41_rows()  # Mixtral's fabric_config (moe41)
TABLE += gptoss42_rows()  # gpt-oss's prefill attention (gptoss42)
TABLE += moreh_rows()
TABLE += ccl2_rows()
TABLE += models_rows()  # branch models (issue 30)
TABLE += eltwise45_rows()  # branch ops45b (tt-metal 2026-06's eltwise tests)
TABLE += misc41_rows()  # branch misc41 (issue 30's launcher and reports)
TABLE += galaxy42_rows()  # branch galaxy42 (issue 30's 70B Galaxy model)
TABLE += moe46_rows()  # branch moe46 (issue 30's gpt-oss throughput path)
TABLE += moe47_rows()  # branch moe47 (issue 30's gpt-oss fused decode experts)
TABLE += moe48_rows()  # branch moe48 (issue 30's DeepSeek fused experts)
TABLE += ds48_rows()  # branch ds48 (DeepSeek-V3's MLA all-to-all)
BY_ID = {case.id: case for case in TABLE}


# ------------------------------------------------------------------------------------ the tests


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """Open meshes, tensors of every kind the table needs, and files (per-device shapes noted)."""
    rng = np.random.default_rng(20261203)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 4), system="t3k")
    other = ttnn.open_mesh_device(ttnn.MeshShape(2, 4), system="t3k")
    small = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), system="t3k")
    closed = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="t3k")

    def normal(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    def on(m, values, dtype=F32, layout=TILE, shard=True, memory_config=None):
        mapping = ttnn.ShardTensorToMesh(m, dim=0) if shard else ttnn.ReplicateTensorToMesh(m)
        return ttnn.from_torch(
            torch.from_numpy(np.ascontiguousarray(values)),
            dtype,
            layout=layout,
            device=m,
            mesh_mapper=mapping,
            memory_config=memory_config,
        )

    e = SimpleNamespace(mesh=mesh, other_mesh=other, small=small, closed_mesh=closed)
    e.tmp = tmp_path_factory.mktemp("bad_input")
    e.a = on(mesh, normal(8, 3, 40))  # [1, 3, 40]
    e.a2 = on(mesh, normal(8, 3, 40))
    e.a_bf16 = on(mesh, normal(8, 3, 40), BF16)
    e.heads = on(mesh, normal(8, 2, 32, 32), BF16)  # [1, 2, 32, 32]: attention heads
    e.b = on(mesh, normal(8, 5, 7))  # [1, 5, 7]
    e.w = on(mesh, normal(40, 24), shard=False)  # [40, 24]
    e.row7 = on(mesh, normal(7), shard=False)
    e.rm = on(mesh, normal(8, 3, 40), layout=RM)
    e.bfp8 = on(mesh, normal(8, 32, 32), BFP8)
    e.i32 = on(mesh, rng.integers(-99, 99, (8, 3, 40)).astype(np.int32), I32)  # [1, 3, 40]: integer-only ops
    e.i32b = on(mesh, rng.integers(-99, 99, (8, 5, 7)).astype(np.int32), I32)  # [1, 5, 7]
    e.table = on(mesh, normal(50, 48), layout=RM, shard=False)
    ids = rng.integers(0, 50, (8, 7)).astype(np.uint32)
    e.ids = on(mesh, ids, U32, RM)
    ids[5, 3] = 59
    e.ids_bad = on(mesh, ids, U32, RM)
    e.host = ttnn.from_torch(torch.from_numpy(normal(8, 3, 40)))  # [8, 3, 40] on the host
    e.host_like_a = ttnn.allocate_tensor_on_host(e.a.spec, mesh)
    e.host_like_a_bf16 = ttnn.allocate_tensor_on_host(ttnn.TensorSpec((1, 3, 40), BF16, TILE), mesh)
    e.host_tile = ttnn.from_torch(torch.ones(8, 64, 64), layout=TILE)  # 32 tiles: no L1 bank has room
    e.host_other_shape = ttnn.from_torch(torch.from_numpy(normal(8, 5, 7)))
    e.a_dev0 = ttnn.get_device_tensors(e.a)[0]
    e.victim = on(mesh, normal(8, 3, 40))  # a row that wrongly succeeded would free it, not e.a
    e.freed = on(mesh, normal(8, 3, 40))
    ttnn.deallocate(e.freed)
    e.other = on(other, normal(8, 3, 40))
    e.other_w = on(other, normal(40, 24), shard=False)
    e.other_heads = on(other, normal(8, 2, 32, 32), BF16)
    e.other_row40 = on(other, normal(40), shard=False)
    e.other_table = on(other, normal(50, 48), layout=RM, shard=False)
    e.other_dev0 = ttnn.get_device_tensors(e.other)[0]
    e.grid = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 0))])
    e.shard_spec = ttnn.ShardSpec(e.grid, (32, 32))
    e.sems = [ttnn.create_global_semaphore(mesh, e.grid, 0) for _ in range(3)]  # before L1 is filled
    e.other_sem = ttnn.create_global_semaphore(other, e.grid, 0)
    e.gcb = ttnn.create_global_circular_buffer(mesh, [(ttnn.CoreCoord(0, 1), e.grid)], 4096)  # branch prefetch
    e.sockets, e.small_fifo_sockets = socket_rows.socket_pairs(mesh)  # issue 30: sockets (before L1 is filled)
    e.ln_stats = ttnn.layer_norm_pre_all_gather(e.a)
    e.wan_x = on(mesh, normal(8, 1, 32, 64), BF16)  # nightly_rows: [1, 1, 32, 64] per device
    e.wan_stats = ttnn.experimental.wan_fused_rmsnorm_pre_allgather(e.wan_x)
    e.nhwc = on(mesh, normal(8, 4, 4, 32), BF16, RM)  # nightly_rows: [1, 4, 4, 32] per device
    e.grid2 = on(mesh, normal(8, 2, 2, 2), F32, RM)  # nightly_rows: a grid of one point per position
    e.bad_shard_config = ttnn.MemoryConfig(
        ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1, ttnn.ShardSpec(e.grid, (7, 40))
    )
    local = ttnn.DeviceLocalBufferConfig(page_size=1024, buffer_type=ttnn.BufferType.DRAM)
    e.buffer = ttnn.MeshBuffer.create(ttnn.ReplicatedBufferConfig(2048), local, mesh)
    e.other_buffer = ttnn.MeshBuffer.create(ttnn.ReplicatedBufferConfig(2048), local, other)
    e.freed_buffer = ttnn.MeshBuffer.create(ttnn.ReplicatedBufferConfig(2048), local, mesh)
    e.freed_buffer.deallocate()
    e.good_file = e.tmp / "good.tensorbin"
    ttnn.dump_tensor(e.good_file, e.host)
    e.garbage = e.tmp / "garbage.tensorbin"
    e.garbage.write_bytes(b"not a tensor file at all" * 10)
    e.truncated = e.tmp / "truncated.tensorbin"
    e.truncated.write_bytes(e.good_file.read_bytes()[:-100])
    view = mesh.get_memory_view(ttnn.BufferType.L1)
    pages = view.largest_contiguous_bytes_free_per_bank // 4096 * view.num_banks
    e.l1_filler = ttnn.allocate_tensor_on_device(ttnn.Shape([pages * 32, 32]), F32, TILE, mesh, L1_MC)
    assert mesh.get_memory_view(ttnn.BufferType.L1).largest_contiguous_bytes_free_per_bank < 4096  # L1 rows OOM
    e.closed = on(closed, normal(1, 3, 40))
    e.closed_mapper = ttnn.ShardTensorToMesh(closed, dim=0)
    e.closed_composer = ttnn.ConcatMeshToTensor(closed, dim=0)
    e.closed_sub = closed.create_submesh(ttnn.MeshShape(1, 1))
    e.fifo = e.tmp / "pipe.tensorbin"
    os.mkfifo(e.fifo)
    e.folder = e.tmp / "folder.tensorbin"
    e.folder.mkdir()
    ttnn.close_mesh_device(closed)
    e.moe = exchange_rows.moe_tensors(mesh)  # issue 30: the MoE all-to-all rows' tokens, ids and mapping
    e.remap = moe_remap_rows.remap_tensors(mesh)  # issue 30: moe_expert_token_remap's scores and metadata
    e.g42 = galaxy42_tensors(mesh)  # branch galaxy42: a paged cache, its fill and page table
    e.half = ttnn.from_torch(  # branch ccl2: on 4 of the 8 devices (a 1x4 mapper)
        torch.from_numpy(normal(1, 3, 128)), F32, layout=TILE, device=mesh,
        mesh_mapper=ttnn.create_mesh_mapper(
            mesh, ttnn.MeshMapperConfig([ttnn.PlacementReplicate(), ttnn.PlacementShard(2)], ttnn.MeshShape(1, 4))
        ),
    )  # fmt: skip
    yield e
    for m in (mesh, other, small):
        m.close()


def state(e) -> list:
    return [snapshot(m) for m in (e.mesh, e.other_mesh, e.small)] + [threading.active_count()]


@pytest.mark.parametrize("case_id", list(BY_ID))
def test_bad_input_raises_a_meshnn_error_naming_the_argument(env, case_id):
    case = BY_ID[case_id]
    before = state(env)
    with pytest.raises(case.error) as caught:
        case.call(env)
    err = caught.value
    assert isinstance(err, ttnn.MeshnnError) and isinstance(err, BUILTIN[case.error]), type(err).__mro__
    assert re.search(case.names, str(err)), f"the message does not name {case.names!r}: {err}"
    assert state(env) == before, "a refused call changed the memory state"


def test_the_table_is_large_and_its_ids_unique():
    assert len(BY_ID) == len(TABLE), "two rows share an id"
    assert len(TABLE) >= 400, len(TABLE)


EXEMPT = {  # public callables without a row, and why nothing given to them can be wrong
    "GetNumAvailableDevices": "takes no arguments",
    "GetDefaultDevice": "takes no arguments",
    "get_latest_programs_perf_data": "takes no arguments",
    "get_all_programs_perf_data": "takes no arguments",
    "ClearDefaultDevice": "takes no arguments",
    "get_num_devices": "takes no arguments",
    "get_device_ids": "takes no arguments",
    "get_num_pcie_devices": "takes no arguments",
    "get_pcie_device_ids": "takes no arguments",
    "get_context": "takes no arguments",
    "get_fabric_config": "takes no arguments",
    "get_tt_fabric_max_payload_size_bytes": "takes no arguments",
    "get_tt_fabric_packet_header_size_bytes": "takes no arguments",
    "get_arch_name": "takes no arguments",
    "get_dram_alignment": "takes no arguments",
    "get_l1_alignment": "takes no arguments",
    "get_max_worker_l1_unreserved_size": "takes no arguments",
    "GetNumPCIeDevices": "takes no arguments (get_num_pcie_devices under ttnn's older name)",
    "DeviceSettings": "made only by open_mesh_device (its arguments have rows); read as mesh_device.settings",
    "Device": "the MeshDevice class under ttnn's name (MeshDevice rows above)",
    "launched_under_mpi": "takes no arguments",
    "using_distributed_env": "takes no arguments",
    "MeshEvent": "made only by a queue's enqueue_record_event",
    "MemoryView": "made only by get_memory_view (rows above)",
    "TensorTopology": "made only by tensors; read with tensor.tensor_topology()",
    "PlacementReplicate": "takes no arguments",
    "NotImplementedByMeshnn": "an error",
    "DistributedError": "an error",
    "OutOfMemoryError": "an error",
    "TensorFileError": "an error",
    "MemoryTimeline": "takes no arguments (an observer: start / stop, or a with block)",
    "HostMemoryError": "an error",
    "IDevice": "MeshDevice under ttnn's interface name (MeshDevice rows above)",
    "CppTensorToMesh": "TensorToMesh under ttnn's base-class name (TensorToMesh rows above)",
    "CppMeshToTensor": "MeshToTensor under ttnn's base-class name (MeshToTensor rows above)",
    "ReplicateTensorToMeshWrapper": "ReplicateTensorToMesh under ttnn's wrapper name (its rows above)",
    "DeviceComputeKernelConfig": "WormholeComputeKernelConfig under ttnn's variant name (its rows above)",
    "SoftmaxDefaultProgramConfig": "takes no arguments",  # issue 35 (reductions / normalisation)
    "SoftmaxProgramConfig": "takes no arguments (the base of the softmax program configs)",
    "tracy_frame": "takes no arguments",
    "init_distributed_context": "takes no arguments",
    "distributed_context_is_initialized": "takes no arguments",
    "distributed_context_get_rank": "takes no arguments",
    "distributed_context_get_size": "takes no arguments",
    "distributed_context_barrier": "takes no arguments",
    "distributed_context_world_size": "takes no arguments (distributed_context_get_size)",
    "distributed_context_world_rank": "takes no arguments (distributed_context_get_rank)",
    "distributed_context_subcontext_id": "takes no arguments",  # branch misc41: tt-run's sub-contexts
    "distributed_context_subcontext_count": "takes no arguments",
    "distributed_context_subcontext_sizes": "takes no arguments",
}


def test_every_public_callable_has_a_row():
    """A public function or class of ``meshnn`` that is not an enum has a row, or is exempt."""
    targets = {case.target.split(".")[0] for case in TABLE}
    missing = []
    for name in dir(ttnn):
        value = getattr(ttnn, name)
        if name.startswith("_") or not callable(value) or inspect.ismodule(value):
            continue
        if inspect.isclass(value) and (issubclass(value, BaseException) and value not in _ERRORS_WITH_ARGS):
            continue  # errors without arguments of their own
        if inspect.isclass(value) and _is_enum(value):
            continue  # a closed set: an unknown member is the enum's own ValueError
        if name not in targets and name not in EXEMPT:
            missing.append(name)
    assert not missing, f"public callables with no bad-input row and no exemption: {missing}"
    stale = [name for name in EXEMPT if name in targets]
    assert not stale, f"exempt but with rows: {stale}"


_ERRORS_WITH_ARGS = (ttnn.NotImplementedByMeshnn, ttnn.DistributedError, ttnn.OutOfMemoryError, ttnn.TensorFileError)


def _is_enum(cls: type) -> bool:
    return issubclass(cls, enum.Enum)
