"""``ttnn.max_pool2d`` / ``avg_pool2d`` (and the adaptive pools, which run the same program) as tt-metal's
Pool2D program runs them (ttnn/cpp/ttnn/operations/pool/generic/device: pool_multi_core_program_factory.cpp,
kernels reader_pool_2d.cpp and compute_pool_2d.cpp), on the busiest core, in cycles:

- The work: every output stick (one output pixel, all its channels) is one reduction per tile of its
  channels (``ceil(C / 32)``): the compute kernel tilizes the window's sticks into a tile
  (``unpack_tilizeA_B_block``), reduces its rows (``reduce_tile_math``, MAX or SUM) and packs the result
  back into the output stick (``pack_untilize``).  A reduction tile is timed as a tilize (conv's measured
  tilize rate, :mod:`meshnn.perf.conv_rates`: unpack and pack of a tile) plus the reduce at the fidelity
  (``reduce_cycles_per_tile`` x phases; the program's default is HiFi4, ``init_device_compute_kernel_config``'s
  argument in the factory), halved where the window's sticks fill two of the tile's four faces (at most 16
  sticks: ``num_faces_in_input_tile``).  The output sticks and channel tiles are spread over the program's cores (the
  input's shard grid: height-sharded, the sticks; width- or block-sharded, the channels too).
- The reader: for each output stick, each kernel row of ``kw`` sticks is one NoC read of ``kw x C`` bytes
  from the core's halo'd L1 shard (one read per stick where the channels take more than one reduction
  block, ``wide_reduction``), at the local-L1 rate of conv's reader (:mod:`meshnn.perf.conv_rates`).
  The reader fills one circular buffer while the compute empties the other, so the slower side decides.
- Memory: the input's and output's bytes where they are in DRAM (:func:`meshnn.perf.traffic.traffic`): an
  interleaved input is read once, by the halo op (HaloDeviceOperation) that ttnn runs before the pool and
  that meshnn does not record apart; its own sharding work is not counted.

Not counted: the split reader (two readers taking alternate sticks, where the factory enables it), which
would halve the reader side.  The window comes from the op's ``kernel_size`` attribute (``"KHxKW"``,
:mod:`meshnn.ops.costs`; without it a 1x1 window is assumed), the sharding of an interleaved input from its
``shard_scheme`` (``applied_shard_scheme``; without it, height).  No published pool figure checks these
costs: they are the engines' and the NoC's rates the conv model uses, applied to the pool program's loop.
"""

from __future__ import annotations

import math

from meshnn.perf.conv_rates import RATES
from meshnn.perf.desc import TILE, MemoryLayout, OpDesc
from meshnn.perf.fidelity import MathFidelity
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import grid_cores, kernel_prediction, traffic

OP_CODE = "Pool2D"
POOL_DEFAULT = MathFidelity.HiFi4
"""The fidelity the pool factory passes ``init_device_compute_kernel_config`` as its default."""
MAX_TILES_PER_REDUCTION = 8
"""Channel tiles one reduction block holds (compute_pool_2d.cpp); more channels: ``wide_reduction``."""
FACE_ROWS = 16
FACES_SMALL_WINDOW = 2
"""A window of at most 16 sticks fills the tile's top two faces only: compute_pool_2d.cpp unpacks and reduces
2 faces a tile then (``num_faces_in_input_tile``), 4 otherwise."""
ROW_MAJOR_BYTES = {"FLOAT32": 4, "UINT32": 4, "INT32": 4}
"""Bytes of an element of a row-major stick (2 for bfloat16 and the other 16-bit types)."""


def is_pool(desc: OpDesc) -> bool:
    return desc.op_code == OP_CODE


def window(desc: OpDesc) -> tuple[int, int]:
    """(kh, kw) from the op's ``kernel_size`` attribute (``"3x3"``); (1, 1) without one."""
    text = dict(desc.attributes).get("kernel_size", "1x1")
    kh, _, kw = text.partition("x")
    return max(1, int(kh)), max(1, int(kw or kh))


def sharding(desc: OpDesc) -> MemoryLayout:
    """How the program splits the work: the input's sharding, else the ``shard_scheme`` the op was given
    (``applied_shard_scheme``), else height (an interleaved input is sharded by the halo before the pool)."""
    source = desc.inputs[0]
    if source.memory is not MemoryLayout.INTERLEAVED:
        return source.memory
    scheme = dict(desc.attributes).get("shard_scheme", "")
    return MemoryLayout[scheme] if scheme in MemoryLayout.__members__ else MemoryLayout.HEIGHT_SHARDED


def pool_cycles(desc: OpDesc, machine: Machine) -> tuple[int, float, float]:
    """(cores, reader cycles, compute cycles) of the busiest core.  Height-sharded: each core its share of
    the sticks, all channels; width-sharded: all sticks, its share of the channels; block-sharded: the
    reductions spread evenly (its grid's rows x columns are not in the description), each read a whole
    stick's channels."""
    arch = machine.system.arch
    rates = RATES[arch.arch]
    source, out = desc.inputs[0], desc.outputs[0]
    channels = max(1, out.shape[-1])
    sticks = max(1, out.volume // channels)
    grid, layout = grid_cores(machine, desc.core_grid), sharding(desc)
    if layout is MemoryLayout.WIDTH_SHARDED:
        cores = max(1, min(grid, math.ceil(channels / TILE)))
        core_channels, core_sticks = math.ceil(channels / cores), float(sticks)
    elif layout is MemoryLayout.BLOCK_SHARDED:
        cores = max(1, min(grid, sticks * math.ceil(channels / TILE)))
        core_channels, core_sticks = channels, sticks / cores
    else:
        cores = max(1, min(grid, sticks))
        core_channels, core_sticks = channels, float(math.ceil(sticks / cores))
    core_tiles = math.ceil(core_channels / TILE)
    fidelity = desc.fidelity or POOL_DEFAULT
    tilize = rates.tilize(source.dtype == "FLOAT32", out.dtype, False)
    kh, kw = window(desc)
    faces = FACES_SMALL_WINDOW if kh * kw <= FACE_ROWS else 4  # the faces a window's sticks fill
    per_tile = (tilize + arch.reduce_cycles_per_tile * fidelity.phases) * faces / 4
    compute = math.ceil(core_sticks * core_tiles) * per_tile
    stick_bytes = core_channels * ROW_MAJOR_BYTES.get(source.dtype, 2)
    wide = core_tiles > MAX_TILES_PER_REDUCTION  # one read per stick, else one per kernel row
    size = stick_bytes if wide else kw * stick_bytes
    reads = core_sticks * (kh * kw if wide else kh)
    return cores, reads * rates.local_l1.cycles(size, size, arch.clock_hz), compute


def predict_pool(desc: OpDesc, machine: Machine) -> Prediction:
    """The time of a Pool2D ``desc`` on ``machine``: the slower of its reader and compute, or its DRAM traffic."""
    arch = machine.system.arch
    cores, reader, compute = pool_cycles(desc, machine)
    moves = [(desc.inputs[0], 1.0), *((t, 1.0) for t in desc.outputs)]
    memory = traffic(machine, moves, cores, local_shards=True)
    kh, kw = window(desc)
    note = f"pool: {cores} cores, window {kh}x{kw}, reader {reader:,.0f} / compute {compute:,.0f} cycles"
    return kernel_prediction(arch, max(reader, compute), memory, cores, fidelity=desc.fidelity, notes=(note,))
