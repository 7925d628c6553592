"""``ttnn.gather`` as tt-metal's GatherDeviceOperation runs it (ttnn/cpp/ttnn/operations/data_movement/gather/
device: gather_program_factory.cpp, kernels gather_reader_single_row_multi_core.cpp and its writer), on the
busiest core, in cycles.

The program gathers along the last dim (ttnn transposes another ``dim`` there first: the ``dim`` attribute,
:mod:`meshnn.ops.costs`, says which dim the shapes below are taken along).  Its cores share the index's tiles
along that dim (``Wt_index``, a core every ``cores``-th tile); each of a core's index tiles, in every row of
tiles (``Ht``), reads the index tile, then streams the whole row of input tiles (``Wt_input``) and, for each
input tile, loops over the index tile's 1024 values on the data-movement RISC-V, copying the values whose index
falls in that input tile.  So the busiest core runs ``Ht x ceil(Wt_index / cores) x Wt_input x 1024`` scalar
iterations (``riscv_cycles_per_element`` each: argmax's estimate of such a loop, uncalibrated), and the input is
read once for every index tile of its row.  No published gather figure checks this.
"""

from __future__ import annotations

import math

from meshnn.perf.desc import TILE, OpDesc
from meshnn.perf.latency import op_latency
from meshnn.perf.prediction import Prediction
from meshnn.perf.systems import Machine
from meshnn.perf.traffic import grid_cores, kernel_prediction, traffic

OP_CODE = "GatherDeviceOperation"
TILE_VALUES = TILE * TILE


def is_gather(desc: OpDesc) -> bool:
    return desc.op_code == OP_CODE and len(desc.inputs) >= 2


def gather_tiles(desc: OpDesc) -> tuple[int, int, int]:
    """(Ht, Wt_input, Wt_index): rows of tiles and the input's and index's tiles along the gathered dim."""
    source, index = desc.inputs[0], desc.inputs[1]
    rank = len(index.shape)
    dim = int(dict(desc.attributes).get("dim", rank - 1)) % rank
    length = index.shape[dim]
    rows = max(1, index.volume // max(1, length))
    return math.ceil(rows / TILE), math.ceil(source.shape[dim] / TILE), math.ceil(length / TILE)


def predict_gather(desc: OpDesc, machine: Machine) -> Prediction:
    """The time of a gather ``desc`` on ``machine``: the busiest core's scalar loop, or the input's re-reads."""
    arch = machine.system.arch
    rows, wt_input, wt_index = gather_tiles(desc)
    cores = max(1, min(grid_cores(machine, desc.core_grid), wt_index))
    per_core = rows * math.ceil(wt_index / cores)
    cycles = per_core * wt_input * TILE_VALUES * op_latency(arch.arch).riscv_cycles_per_element
    source = desc.inputs[0]
    rereads = wt_index  # every index tile of a row streams that row's input tiles again
    moves = [(source, float(rereads)), *((t, 1.0) for t in desc.inputs[1:]), *((t, 1.0) for t in desc.outputs)]
    memory = traffic(machine, moves, cores)
    note = f"gather: {cores} cores, {per_core} index tiles a core, {wt_input} input tiles a row"
    return kernel_prediction(arch, cycles, memory, cores, notes=(note,))
