"""ttnn.graph: tensors created on a device appear in a capture as ttnn's C++ records them.

tt-metal's ``full_impl`` writes its host tensor with ``Tensor::to_device``, ``empty`` calls
``create_device_tensor``, ``from_torch`` is ``ttnn::convert_python_tensor_to_tt_tensor`` around its
``Tensor::to_device`` (tt-metal's own test_graph_capture.py asserts that name as the first function
after ``capture_start``), and each of those functions is a ``function_start`` / ``function_end`` pair
holding the allocation of the new tensor's buffer.
"""

from __future__ import annotations

import json

import pytest
import torch

import meshnn as ttnn

graph = ttnn.graph
TO_DEVICE, CREATE = "Tensor::to_device", "tt::tt_metal::create_device_tensor"
CONVERT = "ttnn::convert_python_tensor_to_tt_tensor"


@pytest.fixture
def n150(open_mesh):
    return open_mesh((1, 1))


def capture(fn):
    graph.begin_graph_capture(graph.RunMode.NORMAL)
    try:
        result = fn()
    finally:
        trace = graph.end_graph_capture()
    return trace, result


def children(trace, node):
    return [trace[c] for c in node["connections"]]


def only_function(trace, name):
    found = [n for n in trace if n["node_type"] == "function_start" and n["params"]["name"] == name]
    assert len(found) == 1, (name, found)
    return found[0]


TILE = dict(layout=ttnn.TILE_LAYOUT, memory_config=ttnn.L1_MEMORY_CONFIG)
CREATIONS = [
    ("ttnn::zeros", TO_DEVICE, lambda d: ttnn.zeros((32, 64), device=d, **TILE)),
    ("ttnn::ones", TO_DEVICE, lambda d: ttnn.ones((32, 64), device=d, **TILE)),
    ("ttnn::full", TO_DEVICE, lambda d: ttnn.full((32, 64), 3.0, device=d, **TILE)),
    ("ttnn::arange", TO_DEVICE, lambda d: ttnn.arange(0, 64, 1, device=d, **TILE)),
    ("ttnn::empty", CREATE, lambda d: ttnn.empty((32, 64), device=d, **TILE)),
]


@pytest.mark.parametrize(("name", "inner", "make"), CREATIONS, ids=[c[0] for c in CREATIONS])
def test_a_creation_on_a_device_is_its_function_around_the_allocation(n150, name, inner, make):
    trace, made = capture(lambda: make(n150))
    assert graph.extract_calltrace(trace) == [name, inner]
    outer, nested = only_function(trace, name), only_function(trace, inner)
    assert trace[1] is outer and outer["counter"] in trace[0]["connections"]
    assert nested in children(trace, outer)
    allocates = [n for n in children(trace, nested) if n["node_type"] == "buffer_allocate"]
    assert len(allocates) == 1  # the one buffer of the new tensor, inside the inner function
    # 32x64 bfloat16 (arange's 64 values padded to one tile row): two 2 KiB tiles in L1
    assert (allocates[0]["params"]["type"], allocates[0]["params"]["size"]) == ("L1", "4096")
    ends = [n for n in trace if n["node_type"] == "function_end"]
    assert [e["params"]["name"] for e in ends] == [inner, name]
    out = [n for n in children(trace, ends[-1]) if n["node_type"] == "tensor"]
    assert len(out) == 1 and out[0]["params"]["shape"] == f"Shape({list(made.shape)})"
    assert graph.extract_output_info(trace)[0].size == 4096
    assert trace[-1]["node_type"] == "capture_end"


def test_from_torch_to_device_allocate_and_likes(n150):
    host = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16)

    def run():
        a = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=n150)
        ttnn.from_torch(torch.ones(2, 2))  # host only: the conversion, no device function inside
        ttnn.to_device(host, n150)
        ttnn.allocate_tensor_on_device(ttnn.Shape([32, 32]), ttnn.bfloat16, ttnn.TILE_LAYOUT, n150)
        ttnn.zeros_like(a)  # a TILE bfloat16 device tensor: tt-metal's full_like_impl runs ttnn::fill
        ttnn.zeros_like(a, layout=ttnn.ROW_MAJOR_LAYOUT)  # not TILE: the host path, Tensor::to_device
        ttnn.empty_like(a)

    trace, _ = capture(run)
    assert graph.extract_calltrace(trace) == [
        CONVERT,
        TO_DEVICE,
        CONVERT,
        TO_DEVICE,
        CREATE,
        "ttnn::zeros_like",
        "ttnn::fill",
        "UnaryDeviceOperation",
        CREATE,
        "ttnn::zeros_like",
        TO_DEVICE,
        "ttnn::empty_like",
        CREATE,
    ]
    assert trace[1]["params"]["name"] == CONVERT  # tt-metal's test_graph_capture: the first function
    host_convert = [n for n in trace if n["node_type"] == "function_start" and n["params"]["name"] == CONVERT][1]
    assert [n["node_type"] for n in children(trace, host_convert)] == ["function_end"]
    creates = [n for n in trace if n["node_type"] == "function_start" and n["params"]["name"] == CREATE]
    assert all(c["arguments"][:3] == ["Shape([32, 32])", "DataType::BFLOAT16", "Layout::TILE"] for c in creates)
    allocations = [n for n in trace if n["node_type"] == "buffer_allocate"]
    assert len(allocations) == 6  # from_torch, to_device, allocate, the two zeros_like, empty_like: one each
    likes = [n for n in trace if n["node_type"] == "function_start" and n["params"]["name"] == "ttnn::zeros_like"]
    a_tensor = next(n for n in trace if n["node_type"] == "tensor" and likes[0]["counter"] in n["connections"])
    assert likes[1]["counter"] in a_tensor["connections"]  # both consume a (ttnn's function takes the tensor)


def test_a_creation_inside_an_op_is_the_ops_and_a_refused_one_leaves_nothing(n150):
    a = ttnn.zeros((32, 32), device=n150, layout=ttnn.TILE_LAYOUT)
    trace, _ = capture(lambda: ttnn.exp(a))
    assert graph.extract_calltrace(trace) == ["ttnn::exp", "UnaryDeviceOperation", CREATE]

    def refused():
        with pytest.raises(ttnn.MeshnnValueError, match=r"ttnn\.zeros: shape must hold non-negative"):
            ttnn.zeros((-1, 32), device=n150)
        view = n150.get_memory_view(ttnn.BufferType.L1)
        too_big = (view.num_banks * view.largest_contiguous_bytes_free_per_bank // 2 + 1024, 1)
        with pytest.raises(ttnn.OutOfMemoryError):
            ttnn.ones(too_big, device=n150, memory_config=ttnn.L1_MEMORY_CONFIG)

    trace, _ = capture(refused)
    assert [n["node_type"] for n in trace] == ["capture_start", "capture_end"]


def test_a_report_file_lists_a_creation_as_a_python_operation(n150, tmp_path):
    # newest ttnn's report files: each call from Python a top-level function by its Python name, its
    # C++ functions inside (tt-metal's test_graph_report.py counts ttnn.ones among the operations)
    graph.begin_graph_capture(graph.RunMode.NORMAL)
    ttnn.ones([64, 64], layout=ttnn.TILE_LAYOUT, device=n150)
    ttnn.from_torch(torch.ones(32, 32), layout=ttnn.TILE_LAYOUT, device=n150)
    graph.end_graph_capture_to_file(tmp_path / "report.json")
    nodes = json.loads((tmp_path / "report.json").read_text())["graph"]
    tops = [nodes[c] for c in nodes[0]["connections"] if nodes[c]["node_type"] == "function_start"]
    assert [n["params"]["name"] for n in tops] == ["ttnn.ones", "ttnn.from_torch"]
    ones, from_torch = tops
    assert [n["params"]["name"] for n in children(nodes, ones) if n["node_type"] == "function_start"] == ["ttnn::ones"]
    inner = only_function(nodes, CONVERT)
    assert inner in children(nodes, from_torch)
    assert [n["node_type"] for n in nodes if n["node_type"] == "buffer_allocate"] == ["buffer_allocate"] * 2
    allocations = [n["counter"] for n in nodes if n["node_type"] == "buffer_allocate"]
    to_devices = [n for n in nodes if n["node_type"] == "function_start" and n["params"]["name"] == TO_DEVICE]
    assert [a for t in to_devices for a in t["connections"] if a in allocations] == allocations  # each inside
