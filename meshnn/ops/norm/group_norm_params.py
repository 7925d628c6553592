"""The host helpers ttnn gives for ``ttnn.group_norm``: how its weights, masks and reciprocals are
laid out for the cores that split the channels, and the sharded config it expects.

Channels are split into ``cores`` equal chunks (the cores across the channel dim); a weight / bias
lays each chunk out padded with zeros to a multiple of 32 values, as rows of 32
(``create_group_norm_weight_bias_rm``: ``[1, 1, rows, 32]``).  The input mask ``[1, G, 32, 32 * w]``
marks, for each group, its columns within the tiles it spans (``w``: the most tiles a group spans),
the offsets restarting on each core; the negative mask is its complement.

These are plain functions of torch tensors (torch imported when called), as ttnn's are.

May import: :mod:`meshnn.errors`, :mod:`meshnn.device` and the tensor layer (``from_torch``).
"""

from __future__ import annotations

import math
from typing import Any

from meshnn.device.core import CoreGrid
from meshnn.errors import MeshnnTypeError, MeshnnValueError, NotImplementedByMeshnn
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout
from meshnn.ops.norm.group_norm_grid import compute_num_virtual_cols, dram_grid

TILE = 32


def _positive(owner: str, **values: object) -> None:
    """Each value a positive int (a bool is not one)."""
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise MeshnnTypeError(f"{owner}: {name} must be an int, got {value!r}")
        if value <= 0:
            raise MeshnnValueError(f"{owner}: {name} must be positive, got {value}")


def _grid(owner: str, core_grid: object) -> CoreGrid:
    if not isinstance(core_grid, CoreGrid):
        raise MeshnnTypeError(f"{owner}: core_grid must be a ttnn.CoreGrid, got {core_grid!r}")
    return core_grid


def find_closest_largest_divisor(num: int, start_divisor: int) -> int:
    """The largest divisor of ``num`` that is at most ``start_divisor`` (1 <= start_divisor)."""
    _positive("find_closest_largest_divisor", num=num, start_divisor=start_divisor)
    divisor = start_divisor
    while num % divisor:
        divisor -= 1
    return divisor


def find_max_tile_span(W: int, group_size: int, tile_width: int) -> int:
    """The most tiles of ``tile_width`` columns any group of ``group_size`` consecutive columns of
    ``W`` spans."""
    _positive("find_max_tile_span", W=W, group_size=group_size, tile_width=tile_width)
    span, start = 0, 0
    while start < W:
        span = max(span, (start + group_size - 1) // tile_width - start // tile_width + 1)
        start += group_size
    return span


def _padded_to_tile(n: int) -> int:
    return -(-n // TILE) * TILE


def create_group_norm_weight_bias_rm(input_tensor: Any, num_channels: int, num_cores_x: int) -> Any:
    """``input_tensor`` (``num_channels`` values) as ``[1, 1, rows, 32]``: ``num_cores_x`` chunks,
    each padded with zeros to a multiple of 32 values."""
    import torch

    _positive("create_group_norm_weight_bias_rm", num_channels=num_channels, num_cores_x=num_cores_x)
    if num_channels % num_cores_x:
        raise MeshnnValueError(
            f"create_group_norm_weight_bias_rm: num_channels {num_channels} must divide by num_cores_x {num_cores_x}"
        )
    per_chunk = num_channels // num_cores_x
    chunks = input_tensor.reshape(-1, per_chunk)
    padded = torch.nn.functional.pad(chunks, (0, _padded_to_tile(per_chunk) - per_chunk))
    return padded.flatten()[: num_cores_x * _padded_to_tile(per_chunk)].reshape(1, 1, -1, TILE)


def _group_offsets(num_channel: int, num_groups: int, cores: int) -> list[int]:
    """Each group's first column within its first tile, the offsets restarting on every core."""
    per_core, width = num_groups // cores, num_channel // num_groups
    offsets = []
    for _ in range(cores):
        offset = 0
        offsets.append(0)
        for _ in range(per_core - 1):
            offset = (offset + width % TILE) % TILE if offset + width % TILE >= TILE else offset + width % TILE
            offsets.append(offset)
    return offsets


def _mask(num_channel: int, num_groups: int, cores: int, negative: bool) -> Any:
    import torch

    owner = "create_group_norm_input_mask"
    if isinstance(cores, int) and not isinstance(cores, bool) and cores <= 0:  # (ttnn's words, checked first)
        raise MeshnnValueError(f"{owner}: num_cores_across_channel must be > 0, got {cores}")
    _positive(owner, num_channel=num_channel, num_groups=num_groups, num_cores_across_channel=cores)
    if num_groups % cores:
        raise MeshnnValueError(
            f"{owner}: num_groups ({num_groups}) must be divisible by num_cores_across_channel ({cores})"
        )
    if num_channel % num_groups:
        raise MeshnnValueError(f"{owner}: num_channel {num_channel} must be divisible by num_groups {num_groups}")
    width = num_channel // num_groups
    span = find_max_tile_span(num_channel, width, TILE)
    mask = (torch.ones if negative else torch.zeros)((1, num_groups, TILE, TILE * span), dtype=torch.bfloat16)
    for group, start in enumerate(_group_offsets(num_channel, num_groups, cores)):
        mask[:, group, :, start : min(start + width, mask.shape[3])] = 0 if negative else 1
    return mask


def create_group_norm_input_mask(
    num_channel: int,
    num_groups: int,
    num_cores_across_channel: int,
    data_type: DataType | None = None,
    tile_height: int | None = None,
    tile_width: int | None = None,
) -> Any:
    """The ``[1, G, 32, 32 * span]`` mask of each group's columns (see the module docstring): a torch
    tensor, as ttnn 0.81's Python helper returns it; given ``data_type`` (bfloat16 when only a tile
    size is given; ``tile_height`` and ``tile_width`` 32 only here), tt-metal of 2026's form, a host
    ttnn.Tensor of that dtype, TILE."""
    mask = _mask(num_channel, num_groups, num_cores_across_channel, negative=False)
    return _typed("create_group_norm_input_mask", mask, data_type, tile_height, tile_width)


def create_group_norm_input_negative_mask(
    num_channel: int,
    num_groups: int,
    num_cores_across_channel: int,
    data_type: DataType | None = None,
    tile_height: int | None = None,
    tile_width: int | None = None,
) -> Any:
    """The complement of :func:`create_group_norm_input_mask` (the same two forms)."""
    mask = _mask(num_channel, num_groups, num_cores_across_channel, negative=True)
    return _typed("create_group_norm_input_negative_mask", mask, data_type, tile_height, tile_width)


def _typed(op: str, mask: Any, data_type: object, tile_height: object, tile_width: object) -> Any:
    """``mask`` as it is (none of the newer arguments given), else a host TILE tensor of ``data_type``."""
    if data_type is None and tile_height is None and tile_width is None:
        return mask
    dtype = DataType.BFLOAT16 if data_type is None else data_type
    if not isinstance(dtype, DataType):
        raise MeshnnTypeError(f"ttnn.{op}: data_type must be a ttnn.DataType, got {dtype!r}")
    if tile_height not in (None, TILE) or tile_width not in (None, TILE):
        raise NotImplementedByMeshnn(f"ttnn.{op}: tiles other than 32x32 are not implemented by meshnn yet")
    from meshnn.tensor.tensor import Tensor

    return Tensor(mask.float().numpy(), dtype, layout=Layout.TILE)


def dram_group_norm_virtual_columns(core_grid: CoreGrid, num_channels: int, num_groups: int) -> int:
    """The most columns (at most ``core_grid.x`` and ``num_groups``) that divide the groups and split
    the channels into whole tiles: tt-metal 2026's ``compute_num_virtual_cols`` (the DRAM group norm
    op's own count; before 2026 the groups need not divide); a ValueError when none does."""
    _positive("dram_group_norm_virtual_columns", num_channels=num_channels, num_groups=num_groups)
    grid_x = _grid("dram_group_norm_virtual_columns", core_grid).x
    columns = compute_num_virtual_cols(grid_x, num_groups, num_channels)
    if columns == 0:
        raise MeshnnValueError(
            f"dram_group_norm_virtual_columns: could not find a valid num_virtual_cols for grid_x={grid_x}, "
            f"num_channels={num_channels}, num_groups={num_groups}"
        )
    return columns


def create_group_norm_reciprocals(N: int, C: int, H: int, W: int, num_groups: int, core_grid: CoreGrid) -> Any:
    """1/1 ... 1/n (float32) for the Welford kernel, one row per core: n is the values one core
    accumulates for a group (its channels times its tiles of H * W, split over the cores a batch
    shares)."""
    import torch

    _positive("create_group_norm_reciprocals", N=N, C=C, H=H, W=W, num_groups=num_groups)
    core_grid = _grid("create_group_norm_reciprocals", core_grid)
    columns = dram_group_norm_virtual_columns(core_grid, C, num_groups)
    rows = (core_grid.x // columns) * core_grid.y
    rows_per_batch = 1 if rows <= N else rows // N
    count = (C // num_groups) * math.ceil(H * W / TILE) // rows_per_batch
    reciprocals = 1.0 / torch.arange(1, count + 1, dtype=torch.float32)
    return reciprocals.repeat(core_grid.x * core_grid.y, 1)


def get_group_norm_cores_across_channel(memory_layout: Any, core_grid: CoreGrid, shard_orientation: Any = None) -> int:
    """The cores that split the channels: block sharded, the grid's columns (``core_grid.x``) when
    ``shard_orientation`` is ROW_MAJOR, else its rows (``core_grid.y``: COL_MAJOR, and None, ttnn's
    older rule); 1 (height sharded); every core (interleaved)."""
    from meshnn.device.buffer import ShardOrientation, TensorMemoryLayout

    core_grid = _grid("get_group_norm_cores_across_channel", core_grid)
    if shard_orientation is not None and not isinstance(shard_orientation, ShardOrientation):
        raise MeshnnTypeError(
            f"ttnn.get_group_norm_cores_across_channel: shard_orientation must be a ttnn.ShardOrientation or None, "
            f"got {shard_orientation!r}"
        )
    if memory_layout is TensorMemoryLayout.BLOCK_SHARDED:
        return core_grid.x if shard_orientation is ShardOrientation.ROW_MAJOR else core_grid.y
    if memory_layout is TensorMemoryLayout.HEIGHT_SHARDED:
        return 1
    return core_grid.x * core_grid.y


def dram_group_norm_params_from_torch(
    torch_params: Any,
    channels_per_device: int,
    groups_per_device: int,
    device: Any,
    mesh_axis: int | None = None,
    core_grid: CoreGrid | None = None,
    return_mask: bool = True,
    dtype: Any = None,
) -> Any:
    """Weights / biases (a tensor or a list of them) laid out for DRAM group norm and put on
    ``device`` (sharded over ``mesh_axis`` when given), with the input mask when ``return_mask``."""
    import torch

    from meshnn.formats.dtypes import DataType
    from meshnn.formats.layout import Layout
    from meshnn.tensor.interop import from_torch
    from meshnn.tensor.mappers import ShardTensor2dMesh

    if core_grid is None and device is None:
        raise MeshnnValueError("dram_group_norm_params_from_torch: give core_grid or device")
    if channels_per_device % TILE or channels_per_device % groups_per_device:
        raise MeshnnValueError(
            f"dram_group_norm_params_from_torch: channels_per_device {channels_per_device} must be divisible by 32 "
            f"and by groups_per_device {groups_per_device}"
        )
    dtype = DataType.BFLOAT16 if dtype is None else dtype
    single = isinstance(torch_params, torch.Tensor)
    params = [torch_params] if single else list(torch_params)
    devices = 1 if mesh_axis is None else tuple(device.shape)[mesh_axis]
    dims: list[int | None] = [None, None]
    if mesh_axis is not None:
        dims[mesh_axis] = 0
    grid = core_grid or device.core_grid
    columns = dram_group_norm_virtual_columns(grid, channels_per_device, groups_per_device)
    placed = []
    for param in params:
        if param.numel() // devices != channels_per_device:
            raise MeshnnValueError(
                f"dram_group_norm_params_from_torch: {param.numel()} values over {devices} devices are not "
                f"{channels_per_device} channels per device"
            )
        laid = torch.cat(
            [create_group_norm_weight_bias_rm(p, channels_per_device, columns) for p in param.chunk(devices)]
        )
        mapper = ShardTensor2dMesh(device, mesh_shape=tuple(device.shape), dims=tuple(dims))
        placed.append(from_torch(laid, dtype=dtype, device=device, mesh_mapper=mapper))
    result = placed[0] if single else placed
    if not return_mask:
        return result
    mask = create_group_norm_input_mask(channels_per_device, groups_per_device, columns)
    return result, from_torch(mask, dtype=dtype, device=device, layout=Layout.TILE)


def determine_expected_group_norm_sharded_config_and_grid_size(
    *, device: Any, num_channels: int, num_groups: int, input_nhw: int, is_height_sharded: bool,
    is_row_major: bool = False,
) -> tuple[Any, CoreGrid]:  # fmt: skip
    """The sharded memory config and core grid ttnn expects for a group norm of ``input_nhw`` rows
    of ``num_channels`` channels (see ttnn's helper of the same name)."""
    from meshnn.device.buffer import ShardOrientation
    from meshnn.tensor.memory_config import ShardStrategy, create_sharded_memory_config

    _positive("group norm config", num_channels=num_channels, num_groups=num_groups, input_nhw=input_nhw)
    if num_channels % num_groups or num_channels % TILE:
        raise MeshnnValueError(f"group norm: num_channels {num_channels} must divide by num_groups and by 32")
    grid = device.compute_with_storage_grid_size()
    grid_x, grid_y = (grid.y, grid.x) if is_row_major else (grid.x, grid.y)
    rows = math.ceil(input_nhw / TILE) * TILE
    cores_nhw = find_closest_largest_divisor(rows // TILE, grid_x * grid_y if is_height_sharded else grid_x)
    cores_channels = 1
    if not is_height_sharded:
        cores_channels = grid_y
        while (num_channels // 8) % cores_channels or (num_channels // cores_channels) % (num_channels // num_groups):
            cores_channels -= 1
    per_core_nhw = math.ceil(input_nhw / (cores_nhw * TILE)) * TILE
    per_core_channels = num_channels // cores_channels
    if is_height_sharded:
        size = [min(cores_nhw, grid_x), math.ceil(cores_nhw / grid_x)]
    else:
        size = [cores_channels, cores_nhw] if is_row_major else [cores_nhw, cores_channels]
    shape = (1, 1, per_core_nhw, per_core_channels) if is_row_major else (1, 1, per_core_channels, per_core_nhw)
    strategy = ShardStrategy.HEIGHT if is_height_sharded else ShardStrategy.BLOCK
    orientation = ShardOrientation.ROW_MAJOR if is_height_sharded or is_row_major else ShardOrientation.COL_MAJOR
    core_grid = CoreGrid(y=size[1], x=size[0])
    config = create_sharded_memory_config(
        shape, core_grid, strategy, orientation, use_height_and_width_as_shard_shape=True
    )
    return config, core_grid


def determine_expected_group_norm_dram_grid_size(
    *, device: Any, num_channels: int, num_groups: int, input_nhw: int, num_batches: int = 1
) -> CoreGrid | None:
    """The grid a DRAM (interleaved) group norm of ``input_nhw`` rows of ``num_channels`` channels in
    ``num_groups`` groups runs on, as tt-metal's ``find_expected_dram_grid`` picks it (None: no grid
    fits).  The widest grid first, then the tallest, within the device's compute grid: ``gx``
    columns hold ``nvc`` virtual columns (the most, at most ``gx`` and the groups, that divide the
    groups and leave whole tiles of channels), each grid row ``gx // nvc`` virtual rows; those rows
    must divide the input's tile rows, and be a multiple of ``num_batches`` when at least that many.
    A grid whose columns all work (``gx % nvc == 0``) wins; else the first that fits."""
    owner = "determine_expected_group_norm_dram_grid_size"
    _positive(owner, num_channels=num_channels, num_groups=num_groups, input_nhw=input_nhw, num_batches=num_batches)
    if num_channels % num_groups or num_channels % TILE:
        raise MeshnnValueError(f"{owner}: num_channels {num_channels} must divide by num_groups and by 32")
    grid = device.compute_with_storage_grid_size()
    return dram_grid(grid.x, grid.y, num_channels, num_groups, input_nhw, num_batches)
