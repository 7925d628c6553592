"""The ring reduce_scatter program of before tt-metal #41522 (2026-04-09), as that PR measured it.

Source: tt-metal pull request #41522 ("#37099: New ReduceScatter ring algorithm", merged 2026-04-09), its table
"Kernel duration for some small & large shapes with 8 devices, bfloat16, Tile layout, DRAM interleaved", column
"ring (current)": the program it replaced (each half of a slice crossing the whole ring,
:mod:`meshnn.perf.dated_collectives`), in us, per-device input shapes, scattered on their last dim.  The [1, 1, 32, 256]
row set :data:`meshnn.perf.dated_collectives.HALF_SLICE_STEP_NS` (fitted); the others check it.  The table's other
columns (the line program and the new ring program of that day) are not figures here: they read 10-16% (line) and
about 14 us (new ring) above the CCL report's later runs of the same programs, which the fabric's constants hold.
"""

from __future__ import annotations

from meshnn.perf import CollectiveConfig, OpDesc, OpFamily, TensorDesc, Topology, machine, predict
from meshnn.perf.dated_collectives import RingReduceScatterProgram, marked

from .figure import Figure

SOURCE = "tt-metal PR #41522 (2026-04-09), kernel duration, 8 devices, bfloat16, DRAM interleaved: ring (current)"
ROWS = {
    (1, 1, 32, 256): 46.76,
    (1, 1, 32, 1024): 49.15,
    (1, 1, 32, 2048): 55.42,
    (1, 1, 32, 3584): 66.61,
    (2, 8, 512, 1024): 915.39,
}
FITTED = (1, 1, 32, 256)
DEVICES = 8


def half_slice_desc(shape: tuple[int, int, int, int], name: str = "ttnn.reduce_scatter") -> OpDesc:
    """A ring reduce_scatter of per-device input ``shape`` (bfloat16, DRAM) on 8 devices, marked as run by the
    program of before #41522."""
    out = (*shape[:-1], shape[-1] // DEVICES)
    desc = OpDesc(
        OpFamily.REDUCE_SCATTER,
        (TensorDesc(shape),),
        (TensorDesc(out),),
        collective=CollectiveConfig(Topology.RING, cluster_axis=1),
        name=name,
    )
    return marked(desc, RingReduceScatterProgram.HALF_SLICES)


def half_slice_us(shape: tuple[int, int, int, int]) -> float:
    """Kernel us of that reduce_scatter on a T3000 opened 1x8 (one call alone)."""
    return predict(half_slice_desc(shape), machine("t3k", (1, DEVICES)), traced=True).kernel_ns / 1e3


def figures() -> list[Figure]:
    """Every row as a figure in the ``collectives`` group."""
    out = []
    for shape, us in ROWS.items():

        def model(s=shape) -> float:
            return half_slice_us(s)

        name = f"WH reduce_scatter N=8 ring {list(shape)} (before #41522: half slices round the ring)"
        out.append(Figure(name, SOURCE, us, us, "us", model, fitted=shape == FITTED, group="collectives"))
    return out
