"""meshnn.perf: predicted device time of TTNN ops and collectives on the simulated chips.

``predict(desc, "t3k")`` gives one op's :class:`Prediction` (compute, memory, link and fixed ns, the
op-to-op gap, the bound); a :class:`Recorder` keeps a mesh's ops in order with the time per device,
prints as a table (:func:`format_table`), writes tt-metal's ops-perf CSV (:func:`write_ops_perf_csv`,
read by tt-perf-report) and a PNG of where the time goes (:func:`write_time_plot`).  The hardware
figures and their sources are in :mod:`meshnn.perf.hardware` and :mod:`meshnn.perf.systems`.
A whole step (kernels, gaps, the host's work) is :func:`step_time`; a profile measured on hardware is
read by :func:`read_ops_perf_csv`, checked against the model by :func:`check_rows` /
:func:`family_errors`, and used for a run by :func:`calibrate_run` (:mod:`meshnn.perf.calibrate`).

This layer imports only meshnn.errors, meshnn.formats and meshnn.device.
"""

from meshnn.perf.calibrate import (
    CalibratedOp,
    FamilyError,
    RowCheck,
    calibrate_run,
    check_rows,
    family_errors,
    measured_machine,
    measured_times,
)
from meshnn.perf.calibrate_table import format_calibrated, format_checks
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
from meshnn.perf.host import TT_TRANSFORMERS, TT_TRANSFORMERS_TG, HostModel, StepTime, step_time
from meshnn.perf.measured import MeasuredRow, read_ops_perf_csv
from meshnn.perf.model import default_fidelity, predict
from meshnn.perf.ops_csv import ops_perf_csv, write_ops_perf_csv
from meshnn.perf.plot import write_time_plot
from meshnn.perf.prediction import Bound, Prediction
from meshnn.perf.recorder import DeviceTotals, Record, Recorder
from meshnn.perf.systems import Machine, SystemPerf, machine, system_perf
from meshnn.perf.table import format_table

__all__ = [
    "TT_TRANSFORMERS",
    "TT_TRANSFORMERS_TG",
    "ArchPerf",
    "AttentionConfig",
    "Bound",
    "BufferType",
    "CalibratedOp",
    "CollectiveConfig",
    "DeviceTotals",
    "Fabric",
    "FamilyError",
    "HostModel",
    "Layout",
    "Machine",
    "MathFidelity",
    "MatmulConfig",
    "MatmulProgram",
    "MeasuredRow",
    "MemoryLayout",
    "OpDesc",
    "OpFamily",
    "Prediction",
    "Record",
    "Recorder",
    "RowCheck",
    "StepTime",
    "SystemPerf",
    "TensorDesc",
    "Topology",
    "arch_perf",
    "calibrate_run",
    "check_rows",
    "default_fidelity",
    "family_errors",
    "format_calibrated",
    "format_checks",
    "format_table",
    "machine",
    "measured_machine",
    "measured_times",
    "ops_perf_csv",
    "predict",
    "read_ops_perf_csv",
    "step_time",
    "system_perf",
    "write_ops_perf_csv",
    "write_time_plot",
]
