"""How many DRAM slices tt-metal runs a conv2d in, and along which dimension, as the conv's description
(:class:`~meshnn.perf.conv_desc.ConvConfig`'s ``slices`` and ``slice_width``) records it.

tt-metal (2026-04, the SDXL VAE figure's date, to 2026-06): a conv2d takes the DRAM path when its slice config
names a DRAM slice type, or names none and its input is not in L1 (ttnn/cpp/ttnn/operations/conv/conv2d/
conv2d_utils.cpp: determine_conv2d_execution_path).  On that path ttnn/cpp/ttnn/operations/sliding_window/
op_slicing/op_slicing.cpp picks:

- the dimension (given, or ``best_guess_slice_type``): a row-major output by width unless the input is more than
  three times taller than wide; a tiled output by height when the input is under 200 wide or taller than wide,
  else by width;
- the count (given, or the smallest from 1 whose largest slice's L1 use fits the free L1 of a core, at most the
  sliced output dimension, in tiles of 32 for a tiled output sliced by width; if none fits along the guessed
  dimension, the other); a count of 1 runs the conv unsliced (one program on its L1 path);
- the slices: :meth:`~meshnn.perf.conv_desc.ConvConfig.slice_windows`.

Each slice is read from DRAM into L1 (its own op), halo'd (HaloDeviceOperation) and convolved (one conv2d
program, which :mod:`meshnn.perf.conv` times), and written back; the conv's own time is its slices' programs.

A slice's L1 use: tt-metal's Conv2dSliceAttr::get_L1_usage (conv2d.cpp) takes the larger of the halo's input and
output shards together and the conv program's own circular buffers and output (calculate_L1_usage_for_conv_op).
Counted here: the first, per core of the conv's shard layout (:func:`meshnn.perf.conv.conv_blocks`): the slice's
input rows and the halo'd rows (its padding in) over the cores that split the rows, each row the channels one core
holds; the conv program's buffers are not counted, so a count may come out lower than tt-metal's where they are
the larger.  Units: bytes.
"""

from __future__ import annotations

import math
from dataclasses import replace

from meshnn.device.buffer import TensorMemoryLayout
from meshnn.perf.conv import conv_blocks, padded_channels
from meshnn.perf.conv_desc import ConvConfig
from meshnn.perf.desc import TILE

L = TensorMemoryLayout
NARROW_INPUT = 200
"""op_slicing.cpp best_guess_slice_type: a tiled output's input under this many pixels wide is sliced by height."""
TALL_RATIO = 3.0
"""op_slicing.cpp best_guess_slice_type: a row-major output's input this many times taller than wide is sliced
by height."""


def slice_by_width(input_hw: tuple[int, int], tiled_output: bool) -> bool:
    """tt-metal's guess of the slice dimension for an input of ``input_hw`` (height, width) pixels."""
    height, width = input_hw
    if not tiled_output:
        return not height > width * TALL_RATIO
    return not (width < NARROW_INPUT or height > width)


def rounding(tiled_output: bool, by_width: bool) -> int:
    """The unit a slice's extent is a multiple of: a tile's height for a tiled output sliced by width, else 1."""
    return TILE if tiled_output and by_width else 1


def most_slices(conv: ConvConfig, tiled_output: bool, by_width: bool) -> int:
    """The most slices the sliced output dimension allows."""
    return math.ceil(conv.output[1 if by_width else 0] / rounding(tiled_output, by_width))


def halo_bytes(conv: ConvConfig, grid: tuple[int, int], tiled_input: bool, element_bytes: int) -> int:
    """One core's halo input and output shards of the one-program conv ``conv`` (a slice), bytes."""
    b = conv_blocks(conv, grid, tiled_input)
    channels = padded_channels(conv, b.layout, tiled_input)
    if b.layout is L.HEIGHT_SHARDED:
        row_shards, channel_shards = b.cores, 1
    elif b.layout is L.BLOCK_SHARDED:
        row_shards, channel_shards = max(1, b.cores // b.share), b.share
    else:
        row_shards, channel_shards = 1, b.cores
    height, width = conv.input_extent(0), conv.input_extent(1)
    padded = (height + conv.padding[0] + conv.padding[1]) * (width + conv.padding[2] + conv.padding[3])
    row_bytes = math.ceil(channels / channel_shards) * element_bytes
    per_core = math.ceil(conv.batch * height * width / row_shards) + math.ceil(conv.batch * padded / row_shards)
    return per_core * row_bytes


def fits(conv: ConvConfig, count: int, by_width: bool, grid, tiled_input, tiled_output, element_bytes, free) -> bool:
    """Whether every slice of ``conv`` cut ``count`` ways fits ``free`` bytes of a core's L1."""
    sliced = replace(conv, slices=count, slice_width=by_width)
    windows = sliced.slice_windows(rounding(tiled_output, by_width))
    return max(halo_bytes(w, grid, tiled_input, element_bytes) for w in windows) <= free


def dram_slices(
    conv: ConvConfig,
    grid: tuple[int, int],
    *,
    free_l1: int,
    tiled_input: bool,
    tiled_output: bool,
    element_bytes: int = 2,
    given: tuple[bool, int] | None = None,
) -> ConvConfig:
    """``conv`` with the slices tt-metal's DRAM path runs it in on a compute grid of ``grid`` (x, y) cores with
    ``free_l1`` bytes free a core (the module's text): ``given`` (by width, count; count 0: ttnn picks it) or
    tt-metal's guess of the dimension; the count 1 when it fits unsliced; the most slices when none fits (where
    tt-metal refuses: not the model's to refuse)."""
    guess = slice_by_width((conv.input_extent(0), conv.input_extent(1)), tiled_output)
    by_width = given[0] if given is not None else guess
    count = given[1] if given is not None else 0
    if count > 0:
        count = min(count, most_slices(conv, tiled_output, by_width))
        return conv if count == 1 else replace(conv, slices=count, slice_width=by_width)
    dims = (by_width,) if given is not None else (by_width, not by_width)
    for dim in dims:
        for n in range(1, most_slices(conv, tiled_output, dim) + 1):
            if fits(conv, n, dim, grid, tiled_input, tiled_output, element_bytes, free_l1):
                return conv if n == 1 else replace(conv, slices=n, slice_width=dim)  # 1: the L1 path, unsliced
    return replace(conv, slices=most_slices(conv, tiled_output, by_width), slice_width=by_width)
