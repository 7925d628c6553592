"""One routed expert's SwiGLU feed-forward, ``(silu(x @ gate) * (x @ up)) @ down``, as DeepSeek-V3's
prefill runs it: ``ttnn.experimental.deepseek_prefill.routed_expert_ffn``,
``unified_routed_expert_ffn`` and ``unified_routed_expert_moe``.

``routed_expert_ffn`` is tt-metal's composite of ttnn ops, and so is meshnn's: ``matmul`` with the
``silu`` activation for the gate, ``matmul`` for the up projection, ``multiply_`` of the two, and
``matmul`` by ``down`` (into ``output`` when given), each in ``x``'s dtype.  (tt-metal picks program
configs per arch and size for the same ops; they change no value.)  It takes bfloat16 or bfloat8_b ``x``
except on Wormhole above 64 tile rows, where tt-metal falls back to plain matmuls unchecked, and needs
an 8x8 grid on Wormhole below that.

``unified_routed_expert_ffn`` (Blackhole: an 11x8 grid at least) is one program over the first
``ceil(counts[g] / 32)`` tile rows of ``x`` (bfloat8_b), ``g = global_expert_idx_table[local_expert_id]``
read by each device when it runs: products accumulated in float32, ``silu(gate) * up`` rounded into
bfloat8_b (the kernel's intermediate buffer), the result rounded into ``x``'s dtype.  Rows past the
count are not written (ttnn leaves a new output's uninitialized).  With ``expert_region_offsets`` the
rows go into ``output`` from tile row ``start[g] // 32`` (ttnn's insert fused in).
``unified_routed_expert_moe`` is tt-metal's composite over a device's experts: a zeroed copy of the
dispatch buffer, then per local expert ``extract`` and the unified FFN writing into it.

Checks are tt-metal's (2026-06), with its messages.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.device`, :mod:`meshnn.tensor`,
the ops' checks, config, launch, outputs, values, tile_rows, registry and the other deepseek_experts modules.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meshnn.device.arch import Arch
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.codec import decode, encode
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.ops import registry
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.config import check_compute_kernel_config
from meshnn.ops.deepseek_experts.expert_slices import NAMESPACE, TILE, dram_interleaved, extract, index_table
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output
from meshnn.ops.registry import OpKind, register
from meshnn.ops.tile_rows import write_rows
from meshnn.ops.transformer.padded_chunks import uint_arg
from meshnn.ops.values import logical_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.lifetime import deallocate
from meshnn.tensor.memory_config import DRAM_MEMORY_CONFIG
from meshnn.tensor.tensor import Tensor

WORMHOLE_CHUNK_TILES = 64
"""Above this many tile rows of ``x``, tt-metal's Wormhole path is plain auto-configured matmuls."""
UNIFIED_GRID = (11, 8)
MAX_GLOBAL_EXPERTS = 1024
"""The most entries a counts / table / offsets tensor may have: the kernel reads one page into a 1024-word scratch."""


def _op(name: str):
    return registry.lookup(name).function


@register(f"{NAMESPACE}.routed_expert_ffn", kind=OpKind.MATMUL, family=OpFamily.MATMUL)
def routed_expert_ffn(
    x: Tensor,
    gate_proj: Tensor,
    up_proj: Tensor,
    down_proj: Tensor,
    *,
    compute_kernel_config: object = None,
    output: Tensor | None = None,
) -> Tensor:
    """``(silu(x @ gate_proj) * (x @ up_proj)) @ down_proj`` by ttnn's ops (see the module's text)."""
    op = f"{NAMESPACE}.routed_expert_ffn"
    t = device_input(op, "x", x)
    check_compute_kernel_config(op, compute_kernel_config)
    mesh = t.storage.mesh_buffer.device()  # type: ignore[union-attr]
    wormhole = mesh.arch() is Arch.WORMHOLE_B0
    if not (wormhole and t.padded_shape[-2] // TILE > WORMHOLE_CHUNK_TILES):
        if t.dtype not in (DataType.BFLOAT16, DataType.BFLOAT8_B):
            raise MeshnnValueError(f"ttnn.{op}: x must be BFLOAT16 or BFLOAT8_B, got {t.dtype}")
        grid = mesh.compute_with_storage_grid_size()
        if wormhole and (grid.x, grid.y) != (8, 8):
            raise MeshnnValueError(f"ttnn.{op}: routed_expert_ffn_wh: expected 8x8 compute grid, got {grid.x}x{grid.y}")
    matmul = _op("matmul")
    gate = matmul(t, gate_proj, activation="silu", compute_kernel_config=compute_kernel_config)
    up = matmul(t, up_proj, compute_kernel_config=compute_kernel_config)
    _op("multiply_")(gate, up)
    deallocate(up)
    return matmul(gate, down_proj, compute_kernel_config=compute_kernel_config, optional_output_tensor=output)


def _unified_checks(op: str, x: Tensor, weights: dict[str, Tensor]) -> None:
    """tt-metal's checks of ``x`` and the three projections."""
    if x.dtype is not DataType.BFLOAT8_B:
        raise MeshnnValueError(f"ttnn.{op}: x must be BFLOAT8_B, got {x.dtype}")
    if x.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: x must be TILE layout")
    if not dram_interleaved(x):
        raise MeshnnValueError(f"ttnn.{op}: x must be DRAM-interleaved")
    shape = tuple(x.shape)
    if len(shape) < 2:
        raise MeshnnValueError(f"ttnn.{op}: x must have rank >= 2, got rank {len(shape)}")
    for i, d in enumerate(shape[:-2]):
        if d != 1:
            raise MeshnnValueError(f"ttnn.{op}: x leading dim {i} must be 1, got {d}")
    xs, gs, us, ds = (tuple(t.padded_shape) for t in (x, *weights.values()))
    if not xs[-1] == gs[-2] == us[-2]:
        raise MeshnnValueError(f"ttnn.{op}: x's last dim {xs[-1]} must match gate/up's K dim ({gs[-2]}, {us[-2]})")
    if not gs[-1] == us[-1] == ds[-2]:
        raise MeshnnValueError(f"ttnn.{op}: gate/up N ({gs[-1]}) must equal down K ({ds[-2]})")
    if ds[-1] != xs[-1]:
        raise MeshnnValueError(f"ttnn.{op}: down N ({ds[-1]}) must equal x K ({xs[-1]})")
    if xs[-2] % TILE:
        raise MeshnnValueError(f"ttnn.{op}: x M ({xs[-2]}) must be tile-aligned")
    for name, w in weights.items():
        if w.layout is not Layout.TILE:
            raise MeshnnValueError(f"ttnn.{op}: {name} must be TILE layout")
        if not dram_interleaved(w):
            raise MeshnnValueError(f"ttnn.{op}: {name} must be DRAM-interleaved")


def _tables(op: str, counts: object, table: object, local: int, offsets: object) -> list[Tensor]:
    """counts, the expert table and (direct-write) the region offsets, checked as tt-metal does."""
    named = {"counts": counts, "global_expert_idx_table": table}
    found = []
    for name, value in named.items():
        t = device_input(op, name, value)
        if t.dtype is not DataType.UINT32:
            raise MeshnnValueError(f"ttnn.{op}: {name} must be UINT32")
        if not dram_interleaved(t):
            raise MeshnnValueError(f"ttnn.{op}: {name} must be DRAM-interleaved")
        if t.shape[-1] > MAX_GLOBAL_EXPERTS:
            raise MeshnnValueError(
                f"ttnn.{op}: {name} length ({t.shape[-1]}) exceeds the maximum supported number of experts "
                f"({MAX_GLOBAL_EXPERTS})"
            )
        found.append(t)
    if local >= found[1].shape[-1]:
        raise MeshnnValueError(f"ttnn.{op}: local_expert_id ({local}) >= idx_table size ({found[1].shape[-1]})")
    if offsets is not None:
        start = index_table(op, "expert_region_offsets", offsets)
        if start.shape[-1] > MAX_GLOBAL_EXPERTS:
            raise MeshnnValueError(f"ttnn.{op}: expert_region_offsets length ({start.shape[-1]}) exceeds the maximum")
        if start.shape[-1] != found[0].shape[-1]:
            raise MeshnnValueError(
                f"ttnn.{op}: expert_region_offsets length ({start.shape[-1]}) must equal counts length "
                f"({found[0].shape[-1]})"
            )
        found.append(start)
    return found


def _check_output(op: str, x: Tensor, output: object, direct: bool) -> Tensor | None:
    if output is None:
        if direct:
            raise MeshnnValueError(
                f"ttnn.{op}: direct-write mode (expert_region_offsets set) requires optional_output (the shared "
                "destination buffer)"
            )
        return None
    out = device_input(op, "optional_output", output)
    if out.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{op}: optional_output must be TILE layout")
    if not dram_interleaved(out):
        raise MeshnnValueError(f"ttnn.{op}: optional_output must be DRAM-interleaved")
    if out.dtype is not x.dtype:
        raise MeshnnValueError(f"ttnn.{op}: optional_output dtype ({out.dtype}) must match x dtype ({x.dtype})")
    os_, xs = tuple(out.padded_shape), tuple(x.padded_shape)
    if len(os_) != len(xs) or os_[-1] != xs[-1] or os_[:-2] != xs[:-2]:
        raise MeshnnValueError(f"ttnn.{op}: optional_output {list(os_)} must match x {list(xs)} but for its rows")
    if direct and (os_[-2] % TILE or os_[-2] < xs[-2]):
        raise MeshnnValueError(
            f"ttnn.{op}: optional_output M ({os_[-2]}) must be tile-aligned and >= x M ({xs[-2]}) in direct-write mode"
        )
    if not direct and os_[-2] != xs[-2]:
        raise MeshnnValueError(f"ttnn.{op}: optional_output M ({os_[-2]}) must match x M ({xs[-2]})")
    return out


@register(
    f"{NAMESPACE}.unified_routed_expert_ffn",
    kind=OpKind.MATMUL,
    family=OpFamily.MOE_COMPUTE,
    device_operation="UnifiedRoutedExpertFfnDeviceOperation",
)
def unified_routed_expert_ffn(
    x: Tensor,
    gate_proj: Tensor,
    up_proj: Tensor,
    down_proj: Tensor,
    counts: Tensor,
    global_expert_idx_table: Tensor,
    local_expert_id: int,
    *,
    compute_kernel_config: object = None,
    output: Tensor | None = None,
    expert_region_offsets: Tensor | None = None,
) -> Tensor:
    """The expert's FFN over its first ``ceil(count / 32)`` tile rows of ``x`` in one program (see the
    module's text); into ``output`` (from the expert's region offset with ``expert_region_offsets``)."""
    op = f"{NAMESPACE}.unified_routed_expert_ffn"
    t = device_input(op, "x", x)
    weights = {n: device_input(op, n, w) for n, w in (("gate_proj", gate_proj), ("up_proj", up_proj),
                                                       ("down_proj", down_proj))}  # fmt: skip
    local = uint_arg(op, "local_expert_id", local_expert_id)
    config = check_compute_kernel_config(op, compute_kernel_config)
    _unified_checks(op, t, weights)
    tables = _tables(op, counts, global_expert_idx_table, local, expert_region_offsets)
    out = _check_output(op, t, output, expert_region_offsets is not None)
    names = ("counts", "global_expert_idx_table", "expert_region_offsets")
    mesh = same_mesh(op, {"x": t, **weights, **dict(zip(names, tables, strict=False)),
                          **({"output": out} if out is not None else {})})  # fmt: skip
    grid = mesh.compute_with_storage_grid_size()
    if grid.x < UNIFIED_GRID[0] or grid.y < UNIFIED_GRID[1]:
        raise MeshnnValueError(
            f"ttnn.{op}: expected at least {UNIFIED_GRID[0]}x{UNIFIED_GRID[1]} compute grid, got {grid.x}x{grid.y}"
        )
    spec = out.spec if out is not None else t.spec
    inputs = [t, *weights.values(), *tables]
    kernel = _Unified(op, [i.spec for i in inputs], spec, local, expert_region_offsets is not None)
    attrs = {"local_expert_id": local, "compute_kernel_config": config}
    into = [out] if out is not None else None
    return launch(op, mesh, inputs, [Output(spec)], kernel, into=into, reads_memos=True, attrs=attrs)[0]


class _Unified:
    """The unified FFN's kernel: per device, the count's tile rows of ``x`` through the FFN, written
    from row 0 or from the expert's region offset."""

    def __init__(self, op: str, specs: list, out_spec, local: int, direct: bool) -> None:
        self.op, self.specs, self.out_spec, self.local, self.direct = op, specs, out_spec, local, direct

    def _rows(self, in_rows, coords) -> list[tuple[int, int]]:
        """Per device: (tile rows to compute, destination tile row)."""
        tables = [logical_values(in_rows[i], self.specs[i], as_float=False).reshape(len(coords), -1)
                  for i in range(4, len(self.specs))]  # fmt: skip
        x_tiles = self.specs[0].padded_shape[-2] // TILE
        found = []
        for d, coord in enumerate(coords):
            g = int(tables[1][d, self.local])
            if g >= tables[0].shape[1]:
                raise MeshnnValueError(
                    f"ttnn.{self.op}: on device {coord}, global_expert_idx_table[{self.local}] = {g} is past counts' "
                    f"{tables[0].shape[1]} entries"
                )
            rows = min(-(-int(tables[0][d, g]) // TILE), x_tiles)
            first = int(tables[2][d, g]) // TILE if self.direct else 0
            if first + rows > self.out_spec.padded_shape[-2] // TILE:
                raise MeshnnValueError(
                    f"ttnn.{self.op}: on device {coord}, expert {g}'s {rows} tile rows from tile row {first} run past "
                    f"the output's {self.out_spec.padded_shape[-2] // TILE}"
                )
            found.append((rows, first))
        return found

    def __call__(self, in_rows, out_rows, coords) -> None:
        plan = self._rows(in_rows, coords)
        most = max(rows for rows, _ in plan) * TILE
        if most == 0:
            return
        x = logical_values(in_rows[0], self.specs[0])
        x = x.reshape(len(coords), -1, x.shape[-1])[:, :most]
        gate, up, down = (logical_values(in_rows[i], self.specs[i]) for i in (1, 2, 3))
        g = np.matmul(x, gate.reshape(len(coords), *gate.shape[-2:]))
        u = np.matmul(x, up.reshape(len(coords), *up.shape[-2:]))
        with np.errstate(over="ignore"):
            h = g / (np.float32(1) + np.exp(-g)) * u
        h = bfloat8_b_values(h)  # the activated tiles as the kernel's bfloat8_b intermediate holds them
        y = np.matmul(h, down.reshape(len(coords), *down.shape[-2:]))
        dest = np.full((len(coords), most), -1, np.int64)
        for d, (rows, first) in enumerate(plan):
            dest[d, : rows * TILE] = first * TILE + np.arange(rows * TILE)
        spec = self.out_spec
        write_rows(out_rows[0], spec.dtype, spec.tile, spec.padded_shape[-1], dest, y.astype(np.float32, copy=False))


def bfloat8_b_values(values: np.ndarray) -> np.ndarray:
    """``(k, R, W)`` float32 values (R, W whole tiles) as bfloat8_b tiles hold them."""
    raw = encode(np.ascontiguousarray(values, np.float32), DataType.BFLOAT8_B, Layout.TILE)
    return decode(raw, DataType.BFLOAT8_B, Layout.TILE, values.shape)


@register(f"{NAMESPACE}.unified_routed_expert_moe", kind=OpKind.MATMUL, family=OpFamily.MOE_COMPUTE)
def unified_routed_expert_moe(
    dispatched_buffer: Tensor,
    expert_region_offsets: Tensor,
    expert_token_counts: Tensor,
    global_expert_idx_table: Tensor,
    gate_projs: Sequence[Tensor],
    up_projs: Sequence[Tensor],
    down_projs: Sequence[Tensor],
    max_dispatched_tokens_per_expert: int,
    *,
    compute_kernel_config: object = None,
) -> Tensor:
    """Every local expert's FFN over its region of ``dispatched_buffer``, into a zeroed buffer of its
    shape: ``extract`` then ``unified_routed_expert_ffn`` (direct write) per expert."""
    op = f"{NAMESPACE}.unified_routed_expert_moe"
    lists = {"gate_projs": gate_projs, "up_projs": up_projs, "down_projs": down_projs}
    for name, value in lists.items():
        if not isinstance(value, Sequence) or isinstance(value, str):
            raise MeshnnTypeError(f"ttnn.{op}: {name} must be a list of ttnn.Tensor, got {type(value).__name__}")
    sizes = [len(v) for v in lists.values()]
    if len(set(sizes)) != 1:
        raise MeshnnValueError(f"ttnn.{op}: gate/up/down projection lists must have the same length (got {sizes})")
    if sizes[0] == 0:
        raise MeshnnValueError(f"ttnn.{op}: Need at least one expert per chip")
    buffer = device_input(op, "dispatched_buffer", dispatched_buffer)
    outputs = _op("zeros_like")(buffer, memory_config=DRAM_MEMORY_CONFIG)
    most = max_dispatched_tokens_per_expert
    for local in range(sizes[0]):
        tokens = extract(buffer, expert_region_offsets, expert_token_counts, global_expert_idx_table,
                         local_expert_id=local, max_dispatched_tokens_per_expert=most)  # fmt: skip
        outputs = unified_routed_expert_ffn(
            tokens, gate_projs[local], up_projs[local], down_projs[local], expert_token_counts,
            global_expert_idx_table, local, compute_kernel_config=compute_kernel_config, output=outputs,
            expert_region_offsets=expert_region_offsets,
        )  # fmt: skip
    return outputs
