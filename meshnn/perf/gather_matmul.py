"""``experimental.all_gather_matmul_async``: an all-gather of in0 along K overlapped with the matmul that
consumes it, in one program.

What the program does (tt-metal ``ttnn/cpp/ttnn/operations/experimental/ccl/all_gather_matmul_async/device/
all_gather_matmul_async_program_factory.cpp``): it builds the matmul's program (the 1-D or 2-D multicast
factory, with the op's program config) on the gathered tensor, and the minimal default all-gather's program
(``build_all_gather_async_minimal_default_program_artifacts``, its workers at ``all_gather_core_grid_offset``)
into the same program, joined by two fused-op signallers: the gather's ``AllGatherFusedOpSignaler`` raises a
semaphore on the matmul's in0 reader cores as each device's slice lands (``MatmulFusedOpSignaler::
init_all_gather``: one slice a device, ``ring_size`` of them, the weight's rows offset per slice), and the
reader takes K's blocks slice by slice in the order they arrive, its own slice first.  So:

- the gather runs as :func:`meshnn.perf.collectives.predict_collective` times an ``all_gather_async`` of the
  same tensors (start-up and hops, then the bytes over the links);
- the matmul runs as :func:`meshnn.perf.matmul.predict_matmul` times it alone on the gathered tensor;
- overlapped: the matmul cannot end before its own time, nor before the last slice lands plus that slice's
  share of the matmul (``1 / ring_size`` of its body).  One launch: the gather's start-up holds it.

The older, non-fabric ``ttnn.experimental.all_gather_matmul`` (tt_transformers' until tt-metal #26931, 2025-08-19)
joins its EDM gather and its matmul by the same two signallers (``all_gather_matmul/device/multi_core/
all_gather_matmul_op_multi_core.cpp`` of 2025-07): a whole model of those dates is timed with this program.

May import: :mod:`meshnn.perf` modules below :mod:`meshnn.perf.model` (desc, collectives, matmul, fidelity).
"""

from __future__ import annotations

from dataclasses import replace

from meshnn.perf.collectives import group_size, predict_collective
from meshnn.perf.desc import MatmulProgram, OpDesc, OpFamily
from meshnn.perf.fidelity import default_matmul_fidelity
from meshnn.perf.matmul import predict_matmul
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine

FUSED_GATHER_OP = "experimental.all_gather_matmul_async"
"""The fused op's ttnn name (without ``ttnn.``)."""
FUSED_GATHER_OP_CODE = "AllGatherMatmulAsyncDeviceOperation"
"""tt-metal's device-operation name of the fused op: its one row in a profile."""
FUSED_GATHER = "fused_all_gather"
"""The attribute meshnn's fused op records on its matmul's launch (with the gather's ``topology``, ``num_links``,
``cluster_axis`` and ``dim``): the capture times that launch as the whole op (:func:`predict_all_gather_matmul`)."""
FUSED_MATMUL = "fused_matmul"
"""The attribute meshnn's fused op records on its gather's launch: the capture records no row for it (its time is
in the matmul's row, as tt-metal runs both in one program)."""


def is_all_gather_matmul(desc: OpDesc) -> bool:
    """Whether ``desc`` is the fused all-gather + matmul: a matmul description (inputs: the gathered in0, the
    weight[, bias]; output: the product) with the gather's collective config."""
    return desc.op_code == FUSED_GATHER_OP_CODE and desc.collective is not None and len(desc.inputs) >= 2


def parts(desc: OpDesc) -> tuple[OpDesc, OpDesc]:
    """The gather and the matmul ``desc`` fuses, each as the model times it alone.  The gather's bytes are its
    output's (the gathered in0, :func:`meshnn.perf.collectives.bottleneck_bytes`); its input stands as that too."""
    gathered, weight, product = desc.inputs[0], desc.inputs[1], desc.outputs[0]
    gather = OpDesc(
        OpFamily.ALL_GATHER, (gathered,), (gathered,), op_code=OpFamily.ALL_GATHER.value,
        name="ttnn.experimental.all_gather_async", collective=desc.collective,
    )  # fmt: skip
    config = desc.matmul
    fidelity = desc.fidelity
    if fidelity is None:
        has_program = config is not None and config.program is not MatmulProgram.DEFAULT
        has_grid = desc.core_grid is not None or (config is not None and config.user_core_grid)
        fidelity = default_matmul_fidelity(has_program_config=has_program, has_core_grid=bool(has_grid))
    matmul = OpDesc(
        OpFamily.MATMUL, (gathered, weight, *desc.inputs[2:]), (product,), op_code=OpFamily.MATMUL.value,
        name="ttnn.matmul", fidelity=fidelity, core_grid=desc.core_grid, matmul=config, unary_ops=desc.unary_ops,
    )  # fmt: skip
    return gather, matmul


def predict_all_gather_matmul(desc: OpDesc, machine: Machine) -> Prediction:
    """The time of the fused all-gather + matmul ``desc`` on ``machine`` (see the module)."""
    gather_desc, matmul_desc = parts(desc)
    gather = predict_collective(gather_desc, machine)
    matmul = predict_matmul(matmul_desc, machine)
    ring = max(1, group_size(gather_desc, machine))
    body = matmul.kernel_ns - matmul.fixed_ns  # the matmul's work past its launch
    start = gather.fixed_ns  # one launch: the gather's start-up (its invocation and hops)
    tail = gather.link_ns + body / ring  # the last slice's bytes, then its share of the matmul
    compute = max(0.0, matmul.kernel_ns - start)  # the matmul alone, from the same start
    notes = (
        *gather.notes,
        f"fused with its matmul: {gather.kernel_ns / 1e3:.2f} us gather, {matmul.kernel_ns / 1e3:.2f} us matmul "
        f"alone; the matmul takes the {ring} slices as they land",
    )
    return replace(
        matmul,
        compute_ns=compute,
        memory_ns=min(matmul.memory_ns, compute),
        link_ns=tail,
        fixed_ns=start,
        drain_ns=0.0,
        link_bytes=gather.link_bytes,
        notes=notes,
    )
