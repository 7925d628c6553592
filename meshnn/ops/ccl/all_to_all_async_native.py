"""``ttnn.experimental.all_to_all_async``: the all-to-all with caller-made persistent buffers and a
global semaphore (tt-metal's first all-to-all; ``all_to_all_async_generic`` is its general form).

The result is the generic one's (member ``i`` of the mesh gets chunk ``i`` along ``out_dim`` of
every member's input, concatenated along ``in_dim``), and ttnn picks one of three paths, as here:

- *composite* (the input not TILE, DRAM and interleaved, a sharded ``memory_config``, or a tile
  dim not aligned: half a tile's rows, a whole tile's columns): ttnn composes the result from
  ``all_broadcast``, ``mesh_partition`` and ``concat`` into a new tensor, and makes the caller's
  ``persistent_output_buffer`` handle refer to it (its old buffer is not written: it lives on
  while another handle holds it);
- *native* (rank 4, ``in_dim`` 2 -> ``out_dim`` 3 with each output column chunk a multiple of 32,
  or 3 -> 2 with the input's columns a multiple of 32): the device operation's checks (one link;
  intermediate and output buffers DRAM, TILE, interleaved, of the input's dtype and of the output's
  padded shape; the output buffer in ``memory_config``), then the result written into
  ``persistent_output_buffer``; the intermediate buffer is the kernels' staging area, whose
  contents after the op ttnn does not define: meshnn leaves it as it was;
- otherwise ``all_to_all_async_generic`` into ``persistent_output_buffer``.

Dims may count from the end (ttnn normalises them here, where the generic form does not). A ring of
two devices runs as a line, as ttnn does (recorded as the topology).

May import: :mod:`meshnn.errors`, :mod:`meshnn.mesh`, :mod:`meshnn.tensor`, the ops' layers below
and the collectives' arguments and all-to-all.
"""

from __future__ import annotations

import numpy as np

from meshnn.device.buffer import BufferType
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.ops import registry
from meshnn.ops.ccl.all_to_all_async import all_to_all_async_generic
from meshnn.ops.ccl.arguments import Topology, checked_input
from meshnn.ops.ccl.async_arguments import link_options, ring_size, semaphores
from meshnn.ops.checks import device_input
from meshnn.ops.registry import OpKind, register
from meshnn.perf.desc import OpFamily
from meshnn.tensor.memory_config import DRAM_MEMORY_CONFIG
from meshnn.tensor.spec import MemoryConfig, TensorMemoryLayout
from meshnn.tensor.tensor import Tensor

OP = "experimental.all_to_all_async"
_TILE = 32


def _dim(name: str, value: object, rank: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise MeshnnTypeError(f"ttnn.{OP}: {name} must be an int, got {value!r}")
    dim = int(value) + rank if value < 0 else int(value)
    if not 0 <= dim < rank:
        raise MeshnnValueError(f"ttnn.{OP}: Invalid {name}: {value} (a rank-{rank} input)")
    return dim


def _native_layout(tensor: Tensor, in_dim: int, out_dim: int, n: int, memory_config: MemoryConfig | None) -> bool:
    """ttnn's test for its native kernels (else the composite path)."""
    shape, rank = list(tensor.shape), len(tensor.shape)
    out_size = shape[out_dim] // n
    aligned = all(
        size % step == 0
        for dim, size in ((in_dim, shape[in_dim]), (out_dim, out_size))
        for step in ((_TILE // 2,) if dim == rank - 2 else (_TILE,) if dim == rank - 1 else (1,))
    )
    config = tensor.memory_config()
    return (
        tensor.layout is Layout.TILE
        and config.buffer_type is BufferType.DRAM
        and config.memory_layout is TensorMemoryLayout.INTERLEAVED
        and (memory_config is None or memory_config.memory_layout is TensorMemoryLayout.INTERLEAVED)
        and aligned
    )


def _check_buffer(name: str, buffer: Tensor, tensor: Tensor, expected: tuple[int, ...]) -> None:
    """The native device operation's checks of one persistent buffer."""
    config = buffer.memory_config()
    if config.buffer_type is not BufferType.DRAM:
        raise MeshnnValueError(f"ttnn.{OP}: {name} must be in DRAM, but is in {config.buffer_type}")
    if buffer.layout is not Layout.TILE:
        raise MeshnnValueError(f"ttnn.{OP}: {name}: unsupported layout {buffer.layout} (TILE only)")
    if config.memory_layout is not TensorMemoryLayout.INTERLEAVED:
        raise MeshnnValueError(f"ttnn.{OP}: {name}: memory layout {config.memory_layout} is not interleaved")
    if buffer.dtype is not tensor.dtype:
        raise MeshnnValueError(f"ttnn.{OP}: {name}'s dtype {buffer.dtype} must match the input's {tensor.dtype}")
    if tuple(buffer.spec.padded_shape) != expected:
        raise MeshnnValueError(
            f"ttnn.{OP}: {name} shape {list(buffer.spec.padded_shape)} must match the expected shape {list(expected)}"
        )


def _composite(tensor: Tensor, dims: tuple[int, int], num_links: int, memory_config: MemoryConfig | None) -> Tensor:
    """ttnn's composite all-to-all: every device's shard broadcast to every device, each device's
    part along ``out_dim`` kept, the parts concatenated along ``in_dim`` (row-major for a TILE
    input whose last two dims are not whole tiles, bfloat8_b through bfloat16; a sharded input
    through DRAM interleaved); a new tensor in ``memory_config`` (the input's by default)."""
    op = lambda name: registry.lookup(name).function  # noqa: E731
    shape = tensor.shape
    unaligned = tensor.layout is Layout.TILE and bool(shape[-2] % _TILE or shape[-1] % _TILE)
    block_float = unaligned and tensor.dtype is DataType.BFLOAT8_B
    interim = DRAM_MEMORY_CONFIG if tensor.memory_config().is_sharded() else tensor.memory_config()
    made: list[Tensor] = []
    x = tensor
    if block_float:
        x = op("typecast")(x, DataType.BFLOAT16)
        made.append(x)
    if unaligned:
        x = op("to_layout")(x, Layout.ROW_MAJOR)
        made.append(x)
    if tensor.memory_config().is_sharded():
        x = op("to_memory_config")(x, interim)
        made.append(x)
    parts = op("all_broadcast")(x, memory_config=interim, num_links=num_links, topology=Topology.Linear)
    kept = [op("mesh_partition")(p, dims[1], memory_config=interim) for p in parts]
    out = op("concat")(kept, dims[0], memory_config=interim)
    for t in (*made, *parts, *kept):
        t.deallocate()
    if unaligned:
        tiled = op("to_layout")(out, Layout.TILE)
        out.deallocate()
        out = tiled
        if block_float:
            cast = op("typecast")(out, DataType.BFLOAT8_B)
            out.deallocate()
            out = cast
    wanted = memory_config if memory_config is not None else tensor.memory_config()
    if wanted.memory_layout is not interim.memory_layout:
        moved = op("to_memory_config")(out, wanted)
        out.deallocate()
        out = moved
    return out


@register(OP, kind=OpKind.COLLECTIVE, family=OpFamily.ALL_TO_ALL, device_operation="AllToAllAsyncDeviceOperation")
def all_to_all_async(
    input_tensor: Tensor,
    persistent_intermediate_buffer: Tensor,
    persistent_output_buffer: Tensor,
    in_dim: int,
    out_dim: int,
    multi_device_global_semaphore: object,
    *,
    num_links: int = 1,
    memory_config: MemoryConfig | None = None,
    topology: Topology = Topology.Ring,
    subdevice_id: object = None,
) -> Tensor:
    """See the module's text: the result written into ``persistent_output_buffer`` (and returned),
    or, on ttnn's composite path, a new tensor that the ``persistent_output_buffer`` handle then
    refers to."""
    tensor, mesh, _ = checked_input(OP, input_tensor, None, partial=True)
    rank = len(tensor.shape)
    dims = (_dim("in_dim", in_dim, rank), _dim("out_dim", out_dim, rank))
    if memory_config is not None and not isinstance(memory_config, MemoryConfig):
        raise MeshnnTypeError(f"ttnn.{OP}: memory_config must be a ttnn.MemoryConfig, got {memory_config!r}")
    semaphores(OP, "multi_device_global_semaphore", multi_device_global_semaphore, mesh, 1)
    options = {"num_links": num_links, "topology": topology, "subdevice_id": subdevice_id}
    link_options(OP, mesh, options, links_required=True)
    n = ring_size(OP, mesh, None, tensor)
    intermediate = device_input(OP, "persistent_intermediate_buffer", persistent_intermediate_buffer)
    output = device_input(OP, "persistent_output_buffer", persistent_output_buffer)
    line = Topology.Linear if n == 2 else topology
    generic = {"num_links": num_links, "memory_config": memory_config, "topology": line, "subdevice_id": subdevice_id}
    if not _native_layout(tensor, *dims, n, memory_config):
        result = _composite(tensor, dims, num_links, memory_config)
        output._share(result)  # ttnn assigns the result to the caller's handle (a Tensor& argument)
        return result
    shape = list(tensor.shape)
    native = rank == 4 and (
        (dims == (2, 3) and (shape[3] // n) % _TILE == 0) or (dims == (3, 2) and shape[3] % _TILE == 0)
    )
    if native:
        if num_links != 1:
            raise MeshnnValueError(f"ttnn.{OP}: AllToAllAsync: num_links must be 1, but is {num_links}")
        expected = list(tensor.spec.padded_shape)
        if expected[dims[1]] % n:
            raise MeshnnValueError(
                f"ttnn.{OP}: AllToAllAsync: input tensor dimension {expected[dims[1]]} must be divisible by "
                f"ring_size {n}"
            )
        expected[dims[0]] *= n
        expected[dims[1]] //= n
        _check_buffer("persistent_intermediate_buffer", intermediate, tensor, tuple(expected))
        _check_buffer("persistent_output_buffer", output, tensor, tuple(expected))
        wanted = memory_config if memory_config is not None else tensor.memory_config()
        if output.memory_config() != wanted:
            raise MeshnnValueError(
                f"ttnn.{OP}: persistent_output_buffer's memory config must match the output memory config {wanted}"
            )
    return all_to_all_async_generic(tensor, *dims, persistent_output_buffer=output, **generic)
