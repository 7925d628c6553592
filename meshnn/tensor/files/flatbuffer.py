"""``ttnn._ttnn.tensor.dump_tensor_flatbuffer`` / ``load_tensor_flatbuffer``: the binary calls
under ``ttnn.dump_tensor`` / ``ttnn.load_tensor`` (which check the ``.tensorbin`` name first and
then call these; model code, tt-metal's ``LazyWeight`` cache, calls them directly).  The same files
and errors as meshnn's ``dump_tensor`` / ``load_tensor``, without the name rule; the file name is a
``str``, as the binding's ``std::string``.

Layers: the tensor files package.
"""

from __future__ import annotations

from meshnn.errors import MeshnnTypeError
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.tensor.files.reader import load_onto
from meshnn.tensor.files.writer import DumpTensorMode, save_tensor
from meshnn.tensor.tensor import Tensor


def _name(op: str, file_name: object) -> str:
    if not isinstance(file_name, str):
        raise MeshnnTypeError(f"{op}: file_name must be a str, got {type(file_name).__name__}")
    return file_name


def dump_tensor_flatbuffer(
    file_name: str, tensor: Tensor, mode: DumpTensorMode = DumpTensorMode.DISTRIBUTED_GATHER
) -> None:
    """Save ``tensor`` to ``file_name`` (any name) as ``ttnn.dump_tensor`` does."""
    op = "dump_tensor_flatbuffer"
    name = _name(op, file_name)
    if not isinstance(mode, DumpTensorMode):
        raise MeshnnTypeError(f"{op}: mode must be a ttnn.DumpTensorMode, got {mode!r}")
    save_tensor(name, tensor, local=mode is DumpTensorMode.LOCAL)


def load_tensor_flatbuffer(file_name: str, device: MeshDevice | None = None) -> Tensor:
    """The tensor saved in ``file_name`` (any name), onto ``device`` when given, as ``ttnn.load_tensor``."""
    op = "load_tensor_flatbuffer"
    return load_onto(op, _name(op, file_name), device)
