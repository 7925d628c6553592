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

# Each name of the package and the module that defines it, imported at its first use: most
# runs need only the op descriptions (meshnn.perf.desc), never the calibration or plots.
_HOME = {
    "CalibratedOp": "meshnn.perf.calibrate",
    "FamilyError": "meshnn.perf.calibrate",
    "RowCheck": "meshnn.perf.calibrate",
    "calibrate_run": "meshnn.perf.calibrate",
    "check_rows": "meshnn.perf.calibrate",
    "family_errors": "meshnn.perf.calibrate",
    "measured_machine": "meshnn.perf.calibrate",
    "measured_times": "meshnn.perf.calibrate",
    "format_calibrated": "meshnn.perf.calibrate_table",
    "format_checks": "meshnn.perf.calibrate_table",
    "AttentionConfig": "meshnn.perf.desc",
    "BufferType": "meshnn.perf.desc",
    "CollectiveConfig": "meshnn.perf.desc",
    "Fabric": "meshnn.perf.desc",
    "Layout": "meshnn.perf.desc",
    "MatmulConfig": "meshnn.perf.desc",
    "MatmulProgram": "meshnn.perf.desc",
    "MemoryLayout": "meshnn.perf.desc",
    "OpDesc": "meshnn.perf.desc",
    "OpFamily": "meshnn.perf.desc",
    "TensorDesc": "meshnn.perf.desc",
    "Topology": "meshnn.perf.desc",
    "MathFidelity": "meshnn.perf.fidelity",
    "ArchPerf": "meshnn.perf.hardware",
    "arch_perf": "meshnn.perf.hardware",
    "TT_TRANSFORMERS": "meshnn.perf.host",
    "TT_TRANSFORMERS_TG": "meshnn.perf.host",
    "HostModel": "meshnn.perf.host",
    "StepTime": "meshnn.perf.host",
    "step_time": "meshnn.perf.host",
    "MeasuredRow": "meshnn.perf.measured",
    "read_ops_perf_csv": "meshnn.perf.measured",
    "default_fidelity": "meshnn.perf.model",
    "predict": "meshnn.perf.model",
    "ops_perf_csv": "meshnn.perf.ops_csv",
    "write_ops_perf_csv": "meshnn.perf.ops_csv",
    "write_time_plot": "meshnn.perf.plot",
    "Bound": "meshnn.perf.prediction",
    "Prediction": "meshnn.perf.prediction",
    "DeviceTotals": "meshnn.perf.recorder",
    "Record": "meshnn.perf.recorder",
    "Recorder": "meshnn.perf.recorder",
    "Machine": "meshnn.perf.systems",
    "SystemPerf": "meshnn.perf.systems",
    "machine": "meshnn.perf.systems",
    "system_perf": "meshnn.perf.systems",
    "format_table": "meshnn.perf.table",
}


def __getattr__(name: str) -> object:
    if name not in _HOME:
        raise AttributeError(f"module 'meshnn.perf' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_HOME[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})


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
