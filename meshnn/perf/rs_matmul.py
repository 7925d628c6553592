"""``experimental.llama_rs_matmul`` (tt-metal's ``Matmul_RS``): the Llama Galaxy decode MLP's matmul and Llama
reduce-scatter in one program.

What the program does (tt-metal ttnn/cpp/ttnn/operations/experimental/ccl/llama_reduce_scatter_matmul/device/
rs_matmul_program_factory.cpp, 2026-06; the same at f2255f4251, 2025-07-24): it builds the 1-D ring matmul's program
(``matmul_1d_ring`` with the op's program config: the products) and the LlamaReduceScatter program on its own cores
(``rs_cores``) into one program, one launch, in two forms:

- with a second weight (FF1 and FF3 from one gathered input, the first product scattered): the matmul runs the
  two products one after the other on the ring cores, and a ``MatmulFusedOpSignaler`` of type
  ``LLAMA_REDUCE_SCATTER`` (``init_llama_rs_cores_rs``) lets the scatter's cores start on the first product as it
  is written: the first product, then the longer of the second and the scatter;
- with ``rs_tensor`` (the product of this step beside the scatter of an earlier one): no signaller, the two run
  side by side from the launch: the longer of the product and the scatter.

So each part is timed as the model times it alone -- a product by :func:`~meshnn.perf.ring_matmul.
predict_ring_matmul` (a gather-in0 ring config) or :func:`~meshnn.perf.matmul.predict_matmul`, the scatter by
:func:`~meshnn.perf.collectives.predict_collective` as ``LlamaReduceScatterDeviceOperation`` (its direct unicast
program) -- and composed as above, one launch (each part's time holds one: the others' are taken off).  Not timed:
the signaller's semaphore between the first product's last tile and the scatter's first read.

The capture (:func:`meshnn.ops.costs.op_desc`) records the op as one description: family REDUCE_SCATTER (the
registry's), op code ``Matmul_RS``, inputs (the matmul's input, its weights, the scatter's input), outputs (the
products, the scattered tensor), the products' program config, fidelity and core grid, the scatter's collective
config.  The op puts its products' tensors in its scatter's launch attributes (:data:`OPERANDS`: the input and
the weights, then the products, as :class:`~meshnn.perf.desc.TensorDesc`); :func:`operands` joins them to the
scatter's own.

May import: :mod:`meshnn.perf` modules below :mod:`meshnn.perf.model` (desc, collectives, matmul, ring_matmul,
fidelity).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from meshnn.perf.collectives import predict_collective
from meshnn.perf.desc import MatmulProgram, OpDesc, OpFamily, TensorDesc
from meshnn.perf.fidelity import default_matmul_fidelity
from meshnn.perf.matmul import predict_matmul
from meshnn.perf.prediction import Prediction
from meshnn.perf.ring_matmul import is_ring_matmul, predict_ring_matmul
from meshnn.perf.systems import Machine

OP_CODE = "Matmul_RS"
"""tt-metal's device-operation name of the fused op: its one row in a profile."""
OPERANDS = "rs_matmul_operands"
"""The launch attribute of the op's scatter: ``((input, weight[, second weight]), (product[, second product]))``,
each a :class:`~meshnn.perf.desc.TensorDesc`."""
FUSED_PRODUCT = "fused_rs_product"
"""The launch attribute of the op's products: the capture records no row for them (their time is the op's row)."""
SCATTER_CODE = "LlamaReduceScatterDeviceOperation"
SCATTER_NAME = "ttnn.experimental.llama_reduce_scatter"


def is_rs_matmul(desc: OpDesc) -> bool:
    """Whether ``desc`` is a captured ``llama_rs_matmul``: op code Matmul_RS with the products' program config and
    the scatter's collective config."""
    n = len(desc.outputs) - 1
    has_parts = n in (1, 2) and len(desc.inputs) == n + 2
    return desc.op_code == OP_CODE and desc.matmul is not None and desc.collective is not None and has_parts


def operands(
    attrs: Mapping[str, object], inputs: tuple[TensorDesc, ...], outputs: tuple[TensorDesc, ...]
) -> tuple[tuple[TensorDesc, ...], tuple[TensorDesc, ...]]:
    """The fused description's inputs and outputs: the products' (``attrs[OPERANDS]``) before the scatter's own
    ``inputs`` and ``outputs``; the scatter's alone without them."""
    given = attrs.get(OPERANDS)
    if not isinstance(given, tuple) or len(given) != 2:
        return inputs, outputs
    return (*given[0], *inputs), (*given[1], *outputs)


def products(desc: OpDesc) -> int:
    """How many products ``desc`` computes: its outputs but the scattered one."""
    return max(1, len(desc.outputs) - 1)


def parts(desc: OpDesc) -> tuple[tuple[OpDesc, ...], OpDesc]:
    """The products (each a matmul of the input and one weight) and the scatter of ``desc``, in program order."""
    n = products(desc)
    a, weights, scatter_input = desc.inputs[0], desc.inputs[1 : 1 + n], desc.inputs[1 + n]
    config = desc.matmul
    fidelity = desc.fidelity
    if fidelity is None:
        has_program = config is not None and config.program is not MatmulProgram.DEFAULT
        fidelity = default_matmul_fidelity(has_program_config=has_program, has_core_grid=desc.core_grid is not None)
    common = dict(op_code=OpFamily.MATMUL.value, name="ttnn.matmul", fidelity=fidelity, core_grid=desc.core_grid)
    pairs = zip(weights, desc.outputs[:n], strict=True)
    matmuls = tuple(OpDesc(OpFamily.MATMUL, (a, w), (out,), matmul=config, **common) for w, out in pairs)  # type: ignore[arg-type]
    scatter = OpDesc(
        OpFamily.REDUCE_SCATTER, (scatter_input,), desc.outputs[n:], op_code=SCATTER_CODE, name=SCATTER_NAME,
        collective=desc.collective,
    )  # fmt: skip
    return matmuls, scatter


def _product(desc: OpDesc, machine: Machine) -> Prediction:
    """One product timed alone: the ring program's model for a gather-in0 config, else the matmul model's."""
    return predict_ring_matmul(desc, machine) if is_ring_matmul(desc) else predict_matmul(desc, machine)


def predict_rs_matmul(desc: OpDesc, machine: Machine) -> Prediction:
    """The time of a captured ``llama_rs_matmul`` ``desc`` (:func:`is_rs_matmul`): the module's composition."""
    matmul_descs, scatter_desc = parts(desc)
    prods = [_product(d, machine) for d in matmul_descs]
    scatter = predict_collective(scatter_desc, machine)
    launch = machine.system.arch.op_launch_ns
    first, scatter_ns = prods[0].kernel_ns - launch, scatter.kernel_ns - launch
    if len(prods) == 2:  # the first product, then the second beside the scatter of the first
        total = prods[0].kernel_ns + max(prods[1].kernel_ns, scatter.kernel_ns) - launch
        second = prods[1].kernel_ns - launch
        note = f"Matmul_RS: product {first:.0f} ns, then the longer of {second:.0f} and scatter {scatter_ns:.0f}"
    else:  # the product beside an earlier tensor's scatter
        total = max(prods[0].kernel_ns, scatter.kernel_ns)
        note = f"Matmul_RS: the longer of product {first:.0f} ns and scatter {scatter_ns:.0f} ns"
    base = prods[0]
    return replace(
        base,
        fixed_ns=base.fixed_ns + max(0.0, total - base.kernel_ns),
        dram_bytes=sum(p.dram_bytes for p in prods),
        l1_bytes=sum(p.l1_bytes for p in prods) + scatter.l1_bytes,
        link_bytes=scatter.link_bytes,
        flops=sum(p.flops for p in prods),
        notes=(*base.notes, note + "; one launch"),
    )
