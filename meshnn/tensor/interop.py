"""torch and numpy in and out, as ttnn names them: ``from_torch`` (convert, map, and write to a
device), ``to_torch`` and ``to_numpy`` (read, compose, convert), and ``ttnn.distribute``, which binds
a default mapper or composer for them inside a ``with`` block.

Layer: tensor.  Imports errors, mesh, the byte formats (dtypes, layout) and the tensor modules
spec, memory_config, mappers, composers, tensor and readback.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

import numpy as np

from meshnn.errors import MeshnnError, MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout, Tile
from meshnn.host.torch_math import settle_vml
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.mesh.observers import OBSERVERS, HostOpEvent, host_call
from meshnn.tensor.composers import MeshToTensor, topology_composer
from meshnn.tensor.mappers import TensorToMesh
from meshnn.tensor.memory_config import MemoryConfig
from meshnn.tensor.readback import composed_from_device, decoded_shards, padded_values
from meshnn.tensor.spec import TensorSpec
from meshnn.tensor.storage import DeviceStorage
from meshnn.tensor.tensor import Tensor, check_tensor
from meshnn.tensor.topology import check_made_for

CONVERT_PYTHON_TENSOR = "ttnn::convert_python_tensor_to_tt_tensor"  # from_torch's function in ttnn's graph capture

# ttnn.distribute(mapper_or_composer) binds these for from_torch / to_torch inside its block.
DEFAULT_MAPPER: contextvars.ContextVar[TensorToMesh | None] = contextvars.ContextVar("mapper", default=None)
DEFAULT_COMPOSER: contextvars.ContextVar[MeshToTensor | None] = contextvars.ContextVar("composer", default=None)

TORCH_EXTRA = "torch is not installed: install it with `pip install 'meshnn[torch]'` (or `pip install torch`)"


def _torch() -> Any:
    try:
        import torch
    except ImportError as error:
        raise MeshnnError(TORCH_EXTRA) from error
    settle_vml()  # (before the program's next split torch call: meshnn.host.torch_math)
    return torch


def to_numpy(tensor: Tensor, *, mesh_composer: MeshToTensor | None = None, dtype: Any = None) -> np.ndarray:
    """The logical values of ``tensor`` as numpy (composed with ``mesh_composer`` when it has
    several shards)."""
    check_tensor(tensor)
    if dtype is not None:
        try:
            dtype = np.dtype(dtype)
        except TypeError:
            raise MeshnnTypeError(f"to_numpy: dtype must be a numpy dtype, got {dtype!r}") from None
    composer = mesh_composer if mesh_composer is not None else DEFAULT_COMPOSER.get()
    if composer is not None and not isinstance(composer, MeshToTensor):
        raise MeshnnTypeError(f"mesh_composer must be a ttnn mesh composer, got {type(composer).__name__}")
    if composer is None and len(tensor.tensor_topology().mesh_coords) > 1:
        composer = topology_composer(tensor.tensor_topology())  # None unless the topology determines it
    picks = None
    if composer is not None:
        on = tensor.storage.mesh_buffer.device() if isinstance(tensor.storage, DeviceStorage) else None
        check_made_for("mesh_composer", composer.mesh_device, on)
        topology = tensor.tensor_topology()
        picks = composer.picks(topology.mesh_coords, topology.distribution_shape if on is None else on.shape)
        direct = composed_from_device(tensor, composer) if picks is None else None
        if direct is not None:
            return direct if dtype is None else direct.astype(dtype)
    shards = decoded_shards(tensor)
    if picks is not None:  # a composer over part of the mesh: the shards ttnn picks (see MeshToTensor.picks)
        shards = [shards[i] for i in picks]
    if composer is None:
        if len(shards) != 1:
            raise MeshnnValueError(
                f"Can't convert a tensor distributed on {tensor.tensor_topology().distribution_shape!r} mesh to "
                "row-major logical tensor. Supply a mesh composer to concatenate multi-device shards."
            )
        array = shards[0]
    else:
        array = composer.concat(shards)
    return array if dtype is None else array.astype(dtype)


def to_torch(
    tensor: Tensor,
    dtype: Any = None,
    *,
    torch_rank: int | None = None,
    mesh_composer: MeshToTensor | None = None,
    device: Any = None,
    cq_id: int | None = None,
) -> Any:
    """``ttnn.to_torch``: bfloat16 -> torch.bfloat16, block floats -> float32, uint32 -> torch.uint32 and
    uint16 -> torch.uint16, as ttnn gives them since tt-metal #36660 (2026-02; int32 / int16 before)."""
    torch = _torch()
    if dtype is not None and not isinstance(dtype, torch.dtype):
        raise MeshnnTypeError(f"to_torch: dtype must be a torch.dtype, got {dtype!r}")
    if torch_rank is not None and (isinstance(torch_rank, bool) or not isinstance(torch_rank, int)):
        raise MeshnnTypeError(f"to_torch: torch_rank must be an int, got {torch_rank!r}")
    if cq_id is not None and isinstance(tensor, Tensor) and isinstance(tensor.storage, DeviceStorage):
        tensor.check_usable()
        tensor.storage.mesh_buffer.device().mesh_command_queue(cq_id)
    result = _as_torch(torch, to_numpy(tensor, mesh_composer=mesh_composer), tensor.dtype)
    if torch_rank is not None:
        while result.dim() > torch_rank:
            if result.shape[0] != 1:
                raise MeshnnValueError(
                    f"to_torch: unable to squeeze to desired rank! torch_rank {torch_rank} for shape "
                    f"{list(result.shape)}"
                )
            result = result.squeeze(0)
    if OBSERVERS:
        OBSERVERS.host_op(HostOpEvent("to_torch", _mesh_of(tensor), inputs=(tensor,)))
    return result if dtype is None else result.to(dtype)


def _mesh_of(tensor: Tensor) -> MeshDevice | None:
    return tensor.storage.mesh_buffer.device() if isinstance(tensor.storage, DeviceStorage) else None


def _as_torch(torch: Any, array: np.ndarray, dtype: DataType) -> Any:
    """``array`` (values of ``dtype``) as the torch tensor ttnn gives: bfloat16 as torch.bfloat16, the
    rest in their own type (uint32 / uint16 as torch.uint32 / torch.uint16)."""
    shape = array.shape  # (np.ascontiguousarray makes a scalar 1-D: its shape is put back)
    if dtype is DataType.BFLOAT16:
        return torch.from_numpy(np.ascontiguousarray(array).view(np.int16)).view(torch.bfloat16).reshape(shape)
    return torch.from_numpy(np.ascontiguousarray(array)).reshape(shape)


def to_torch_with_padded_shape(tensor: Tensor) -> Any:
    """``Tensor.to_torch_with_padded_shape``: the values over the padded shape, tile padding included."""
    check_tensor(tensor)
    return _as_torch(_torch(), padded_values(tensor), tensor.dtype)


def from_torch(
    tensor: Any,
    dtype: DataType | None = None,
    *,
    spec: TensorSpec | None = None,
    tile: Tile | None = None,
    pad_value: float | None = None,
    layout: Layout | None = None,
    device: MeshDevice | None = None,
    memory_config: MemoryConfig | None = None,
    mesh_mapper: TensorToMesh | None = None,
    cq_id: int | None = None,
    preserve_nan_values: bool = False,
    col_tilize: bool = False,
    enable_bfloat_opt: bool = False,
) -> Tensor:
    """``ttnn.from_torch``: convert (and map, and write to ``device``) a torch tensor or numpy array;
    None gives None, as ttnn's does (a model's optional weights pass through it)."""
    if tensor is None:
        return None  # type: ignore[return-value]
    if spec is not None:
        if not isinstance(spec, TensorSpec):
            raise MeshnnTypeError(f"spec must be a TensorSpec, got {type(spec).__name__}")
        dtype, layout, tile = spec.dtype, spec.layout, spec.tile
        memory_config = memory_config or spec.memory_config
    if type(tensor).__module__.startswith("torch"):
        _torch()
    if pad_value is not None and (isinstance(pad_value, bool) or not isinstance(pad_value, int | float | np.number)):
        raise MeshnnTypeError(f"from_torch: pad_value must be a number, got {pad_value!r}")
    mapper = mesh_mapper if mesh_mapper is not None else DEFAULT_MAPPER.get()
    try:
        with host_call(CONVERT_PYTHON_TENSOR, device) as converted:
            converted.tensors = (
                Tensor(
                    tensor,
                    dtype,
                    device=device,
                    layout=layout,
                    tile=tile,
                    pad_value=pad_value,
                    mesh_mapper=mapper,
                    memory_config=memory_config,
                    col_tilize=col_tilize,
                ),
            )
    except MeshnnError as error:
        if OBSERVERS:
            OBSERVERS.host_op(HostOpEvent("from_torch", device, error=error))
        raise
    made = converted.tensors[0]
    if OBSERVERS:
        OBSERVERS.host_op(HostOpEvent("from_torch", _mesh_of(made), outputs=(made,)))
    return made


@contextlib.contextmanager
def distribute(default: TensorToMesh | MeshToTensor) -> Iterator[None]:
    """``with ttnn.distribute(mapper_or_composer):`` binds it for from_torch / to_torch inside."""
    if isinstance(default, TensorToMesh):
        var = DEFAULT_MAPPER
    elif isinstance(default, MeshToTensor):
        var = DEFAULT_COMPOSER
    else:
        raise MeshnnTypeError(f"distribute needs a mesh mapper or composer, got {type(default).__name__}")
    token = var.set(default)
    try:
        yield
    finally:
        var.reset(token)
