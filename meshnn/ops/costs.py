"""What an op run is to the performance model: an op's event (:class:`~meshnn.mesh.observers.OpEvent`)
and its outputs turned into the :class:`~meshnn.perf.OpDesc` that :func:`meshnn.perf.predict` times.

- Tensors: each input and output as one device holds it: the per-device padded shape (the logical
  one beside it), dtype, layout, buffer type and memory layout, from its spec.
- The op: its family and tt-metal's device-operation name (``MatmulDeviceOperation``...), from the
  registry entry of the ttnn name it was launched under (:func:`meshnn.ops.registry.family_of`).
  An op the model has no family for is estimated as a copy of its tensors, named in tt-metal's style and marked
  so in its attributes.
- Its configuration, from ``event.attrs`` by ttnn's argument names, read duck-typed by ttnn's field
  names (any object with them will do): ``compute_kernel_config.math_fidelity`` (absent: ttnn's
  default for the op, which :func:`meshnn.perf.predict` applies) and a matmul's ``packer_l1_acc`` and
  ``fp32_dest_acc_en``; ``program_config`` (the class name tells a matmul's program kind;
  ``compute_with_storage_grid_size``, ``per_core_M`` / ``per_core_N``, ``q_chunk_size`` / ``k_chunk_size``,
  ``fused_activation``); ``core_grid`` (``x``, ``y``); ``topology``, ``cluster_axis``, ``num_links``, ``dim`` of
  a collective; ``is_causal``, ``cur_pos`` of attention; fused activations (``activation``, ``activations``,
  ``input_tensor_a_activations``, ``input_tensor_b_activations``).
- Cores: the program config's grid, else ``core_grid``, else the first sharded input's shard grid, else ttnn's
  default (the whole compute grid).

May import: :mod:`meshnn.errors`, :mod:`meshnn.perf`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' tables.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence

from meshnn.mesh.observers import OpEvent
from meshnn.ops.eltwise.unary_tables import UNARY
from meshnn.ops.registry import DeviceWork, family_of
from meshnn.ops.run_op_codes import run_op_code
from meshnn.perf.conv_desc import ConvConfig
from meshnn.perf.desc import (
    AttentionConfig,
    CollectiveConfig,
    MatmulConfig,
    MatmulProgram,
    OpDesc,
    OpFamily,
    TensorDesc,
    Topology,
)
from meshnn.perf.fidelity import MathFidelity
from meshnn.perf.gather_matmul import FUSED_GATHER, FUSED_GATHER_OP, FUSED_GATHER_OP_CODE
from meshnn.perf.matmul_out_blocks import split_block
from meshnn.perf.rms_all_gather import OP_CODE as RMS_ALL_GATHER
from meshnn.perf.rs_matmul import OP_CODE as RS_MATMUL
from meshnn.perf.rs_matmul import operands as rs_operands
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.tensor import Tensor

F = OpFamily
ESTIMATED = ("meshnn_model", "unknown op: timed as a copy of its tensors")
"""The attribute an op the model has no family for carries in the ops-perf CSV."""

_PROGRAMS = {p.value: p for p in MatmulProgram if p is not MatmulProgram.DEFAULT}
_PROGRAMS["MatmulMultiCoreReuseMultiCastBatchedDRAMShardedProgramConfig"] = MatmulProgram.DRAM_SHARDED
"""(the batch-sharded DRAM program is timed as the DRAM-sharded one: weights streamed once from the
DRAM banks by their workers)"""
_ACTIVATION_ATTRS = ("activation", "activations", "input_tensor_a_activations", "input_tensor_b_activations")


@functools.lru_cache(maxsize=4096)
def tensor_desc(spec: TensorSpec) -> TensorDesc:
    """One device's share of a tensor of ``spec`` (specs are per device), as the model sees it."""
    memory = spec.memory_config
    padded, logical = tuple(spec.padded_shape), tuple(spec.shape)
    return TensorDesc(
        padded or (1,),
        spec.dtype.name,
        spec.layout,
        memory.buffer_type,
        memory.memory_layout,
        logical_shape=logical or (1,),
    )


def ttnn_name(op: str) -> str:
    """``op``'s ttnn name: a C++ name in a graph (``ttnn::experimental::x``) as ``experimental.x``; a ttnn
    name as it is."""
    return op[len("ttnn::") :].replace("::", ".") if op.startswith("ttnn::") else op


def device_work(op: str) -> DeviceWork:
    """What a run of ``op`` puts on the devices in tt-metal, from its registry entry's ``runs``: ``op`` is a
    ttnn name (``zeros``, ``experimental.x``) or its C++ name in a graph (``ttnn::zeros``); an op outside
    the registry (``to_layout``...) runs a program."""
    entry = family_of(ttnn_name(op))
    return DeviceWork.PROGRAM if entry is None else entry.runs


def op_name(op: str) -> str:
    """The ttnn op name without its namespace: ``transformer.scaled_dot_product_attention`` ->
    ``scaled_dot_product_attention``."""
    return op.rsplit(".", 1)[-1]


def op_desc(event: OpEvent, outputs: Sequence[Tensor]) -> OpDesc | None:
    """The description of the op ``event`` with its ``outputs``; None for an op with no tensor
    in or out (nothing the model can time)."""
    inputs = tuple(tensor_desc(t.spec) for t in event.inputs)
    outs = tuple(tensor_desc(t.spec) for t in outputs)
    if not inputs and not outs:
        return None
    inputs = inputs or outs[:1]  # an op that only writes (a fill): its output stands for the bytes
    name, attrs = op_name(event.op), event.attrs
    entry = None if name in _BY_TENSORS else family_of(event.op)
    family, code = (entry.family, entry.device_operation) if entry is not None else _by_tensors(name, inputs, outs)
    code = run_op_code(name, attrs, event.inputs, code)
    extra: dict[str, object] = {}
    if family is F.MATMUL:
        extra["matmul"] = matmul_config(attrs)
        if attrs.get(FUSED_GATHER):  # all_gather_matmul_async's matmul: one row with the gather it overlaps
            code, extra["collective"] = FUSED_GATHER_OP_CODE, collective_config(attrs, event.mesh, len(event.coords))
    elif family.is_collective or family is F.MOE_COMPUTE or code == RMS_ALL_GATHER:  # moe_compute: its combine's line
        extra["collective"] = collective_config(attrs, event.mesh, len(event.coords))
        if code == RS_MATMUL:  # llama_rs_matmul: one row, its products beside its scatter (meshnn.perf.rs_matmul)
            (inputs, outs), extra["matmul"] = rs_operands(attrs, inputs, outs), matmul_config(attrs)
    elif family in (F.SDPA, F.SDPA_DECODE):
        extra["attention"] = attention_config(attrs, decode=family is F.SDPA_DECODE)
    if isinstance(attrs.get("conv"), ConvConfig):  # a conv2d: its window, for meshnn.perf.conv
        extra["conv"] = attrs["conv"]
        code = F.MATMUL.value if attrs["conv"].runs_as_matmul else code  # ttnn runs a 1x1 conv as ttnn.linear
    if name == "dram_prefetcher":  # it streams every layer's weights: num_layers of tensors[:-1], then the addresses
        inputs = inputs[:-1] * int(attrs.get("num_layers", 1)) + inputs[-1:]  # type: ignore[call-overload]
    if name == "deepseek_moe_reduce_scatter":  # its 8 intermediates aside, one input: the 8 pieces of the last dim
        inputs, outs = (_joined(inputs),), outs[-1:]
    if family is F.POINT_TO_POINT and not outs:  # a send (send_async, send_async_d2h): its input is the bytes moved
        outs = inputs[:1]
    if family in (F.KV_UPDATE, F.KV_FILL) and outs:
        inputs, outs = (outs[0], *inputs), ()  # written in place: the cache (the op's output) is inputs[0]
    return OpDesc(
        family,
        inputs,
        outs,
        op_code=code,
        name=f"ttnn.{FUSED_GATHER_OP if attrs.get(FUSED_GATHER) else event.op}",
        fidelity=fidelity(attrs),
        core_grid=cores_grid(attrs, event.inputs, family),
        unary_ops=(name,) if family is F.UNARY and name in UNARY else activations(attrs),
        attributes=_attributes(name, entry, attrs),
        **extra,  # type: ignore[arg-type]
    )


_BY_TENSORS = ("to_layout", "to_memory_config")


def _joined(pieces: Sequence[TensorDesc]) -> TensorDesc:
    """The tensor ``pieces`` (alike) make side by side along their last dim."""
    first = pieces[0]
    logical = first.logical_shape or first.shape
    return dataclasses.replace(
        first,
        shape=(*first.shape[:-1], first.shape[-1] * len(pieces)),
        logical_shape=(*logical[:-1], logical[-1] * len(pieces)),
    )


def _attributes(name: str, entry: object, attrs: Mapping[str, object]) -> tuple[tuple[str, str], ...]:
    """What the model reads beyond the tensors and configs: an unknown op's estimate mark, argmax's
    ``use_multicore``, the Llama form of ``all_reduce_async`` (its own buffer tensor: one multicast), a
    norm's ``fp32_dest_acc_en`` (its program's block size)."""
    if _unknown(name, entry, attrs):
        return (ESTIMATED,)
    if name == "argmax":
        return (("use_multicore", str(attrs.get("use_multicore") is True)),)
    if name == "all_reduce_async" and attrs.get("buffer_tensor") is not None:
        return (("multicast", "True"),)
    if getattr(entry, "family", None) is F.NORM and accumulation(attrs)[1]:  # the norm's blocks: 4 tiles, not 8
        return (("fp32_dest_acc_en", "True"),)
    kernel = attrs.get("kernel_size")  # a pool's window and the sharding it asks for (meshnn.perf.pool reads them)
    if getattr(entry, "device_operation", "") == "Pool2D" and isinstance(kernel, tuple) and len(kernel) == 2:
        scheme = getattr(attrs.get("applied_shard_scheme"), "name", None)
        return (("kernel_size", f"{kernel[0]}x{kernel[1]}"),) + ((("shard_scheme", scheme),) if scheme else ())
    if name == "gather" and isinstance(attrs.get("dim"), int):  # the dim it gathers along (meshnn.perf.gather)
        return (("dim", str(attrs["dim"])),)
    if name == "permute" and isinstance(attrs.get("dims"), tuple):  # which program tt-metal runs (transpose HC...)
        return (("dims", ",".join(str(d) for d in attrs["dims"])),)  # type: ignore[union-attr]
    return ()


def _unknown(name: str, entry: object, attrs: Mapping[str, object]) -> bool:
    """Whether the model has no family for the op: no registry entry, one it times as a copy, or a
    bilinear upsample (its program tilizes and weighs four neighbours on the FPU; nearest's is a copy)."""
    if name in _BY_TENSORS:
        return False
    if name == "upsample" and attrs.get("mode") == "bilinear":
        return True
    return entry is None or not entry.modelled  # type: ignore[attr-defined]


def _by_tensors(name: str, inputs: tuple[TensorDesc, ...], outs: tuple[TensorDesc, ...]) -> tuple[OpFamily, str]:
    """The family of an op decided by what it does to its tensor: ``to_layout`` tilizes, untilizes,
    typecasts or copies; ``to_memory_config`` shards, unshards, reshards or copies.  Any other op
    is unknown: a copy named as tt-metal would name it."""
    source, target = inputs[0], (outs or inputs)[0]
    if name == "to_layout":
        if source.layout is not target.layout:
            return (F.TILIZE, "") if target.layout.name == "TILE" else (F.UNTILIZE, "")
        return (F.TYPECAST, "") if source.dtype != target.dtype else (F.COPY, "")
    if name == "to_memory_config":
        if source.sharded and target.sharded:
            return F.COPY, "ReshardDeviceOperation"
        if target.sharded:
            return F.COPY, "InterleavedToShardedDeviceOperation"
        if source.sharded:
            return F.COPY, "ShardedToInterleavedDeviceOperation"
        return F.COPY, ""
    return F.COPY, "".join(part.title() for part in name.split("_")) + "DeviceOperation"


# ---------------------------------------------------------------------- configs, duck-typed


def fidelity(attrs: Mapping[str, object]) -> MathFidelity | None:
    """``compute_kernel_config.math_fidelity`` (an enum, its name or tt-metal's number); None when
    the op was given no compute-kernel config (ttnn's default then applies)."""
    value = getattr(attrs.get("compute_kernel_config"), "math_fidelity", None)
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return MathFidelity(value)
    return MathFidelity.parse(getattr(value, "name", value))


def grid_of(value: object) -> tuple[int, int] | None:
    """(x, y) of a grid: a ``CoreGrid`` / ``CoreCoord`` (``x``, ``y``), an (x, y) pair, or a
    ``CoreRangeSet`` (its ``num_cores()`` as one row); None when ``value`` is none of those."""
    if value is None:
        return None
    x, y = getattr(value, "x", None), getattr(value, "y", None)
    if isinstance(x, int) and isinstance(y, int):
        return x, y
    if isinstance(value, tuple | list) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return int(value[0]), int(value[1])
    count = getattr(value, "num_cores", None)
    if callable(count):
        return int(count()), 1
    return None


def cores_grid(
    attrs: Mapping[str, object], inputs: Sequence[Tensor], family: OpFamily | None = None
) -> tuple[int, int] | None:
    """The cores an op runs on: its program config's grid, its ``core_grid``, the shard grid of
    its first sharded input, or None (ttnn's default: the whole compute grid).  Attention takes no
    shard grid: without a program config, tt-metal's SDPA programs use the device's compute grid
    whatever q's sharding (a decode q is height-sharded one user per core)."""
    program = _program(attrs, family)
    grid = grid_of(getattr(program, "compute_with_storage_grid_size", None)) or grid_of(attrs.get("core_grid"))
    if grid is not None or family in (F.SDPA, F.SDPA_DECODE):
        return grid
    for tensor in inputs:
        shard = tensor.spec.memory_config.shard_spec
        if shard is not None:
            return grid_of(shard.grid)
    return None


def _program(attrs: Mapping[str, object], family: OpFamily | None) -> object:
    """The op's ``program_config``; a matmul without one: its ``config`` where that names a grid (the minimal
    matmul's ``ttnn.MinimalMatmulConfig``: its own 2-D multicast program on that grid)."""
    program = attrs.get("program_config")
    config = attrs.get("config")
    if program is None and family is F.MATMUL and hasattr(config, "compute_with_storage_grid_size"):
        return config
    return program


def matmul_config(attrs: Mapping[str, object]) -> MatmulConfig:
    """A matmul's program: the config class's name says its kind (an unknown class, ``MinimalMatmulConfig``
    among them, counts as a 2-D multicast program), its grid and per-core block in tiles; or ttnn's own
    choice without one."""
    program, core_grid = _program(attrs, F.MATMUL), attrs.get("core_grid")
    l1_acc, fp32_acc = accumulation(attrs)
    if program is None:
        return MatmulConfig(
            grid=grid_of(core_grid), user_core_grid=core_grid is not None, packer_l1_acc=l1_acc, fp32_acc=fp32_acc
        )
    kind = _PROGRAMS.get(type(program).__name__, MatmulProgram.MULTICAST_2D)
    return MatmulConfig(
        kind,
        grid_of(getattr(program, "compute_with_storage_grid_size", None)),
        _positive(getattr(program, "per_core_M", None)),
        _positive(getattr(program, "per_core_N", None)),
        user_core_grid=core_grid is not None,
        mcast_in0=getattr(program, "mcast_in0", True) is not False,
        in0_block_w=_positive(getattr(program, "in0_block_w", None)),
        packer_l1_acc=l1_acc,
        fp32_acc=fp32_acc,
        gather_in0=getattr(program, "gather_in0", False) is True,
        hop_cores=_core_count(getattr(program, "hop_cores", None)),
        out_block_h=split_block(getattr(program, "out_block_h", None), getattr(program, "per_core_M", None)),
        out_block_w=split_block(getattr(program, "out_block_w", None), getattr(program, "per_core_N", None)),
    )


def accumulation(attrs: Mapping[str, object]) -> tuple[bool | None, bool | None]:
    """``compute_kernel_config``'s ``packer_l1_acc`` and ``fp32_dest_acc_en`` (a field it lacks: False,
    the config structs' default); (None, None) without a config (ttnn's op default then applies)."""
    config = attrs.get("compute_kernel_config")
    if config is None:
        return None, None
    return getattr(config, "packer_l1_acc", False) is True, getattr(config, "fp32_dest_acc_en", False) is True


def _core_count(cores: object) -> int:
    """The cores of a config's core-range-set field (0 when it has none)."""
    count = getattr(cores, "num_cores", None)
    return count() if callable(count) else 0


def _positive(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def collective_config(attrs: Mapping[str, object], mesh: object, devices: int | None = None) -> CollectiveConfig:
    """A collective's topology (``topology``, else the fabric's: a ring fabric runs rings), its
    ``cluster_axis`` (on a 1-D mesh, axis 0 is the mesh's one row), ``num_links`` and ``dim``;
    ``devices``: those it runs on (kept where it has no cluster_axis and they are fewer than the mesh's:
    a tensor on part of the mesh gathers over its own devices)."""
    topology = attrs.get("topology")
    name = getattr(topology, "name", topology)
    if name is None:  # ttnn resolves the fabric's topology
        fabric = getattr(mesh, "fabric_config", None)
        ring = "RING" in str(getattr(fabric, "name", fabric) or "").upper()
    else:
        ring = str(name).lower() in ("ring", "torus")
    axis = attrs.get("cluster_axis")
    if isinstance(axis, int) and len(tuple(getattr(mesh, "shape", (1, 1)))) == 1:
        axis = 1  # a 1-D mesh is one row of the model's (rows, cols)
    links = attrs.get("num_links")
    dim = attrs.get("dim")
    return CollectiveConfig(
        Topology.RING if ring else Topology.LINEAR,
        cluster_axis=axis if isinstance(axis, int) else None,
        num_links=_positive(links),
        dim=dim if isinstance(dim, int) else 0,
        hops=_positive(attrs.get("hops")),
        peers=_positive(attrs.get("peers")),
        devices=_part(devices, mesh) if not isinstance(axis, int) else None,
    )


def _part(devices: int | None, mesh: object) -> int | None:
    """``devices`` where fewer than ``mesh``'s, else None (the whole mesh)."""
    total = getattr(mesh, "get_num_devices", lambda: None)()
    return devices if devices and isinstance(total, int) and devices < total else None


def attention_config(attrs: Mapping[str, object], *, decode: bool) -> AttentionConfig:
    """SDPA's chunks (the op's resolved ``k_chunk_size``, else the program config's; 0 or absent:
    32), causality (``is_causal``; a decode step is not causal), the program config's
    ``max_cores_per_head_batch``, the compute kernel config's ``fp32_dest_acc_en`` and, for a decode step,
    the cache length read (``cur_pos``: the largest position + 1; None when the positions are a device
    tensor)."""
    program = attrs.get("program_config")
    q_chunk = _positive(getattr(program, "q_chunk_size", None)) or 32
    k_chunk = _chunk(attrs.get("k_chunk_size"), getattr(program, "k_chunk_size", None), decode)
    causal = False if decode else bool(attrs.get("is_causal", True))
    kv_len = None
    positions = attrs.get("cur_pos")
    if decode and isinstance(positions, Sequence) and positions:
        kv_len = max(int(p) for p in positions) + 1
    cap = _positive(getattr(program, "max_cores_per_head_batch", None)) or 16
    return AttentionConfig(q_chunk, k_chunk, causal, kv_len, cap, fp32_dest=accumulation(attrs)[1] is True)


def _chunk(resolved: object, configured: object, decode: bool) -> int:
    """The K chunk: the op's resolved ``k_chunk_size``, else the program config's; a decode step's 0
    stays 0 (tt-metal picks it from the position when the kernel runs), prefill's becomes 32."""
    for value in (resolved, configured):
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value if value or decode else 32
    return 0 if decode else 32


def activations(attrs: Mapping[str, object]) -> tuple[str, ...]:
    """The unary ops fused into a matmul or a binary op, by ttnn's names (lower case)."""
    found: list[object] = []
    for key in _ACTIVATION_ATTRS:
        value = attrs.get(key)
        if value is not None:
            found.extend(value if isinstance(value, list | tuple) else [value])
    fused = getattr(attrs.get("program_config"), "fused_activation", None)
    if fused is not None:
        found.append(fused)
    return tuple(_activation_name(a) for a in found)


def _activation_name(value: object) -> str:
    """``"silu"`` from ``"silu"``, ``UnaryOpType.SILU`` or ``UnaryWithParam(UnaryOpType.SILU)``."""
    value = getattr(value, "op_type", value)
    text = getattr(value, "value", None)
    if not isinstance(text, str):
        text = getattr(value, "name", value)
    return str(text).lower()
