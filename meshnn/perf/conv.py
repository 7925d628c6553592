"""``conv2d`` as the performance model times it: the matmul its program computes.

tt-metal's conv2d program (``conv2d_op_sharded_program_factory.cpp`` and its activation readers) is a
matmul whose in0 rows are output pixels and whose K is the kernel window over the input channels: each
core's reader builds the window's rows from the (halo'd) input shards in L1 and the compute kernel
multiplies them by the prepared weight ``[1, 1, in_channels x kh x kw, out_channels]``.  A captured
conv (:mod:`meshnn.ops.costs`) holds the input as it was given (``[N, H, W, C]`` or ``[1, 1, N x H x W,
C]``), the prepared weight and the output ``[1, 1, N x OH x OW, out_channels]``: timed as a matmul of
those tensors it would have ``W`` rows and ``C`` K-columns, missing a factor of ``H x kh x kw`` of its
multiplies.  :func:`implicit_matmul` gives the matmul the program runs: in0 the window rows
``[1, 1, N x OH x OW, K]`` built in L1 (so not streamed from DRAM), the weight and any bias as given, and
the input itself read once beside them (from DRAM when it lives there).
"""

from __future__ import annotations

import math
from dataclasses import replace

from meshnn.perf.desc import BufferType, Layout, MemoryLayout, OpDesc, OpFamily, TensorDesc
from meshnn.perf.matmul import predict_matmul
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine

CONV_OP_CODE = "Conv2dDeviceOperation"


def is_conv(desc: OpDesc) -> bool:
    """Whether ``desc`` is a conv2d run (a matmul-family op with conv2d's device-operation name)."""
    return desc.family is OpFamily.MATMUL and desc.op_code == CONV_OP_CODE and len(desc.inputs) >= 2


def implicit_matmul(desc: OpDesc) -> OpDesc:
    """The matmul ``desc``'s conv program computes (the module's text): in0 ``[1, 1, output pixels, K]``
    in L1, K the weight's rows (a prepared ``[1, 1, K, N]`` weight, or ``in x kh x kw`` of a raw
    ``[out, in, kh, kw]`` one); the input kept as a further input, read once."""
    x, weight, *rest = desc.inputs
    out = desc.outputs[0]
    pixels = max(1, out.volume // max(1, out.shape[-1]))
    raw = len(weight.shape) == 4 and weight.shape[0] > 1
    k = math.prod(weight.shape[1:]) if raw else weight.shape[-2]
    if raw:  # the weight as the program holds it after preparation
        weight = TensorDesc((1, 1, k, weight.shape[0]), weight.dtype)
    memory = x.memory if x.sharded and x.buffer is BufferType.L1 else MemoryLayout.HEIGHT_SHARDED
    window = TensorDesc((1, 1, pixels, k), x.dtype, Layout.TILE, BufferType.L1, memory)
    return replace(desc, inputs=(window, weight, *rest, x))


def predict_conv(desc: OpDesc, machine: Machine) -> Prediction:
    """The time of a conv2d ``desc`` on ``machine``: its :func:`implicit_matmul` as a matmul."""
    return predict_matmul(implicit_matmul(desc), machine)
