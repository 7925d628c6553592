"""``ttnn.experimental.isin``: whether each of ``elements`` is one of ``test_elements``, as uint32
``0xFFFFFFFF`` (true) or ``0`` (false) (``invert`` swaps them), shaped, laid out and placed like
``elements`` (its logical shape, its layout, its memory config).

Both inputs are interleaved device tensors of one dtype, of any shape (ttnn flattens them, runs its
program on rank-1 row-major tensors and restores the elements' shape and layout; meshnn computes
the same values in one program).  ``assume_unique`` has no effect, as in ttnn.  Each device
compares its own shards (a row-wise op).  ``out``: a preallocated output of exactly the output's
spec, written in place.

May import: every layer below the ops and the ops' launch, checks, outputs and values modules.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output, output_into
from meshnn.ops.registry import OpKind, register
from meshnn.ops.values import logical_values, write_values
from meshnn.perf.desc import OpFamily
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.tensor import Tensor

_OP = "experimental.isin"
_TRUE = np.uint32(0xFFFFFFFF)  # all bits set: ttnn's true


def _interleaved(name: str, tensor: object) -> Tensor:
    t = device_input(_OP, name, tensor)
    if t.memory_config().is_sharded():
        raise MeshnnValueError(f"ttnn.{_OP}: {name} must be interleaved, it is {t.memory_config().memory_layout}")
    return t


@register(_OP, kind=OpKind.BINARY, family=OpFamily.BINARY, device_operation="IsInDeviceOperation")
def isin(
    elements: Tensor,
    test_elements: Tensor,
    *,
    assume_unique: bool = False,
    invert: bool = False,
    out: Tensor | None = None,
) -> Tensor:
    """uint32 ``0xFFFFFFFF`` where an element of ``elements`` is in ``test_elements`` (``0`` where
    it is not; the reverse with ``invert``), like ``elements`` in shape, layout and placement."""
    for name, flag in (("assume_unique", assume_unique), ("invert", invert)):
        if not isinstance(flag, bool):
            raise MeshnnTypeError(f"ttnn.{_OP}: {name} must be a bool, got {flag!r}")
    x, tests = _interleaved("elements", elements), _interleaved("test_elements", test_elements)
    if x.dtype is not tests.dtype:
        raise MeshnnTypeError(
            f"ttnn.{_OP}: elements.dtype {x.dtype} and test_elements.dtype {tests.dtype} must be equal"
        )
    mesh = same_mesh(_OP, {"elements": x, "test_elements": tests})
    spec = TensorSpec(tuple(x.shape), DataType.UINT32, x.layout, memory_config=x.memory_config())
    into = None if out is None else [output_into(_OP, mesh, out, spec, x.storage.coords)]  # type: ignore[union-attr]

    tests_spec, x_spec = tests.spec, x.spec  # (the kernel holds no tensor: a trace must not keep it allocated)

    def kernel(in_rows: list[np.ndarray], out_rows: list[np.ndarray], coords: tuple[MeshCoordinate, ...]) -> None:
        values = logical_values(in_rows[0], x_spec, as_float=False)
        wanted = logical_values(in_rows[1], tests_spec, as_float=False)
        found = np.stack([np.isin(v, w, invert=invert) for v, w in zip(values, wanted, strict=True)])
        write_values(out_rows[0], np.where(found, _TRUE, np.uint32(0)), spec, exact=True, owned=True)

    attrs = {"invert": invert}
    return launch(_OP, mesh, [x, tests], [Output(spec)], kernel, into=into, rowwise=True, attrs=attrs)[0]
