"""tt-metal's profiler readbacks on predicted times: with the profiler's three variables set, each
ReadDeviceProfiler returns the programs run on its device since the last read (one per op and chip,
in tt-metal's structure, the perf model's kernel time); latest is the last read, all every read;
with the profiler off both are empty."""

from __future__ import annotations

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.mesh.observers import OBSERVERS
from meshnn.ops import device_profiler
from meshnn.perf.ops_csv import START_OFFSET_NS


@pytest.fixture
def profiler_on(monkeypatch):
    for name in device_profiler.PROFILER_ENV:
        monkeypatch.setenv(name, "1")
    yield
    for name in device_profiler.PROFILER_ENV:
        monkeypatch.delenv(name)
    device_profiler.PROFILER.start()  # the variables gone: the profiler stops observing
    assert device_profiler.PROFILER.capture not in OBSERVERS


def put(mesh, shape, *, mapper=None):
    values = np.ones(shape, np.float32)
    return ttnn.from_torch(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=mapper)


def test_reads_return_the_programs_since_the_last_read(open_mesh, profiler_on):
    mesh = open_mesh((1, 1))
    before = ttnn.get_all_programs_perf_data()
    a = put(mesh, (1, 1, 32, 32))
    with ttnn.perf_capture() as capture:
        ttnn.add(a, a)
    ttnn.ReadDeviceProfiler(mesh)
    first = ttnn.get_latest_programs_perf_data()
    chip = mesh.get_device_ids()[0]
    assert len(first[chip]) == 1  # ttnn.from_torch and the tensors it made are no programs
    program = first[chip][0]
    predicted = capture.recorders[0].records[0].prediction
    kernel = program.program_analyses_results[device_profiler.KERNEL_DURATION]
    fw = program.program_analyses_results[device_profiler.FW_DURATION]
    assert kernel == fw and kernel.duration == round(predicted.kernel_ns)  # a 1 GHz Wormhole: cycles are ns
    assert kernel.start_timestamp >= START_OFFSET_NS
    assert kernel.end_timestamp - kernel.start_timestamp == kernel.duration
    assert program.core_count == predicted.cores and program.num_available_cores == 64
    uid = program.program_execution_uid
    assert uid.trace_id == uid.trace_id_counter == device_profiler.INVALID_UID
    b = put(mesh, (1, 4, 64, 64))
    ttnn.mul(b, b)
    ttnn.ReadDeviceProfiler(mesh)
    latest, every = ttnn.get_latest_programs_perf_data(), ttnn.get_all_programs_perf_data()
    assert len(latest[chip]) == 1 and latest[chip][0] != program
    assert len(every[chip]) == len(before.get(chip, [])) + 2
    assert every[chip][-2:] == [program, latest[chip][0]]
    assert program < latest[chip][0]  # ordered by their FW analyses: the later start
    assert latest[chip][0].program_execution_uid.runtime_id > uid.runtime_id
    ttnn.ReadDeviceProfiler(mesh)  # nothing ran since: the latest read is empty
    assert ttnn.get_latest_programs_perf_data()[chip] == []


def test_a_mesh_op_is_one_program_per_chip(open_mesh, profiler_on):
    mesh = open_mesh((1, 2))
    x = put(mesh, (1, 1, 32, 64), mapper=ttnn.ShardTensorToMesh(mesh, dim=3))
    ttnn.ReadDeviceProfiler(mesh)
    ttnn.exp(x)
    ttnn.ReadDeviceProfiler(mesh)
    latest = ttnn.get_latest_programs_perf_data()
    assert all(len(latest[chip]) == 1 for chip in mesh.get_device_ids())


def test_the_profiler_off_reads_nothing(open_mesh, monkeypatch):
    for name in device_profiler.PROFILER_ENV:
        monkeypatch.delenv(name, raising=False)
    mesh = open_mesh((1, 1))
    ttnn.ReadDeviceProfiler(mesh)
    assert ttnn.get_latest_programs_perf_data() == {} and ttnn.get_all_programs_perf_data() == {}
