"""meshnn.perf: predicted device time of TTNN ops and collectives on the simulated chips.

``predict(desc, "t3k")`` gives one op's :class:`Prediction` (compute, memory, link and fixed ns, the
op-to-op gap, the bound); a :class:`Recorder` keeps a mesh's ops in order with the time per device,
prints as a table (:func:`format_table`), writes tt-metal's ops-perf CSV (:func:`write_ops_perf_csv`,
read by tt-perf-report) and a PNG of where the time goes (:func:`write_time_plot`).  The hardware
figures and their sources are in :mod:`meshnn.perf.hardware` and :mod:`meshnn.perf.systems`.

This layer imports only meshnn.errors, meshnn.formats and meshnn.device.
"""

from meshnn.perf.desc import (
    AttentionConfig,
    BufferType,
    CollectiveConfig,
    Fabric,
    Layout,
    MatmulConfig,
    MatmulProgram,
    MemoryLayout,
    OpDesc,
    OpFamily,
    TensorDesc,
    Topology,
)
from meshnn.perf.fidelity import MathFidelity
from meshnn.perf.hardware import ArchPerf, arch_perf
from meshnn.perf.model import default_fidelity, predict
from meshnn.perf.ops_csv import ops_perf_csv, write_ops_perf_csv
from meshnn.perf.plot import write_time_plot
from meshnn.perf.prediction import Bound, Prediction
from meshnn.perf.recorder import DeviceTotals, Record, Recorder
from meshnn.perf.systems import Machine, SystemPerf, machine, system_perf
from meshnn.perf.table import format_table

__all__ = [
    "ArchPerf",
    "AttentionConfig",
    "Bound",
    "BufferType",
    "CollectiveConfig",
    "DeviceTotals",
    "Fabric",
    "Layout",
    "Machine",
    "MathFidelity",
    "MatmulConfig",
    "MatmulProgram",
    "MemoryLayout",
    "OpDesc",
    "OpFamily",
    "Prediction",
    "Record",
    "Recorder",
    "SystemPerf",
    "TensorDesc",
    "Topology",
    "arch_perf",
    "default_fidelity",
    "format_table",
    "machine",
    "ops_perf_csv",
    "predict",
    "system_perf",
    "write_ops_perf_csv",
    "write_time_plot",
]
