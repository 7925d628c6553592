"""The names ttnn gives a meshnn op in traces and reports.

An op is known to meshnn by its ttnn Python name relative to ``ttnn`` (``add``,
``transformer.scaled_dot_product_attention``); ttnn's traces call it by its C++ name
(``ttnn::add``), its report by its Python name (``ttnn.add``), and its device operation by
tt-metal's class name (``BinaryNgDeviceOperation``, the performance model's family names).

Layers: imports the performance model's op families.
"""

from __future__ import annotations

from meshnn.perf.desc import OpFamily

_BINARY = ("add", "subtract", "sub", "multiply", "mul", "divide", "div", "pow", "eq", "ne", "gt", "ge", "lt", "le")
_UNARY = ("abs", "exp", "gelu", "log", "neg", "reciprocal", "relu", "rsqrt", "sigmoid", "silu", "softplus", "sqrt")
_FAMILIES: dict[str, OpFamily] = {
    **dict.fromkeys((*_BINARY, "maximum", "minimum"), OpFamily.BINARY),
    **dict.fromkeys((*_UNARY, "square", "tanh"), OpFamily.UNARY),
    **dict.fromkeys(("matmul", "linear"), OpFamily.MATMUL),
    **dict.fromkeys(("rms_norm", "layer_norm"), OpFamily.NORM),
    **dict.fromkeys(("sum", "mean", "max", "min"), OpFamily.REDUCTION),
    **dict.fromkeys(("clone", "move", "reallocate", "to_memory_config", "copy"), OpFamily.COPY),
    "softmax": OpFamily.SOFTMAX,
    "scaled_dot_product_attention": OpFamily.SDPA,
    "scaled_dot_product_attention_decode": OpFamily.SDPA_DECODE,
    "concat": OpFamily.CONCAT,
    "permute": OpFamily.PERMUTE,
    "transpose": OpFamily.TRANSPOSE,
    "typecast": OpFamily.TYPECAST,
    "embedding": OpFamily.EMBEDDING,
    "slice": OpFamily.SLICE,
    "pad": OpFamily.PAD,
    "all_gather": OpFamily.ALL_GATHER,
    "reduce_scatter": OpFamily.REDUCE_SCATTER,
    "all_reduce": OpFamily.ALL_REDUCE,
}
CREATE_DEVICE_TENSOR = "tt::tt_metal::create_device_tensor"


def function_name(op: str) -> str:
    """The op's ttnn C++ name: ``add`` -> ``ttnn::add``, ``transformer.x`` -> ``ttnn::transformer::x``."""
    return "ttnn::" + op.replace(".", "::")


def op_family(op: str) -> OpFamily | None:
    """The performance model's family of an op (by its last name), or None when it has none."""
    return _FAMILIES.get(op.rsplit(".", 1)[-1])


def device_operation_name(op: str) -> str:
    """The device operation an op runs, named as tt-metal names it in traces
    (``BinaryNgDeviceOperation``): the performance model's name for the op's family, else the op's
    own name in CamelCase + ``DeviceOperation`` (``to_layout`` -> ``ToLayoutDeviceOperation``)."""
    last = op.rsplit(".", 1)[-1]
    family = op_family(op)
    if family is not None:
        return family.value
    return "".join(part.capitalize() for part in last.split("_")) + "DeviceOperation"


def python_name(op: str) -> str:
    """The op's ttnn Python name, as reports give it: ``ttnn.add``."""
    return "ttnn." + op
