"""A report's performance side: each op's predicted device time (meshnn.perf), and the files
ttnn-visualizer's performance view reads (the ops-perf CSV and ``profile_log_device.csv``).

:class:`PerfRecords` keeps one :class:`~meshnn.perf.recorder.Recorder` per mesh.  What an op is
to the model comes from a ``describe(event, outputs) -> OpDesc | None`` function: the performance
model's own hook when it has one, else :func:`describe`, which knows the families of
:func:`~meshnn.capture.op_names.op_family` from the op's tensors alone (default program configs,
collectives with their default topology); an op it cannot describe gets no CSV row, and one the
model refuses is listed in the report's ``report_metadata`` (``perf_refused``) with the reason.

``profile_log_device.csv`` holds, per op and device, one firmware zone and one kernel zone of the
predicted kernel time on core (1, 1) (cycles at the arch's clock from the CSV's ``HOST START TS``);
the visualizer needs it beside the CSV, and reads nothing from it that the CSV does not say.

Layers: imports the perf layer, the mesh layer's coordinates and observers, the capture layer's
op names.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from meshnn.capture.op_names import op_family, python_name
from meshnn.errors import MeshnnError
from meshnn.mesh.coord import to_linear_index
from meshnn.mesh.observers import OpEvent
from meshnn.perf.desc import BufferType, Layout, MemoryLayout, OpDesc, TensorDesc
from meshnn.perf.ops_csv import START_OFFSET_NS, write_ops_perf_csv
from meshnn.perf.recorder import Record, Recorder

Describe = Callable[[OpEvent, Sequence[Any]], "OpDesc | None"]

LOG_HEADER = (
    "PCIe slot, core_x, core_y, RISC processor type, timer_id, time[cycles since reset], data, run host ID, "
    "trace id, trace id counter, zone name, type, source line, source file, meta data"
)


def tensor_desc(tensor: Any) -> TensorDesc:
    """One device's share of ``tensor`` for the model."""
    config = tensor.memory_config()
    return TensorDesc(
        tuple(tensor.padded_shape),
        tensor.dtype.name,
        Layout.TILE if tensor.layout.name == "TILE" else Layout.ROW_MAJOR,
        BufferType.DRAM if config.buffer_type.is_dram else BufferType.L1,
        MemoryLayout[config.memory_layout.name],
        tuple(tensor.shape),
    )


def describe(event: OpEvent, outputs: Sequence[Any]) -> OpDesc | None:
    """The op as the model sees it, from its family and its tensors (None: no family, no tensors)."""
    family = op_family(event.op)
    if family is None or not event.inputs or not outputs:
        return None
    inputs = tuple(tensor_desc(t) for t in event.inputs)
    return OpDesc(family, inputs, tuple(tensor_desc(t) for t in outputs), name=python_name(event.op))


def _mesh_shape(mesh: Any) -> tuple[int, int]:
    shape = tuple(mesh.shape)
    return (1, shape[0]) if len(shape) == 1 else (shape[0], shape[1])


class PerfRecords:
    """One recorder per mesh, fed with each op as it ends; each op's prediction by op id."""

    def __init__(self, describe_op: Describe | None = None) -> None:
        self.describe = describe_op or describe
        self.recorders: dict[int, tuple[Any, Recorder]] = {}  # mesh id -> (mesh, its recorder)
        self.refused: list[tuple[str, str]] = []  # (op, why the model could not describe it)
        self._lock = threading.Lock()

    def record(self, event: OpEvent, outputs: Sequence[Any]) -> Record | None:
        """Predict the op (None when it cannot be described; when the model refuses the
        description, the op and the reason go to :attr:`refused`, and the run goes on)."""
        try:
            desc = self.describe(event, outputs)
        except MeshnnError as error:
            self.refused.append((python_name(event.op), str(error)))
            return None
        if desc is None:
            return None
        mesh = event.mesh
        with self._lock:
            if mesh.mesh_id not in self.recorders:
                self.recorders[mesh.mesh_id] = (mesh, Recorder(mesh.system.name, _mesh_shape(mesh)))
            recorder = self.recorders[mesh.mesh_id][1]
        devices = sorted(to_linear_index(mesh.shape, c) for c in event.coords)
        try:
            return recorder.record(desc, devices)
        except MeshnnError as error:
            self.refused.append((python_name(event.op), str(error)))
            return None

    def write(self, folder: Path, name: str) -> list[Path]:
        """The CSV and device log of each mesh's recorder into ``folder`` (none without records)."""
        written = []
        with self._lock:
            recorders = [r for _, r in self.recorders.values() if len(r)]
        for i, recorder in enumerate(recorders):
            folder.mkdir(parents=True, exist_ok=True)
            suffix = f"_{i}" if i else ""
            written.append(write_ops_perf_csv(recorder, folder / f"ops_perf_results_{name}{suffix}.csv"))
            log = folder / ("profile_log_device.csv" if not i else f"profile_log_device{suffix}.csv")
            log.write_text(device_log(recorder))
            written.append(log)
        return written


def device_log(recorder: Recorder) -> str:
    """``profile_log_device.csv`` for the recorder's ops (see the module docstring)."""
    system = recorder.machine.system
    arch = system.arch
    mhz = round(arch.clock_hz / 1e6)
    lines = [f"ARCH: {arch.arch.value}, CHIP_FREQ[MHz]: {mhz}, Max Compute Cores: {system.compute_cores}", LOG_HEADER]
    for entry in recorder.records:
        for device, start in sorted(zip(entry.devices, entry.start_ns, strict=True)):
            begin = round((START_OFFSET_NS + start) * mhz / 1000)
            end = begin + max(round(entry.prediction.kernel_ns * mhz / 1000), 1)
            host_id = ((entry.index + 1) << 10) | device
            for timer, zone, kind, when in (
                (1000, "BRISC-FW", "ZONE_START", begin),
                (2000, "BRISC-KERNEL", "ZONE_START", begin),
                (2000, "BRISC-KERNEL", "ZONE_END", end),
                (1000, "BRISC-FW", "ZONE_END", end),
            ):
                line = timer // 1000
                lines.append(f"{device},1,1,BRISC,{timer},{when},0,{host_id},,,{zone},{kind},{line},brisc.cc,")
    return "\n".join(lines) + "\n"
