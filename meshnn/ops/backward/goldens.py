"""The golden functions ttnn attaches to its backward ops: torch autograd through the forward op,
the gradients of the inputs returned as a list (``[input.grad]``, ``[a.grad, b.grad]``...).

A golden takes torch tensors (the incoming gradient first) and the op's parameters, and ignores
the keywords that only matter on a device.  Its inputs keep their ``.grad`` as ttnn's goldens
leave them (``retain_grad``); an input that does not require grad is made to (a leaf) first.
torch is imported when a golden runs, never at import.

May import: nothing of meshnn but the ops' registry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from meshnn.ops.registry import torch_golden

Forward = Callable[..., Any]
"""``forward(torch, *inputs, *args, **kwargs)``: the torch op the gradients are of."""


def _grads(torch: Any, out: Any, grad: Any, tensors: list[Any]) -> list[Any]:
    out.backward(gradient=grad)
    return [t.grad for t in tensors]


def _watch(tensors: Any) -> list[Any]:
    """The tensors, each set to keep its gradient."""
    watched = []
    for t in tensors:
        if not t.requires_grad:
            t.requires_grad_(True)
        t.retain_grad()
        watched.append(t)
    return watched


def autograd(forward: Forward, n: int = 1) -> Callable[..., Any]:
    """``golden(grad, *n inputs, *args, **kwargs)``: the gradients of ``forward``'s ``n`` tensor
    inputs (its other positional arguments and keywords passed on; ``memory_config``, ``device``
    and ``queue_id`` dropped)."""

    def body(torch: Any, grad: Any, *args: Any, **kwargs: Any) -> list[Any]:
        for hardware in ("memory_config", "device", "queue_id", "input_grad", "are_required_outputs"):
            kwargs.pop(hardware, None)
        tensors = _watch(args[:n])
        return _grads(torch, forward(torch, *tensors, *args[n:], **kwargs), grad, tensors)

    return torch_golden(body)


def unary(name: str) -> Callable[..., Any]:
    """The golden of ``<name>_bw`` for torch's one-argument ``torch.<name>`` (or
    ``torch.nn.functional.<name>``)."""

    def forward(torch: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
        function = getattr(torch, name, None) or getattr(torch.nn.functional, name)
        return function(x)

    return autograd(forward)


def functional(name: str, **renamed: str) -> Callable[..., Any]:
    """The golden of a ``torch.nn.functional.<name>`` op with parameters: positional ones passed
    on, ttnn's keyword names mapped to torch's by ``renamed`` (``alpha="lambd"``)."""

    def forward(torch: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
        function = getattr(torch.nn.functional, name, None) or getattr(torch, name)
        kwargs = {renamed.get(key, key): value for key, value in kwargs.items()}
        return function(x, *args, **kwargs)

    return autograd(forward)


def binary(name: str) -> Callable[..., Any]:
    """The golden of a binary ``<name>_bw``: ``torch.<name>(a, b)``, the gradients of both."""
    return autograd(lambda torch, a, b, *args, **kw: getattr(torch, name)(a, b), 2)


def complex_parts(forward: Forward, n: int = 1) -> Callable[..., Any]:
    """The golden of a complex gradient as ttnn's tests read it: each gradient with its real and
    imaginary parts side by side (concatenated along the last dimension)."""

    def body(torch: Any, grad: Any, *args: Any, **kwargs: Any) -> list[Any]:
        kwargs.pop("memory_config", None)
        tensors = _watch(args[:n])
        grads = _grads(torch, forward(torch, *tensors, *args[n:], **kwargs), grad, tensors)
        return [torch.cat((torch.real(g), torch.imag(g)), dim=-1) for g in grads]

    return torch_golden(body)


def _unary_body(forward: Forward) -> Callable[..., Any]:
    """``body(torch, grad, input, *args, **kwargs)``: [input.grad] through ``forward``."""

    def body(torch: Any, grad: Any, x: Any, *args: Any, **kwargs: Any) -> list[Any]:
        (x,) = _watch([x])
        return _grads(torch, forward(torch, x, *args, **kwargs), grad, [x])

    return body


DEVICE_NAN, DEVICE_INF = 7.0040e19, 1.7014e38
"""tt-metal's NaN and infinity of a Wormhole / Blackhole device (``device.sfpu_nan()`` /
``device.sfpu_inf()``)."""


def device_special(name: str) -> Callable[..., Any]:
    """The golden of ``<name>_bw`` whose non-finite gradients are the device's values (NaN and
    infinities replaced by ``device.sfpu_nan()`` / ``device.sfpu_inf()``)."""

    def body(torch: Any, grad: Any, x: Any, *args: Any, device: Any = None, **kwargs: Any) -> list[Any]:
        nan = device.sfpu_nan() if hasattr(device, "sfpu_nan") else DEVICE_NAN
        inf = device.sfpu_inf() if hasattr(device, "sfpu_inf") else DEVICE_INF
        (g,) = _unary_body(lambda t, v: getattr(t, name)(v))(torch, grad, x)
        return [torch.nan_to_num(g, nan=nan, posinf=inf, neginf=-inf)]

    return torch_golden(body)


def polygamma() -> Callable[..., Any]:
    """``polygamma_bw``'s golden: ``torch.polygamma(n, input)``."""
    return torch_golden(_unary_body(lambda t, x, n, *a, **k: t.polygamma(int(n), x)))


def mvlgamma() -> Callable[..., Any]:
    """``multigammaln_bw``'s golden: ``torch.mvlgamma(input, 4)``."""
    return torch_golden(_unary_body(lambda t, x, *a, **k: t.mvlgamma(x, 4)))


def pow_golden() -> Callable[..., Any]:
    """``pow_bw``'s golden: ``torch.pow(input, exponent)``, infinite where the input is negative
    (for a nonzero exponent), as ttnn's is."""

    def body(torch: Any, grad: Any, x: Any, exponent: float, *args: Any, **kwargs: Any) -> list[Any]:
        (g,) = _unary_body(lambda t, v: t.pow(v, exponent))(torch, grad, x)
        if exponent != 0:
            g.masked_fill_(x < 0, float("inf"))
        return [g]

    return torch_golden(body)


def fill_zero() -> Callable[..., Any]:
    """``fill_zero_bw``'s golden: zeros like the incoming gradient."""
    return torch_golden(lambda torch, grad, *args, **kwargs: [torch.zeros_like(grad)])


def fill() -> Callable[..., Any]:
    """``fill_bw``'s golden: the gradient of ``torch.fill(input, value)`` (zeros)."""

    def body(torch: Any, grad: Any, x: Any, *args: Any, value: float = 2.0, **kwargs: Any) -> list[Any]:
        return _unary_body(lambda t, v: t.fill(v, value))(torch, grad, x)

    return torch_golden(body)


def div_no_nan() -> Callable[..., Any]:
    """``div_no_nan_bw``'s golden: the gradient of ``input / scalar`` (zero for a zero scalar),
    NaN replaced by 0."""

    def body(torch: Any, grad: Any, x: Any, scalar: float, *args: Any, **kwargs: Any) -> list[Any]:
        def forward(t: Any, v: Any) -> Any:
            return t.where(t.tensor(scalar) == 0, t.zeros_like(v), t.div(v, scalar))

        (g,) = _unary_body(forward)(torch, grad, x)
        return [torch.where(torch.isnan(g), torch.zeros_like(x), g)]

    return torch_golden(body)


def rounding_of(value: Any, keywords: dict[str, Any]) -> Any:
    """A division golden's rounding mode: given by position (``value``), or by keyword as ttnn 0.81's
    ``round_mode`` or newer ttnn's ``rounding_mode``."""
    for name in ("round_mode", "rounding_mode"):
        if value is None:
            value = keywords.get(name)
    return value


def rdiv() -> Callable[..., Any]:
    """``rdiv_bw``'s golden: the gradient of ``torch.div(scalar, input, rounding_mode=round_mode)``."""

    def body(torch: Any, grad: Any, x: Any, scalar: Any = None, round_mode: Any = None, *a: Any, **k: Any) -> list:
        mode = rounding_of(round_mode, k)
        return _unary_body(lambda t, v: t.div(scalar, v, rounding_mode=mode))(torch, grad, x)

    return torch_golden(body)


def real_or_complex(name: str) -> Callable[..., Any]:
    """The golden of ``<name>_bw`` that takes a real or a complex input (``abs_bw``,
    ``reciprocal_bw``): a complex input's gradient as its parts side by side."""
    real = unary(name)
    complex_ = complex_parts(lambda t, z, *a, **k: getattr(t, name)(z))

    def golden(grad: Any, x: Any, *args: Any, **kwargs: Any) -> list[Any]:
        return (complex_ if x.is_complex() else real)(grad, x, *args, **kwargs)

    return golden


def clamp() -> Callable[..., Any]:
    """``clamp_bw`` / ``clip_bw``'s golden: the gradient of ``torch.clamp(input, min=, max=)``
    (numbers or tensors)."""

    def body(torch: Any, grad: Any, x: Any, a: Any = None, b: Any = None, *args: Any, **kwargs: Any) -> list[Any]:
        a, b = kwargs.pop("min", a), kwargs.pop("max", b)
        return _unary_body(lambda t, v: t.clamp(v, min=a, max=b))(torch, grad, x)

    return torch_golden(body)


def gelu() -> Callable[..., Any]:
    """``gelu_bw``'s golden: the gradient of ``torch.nn.functional.gelu`` (with ``approximate``
    when given)."""

    def body(torch: Any, grad: Any, x: Any, approximate: str = "none", *args: Any, **kwargs: Any) -> list[Any]:
        return _unary_body(lambda t, v: t.nn.functional.gelu(v, approximate=approximate))(torch, grad, x)

    return torch_golden(body)


_DEVICE_KEYWORDS = ("memory_config", "device", "queue_id", "input_grad", "other_grad", "are_required_outputs")


def two(forward: Forward, complex_forward: Forward | None = None) -> Callable[..., Any]:
    """The golden of a binary ``_bw`` with ttnn's overloads: ``forward(torch, a, b, *args,
    **kwargs)`` differentiated for both tensors, or for ``a`` alone when ``b`` is a number; complex
    inputs go through ``complex_forward`` (their gradients' parts side by side)."""

    def body(torch: Any, grad: Any, a: Any, b: Any, *args: Any, **kwargs: Any) -> list[Any]:
        for key in _DEVICE_KEYWORDS:
            kwargs.pop(key, None)
        if complex_forward is not None and torch.is_tensor(a) and a.is_complex():
            parts = complex_parts(complex_forward, 2)
            return parts(grad, a, b, *args, **kwargs)
        if not torch.is_tensor(b):
            (a,) = _watch([a])
            return _grads(torch, forward(torch, a, b, *args, **kwargs), grad, [a])
        tensors = _watch([a, b])
        return _grads(torch, forward(torch, a, b, *args, **kwargs), grad, tensors)

    return torch_golden(body)


def assign() -> Callable[..., Any]:
    """``assign_bw``'s golden: the gradient of ``torch.clone(a)``, for ``a`` (and again for ``b``
    when given)."""

    def body(torch: Any, grad: Any, a: Any, b: Any = None, *args: Any, **kwargs: Any) -> list[Any]:
        (a,) = _watch([a])
        (g,) = _grads(torch, torch.clone(a), grad, [a])
        return [g] if b is None else [g, g]

    return torch_golden(body)


def concat() -> Callable[..., Any]:
    """``concat_bw``'s golden: the gradients of ``torch.concat((a, b), dim)``."""

    def body(torch: Any, grad: Any, a: Any, b: Any, dim: Any = None, *args: Any, **kwargs: Any) -> list[Any]:
        tensors = _watch([a, b])
        out = torch.concat(tuple(tensors)) if dim is None else torch.concat(tuple(tensors), dim=dim)
        return _grads(torch, out, grad, tensors)

    return torch_golden(body)


def bias_gelu() -> Callable[..., Any]:
    """``bias_gelu_bw``'s golden: the gradient of ``gelu(a + b, approximate)`` at the sum, once
    per tensor operand."""

    def body(torch: Any, grad: Any, a: Any, b: Any, value: str = "none", *args: Any, **kwargs: Any) -> list[Any]:
        value = kwargs.pop("approximate", value)
        total = torch.add(a, b)
        total.retain_grad()
        torch.nn.functional.gelu(total, approximate=value).backward(gradient=grad)
        return [total.grad] if not torch.is_tensor(b) else [total.grad, total.grad]

    return torch_golden(body)


def ternary_value(name: str) -> Callable[..., Any]:
    """``addcmul_bw`` / ``addcdiv_bw``'s golden: the gradients of ``torch.<name>(input, tensor1,
    tensor2, value=value)`` for all three."""
    return autograd(lambda torch, x, t1, t2, value, *a, **k: getattr(torch, name)(x, t1, t2, value=value), 3)


def where() -> Callable[..., Any]:
    """``where_bw``'s golden: the gradients of ``torch.where(condition, input, other)`` for
    ``input`` and ``other``."""

    def body(torch: Any, grad: Any, condition: Any, x: Any, y: Any, *args: Any, **kwargs: Any) -> list[Any]:
        tensors = _watch([x, y])
        return _grads(torch, torch.where(condition, *tensors), grad, tensors)

    return torch_golden(body)


def lerp() -> Callable[..., Any]:
    """``lerp_bw``'s golden: the gradients of ``torch.lerp(input, end, weight)`` for the input,
    the end and a tensor weight."""

    def body(torch: Any, grad: Any, x: Any, end: Any, weight: Any, *args: Any, **kwargs: Any) -> list[Any]:
        tensors = _watch([x, end, weight] if torch.is_tensor(weight) else [x, end])
        return _grads(
            torch, torch.lerp(tensors[0], tensors[1], tensors[2] if len(tensors) > 2 else weight), grad, tensors
        )

    return torch_golden(body)


def repeat() -> Callable[..., Any]:
    """``repeat_bw``'s golden: the gradient of ``input.repeat(sizes)``."""

    def body(torch: Any, grad: Any, x: Any, sizes: Any, *args: Any, **kwargs: Any) -> list[Any]:
        return _unary_body(lambda t, v: v.repeat(tuple(sizes)))(torch, grad, x)

    return torch_golden(body)
