"""The argument checks the DeepSeek prefill ops share: ``uint32_t`` arguments as ttnn's bindings
take them (an int >= 0; anything else a TypeError, as nanobind refuses it), a tensor's dtype and
layout, the devices an op's tensors populate, and the dispatch / combine exchange's options.

May import: :mod:`meshnn.errors`, :mod:`meshnn.formats`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the
collectives' arguments.
"""

from __future__ import annotations

import numpy as np

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.ccl.arguments import Topology
from meshnn.tensor.spec import MemoryConfig
from meshnn.tensor.tensor import Tensor
from meshnn.tensor.topology import PlacementShard, TensorTopology

UINT32_MAX = 2**32 - 1


def uint_arg(op: str, name: str, value: object) -> int:
    """``value`` as a ``uint32_t`` argument: an int in ``[0, 2**32)`` (numpy integers count, bools do not)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or not 0 <= value <= UINT32_MAX:
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be an unsigned 32-bit int, got {value!r}")
    return int(value)


def float_arg(op: str, name: str, value: object) -> float:
    """``value`` as a ``float`` argument (ints count, bools do not), rounded to float32 as the binding stores it."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be a float, got {value!r}")
    return float(np.float32(value))


def bool_arg(op: str, name: str, value: object) -> bool:
    """``value`` as a ``bool`` argument (nanobind takes a bool only)."""
    if not isinstance(value, bool | np.bool_):
        raise MeshnnTypeError(f"ttnn.{op}: {name} must be a bool, got {value!r}")
    return bool(value)


def require(op: str, name: str, tensor: Tensor, dtypes: tuple[DataType, ...], layout: Layout | None) -> None:
    """``tensor`` of one of ``dtypes`` and (unless None) of ``layout``."""
    if tensor.dtype not in dtypes:
        wanted = " or ".join(d.name for d in dtypes)
        raise MeshnnValueError(f"ttnn.{op}: {name} must be {wanted}, got {tensor.dtype}")
    if layout is not None and tensor.layout is not layout:
        raise MeshnnValueError(f"ttnn.{op}: {name} must be in {layout.name} layout, got {tensor.layout}")


def same_devices(op: str, first: str, named: dict[str, Tensor]) -> None:
    """Every tensor of ``named`` populates the devices ``named[first]`` does."""
    coords = set(named[first].storage.coords)  # type: ignore[union-attr]
    for name, tensor in named.items():
        if set(tensor.storage.coords) != coords:  # type: ignore[union-attr]
            raise MeshnnValueError(f"ttnn.{op}: {name} populates other devices than {first}")


def exchange_options(op: str, cluster_axis: object, num_links: object, topology: object) -> tuple[int | None, int]:
    """(cluster_axis, num_links) of the prefill dispatch / combine after ttnn's checks: the axis None
    or 0 (the only one tested), 1 to 4 links, a Linear or Ring topology."""
    axis = None if cluster_axis is None else uint_arg(op, "cluster_axis", cluster_axis)
    if axis not in (None, 0):
        raise MeshnnValueError(f"ttnn.{op}: cluster_axis must be 0 (got {axis}); other values are not tested")
    links = 1 if num_links is None else uint_arg(op, "num_links", num_links)
    if not 1 <= links <= 4:
        raise MeshnnValueError(f"ttnn.{op}: num_links must be between 1 and 4 (got {links})")
    if topology is not None and not isinstance(topology, Topology):
        raise MeshnnTypeError(f"ttnn.{op}: topology must be a ttnn.Topology, got {topology!r}")
    if topology not in (None, Topology.Linear, Topology.Ring):
        raise MeshnnValueError(f"ttnn.{op}: topology must be Linear or Ring; 2D topologies are not supported")
    return axis, links


def group_device(mesh_shape: tuple[int, ...], source: int, chip: np.ndarray, axis: int | None) -> np.ndarray:
    """The row-major indices of the chips ``chip`` of the dispatch group of the device ``source``
    (row-major): along the column (``axis`` 0) or, without an axis, the mesh's ``chip``-th devices."""
    if axis is None:
        return chip
    cols = mesh_shape[1] if len(mesh_shape) > 1 else 1
    return chip * cols + source % cols


def output_config(op: str, memory_config: object, like: Tensor) -> MemoryConfig:
    """An exchange's output memory config: ``memory_config`` (default ``like``'s), interleaved."""
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{op}: memory_config must be a ttnn.MemoryConfig or None, got {memory_config!r}")
    config = memory_config or like.spec.memory_config
    if config.is_sharded():
        raise MeshnnValueError(f"ttnn.{op}: the output memory config must be interleaved (L1 or DRAM), not sharded")
    return config


def mesh_sharded(mesh: MeshDevice) -> TensorTopology:
    """The topology of an output each device holds its own of: sharded on both mesh dims."""
    return TensorTopology(mesh.shape, (PlacementShard(0), PlacementShard(1)), tuple(mesh.shape.coords()))


MAX_WORKER_CORES = 4
"""The sender cores a dispatch or combine program uses at most (one a link)."""


def worker_line(op: str, mesh: MeshDevice, subdevice_id: object, links: int, untilizers: int | None) -> None:
    """tt-metal's program checks of the sub-device's worker cores (``subdevice_id``, default the
    first): one sender a link (at most 4); dispatch (``untilizers`` given): the first core's row holds
    ``1 + untilizers`` cores a sender; combine: a single row or column (or the whole grid), whose line
    holds more cores than senders."""
    cores = list(mesh.sub_device_cores(subdevice_id).cores())
    senders = min(links, MAX_WORKER_CORES)
    if len(cores) < senders:
        raise MeshnnValueError(f"ttnn.{op}: not enough cores {len(cores)} for {senders} links (subdevice_id)")
    xs, ys = [c.x for c in cores], [c.y for c in cores]
    if untilizers is not None:
        row = sum(1 for c in cores if c.y == cores[0].y)
        if row < (1 + untilizers) * senders:
            raise MeshnnValueError(
                f"ttnn.{op}: the worker row has only {row} cores for {senders} senders; need {1 + untilizers} a "
                "sender (num_untilizers_per_sender)"
            )
        return
    grid = mesh.compute_with_storage_grid_size()
    if max(xs) > min(xs) and max(ys) > min(ys) and len(cores) != grid.x * grid.y:
        raise MeshnnValueError(
            f"ttnn.{op}: combine requires the worker subdevice to be a single row or a single column; a 2-D "
            f"subdevice core grid spanning x=[{min(xs)}, {max(xs)}] y=[{min(ys)}, {max(ys)}] is not supported"
        )
    line = len(cores) if min(xs) == max(xs) and max(ys) > min(ys) else ys.count(min(ys))
    if line <= senders:
        raise MeshnnValueError(
            f"ttnn.{op}: the worker line has only {line} cores for {senders} senders; each needs an untilizer core"
        )
