"""``ttnn.experimental.llama_rs_matmul``: the Llama-70B Galaxy decode MLP's fused matmul +
reduce-scatter (tt-metal's ``Matmul_RS`` device operation), in its two forms:

- ``rs_tensor`` given: ``[input_tensor @ weight_tensor, llama_reduce_scatter(rs_tensor)]``, the
  product of this step beside the reduce-scatter of an earlier one (the model's FF3 matmul
  overlapping FF1's scatter);
- ``second_weight_tensor`` given: ``[input_tensor @ weight_tensor, input_tensor @
  second_weight_tensor, llama_reduce_scatter(input_tensor @ weight_tensor)]`` (FF1 and FF3 from
  one gathered input, the first product scattered).

Exactly one of the two must be given.  Each product is exactly ``ttnn.matmul``'s with the op's
``memory_config_mm`` (default: the input's memory config), ``dtype`` (default: the input's),
``program_config``, ``compute_kernel_config``, ``global_cb`` and the rest; the scatter is exactly
``ttnn.experimental.llama_reduce_scatter``'s with ``memory_config_rs`` (row groups of 2 or 4 along
``cluster_axis`` 1, ``dim`` 3, shards one tile row high: :mod:`.llama_arguments`).  ttnn's
multi-weight matmul takes a second weight only with a 1-D program config, a global circular buffer
and a DRAM-sharded first weight, the two weights of one spec; so does this op.

Every argument (both products' and the scatter's, the scatter's input spec included when it is
the product) is checked before anything is allocated.  The products run as ``matmul`` launches
inside this op's program (no program-cache entry of their own, no row of their own in ``meshnn perf``);
the scatter launches as this op, recording the products' tensors and configs beside its own: the
capture's one ``Matmul_RS`` row, timed as the fused program runs (:mod:`meshnn.perf.rs_matmul`).

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' checks and
matmul modules and the collectives' modules.
"""

from __future__ import annotations

import dataclasses

from meshnn.device.buffer import BufferType, TensorMemoryLayout
from meshnn.errors import MeshnnValueError
from meshnn.ops.ccl.arguments import Topology
from meshnn.ops.ccl.llama_arguments import checked_call, checked_memory_config
from meshnn.ops.ccl.llama_reduce_scatter import run_llama_scatter, scattered_spec
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.costs import tensor_desc
from meshnn.ops.matmul import matmul, product_spec
from meshnn.ops.matmul_config import MatmulMultiCoreReuseMultiCast1DProgramConfig
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.perf.rs_matmul import FUSED_PRODUCT, OPERANDS
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor

_OP = "experimental.llama_rs_matmul"
_MATMUL_KEYS = ("compute_kernel_config", "global_cb", "core_grid", "transpose_a", "transpose_b", "dtype",
                "program_config", "activation", "output_tile")  # fmt: skip


@register(_OP, kind=OpKind.COLLECTIVE, family=OpFamily.REDUCE_SCATTER, device_operation="Matmul_RS")
def llama_rs_matmul(
    input_tensor: Tensor,
    weight_tensor: Tensor,
    intermediate_packet_buffer: Tensor,
    dim: int,
    cross_device_semaphore: object,
    cluster_axis: int,
    mesh_device: object,
    num_links: int,
    subdevice_id: object,
    *,
    second_weight_tensor: Tensor | None = None,
    rs_tensor: Tensor | None = None,
    topology: Topology = Topology.Linear,
    memory_config_rs: MemoryConfig | None = None,
    memory_config_mm: MemoryConfig | None = None,
    compute_kernel_config: object = None,
    global_cb: object = None,
    core_grid: object = None,
    transpose_a: bool = False,
    transpose_b: bool = False,
    dtype: object = None,
    program_config: object = None,
    activation: str | None = None,
    output_tile: object = None,
    optional_output_tensor: Tensor | None = None,
    use_noc1_only: bool = False,
) -> list[Tensor]:
    """The products and the reduce-scatter, as listed in the module docstring."""
    named = _operands(input_tensor, weight_tensor, rs_tensor, second_weight_tensor)
    a = named["input_tensor"]
    options = {k: v for k, v in zip(_MATMUL_KEYS, (compute_kernel_config, global_cb, core_grid, transpose_a,
               transpose_b, dtype, program_config, activation, output_tile), strict=True)}  # fmt: skip
    options.update(memory_config=a.memory_config() if memory_config_mm is None else memory_config_mm)
    options.update(dtype=a.dtype if dtype is None else dtype, sub_device_id=None)
    product = product_spec(_OP, a, named["weight_tensor"], options)
    if second_weight_tensor is not None:
        _check_second_weight(named["weight_tensor"], named["second_weight_tensor"], options, optional_output_tensor)
    given = dict(input_tensor=named.get("rs_tensor", a), intermediate_packet_buffer=intermediate_packet_buffer,
                 dim=dim, cross_device_semaphore=cross_device_semaphore, subdevice_id=subdevice_id,
                 cluster_axis=cluster_axis, mesh_device=mesh_device, num_links=num_links, topology=topology,
                 use_noc1_only=use_noc1_only)  # fmt: skip
    scattered = product if rs_tensor is None else None
    _, mesh, n, attrs = checked_call(_OP, given, scattered)
    out_config = checked_memory_config(_OP, "memory_config_rs", memory_config_rs)
    out_spec = scattered_spec(_OP, named["rs_tensor"].spec if scattered is None else scattered, mesh, n, out_config)
    attrs.update(memory_config_mm=options["memory_config"], program_config=program_config, global_cb=global_cb)
    if getattr(options["program_config"], "untilize_out", False):  # the fused op's matmul never untilizes
        options["program_config"] = dataclasses.replace(options["program_config"], untilize_out=False)
    with mesh.parts_of_one_program():  # ttnn runs the products and the scatter as one program
        weights = [named["weight_tensor"]] + ([named["second_weight_tensor"]] if rs_tensor is None else [])
        products = [
            matmul(a, w, optional_output_tensor=optional_output_tensor, recorded={FUSED_PRODUCT: True}, **options)  # type: ignore[arg-type]
            for w in weights
        ]
    scatter_input = named.get("rs_tensor", products[0])
    attrs.update(compute_kernel_config=compute_kernel_config)  # the capture's one row: products and scatter
    attrs[OPERANDS] = (tuple(tensor_desc(t.spec) for t in (a, *weights)), tuple(tensor_desc(p.spec) for p in products))
    return [*products, run_llama_scatter(_OP, scatter_input, n, out_spec, attrs)]


def _operands(input_tensor: object, weight: object, rs_tensor: object, second: object) -> dict[str, Tensor]:
    """The tensors by name, checked live and on one mesh; exactly one of rs_tensor / second."""
    if (rs_tensor is None) == (second is None):
        raise MeshnnValueError(f"ttnn.{_OP}: exactly one of rs_tensor or second_weight_tensor must have a value")
    named = {"input_tensor": device_input(_OP, "input_tensor", input_tensor),
             "weight_tensor": device_input(_OP, "weight_tensor", weight)}  # fmt: skip
    if rs_tensor is not None:
        named["rs_tensor"] = device_input(_OP, "rs_tensor", rs_tensor)
    else:
        named["second_weight_tensor"] = device_input(_OP, "second_weight_tensor", second)
    same_mesh(_OP, named)
    return named


def _check_second_weight(weight: Tensor, second: Tensor, options: dict[str, object], output: object) -> None:
    """ttnn's multi-weight matmul: a 1-D program config, a global CB, a DRAM-sharded first
    weight, and the two weights of one spec; no ``optional_output_tensor`` (both products are new)."""
    if output is not None:
        raise MeshnnValueError(
            f"ttnn.{_OP}: optional_output_tensor is not taken with second_weight_tensor (both products are new)"
        )
    config = weight.memory_config()
    prefetched = (
        isinstance(options["program_config"], MatmulMultiCoreReuseMultiCast1DProgramConfig)
        and options["global_cb"] is not None
        and config.memory_layout is not TensorMemoryLayout.INTERLEAVED
        and config.buffer_type is BufferType.DRAM
    )
    if not prefetched:
        raise MeshnnValueError(
            f"ttnn.{_OP}: second_weight_tensor needs a 1-D program config, a global_cb and a DRAM-sharded "
            "weight_tensor (ttnn's matmul takes exactly 2 input tensors otherwise)"
        )
    if second.spec != weight.spec:
        raise MeshnnValueError(
            f"ttnn.{_OP}: for a multi-tensor matmul the weights must have one tensor spec; weight_tensor is "
            f"{list(weight.shape)} {weight.dtype}, second_weight_tensor {list(second.shape)} {second.dtype}"
        )
