"""``ttnn.as_tensor``, the weight cache: convert once, and with ``cache_file_name`` reload the
converted bytes from a tensor file on later calls unless the recorded recipe (source shape and
dtype, target dtype, layout, tile, mapper) differs; a stale, damaged or partial cache (any
TensorFileError, or a file that does not fit the mesh) is rebuilt.  Under MPI every rank calls
it; the file holds every shard (written by rank 0, see :mod:`.writer`), so any number of ranks,
or one process, can load it.

Layer: tensor.  Imports errors, mesh, the byte formats (dtypes, layout) and the tensor modules
memory_config, mappers, tensor, interop, placement and files.
"""

from __future__ import annotations

import pathlib
from collections.abc import Callable
from typing import Any

from meshnn.errors import MeshnnTypeError, TensorFileError, TensorFileWriteError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout, Tile
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.tensor.files.reader import TensorFileReader, load_device, load_host
from meshnn.tensor.files.writer import dump_tensor
from meshnn.tensor.interop import from_torch
from meshnn.tensor.lifetime import deallocate
from meshnn.tensor.mappers import TensorToMesh
from meshnn.tensor.memory_config import MemoryConfig
from meshnn.tensor.placement import to_device
from meshnn.tensor.storage import NoValues
from meshnn.tensor.tensor import Tensor


def _cache_path(cache_file_name: str, dtype: DataType, layout: Layout) -> pathlib.Path:
    return pathlib.Path(f"{cache_file_name}_dtype_{dtype.name}_layout_{layout.name}.tensorbin")


def _recipe(
    source: Any, dtype: DataType, layout: Layout, mapper: TensorToMesh | None, tile: Tile | None
) -> dict[str, Any]:
    """What the cached conversion depends on, besides the data itself."""
    shape = list(getattr(source, "shape", ()))
    mapping = None if mapper is None else {"mesh": list(mapper.mesh_shape), "config": repr(mapper.config)}
    return {
        "source_shape": shape,
        "source_dtype": str(getattr(source, "dtype", "")),
        "dtype": dtype.name,
        "layout": layout.name,
        "tile": None if tile is None else list(tile.tile_shape),
        "mapper": mapping,
    }


def _cached(
    path: pathlib.Path,
    recipe: dict[str, Any],
    device: MeshDevice | None,
    memory_config: MemoryConfig | None,
    mapper: TensorToMesh | None,
) -> Tensor | None:
    """The cached tensor (on ``device`` when given), or None when the cache is missing, stale or
    damaged: then it is rebuilt.  On a mesh that spans MPI ranks every rank reads the file and
    all agree (a rank that finds it unusable makes every rank rebuild it, together)."""
    loaded = None
    try:
        if path.exists() and TensorFileReader(path).header.get("extra", {}).get("recipe") == recipe:
            loaded = load_host(path) if device is None else load_device(path, device, memory_config)
    except TensorFileError:
        loaded = None  # a stale, damaged or partial cache, or one laid out for another mesh: rebuilt
    mesh = device if device is not None else getattr(mapper, "mesh_device", None)
    spans_ranks = isinstance(mesh, MeshDevice) and mesh.context.world_size > 1
    if spans_ranks and not all(mesh.context.allgather_object(loaded is not None, op="as_tensor cache check")):
        if loaded is not None and device is not None:
            deallocate(loaded)  # another rank rebuilds: every rank does, together
        return None
    if loaded is not None and device is None and memory_config is not None:
        loaded = Tensor.make(loaded.spec.with_memory_config(memory_config), loaded.storage, loaded.tensor_topology())
    return loaded


def as_tensor(
    tensor: Any,
    dtype: DataType | None = None,
    *,
    layout: Layout = Layout.ROW_MAJOR,
    device: MeshDevice | None = None,
    memory_config: MemoryConfig | None = None,
    mesh_mapper: TensorToMesh | None = None,
    cache_file_name: str | None = None,
    preprocess: Callable[[Any], Any] | None = None,
    tile: Tile | None = None,
    use_device_tilizer: bool = False,
) -> Tensor:
    """``ttnn.as_tensor``: convert once, and with ``cache_file_name`` reload the converted bytes on
    later calls (``preprocess`` is not called again) unless the recorded recipe differs."""
    if dtype is not None and not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"as_tensor: dtype must be a ttnn DataType, got {dtype!r}")
    if not isinstance(layout, Layout):
        raise MeshnnTypeError(f"as_tensor: layout must be a ttnn Layout, got {layout!r}")
    if device is not None and not isinstance(device, MeshDevice):
        raise MeshnnTypeError(f"as_tensor: device must be a MeshDevice, got {type(device).__name__}")
    if dtype is None:
        if cache_file_name is not None:
            raise MeshnnTypeError("as_tensor: dtype must be given with cache_file_name (it names the cache file)")
        host = from_torch(tensor, layout=layout, tile=tile, mesh_mapper=mesh_mapper, memory_config=memory_config)
        return host if device is None else to_device(host, device, memory_config)
    recipe = _recipe(tensor, dtype, layout, mesh_mapper, tile)
    path = None if cache_file_name is None else _cache_path(cache_file_name, dtype, layout)
    if path is not None:
        cached = _cached(path, recipe, device, memory_config, mesh_mapper)
        if cached is not None:
            return cached
    source = preprocess(tensor) if preprocess is not None else tensor
    if path is None and device is not None:  # ttnn's from_torch onto the device: no host copy of the bytes
        return from_torch(
            source, dtype, layout=layout, tile=tile, mesh_mapper=mesh_mapper, memory_config=memory_config, device=device
        )
    host = from_torch(source, dtype, layout=layout, tile=tile, mesh_mapper=mesh_mapper, memory_config=memory_config)
    shape_only = any(isinstance(s, NoValues) for s in host.host_buffer().local_shards().values())
    if path is not None and not shape_only:  # (a torch meta tensor has no values to cache)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:  # named by the cache file, as a write error of it is
            raise TensorFileWriteError(str(path), error) from error
        dump_tensor(path, host, extra={"recipe": recipe})
    return host if device is None else to_device(host, device, memory_config)
