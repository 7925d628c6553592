"""ttnn's example operations, which its docs and tests use to show how an op is built: the device
operation ``ttnn.prim.example`` (a copy of its input), the composite ``ttnn.composite_example``
(the same, through the primitive), and their two-output forms ``ttnn.prim.example_multiple_return``
/ ``ttnn.composite_example_multiple_return`` (a copy in each output asked for, None for the other).

May import: :mod:`meshnn.errors`, :mod:`meshnn.tensor` and the ops' registry, checks, launch and
outputs modules.
"""

from __future__ import annotations

from meshnn.errors import MeshnnTypeError
from meshnn.mesh.coord import MeshCoordinate
from meshnn.ops.checks import device_input, same_mesh
from meshnn.ops.launch import launch
from meshnn.ops.outputs import Output
from meshnn.ops.registry import OpKind, register, torch_golden
from meshnn.perf.desc import OpFamily
from meshnn.tensor.tensor import Tensor


def _copies(op: str, input_tensor: object, count: int) -> list[Tensor]:
    tensor = device_input(op, "input_tensor", input_tensor)
    mesh = same_mesh(op, {"input_tensor": tensor})
    size = tensor.spec.compute_packed_buffer_size_bytes()

    def kernel(in_rows, out_rows, coords: tuple[MeshCoordinate, ...]) -> None:
        for out in out_rows:
            out[:, :size] = in_rows[0][:, :size]

    outputs = [Output(tensor.spec)] * count
    return launch(op, mesh, [tensor], outputs, kernel, rowwise=True)


def _flags(op: str, first: object, second: object) -> tuple[bool, bool]:
    for name, value in (("return_output1", first), ("return_output2", second)):
        if not isinstance(value, bool):
            raise MeshnnTypeError(f"ttnn.{op}: {name} must be a bool, got {value!r}")
    return bool(first), bool(second)


_IDENTITY = torch_golden(lambda torch, input_tensor, *_, **__: input_tensor.clone())


@register(
    "prim.example",
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="ExampleDeviceOperation",
    golden=_IDENTITY,
)
def example(input_tensor: Tensor) -> Tensor:
    """``ttnn.prim.example``: a copy of ``input_tensor``."""
    return _copies("prim.example", input_tensor, 1)[0]


@register(kind=OpKind.DATA_MOVEMENT, family=OpFamily.COPY, device_operation="ExampleDeviceOperation", golden=_IDENTITY)
def composite_example(input_tensor: Tensor) -> Tensor:
    """``ttnn.composite_example``: ``ttnn.prim.example`` of ``input_tensor``."""
    return _copies("composite_example", input_tensor, 1)[0]


def _multiple(op: str, input_tensor: object, return_output1: object, return_output2: object) -> list[Tensor | None]:
    first, second = _flags(op, return_output1, return_output2)
    if not (first or second):
        device_input(op, "input_tensor", input_tensor)
        return [None, None]
    made = iter(_copies(op, input_tensor, int(first) + int(second)))
    return [next(made) if first else None, next(made) if second else None]


@register(
    "prim.example_multiple_return",
    kind=OpKind.DATA_MOVEMENT,
    family=OpFamily.COPY,
    device_operation="ExampleMultipleReturnDeviceOperation",
)
def example_multiple_return(input_tensor: Tensor, return_output1: bool, return_output2: bool) -> list[Tensor | None]:
    """``ttnn.prim.example_multiple_return``: a copy of ``input_tensor`` in each output asked for."""
    return _multiple("prim.example_multiple_return", input_tensor, return_output1, return_output2)


@register(kind=OpKind.DATA_MOVEMENT, family=OpFamily.COPY, device_operation="ExampleMultipleReturnDeviceOperation")
def composite_example_multiple_return(
    input_tensor: Tensor, return_output1: bool, return_output2: bool
) -> list[Tensor | None]:
    """``ttnn.composite_example_multiple_return``: ``ttnn.prim.example_multiple_return``."""
    return _multiple("composite_example_multiple_return", input_tensor, return_output1, return_output2)
