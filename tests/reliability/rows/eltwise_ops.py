"""Bad calls of the element-wise ops outside the generic unary / binary families: the integer-only
binary ops and ``bitwise_not`` (with the table's int32 tensors, so the fault is the only fault),
``clamp`` / ``clip``, ``tril`` / ``triu``, the gated linear units, the (H, W) statistics,
``unary_chain``, ``logical_not_``, ``polyval``, ``prelu``, ``outer``, ``prim.binary``, the ternary
ops and ``pearson_correlation_coefficient``."""

from __future__ import annotations

import numpy as np

import meshnn as ttnn
from meshnn.ops.eltwise.binary_tables import BINARY_DEFS

from ..cases import BF16, CLOSED, DEAD, F32, TYPE, VALUE, WRONG_MESH, Case

INTEGER_BINARY = tuple(d.name for d in BINARY_DEFS if d.dtypes is not None)


INTEGER_FAULTS = (
    ("a is a float tensor", lambda op, e: op(e.a, e.i32), TYPE, "input_tensor_a"),
    ("b is a float tensor", lambda op, e: op(e.i32, e.a), TYPE, "input_tensor_b"),
    ("shapes do not broadcast", lambda op, e: op(e.i32, e.i32b), VALUE, "input_tensor"),
    ("b deallocated", lambda op, e: op(e.i32, e.freed), DEAD, "input_tensor_b"),
    ("b is a string", lambda op, e: op(e.i32, "2"), TYPE, "input_tensor_b"),
    ("a was deallocated", lambda op, e: op(e.freed, e.i32), DEAD, "input_tensor_a"),
    ("b's mesh is closed", lambda op, e: op(e.i32, e.closed), CLOSED, "input_tensor_b"),
    ("memory_config is a dict", lambda op, e: op(e.i32, e.i32, memory_config={}), TYPE, "memory_config"),
)


def _integer_rows() -> list[Case]:
    return [
        Case(name, what, (lambda e, f=fault, n=name: f(getattr(ttnn, n), e)), error, argument)
        for name in INTEGER_BINARY
        for what, fault, error, argument in INTEGER_FAULTS
    ]


def _unary_rows() -> list[Case]:
    return [
        Case("typecast", "input_dtype not the tensor's", lambda e: ttnn.typecast(e.a, BF16, F32), VALUE, "input_dtype"),
        Case("sigmoid", "vector_mode 1", lambda e: ttnn.sigmoid(e.a, vector_mode=1), VALUE, "vector_mode"),
        Case("bitwise_not", "a float tensor", lambda e: ttnn.bitwise_not(e.a), TYPE, "input_tensor"),
        Case("bitwise_not", "deallocated", lambda e: ttnn.bitwise_not(e.freed), DEAD, "input_tensor"),
        Case("alt_complex_rotate90", "odd last dimension", lambda e: ttnn.alt_complex_rotate90(e.b), VALUE, "input"),
        Case("clamp", "min and max both None", lambda e: ttnn.clamp(e.a), VALUE, "min.*max"),
        Case("clamp", "min is a string", lambda e: ttnn.clamp(e.a, "0"), TYPE, "min"),
        Case("clamp", "max does not broadcast", lambda e: ttnn.clamp(e.a, max=e.b), VALUE, "max"),
        Case("clamp", "input on the host", lambda e: ttnn.clamp(e.host, 0.0), VALUE, "input_tensor"),
        Case("clip", "both None", lambda e: ttnn.clip(e.a, None, None), VALUE, "min.*max"),
        Case("clip", "output_tensor is not taken", lambda e: ttnn.clip(e.a, 0, output_tensor=e.a2), TYPE, "output"),
        Case("tril", "diagonal is a float", lambda e: ttnn.tril(e.a, diagonal=1.5), TYPE, "diagonal"),
        Case("tril", "diagonal by position", lambda e: ttnn.tril(e.a, 1), TYPE, "positional"),
        Case("triu", "rank 1", lambda e: ttnn.triu(e.row7), VALUE, "rank"),
        Case("triu", "deallocated", lambda e: ttnn.triu(e.freed), DEAD, "input_tensor"),
        Case("glu", "dim not the last", lambda e: ttnn.glu(e.heads, 1), VALUE, "dim"),
        Case("reglu", "width not whole tiles", lambda e: ttnn.reglu(e.a), VALUE, "64"),
        Case("geglu", "dim is a string", lambda e: ttnn.geglu(e.heads, "-1"), TYPE, "dim"),
        Case("swiglu", "input a numpy array", lambda e: ttnn.swiglu(np.ones((1, 64))), TYPE, "input_tensor"),
        Case("var_hw", "rank 3", lambda e: ttnn.var_hw(e.a), VALUE, "rank"),
        Case("std_hw", "closed mesh", lambda e: ttnn.std_hw(e.closed), CLOSED, "input_tensor"),
        Case("normalize_hw", "rank 3", lambda e: ttnn.normalize_hw(e.a), VALUE, "rank"),
        Case(
            "normalize_global",
            "memory_config a string",
            lambda e: ttnn.normalize_global(e.heads, memory_config="L1"),
            TYPE,
            "memory_config",
        ),
        Case("unary_chain", "ops_chain empty", lambda e: ttnn.unary_chain(e.a, []), TYPE, "ops_chain"),
        Case("unary_chain", "ops_chain of ints", lambda e: ttnn.unary_chain(e.a, [3]), TYPE, "ops_chain"),
        Case("logical_not_", "input on the host", lambda e: ttnn.logical_not_(e.host), VALUE, "input_tensor"),
        Case("polyval", "coeffs empty", lambda e: ttnn.polyval(e.a, []), VALUE, "coeffs"),
        Case("polyval", "coeffs of strings", lambda e: ttnn.polyval(e.a, ["1"]), TYPE, "coeffs"),
    ]


def _binary_rows() -> list[Case]:
    return [
        Case("prelu", "weight of the wrong length", lambda e: ttnn.prelu(e.a, e.row7), VALUE, "weight"),
        Case("prelu", "weight a string", lambda e: ttnn.prelu(e.a, "0.1"), TYPE, "weight"),
        Case("prelu", "weight list of two", lambda e: ttnn.prelu(e.a, [0.1, 0.2]), VALUE, "weight"),
        Case("outer", "a is not a vector", lambda e: ttnn.outer(e.heads, e.heads), VALUE, "input_tensor_a"),
        Case("outer", "b deallocated", lambda e: ttnn.outer(e.heads, e.freed), DEAD, "input_tensor_b"),
        Case("prim.binary", "op type a string", lambda e: ttnn.prim.binary(e.a, e.a, "ADD"), TYPE, "binary_op_type"),
        Case(
            "prim.binary",
            "a quantization op type",
            lambda e: ttnn.prim.binary(e.a, e.a, ttnn.BinaryOpType.QUANT),
            VALUE,
            "QUANT",
        ),
        Case("pow", "negative scalar exponent", lambda e: ttnn.pow(e.a, -2.0), VALUE, "exponent"),
        Case("pow", "exponent is a string", lambda e: ttnn.pow(e.a, "2"), TYPE, "exponent"),
        Case("pow", "exponent on another mesh", lambda e: ttnn.pow(e.a, e.other), WRONG_MESH, "input_tensor_b"),
        Case("pow", "shapes do not broadcast", lambda e: ttnn.pow(e.a, e.b), VALUE, "input_tensor_a"),
        Case("pow", "input deallocated", lambda e: ttnn.pow(e.freed, 2.0), DEAD, "input_tensor"),
    ]


def _ternary_rows() -> list[Case]:
    return [
        Case("addcmul", "value is a string", lambda e: ttnn.addcmul(e.a, e.a, e.a, value="1"), TYPE, "value"),
        Case("addcmul", "c is a number", lambda e: ttnn.addcmul(e.a, e.a, 2.0), TYPE, "input_c"),
        Case("addcmul", "b on another mesh", lambda e: ttnn.addcmul(e.a, e.other, e.a), WRONG_MESH, "input_b"),
        Case("addcdiv", "value is missing", lambda e: ttnn.addcdiv(e.a, e.a, e.a), TYPE, "value"),
        Case(
            "addcdiv",
            "shapes do not broadcast",
            lambda e: ttnn.addcdiv(e.a, e.b, e.a, value=1.0),
            VALUE,
            "input_tensor_b",
        ),
        Case("lerp", "end of another dtype", lambda e: ttnn.lerp(e.a, e.a_bf16, 0.5), VALUE, "end"),
        Case("lerp", "weight is a string", lambda e: ttnn.lerp(e.a, e.a2, "0.5"), TYPE, "weight"),
        Case("mac", "b a tensor and c a number", lambda e: ttnn.mac(e.a, e.a, 1.0), TYPE, "input_tensor_b"),
        Case("mac", "a deallocated", lambda e: ttnn.mac(e.freed, e.a, e.a), DEAD, "input_tensor_a"),
        Case(
            "experimental.where",
            "dtype is a string",
            lambda e: ttnn.experimental.where(e.a, e.a, e.a2, dtype="bf16"),
            TYPE,
            "dtype",
        ),
        Case(
            "where",
            "output_tensor of another shape",
            lambda e: ttnn.where(e.a, e.a, e.a2, output_tensor=e.b),
            VALUE,
            "output_tensor",
        ),
        Case(
            "pearson_correlation_coefficient",
            "expected is a list",
            lambda e: ttnn.pearson_correlation_coefficient([1.0], e.a),
            TYPE,
            "expected",
        ),
    ]


def _quantization_rows() -> list[Case]:
    return [
        Case("quantize", "an int32 input", lambda e: ttnn.quantize(e.i32, 0.1, 0), TYPE, "input_tensor"),
        Case("quantize", "zero_point a float", lambda e: ttnn.quantize(e.a, 0.1, 0.5), TYPE, "zero_point"),
        Case("quantize", "scale of two values", lambda e: ttnn.quantize(e.a, e.row7, 0), VALUE, "scale"),
        Case("quantize", "dtype bfloat16", lambda e: ttnn.quantize(e.a, 0.1, 0, dtype=ttnn.bfloat16), VALUE, "dtype"),
        Case("dequantize", "a float input", lambda e: ttnn.dequantize(e.a, 0.1, 0), TYPE, "input_tensor"),
        Case("dequantize", "axis out of range", lambda e: ttnn.dequantize(e.i32, 0.1, 0, axis=3), VALUE, "axis"),
        Case("dequantize", "dtype int32", lambda e: ttnn.dequantize(e.i32, 0.1, 0, dtype=ttnn.int32), VALUE, "dtype"),
        Case("requantize", "a float input", lambda e: ttnn.requantize(e.a, 0.1, 0, 0.2, 1), TYPE, "input_tensor"),
        Case("requantize", "out_scale a string", lambda e: ttnn.requantize(e.i32, 0.1, 0, "x", 1), TYPE, "out_scale"),
        Case("l1_loss", "reduction a string", lambda e: ttnn.l1_loss(e.a, e.a2, reduction="sum"), TYPE, "reduction"),
        Case("l1_loss", "shapes do not broadcast", lambda e: ttnn.l1_loss(e.a, e.b), VALUE, "input_reference"),
        Case("mse_loss", "prediction deallocated", lambda e: ttnn.mse_loss(e.a, e.freed), DEAD, "input_prediction"),
        Case(
            "mse_loss",
            "output_tensor with a reduction",
            lambda e: ttnn.mse_loss(e.a, e.a2, reduction=ttnn.LossReductionMode.SUM, output_tensor=e.victim),
            TYPE,
            "output_tensor",
        ),
    ]


def rows() -> list[Case]:
    return _integer_rows() + _unary_rows() + _binary_rows() + _ternary_rows() + _quantization_rows()
