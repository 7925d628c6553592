"""conv2d's device time as tt-metal's sharded conv2d program runs it (ttnn/cpp/ttnn/operations/conv/
conv2d/device/conv2d_op_sharded_program_factory.cpp and conv2d_op_width_sharded_program_factory.cpp,
blocks from conv2d_utils.cpp's determine_per_core_conv_block_config), on the busiest core, in cycles:

- The im2col matmul: M the output positions, K = kh x kw x the padded input channels (a grouped conv's
  weight is zero-padded to every input channel: prepare_conv2d_weights.cpp,
  convert_conv_weight_tensor_to_grouped_layout), N the output channels.  Input channels are padded to
  a tile (32) for a tiled or width-sharded input, else to 8 (16 B, the L1 alignment of a bfloat16
  stick: get_input_channels_alignment).
- The sharding: height-sharded, the output rows over the grid, every core all of N, K in ``kh`` blocks
  of one kernel row (``kw x C`` rounded to a tile; one block of all of K with activation reuse);
  block-sharded, rows over the grid's y and channels over its x, K in ``kh x x`` blocks of one core's
  channels; width-sharded, every core all rows, its N share, K in one block per core (its channels'
  ``kh x kw`` taps).
- The activation reader (reader_conv_activations_padded_with_halo_3x3_weights_v2.cpp, read_sticks): for
  each output row and kernel row, one NoC read of ``kw`` sticks of its own channels from the halo'd
  shard; a read's cycles are its bytes over the NoC's per-transfer rate (``noc_transfer_efficiency``:
  a read under 128 B costs a 128 B read's 23 cycles on Wormhole).  Block- and width-sharded, each
  core's tilized block is then multicast to the cores that share its rows (``multicast_byte_dests_per_cycle``).
- The compute core (conv_bmm_tilize.cpp): tilize its own activation blocks (each tile unpacked and
  packed), the multiplies (the matmul model's per-multiply cycles), the partials between K blocks (the
  matmul model's :func:`~meshnn.perf.matmul.partials_cycles`), the bias (each output tile reloaded,
  added, packed) and the output's pack.
- The weights: height-sharded, one core reads the whole weight from DRAM and multicasts it to every
  core; block-sharded, one core a column reads its column's share and multicasts it down the column;
  width-sharded, each core reads its own share (``dram_activation_bytes_per_cycle``, one reader's rate,
  with the DRAM's rate as the bound for all readers together).
- Overlap: the readers (activation, weights) and the compute core run side by side only where the
  config double-buffers the side's circular buffer (``enable_act_double_buffer``,
  ``enable_weights_double_buffer``); a single-buffered side's next block waits for the compute to free
  the current one, so its time adds to the compute's.
- Activation reuse (height-sharded, tt-metal requires the split reader): all of K is one block and a core's whole
  height one activation block; each reader reads its half of the rows a tile row at a time, one kernel row a
  position after its first image width (read_sticks_activation_reuse), reserving its one-image-width buffer whole
  before each width; the compute tilizes the two readers' rows by turns and then runs the one matmul
  (conv_bmm_tilize.cpp, tilize_in_reuse_split_reader): no overlap of reads and matmul (:mod:`meshnn.perf.conv_cycles`).
- Block-sharded multicasts (reader_conv_activations_2d_mcast_padded_with_halo_3x3_weights_v2.cpp, conv_bmm_tilize.cpp):
  the K blocks come in groups, one block from each core of the grid row; at a group's start the core reads its
  own rows and the compute tilizes them; then each block's sender waits for every receiver to reserve room in its
  activation buffer (one block unless double-buffered: so after its matmul of the block before) and signal it,
  multicasts the tilized block and then a semaphore (the handshake: two one-way NoC flights); the matmul takes the
  block once it and its weights are in (:mod:`meshnn.perf.conv_cycles`).
- Width-sharded rounds (activation_reader_width_sharded.cpp): each core reads and tilizes its own block once,
  then every core's block is multicast in a round of its own: every receiver reserves its activation buffer
  (one block unless double-buffered, conv2d_op_program_factory_common.cpp's ACT CB: so after its matmul of
  the block before) and signals the sender's semaphore; the sender multicasts the block, then a semaphore
  to every receiver: two one-way NoC flights a round (tt-npe's write latency over the farthest core).

The halo op (HaloDeviceOperation), which ttnn runs before conv2d, is a separate op and not counted here.  A conv on
tt-metal's DRAM path runs in slices (:mod:`meshnn.perf.conv_slices`), each its own conv2d program on the slice's
window (:meth:`ConvConfig.slice_windows`): its time is theirs, one after another.
A conv2d description without its window (hand-made, or a captured conv_transpose2d), and a 1x1 conv that ttnn
runs as ``ttnn.linear`` (:attr:`ConvConfig.runs_as_matmul`), are timed as the matmul they compute
(:func:`implicit_matmul`: M the output pixels, K the weight's rows) on the matmul model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from meshnn.device.arch import Arch
from meshnn.device.buffer import TensorMemoryLayout
from meshnn.perf.conv_cycles import ConvCycles
from meshnn.perf.conv_desc import ConvConfig
from meshnn.perf.conv_rates import RATES
from meshnn.perf.desc import (
    TILE,
    TILE_BYTES,
    BufferType,
    Layout,
    MatmulConfig,
    MatmulProgram,
    OpDesc,
    OpFamily,
    TensorDesc,
)
from meshnn.perf.fidelity import MathFidelity
from meshnn.perf.matmul import accumulates, math_cycles_per_multiply, partials_cycles, predict_matmul
from meshnn.perf.prediction import Bound, Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import operand_cycles

L = TensorMemoryLayout


CONV_OP_CODE = "Conv2dDeviceOperation"
NOC_STARTUP_CYCLES = 40.0
"""tt-npe (tt_npe/cpp/include/device_models/wormhole_b0.hpp, get_write_latency): a NoC write's start-up, cycles
(meshnn.perf.latency's ``noc_write_latency_cycles`` is it plus one hop); blackhole.hpp's the same."""
NOC_HOP_CYCLES = {Arch.WORMHOLE_B0: 10.0, Arch.BLACKHOLE: 11.0}
"""tt-npe (wormhole_b0.hpp, blackhole.hpp: get_write_latency): cycles a router hop adds to a write's flight."""


def is_conv(desc: OpDesc) -> bool:
    """Whether ``desc`` is a conv2d run: it carries its window (a captured ``conv2d`` / ``conv1d``), or it
    is a matmul-family op with conv2d's device-operation name (a hand-made description, a captured
    ``conv_transpose2d``)."""
    if desc.conv is not None:
        return True
    return desc.family is OpFamily.MATMUL and desc.op_code == CONV_OP_CODE and len(desc.inputs) >= 2


def implicit_matmul(desc: OpDesc) -> OpDesc:
    """The matmul a conv2d ``desc`` without its window computes, for :func:`predict_conv`'s fallback: in0
    ``[1, 1, output pixels, K]`` in L1, K the weight's rows (a prepared ``[1, 1, K, N]`` weight, or
    ``in x kh x kw`` of a raw ``[out, in, kh, kw]`` one); the input kept as a further input, read once."""
    x, weight, *rest = desc.inputs
    out = desc.outputs[0]
    pixels = max(1, out.volume // max(1, out.shape[-1]))
    raw = len(weight.shape) == 4 and weight.shape[0] > 1
    k = math.prod(weight.shape[1:]) if raw else weight.shape[-2]
    if raw:  # the weight as the program holds it after preparation
        weight = TensorDesc((1, 1, k, weight.shape[0]), weight.dtype)
    memory = x.memory if x.sharded and x.buffer is BufferType.L1 else L.HEIGHT_SHARDED
    window = TensorDesc((1, 1, pixels, k), x.dtype, Layout.TILE, BufferType.L1, memory)
    return replace(desc, inputs=(window, weight, *rest, x))


def _tiles(n: int) -> int:
    return math.ceil(n / TILE)


@dataclass(frozen=True, slots=True)
class ConvBlocks:
    """The busiest core's share of the im2col matmul, in tiles: ``rows`` x ``cols`` output tiles,
    ``k_blocks`` inner blocks of ``block_w`` tiles each; ``own_blocks`` of those the core reads and
    tilizes itself (the rest it receives by multicast); ``reads`` NoC reads of ``read_bytes`` each;
    ``share`` the cores that receive each tilized block (1: none multicast); ``weight_tiles`` the
    weight tiles the busiest weight reader reads and ``weight_dests`` the cores it multicasts them to
    (1: its own); ``cores`` the program's cores; ``weight_readers`` the cores reading weights;
    ``split``: the layout allows tt-metal's split reader (height- or block-sharded, more than one
    row of tiles a core: is_split_reader_supported); ``height_blocks`` the activation blocks a core's rows
    run in (block-sharded, ``act_block_h``: the weights are read again for each)."""

    layout: TensorMemoryLayout
    cores: int
    rows: int
    cols: int
    k_blocks: int
    block_w: int
    own_blocks: int
    reads: int
    read_bytes: int
    share: int
    weight_tiles: int
    weight_dests: int
    weight_readers: int
    split: bool
    height_blocks: int = 1


def padded_channels(conv: ConvConfig, layout: TensorMemoryLayout, tiled_input: bool) -> int:
    """The input channels as the program holds them (see the module's text)."""
    align = TILE if tiled_input or layout is L.WIDTH_SHARDED else 8
    return math.ceil(conv.in_channels / align) * align


def l1_tiles(b: ConvBlocks) -> int:
    """What one core of ``b`` holds in L1, in tiles: its input shard (its rows by its channels of one
    kernel row's block), the weights it holds and its output shard."""
    weights = b.k_blocks * b.block_w * b.cols
    return b.rows * b.block_w * b.own_blocks + weights + b.rows * b.cols


def shard_layout(conv: ConvConfig, grid: tuple[int, int], tiled_input: bool) -> TensorMemoryLayout:
    """The conv config's shard layout; without one, ttnn's choice (conv2d_utils.cpp:
    determine_conv_config_for_auto_shard): of height-, block- and width-sharding the one whose cores
    use the least L1 (block-sharding only on at least a grid row of cores), here counted as
    :func:`l1_tiles` (tt-metal's calculate_L1_usage_for_conv_op also counts its circular buffers)."""
    if conv.shard_layout is not None and conv.shard_layout is not L.INTERLEAVED:
        return conv.shard_layout
    height = _blocks(conv, grid, tiled_input, L.HEIGHT_SHARDED)
    block = _blocks(conv, grid, tiled_input, L.BLOCK_SHARDED)
    width = _blocks(conv, grid, tiled_input, L.WIDTH_SHARDED)
    best = height
    if l1_tiles(block) < l1_tiles(best) and block.cores >= grid[0]:
        best = block
    if l1_tiles(width) < l1_tiles(best):
        best = width
    return best.layout


def conv_blocks(conv: ConvConfig, grid: tuple[int, int], tiled_input: bool) -> ConvBlocks:
    """The busiest core's share of ``conv`` on a compute grid of ``grid`` (x, y) cores, in the conv's
    shard layout (:func:`shard_layout`)."""
    return _blocks(conv, grid, tiled_input, shard_layout(conv, grid, tiled_input))


def _blocks(conv: ConvConfig, grid: tuple[int, int], tiled_input: bool, layout: TensorMemoryLayout) -> ConvBlocks:
    """The busiest core's share of ``conv`` sharded as ``layout``.  A read is
    ``kw`` sticks of the core's channels (coalesced: read_sticks), one per kernel row of each output
    row; with activation reuse (read_sticks_activation_reuse) only the first output image width of a
    core reads every kernel row, each later position one (the window's new row; the rest stays)."""
    c = padded_channels(conv, layout, tiled_input)
    kh, kw = conv.kernel
    m, n = _tiles(conv.positions), _tiles(conv.out_channels)
    if layout is L.HEIGHT_SHARDED:
        cores = padded_divisor(m, grid[0] * grid[1])
        rows = math.ceil(m / cores)
        positions = rows * TILE
        if conv.activation_reuse:
            k_blocks, block_w = 1, _tiles(c * kw * kh)
            # each of the split reader's two RISC-Vs starts its reuse afresh on its half of the rows
            halves = (positions - positions // 2, positions // 2) if rows > 1 else (positions,)
            reads = positions + sum(min(h, conv.output[1]) for h in halves) * (kh - 1)
        else:
            k_blocks, block_w, reads = kh, _tiles(c * kw), positions * kh
        weight_tiles = k_blocks * block_w * n
        return ConvBlocks(
            layout, cores, rows, n, k_blocks, block_w, k_blocks, reads, c * kw * 2, 1, weight_tiles, cores, 1, rows > 1
        )
    if layout is L.BLOCK_SHARDED:
        x, y = padded_divisor(_tiles(c), grid[0]), padded_divisor(m, grid[1])  # channels over x, rows over y
        rows, cols = math.ceil(m / y), math.ceil(n / x)
        per_core_c = math.ceil(_tiles(c) / x) * TILE
        block_w = _tiles(per_core_c * kw)
        k_blocks = kh * x
        reads = rows * TILE * kh
        # writer_tiled_out_2d_mcast_sender_...: each height block (act_block_h of the core's rows, tt-metal's
        # largest divisor of them not over the override) reads its column's weights again
        hb = rows // _largest_divisor(rows, conv.act_block_h // TILE) if conv.act_block_h else 1
        return ConvBlocks(
            layout, x * y, rows, cols, k_blocks, block_w, kh, reads, per_core_c * kw * 2, x,
            k_blocks * block_w * cols * hb, y, x, rows > 1, hb,
        )  # fmt: skip
    cores = padded_divisor(_tiles(c), grid[0] * grid[1])
    per_core_c = math.ceil(_tiles(c) / cores) * TILE
    block_w = _tiles(per_core_c * kh * kw)
    cols = math.ceil(n / cores)
    reads = conv.positions * kh * kw  # activation_reader_width_sharded: one stick of its channels a tap
    return ConvBlocks(
        layout, cores, m, cols, cores, block_w, 1, reads, per_core_c * 2, cores, cores * block_w * cols, 1, cores,
        False,
    )  # fmt: skip


def _largest_divisor(n: int, most: int) -> int:
    """The largest divisor of ``n`` not over ``most`` (conv2d_utils.cpp: find_closest_largest_divisor)."""
    return next(d for d in range(max(1, min(n, most)), 0, -1) if n % d == 0)


def padded_divisor(n: int, most: int) -> int:
    """The cores tt-metal shares ``n`` tiles over, at most ``most``: the most cores whose padding
    (``n`` rounded up to a multiple of them, less ``n``) is under one core's share
    (conv2d_utils.cpp: find_closest_largest_divisor_with_num_padding, as determine_parallel_config uses
    it for the rows of a height- or block-sharded conv and the channels of a block- or width-sharded one)."""
    d = max(1, most)
    while d > 1 and (math.ceil(n / d) * d - n) >= math.ceil(n / d):
        d -= 1
    return d


def conv_cycles(desc: OpDesc, machine: Machine) -> tuple[ConvBlocks, ConvCycles]:
    """The busiest core's blocks and cycles of the conv2d ``desc`` on ``machine``."""
    conv = desc.conv
    assert conv is not None
    arch = machine.system.arch
    rates = RATES[arch.arch]
    act, weight, out = desc.inputs[0], desc.inputs[1], desc.outputs[0]
    b = conv_blocks(conv, machine.system.spec.compute_grid, act.layout is Layout.TILE)
    fidelity = desc.fidelity or MathFidelity.HiFi2
    act_tile = TILE_BYTES[out.dtype]  # the tilized activation takes the output's format
    out_tiles, k_tiles = b.rows * b.cols, b.k_blocks * b.block_w
    config = desc.matmul or MatmulConfig()
    matmul = replace(  # the im2col matmul one core runs, for the matmul model's per-multiply and partials
        desc,
        matmul=replace(config, program=MatmulProgram.MULTICAST_1D, in0_block_w=b.block_w),
        inputs=(TensorDesc((b.rows * TILE, k_tiles * TILE), out.dtype), weight),
    )
    per_multiply = math_cycles_per_multiply(matmul, arch, fidelity)
    per_multiply += operand_cycles(arch, (act_tile + weight.tile_bytes) / 2)
    mm = out_tiles * k_tiles * per_multiply + partials_cycles(matmul, machine, out_tiles, k_tiles, per_multiply)
    pack = out_tiles * out.tile_bytes / arch.packer_bytes_per_cycle
    if len(desc.inputs) > 2:  # the bias: each output tile reloaded, added, packed again
        mm += out_tiles * (operand_cycles(arch, 2 * out.tile_bytes) + arch.fpu_eltwise_cycles_per_tile) + pack
    mm += pack
    own_tiles = b.own_blocks * b.rows * b.block_w
    fp32_acc = accumulates(matmul)[1]
    tilize = own_tiles * rates.tilize(act.dtype == "FLOAT32", out.dtype, fp32_acc)
    clock = arch.clock_hz
    reader = rates.local_l1.cycles(b.reads * b.read_bytes, b.read_bytes, clock)
    multicast = 0.0
    if b.share > 1:  # each K block arrives by a multicast from the core that holds its channels
        block = b.rows * b.block_w * act_tile
        multicast = b.k_blocks * rates.multicast.cycles(block, block, clock)
    weight_bytes = b.weight_tiles * weight.tile_bytes
    weights = rates.dram.cycles(weight_bytes, weight.tile_bytes, clock)
    if b.weight_dests > 1:
        weights += rates.multicast.cycles(weight_bytes, b.block_w * b.cols * weight.tile_bytes, clock)
    all_readers = weight_bytes * b.weight_readers / machine.system.dram_interleaved_bytes_per_s * clock
    chosen = b.layout is not L.HEIGHT_SHARDED or conv.activation_reuse or _split_pays(reader, tilize, weights)
    split = b.split and chosen
    blocks = b.k_blocks * (b.rows if conv.activation_reuse else b.height_blocks)  # reuse: a tile row at a time
    rounds = b.layout is L.WIDTH_SHARDED and b.share > 1
    handshake = 2 * _one_way_cycles(machine, b.share) if b.share > 1 else 0.0
    group = b.share if b.layout is L.BLOCK_SHARDED else 1
    weights = max(weights, all_readers)
    reuse = conv.activation_reuse and b.layout is L.HEIGHT_SHARDED
    width, taps = (_tiles(conv.output[1]), conv.kernel[0]) if reuse else (0, 1)
    return b, ConvCycles(reader, weights, tilize, mm, blocks, split, multicast, rounds, handshake, group, width, taps)


def _one_way_cycles(machine: Machine, cores: int) -> float:
    """A semaphore write's flight from one of ``cores`` (laid row by row on the compute grid, as the
    width-sharded program places them) to the farthest of the others, averaged over the senders (each
    core sends one round): tt-npe's write latency, its start-up and its cycles a router hop
    (:data:`NOC_HOP_CYCLES`) over that many hops (the logical grid's Manhattan distance)."""
    gx = machine.system.spec.compute_grid[0]
    spots = [(i % gx, i // gx) for i in range(cores)]
    far = sum(max(abs(x - u) + abs(y - v) for u, v in spots) for x, y in spots) / cores
    return NOC_STARTUP_CYCLES + NOC_HOP_CYCLES[machine.system.arch.arch] * far


def _split_pays(act: float, tilize: float, weights: float) -> bool:
    """tt-metal's choice of the split reader for a height-sharded conv (is_split_reader_viable):
    two readers when that starts the matmul sooner."""
    return act / 2 + max(weights, tilize) < max(act + tilize, weights)


def predict_conv(desc: OpDesc, machine: Machine) -> Prediction:
    """The time of the conv2d ``desc`` (inputs: activation, prepared weight[, bias]; one output) on
    ``machine`` (see the module's text); a description without its window (:class:`ConvConfig`) is
    timed as its :func:`implicit_matmul` on the matmul model.  A conv in DRAM slices (``slices`` > 1) is its
    slices' programs one after another, each its own launch (:meth:`ConvConfig.slice_windows`; the slices'
    reads, halos and write-backs are other ops)."""
    conv = desc.conv
    if conv is None or conv.runs_as_matmul:  # no window, or a 1x1 conv ttnn runs as a matmul
        return predict_matmul(implicit_matmul(desc), machine)
    arch = machine.system.arch
    unit = TILE if desc.outputs[0].layout is Layout.TILE and conv.slice_width else 1
    windows = conv.slice_windows(unit)
    cycles, flops, dram_bytes = 0.0, 0.0, 0.0
    weight = desc.inputs[1]
    for window in windows:
        b, parts = conv_cycles(replace(desc, conv=window), machine)
        cycles += parts.total(window.act_double_buffer, window.weights_double_buffer)
        k_tiles = b.k_blocks * b.block_w
        flops += 2.0 * _tiles(window.positions) * k_tiles * _tiles(window.out_channels) * TILE**3
        dram_bytes += b.weight_tiles * weight.tile_bytes * b.weight_readers
    notes = (
        f"conv2d: {b.cores} cores, {b.rows * b.cols} output tiles x {k_tiles} K tiles a core, {b.k_blocks} blocks"
        + (f", the last of {len(windows)} DRAM slices" if len(windows) > 1 else ""),
    )
    return Prediction(
        compute_ns=arch.cycles_ns(cycles),
        memory_ns=0.0,
        link_ns=0.0,
        fixed_ns=arch.op_launch_ns * len(windows),
        memory=Bound.L1,
        cores=b.cores,
        fidelity=desc.fidelity or MathFidelity.HiFi2,
        flops=flops,
        dram_bytes=dram_bytes,
        notes=notes,
    )
