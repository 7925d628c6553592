"""The golden functions of meshnn's hand-written ops: the torch reference ttnn attaches to each
(``ttnn.get_golden_function(ttnn.rms_norm)``), with ttnn's golden signatures (the op's torch-side
arguments by ttnn's names; device-only keywords ignored).  Each imports torch when called.

The element-wise ops declare theirs in their tables; the ops here register theirs where they are
defined (``@register(golden=goldens.rms_norm)``).

May import: nothing of meshnn (torch at call time).
"""

from __future__ import annotations

import builtins
from typing import Any


def _torch():
    import torch

    return torch


# ------------------------------------------------------------------------------ normalization


def rms_norm(input_tensor, weight=None, *, epsilon=1e-12, **_: Any):
    torch = _torch()
    variance = input_tensor.to(torch.float32).pow(2).mean(-1, keepdim=True)
    out = input_tensor * torch.rsqrt(variance + epsilon)
    if weight is not None and weight.dtype in (torch.float16, torch.bfloat16):
        out = out.to(weight.dtype)
    return weight * out if weight is not None else out


def layer_norm(input_tensor, *, epsilon=1e-12, residual_input_tensor=None, weight=None, bias=None, **_: Any):
    torch = _torch()
    if residual_input_tensor is not None:
        input_tensor = input_tensor + residual_input_tensor
    if weight is not None:
        weight = (weight.squeeze() if weight.dim() >= 2 else weight).to(input_tensor.dtype)
    if bias is not None:
        bias = (bias.squeeze() if bias.dim() >= 2 else bias).to(input_tensor.dtype)
    return torch.nn.functional.layer_norm(input_tensor, (input_tensor.shape[-1],), weight, bias, eps=epsilon)


def softmax(input_tensor, dim=None, **_: Any):
    return _torch().softmax(input_tensor, dim if dim is not None else -1)


# ------------------------------------------------------------------------------------ matmul


def _activation(output, activation, program_config):
    torch = _torch()
    fused = getattr(program_config, "fused_activation", None)
    if fused is not None:
        activation = getattr(fused, "op_type", fused)
    if activation is None:
        return output
    name = str(getattr(activation, "value", activation)).lower().removesuffix("_approx")
    functions = {
        "relu": torch.relu,
        "relu6": torch.nn.functional.relu6,
        "silu": torch.nn.functional.silu,
        "mish": torch.nn.functional.mish,
        "sigmoid": torch.sigmoid,
        "hardsigmoid": torch.nn.functional.hardsigmoid,
        "tanh": torch.tanh,
        "log": torch.log,
        "softplus": torch.nn.functional.softplus,
        "gelu": torch.nn.functional.gelu,
        "sqrt": torch.sqrt,
    }
    if name not in functions:
        raise RuntimeError(f"{activation} is not supported as activation function")
    return functions[name](output)


def matmul(
    input_tensor_a, input_tensor_b, transpose_a=False, transpose_b=False, *, activation=None, program_config=None, **_
):
    if transpose_a:
        input_tensor_a = input_tensor_a.transpose(-1, -2)
    if transpose_b:
        input_tensor_b = input_tensor_b.transpose(-1, -2)
    output = input_tensor_a @ input_tensor_b.to(input_tensor_a.dtype)
    output = _activation(output, activation, program_config)
    while output.dim() > input_tensor_a.dim():
        output = output.squeeze(0)
    return output


def linear(
    input_tensor_a,
    input_tensor_b,
    transpose_a=False,
    transpose_b=False,
    *,
    bias=None,
    activation=None,
    program_config=None,
    **_: Any,
):
    if transpose_a:
        input_tensor_a = input_tensor_a.transpose(-1, -2)
    if transpose_b:
        input_tensor_b = input_tensor_b.transpose(-1, -2)
    output = input_tensor_a @ input_tensor_b.to(input_tensor_a.dtype)
    if bias is not None:
        if bias.dim() == 2:
            if bias.shape[0] != 1:
                raise RuntimeError("bias must be a 1D tensor")
            bias = bias[0]
        output = output + bias
    output = _activation(output, activation, program_config)
    while output.dim() > input_tensor_a.dim():
        output = output.squeeze(0)
    return output


# --------------------------------------------------------------------------------- reductions


def _reduction(name: str):
    def golden(input_tensor, dim=None, keepdim=False, **_: Any):
        function = getattr(_torch(), name)
        if dim is None:
            if keepdim:
                return function(input_tensor, dim=tuple(range(input_tensor.dim())), keepdim=True)
            return function(input_tensor)
        return function(input_tensor, dim=dim, keepdim=keepdim)  # max / min with a dim: (values, indices)

    golden.__name__ = golden.__qualname__ = f"golden_{name}"
    return golden


sum, mean, max, min, std, var, argmax = (_reduction(n) for n in ("sum", "mean", "max", "min", "std", "var", "argmax"))


def topk(input_tensor, k, dim=-1, largest=True, sorted=True, **_: Any):
    return _torch().topk(input_tensor, k, dim=dim, largest=largest, sorted=sorted)


def embedding(input_tensor, weight, **_: Any):
    return _torch().nn.functional.embedding(input_tensor.long(), weight)


# ----------------------------------------------------------------------------- data movement


def permute(input_tensor, dims, **_: Any):
    return input_tensor.permute(tuple(dims)).contiguous()


def transpose(input_tensor, dim1, dim2, **_: Any):
    return input_tensor.transpose(dim1, dim2)


def concat(tensors, dim=0, **_: Any):
    return _torch().concat(list(tensors), dim=dim)


def repeat(input_tensor, shape, **_: Any):
    return input_tensor.repeat(*tuple(shape))


def pad(input_tensor, padding, value=0, **_: Any):
    torch = _torch()
    flat: list[int] = []
    for before, after in reversed(list(padding)):
        flat += [int(before), int(after)]
    return torch.nn.functional.pad(input_tensor, flat, mode="constant", value=value)


def slice(input_tensor, slice_start, slice_end, slice_step=None, **_: Any):
    steps = slice_step or [1] * len(slice_start)
    index = tuple(builtins.slice(a, b, s) for a, b, s in zip(slice_start, slice_end, steps, strict=False))
    return input_tensor[index]


def identity(input_tensor, *_: Any, **__: Any):
    return input_tensor.clone() if hasattr(input_tensor, "clone") else input_tensor


def reshape(input_tensor, shape, *_: Any, **__: Any):
    return input_tensor.reshape(tuple(shape))


def view(input_tensor, new_shape, *_: Any, **__: Any):
    return input_tensor.view(tuple(new_shape))


def narrow(input_tensor, dim, start, length, *_: Any, **__: Any):
    return input_tensor.narrow(dim, start, length)


def split(input_tensor, split_size, dim=0, **_: Any):
    return _torch().split(input_tensor, split_size, dim=dim)


def chunk(input_tensor, chunks, dim=0, **_: Any):
    return _torch().chunk(input_tensor, chunks, dim=dim)


# ---------------------------------------------------------------------------------- creation


def zeros_like(input_tensor, **_: Any):
    return _torch().zeros_like(input_tensor)


def ones_like(input_tensor, **_: Any):
    return _torch().ones_like(input_tensor)


def full_like(input_tensor, *, fill_value=0.0, **_: Any):
    return _torch().full_like(input_tensor, fill_value)


def empty_like(input_tensor, **_: Any):
    return _torch().empty_like(input_tensor)


def zeros(input_shape, **_: Any):
    return _torch().zeros(tuple(input_shape))


def ones(input_shape, **_: Any):
    return _torch().ones(tuple(input_shape))


def full(input_shape, fill_value=0.0, **_: Any):
    return _torch().full(tuple(input_shape), fill_value)


def empty(input_shape, **_: Any):
    return _torch().empty(tuple(input_shape))


def arange(start=0, end=None, step=1, **_: Any):
    torch = _torch()
    return torch.arange(start, end, step) if end is not None else torch.arange(start)


# ------------------------------------------------------------------------------- transformer


def concatenate_heads(input_tensor, **_: Any):
    batch, heads, seq, head_size = input_tensor.shape
    return input_tensor.permute(0, 2, 1, 3).reshape(batch, seq, heads * head_size)


def split_query_key_value_and_split_heads(
    input_tensor, kv_input_tensor=None, *, num_heads, num_kv_heads=None, transpose_key=True, **_: Any
):
    torch = _torch()
    num_kv_heads = num_kv_heads or num_heads
    if kv_input_tensor is not None:
        input_tensor = torch.cat([input_tensor, kv_input_tensor], dim=-1)
    batch, seq, hidden = input_tensor.shape
    head_size = hidden // (num_heads + 2 * num_kv_heads)
    q, k, v = torch.split(input_tensor, [num_heads * head_size, num_kv_heads * head_size, num_kv_heads * head_size], -1)
    q = q.reshape(batch, seq, num_heads, head_size).permute(0, 2, 1, 3)
    k = k.reshape(batch, seq, num_kv_heads, head_size).permute(0, 2, 1, 3)
    v = v.reshape(batch, seq, num_kv_heads, head_size).permute(0, 2, 1, 3)
    if transpose_key:
        k = k.permute(0, 1, 3, 2)
    return q, k, v


def scaled_dot_product_attention(query, key, value, *, is_causal=True, attn_mask=None, scale=None, **_: Any):
    torch = _torch()
    heads, kv_heads = query.shape[1], key.shape[1]
    if kv_heads != heads:
        key = key.repeat_interleave(heads // kv_heads, dim=1)
        value = value.repeat_interleave(heads // kv_heads, dim=1)
    return torch.nn.functional.scaled_dot_product_attention(
        query, key, value, attn_mask=attn_mask, is_causal=is_causal and attn_mask is None, scale=scale
    )


def rotary_embedding(x, cos_cached, sin_cached, token_idx=None, **_: Any):
    torch = _torch()
    seq = x.shape[-2]
    if token_idx is None:
        cos, sin = cos_cached[:, :, :seq, ...], sin_cached[:, :, :seq, ...]
    else:
        cos, sin = cos_cached[:, :, token_idx : token_idx + 1, ...], sin_cached[:, :, token_idx : token_idx + 1, ...]
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + rotated * sin
