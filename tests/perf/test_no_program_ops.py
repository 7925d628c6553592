"""Ops that tt-metal runs without a device program of their own are recorded as what they run: a
creation on a device is a host write (tt-metal's ``creation.cpp`` builds the values on the host and
runs ``Tensor::to_device`` / ``copy_to_device``), ``empty`` an allocation (nothing), a host helper
nothing; ``zeros_like`` of a TILE device tensor of bfloat16 / bfloat8_b / float32 runs ``ttnn.fill``,
one UnaryDeviceOperation row.  The registry entry's ``runs`` says which (no list of names)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.ops import registry
from meshnn.ops.registry import DeviceWork
from meshnn.perf.desc import TensorDesc
from meshnn.perf.host_transfers import Direction, time_transfer
from meshnn.perf.systems import machine

TILE = ttnn.TILE_LAYOUT


@pytest.fixture
def n150(open_mesh):
    return open_mesh((1, 1), system="n150")


def captured(run):
    with ttnn.perf_capture() as capture:
        result = run()
    rows = [record for recorder in capture.recorders for record in recorder.records]
    return capture, rows, result


def test_a_no_program_entry_names_no_device_operation():
    runs = {e.name: e.runs for e in registry.entries()}
    for name in ("full", "zeros", "ones", "arange", "from_buffer", "full_like", "zeros_like", "ones_like"):
        assert runs[name] is DeviceWork.HOST_WRITE, name
    assert runs["empty"] is runs["empty_like"] is DeviceWork.ALLOCATION
    assert runs["experimental.queue_tensor_prefetcher_request"] is DeviceWork.HOST
    assert runs["moreh_full"] is DeviceWork.PROGRAM  # moreh's full is a device op (FullOperation)
    for entry in registry.entries():
        if entry.runs is not DeviceWork.PROGRAM:
            assert entry.device_operation == "" and entry.device_operation_name == "", entry.name


def test_zeros_on_a_device_is_a_host_write_not_a_device_row(n150):
    capture, rows, made = captured(lambda: ttnn.zeros((64, 96), dtype=ttnn.bfloat16, layout=TILE, device=n150))
    assert rows == [] and capture.skipped == []
    (write,) = capture.transfers
    assert (write.op, write.direction, write.devices) == ("zeros", Direction.WRITE, (0,))
    assert (write.bytes_per_device, write.page_bytes) == (6 * 2048, 2048)  # six bfloat16 tiles
    expected = time_transfer(machine("n150", (1, 1)), "zeros", Direction.WRITE, TensorDesc((64, 96)), (0,))
    assert write.ns == pytest.approx(expected.ns) and write.ns > 0
    assert "host transfers: 1 write (12.0 KiB)" in capture.summary()
    assert torch.equal(ttnn.to_torch(made), torch.zeros(64, 96, dtype=torch.bfloat16))


@pytest.mark.parametrize(
    ("op", "run"),
    [
        ("ones", lambda d: ttnn.ones((32, 32), device=d)),
        ("full", lambda d: ttnn.full((32, 32), 2.5, layout=TILE, device=d)),
        ("arange", lambda d: ttnn.arange(0, 64, 1, device=d)),
        ("from_buffer", lambda d: ttnn.from_buffer([1, 2, 3, 4], [4], ttnn.int32, d)),
    ],
)
def test_every_creation_on_a_device_is_one_host_write_of_its_op(n150, op, run):
    capture, rows, _ = captured(lambda: run(n150))
    assert rows == [] and [(t.op, t.direction) for t in capture.transfers] == [(op, Direction.WRITE)]


def test_empty_records_nothing(n150):
    capture, rows, made = captured(lambda: ttnn.empty((64, 64), layout=TILE, device=n150))
    assert (rows, capture.transfers, capture.skipped, len(capture)) == ([], [], [], 0)
    assert made.is_allocated()


def test_zeros_like_of_a_tile_bfloat16_device_tensor_is_one_fill_row(n150):
    x = ttnn.from_torch(torch.randn(64, 64), dtype=ttnn.bfloat16, layout=TILE, device=n150)
    capture, rows, made = captured(lambda: ttnn.zeros_like(x))
    (row,) = rows
    assert (row.desc.op_code, row.desc.unary_ops) == ("UnaryDeviceOperation", ("fill",))
    assert row.prediction.kernel_ns > 0 and capture.transfers == []
    assert (made.dtype, made.layout, tuple(made.shape)) == (ttnn.bfloat16, TILE, (64, 64))
    assert torch.equal(ttnn.to_torch(made), torch.zeros(64, 64, dtype=torch.bfloat16))


@pytest.mark.parametrize(("dtype", "value"), [(ttnn.bfloat8_b, 1.0), (ttnn.float32, 3.25)])
def test_the_other_filled_dtypes_run_fill_with_exact_values(n150, dtype, value):
    x = ttnn.from_torch(torch.randn(32, 64), dtype=dtype, layout=TILE, device=n150)
    capture, rows, made = captured(lambda: ttnn.full_like(x, value))
    assert [r.desc.op_code for r in rows] == ["UnaryDeviceOperation"] and capture.transfers == []
    assert torch.equal(ttnn.to_torch(made).float(), torch.full((32, 64), value))


def test_a_like_tt_metal_does_not_fill_on_the_device_is_a_host_write(n150):
    x = ttnn.from_torch(torch.randn(32, 64), dtype=ttnn.bfloat16, layout=TILE, device=n150)
    rm = ttnn.from_torch(torch.randn(32, 64), dtype=ttnn.bfloat16, device=n150)
    for run, dtype in (
        (lambda: ttnn.ones_like(rm), ttnn.bfloat16),  # ROW_MAJOR: not fill's
        (lambda: ttnn.zeros_like(x, layout=ttnn.ROW_MAJOR_LAYOUT), ttnn.bfloat16),
        (lambda: ttnn.zeros_like(x, dtype=ttnn.int32), ttnn.int32),  # int32: not a filled dtype
    ):
        capture, rows, made = captured(run)
        assert rows == [] and len(capture.transfers) == 1, made
        assert made.dtype == dtype


def test_a_fill_keeps_the_inputs_dtype_as_tt_metals_fill_does(n150):
    # full_like_impl: a TILE device tensor asked for float32 runs ttnn::fill, whose output is the input's dtype
    x = ttnn.from_torch(torch.randn(32, 32), dtype=ttnn.bfloat16, layout=TILE, device=n150)
    assert ttnn.zeros_like(x, dtype=ttnn.float32).dtype == ttnn.bfloat16


def test_filling_an_optional_tensor(n150):
    x = ttnn.from_torch(torch.randn(32, 32), dtype=ttnn.bfloat16, layout=TILE, device=n150)
    target = ttnn.from_torch(torch.randn(32, 32), dtype=ttnn.bfloat16, layout=TILE, device=n150)
    capture, rows, made = captured(lambda: ttnn.full((32, 32), 7.0, optional_tensor=target))
    assert made is target and rows == [] and [t.op for t in capture.transfers] == ["full"]  # copy_to_device
    capture, rows, made = captured(lambda: ttnn.full_like(x, 2.0, optional_tensor=target))
    assert made is target and [r.desc.op_code for r in rows] == ["UnaryDeviceOperation"]
    assert torch.equal(ttnn.to_torch(target), torch.full((32, 32), 2.0, dtype=torch.bfloat16))


def test_the_graph_of_a_fill_into_an_optional_tensor(n150):
    target = ttnn.from_torch(np.zeros((32, 32), np.float32), dtype=ttnn.bfloat16, layout=TILE, device=n150)
    ttnn.graph.begin_graph_capture(ttnn.graph.RunMode.NORMAL)
    try:
        ttnn.full((32, 32), 1.0, optional_tensor=target)
    finally:
        trace = ttnn.graph.end_graph_capture()
    assert ttnn.graph.extract_calltrace(trace) == ["ttnn::full", "tt::tt_metal::copy_to_device"]
    assert not [n for n in trace if n["node_type"] == "buffer_allocate"]  # written in place


def test_to_memory_config_of_the_tensors_own_config_is_the_input_itself(n150):
    # to_memory_config_op.cpp returns a tensor already in the config as it is: no program, no new buffer
    # (Python gets another handle on the same storage, as ttnn's binding copies the C++ Tensor)
    x = ttnn.from_torch(torch.randn(64, 64), dtype=ttnn.bfloat16, layout=TILE, device=n150)
    _, rows, same = captured(lambda: ttnn.to_memory_config(x, x.memory_config()))
    assert same.storage is x.storage and same.buffer_address() == x.buffer_address() and rows == []
    _, rows, moved = captured(lambda: ttnn.to_memory_config(x, ttnn.L1_MEMORY_CONFIG))
    assert moved is not x and len(rows) == 1 and moved.memory_config() == ttnn.L1_MEMORY_CONFIG
    sharded = ttnn.to_memory_config(x, ttnn.L1_HEIGHT_SHARDED_MEMORY_CONFIG)
    _, rows, resharded = captured(lambda: ttnn.reshard(sharded, sharded.memory_config()))
    assert resharded is not sharded and len(rows) == 1  # reshard runs its program whatever the configs
