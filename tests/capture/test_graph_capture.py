"""ttnn.graph: the node list of a captured run and the analysis helpers, against ttnn's semantics.

The first three cases are tt-metal's own graph-capture test of ``ttnn::add`` (its scenarios and
expected figures: calltrace, peak L1, CB and L1 peaks per core, output info), run on a simulated
N150; the rest derive their expected figures by hand from the rules of
``meshnn/capture/trace.py`` and the CB estimate of ``meshnn/capture/circular_buffers.py``.
"""

from __future__ import annotations

import json

import pytest
import torch

import meshnn as ttnn
from meshnn.capture.circular_buffers import estimate
from meshnn.capture.graph_builder import GraphBuilder

graph = ttnn.graph
L1, DRAM = ttnn.L1_MEMORY_CONFIG, ttnn.DRAM_MEMORY_CONFIG
TILE_BF16 = 2048


@pytest.fixture
def n150(open_mesh):
    return open_mesh((1, 1))


def zeros(mesh, shape, memory_config=L1):
    return ttnn.from_torch(
        torch.zeros(*shape), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, memory_config=memory_config
    )


def capture(fn, run_mode=graph.RunMode.NORMAL):
    graph.begin_graph_capture(run_mode)
    try:
        result = fn()
    finally:
        trace = graph.end_graph_capture()
    return trace, result


HEIGHT_SHARDED = ttnn.MemoryConfig(
    ttnn.TensorMemoryLayout.HEIGHT_SHARDED,
    ttnn.BufferType.L1,
    ttnn.ShardSpec(
        ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(3, 3))]),
        (6 * 32, 32 * 32),
        ttnn.ShardOrientation.COL_MAJOR,
    ),
)

# tt-metal's AddOpGraphTest: (a, b, memory config, peak L1, CB peak per core, L1 peak per core, output size)
TT_METAL_ADD_CASES = [
    ((1, 3, 32, 32), (1, 3, 32, 32), L1, 30720, 3 * 4096, 2048, 6144),
    ((4, 3, 32, 32), (1, 3, 32, 32), L1, 67584, 3 * 4096, 2048, 24576),
    ((3, 1, 1024, 1024), (3, 1, 1024, 1024), HEIGHT_SHARDED, 20054016, 0, 2 * 3 * 32**4 // 16, 2 * 3 * 32**4),
]


@pytest.mark.parametrize("run_mode", [graph.RunMode.NORMAL, graph.RunMode.NO_DISPATCH])
@pytest.mark.parametrize("case", TT_METAL_ADD_CASES, ids=["l1", "l1_broadcast", "height_sharded"])
def test_tt_metal_add_graph_figures(n150, case, run_mode):
    a_shape, b_shape, config, peak, cb_per_core, l1_per_core, out_size = case
    a, b = zeros(n150, a_shape, config), zeros(n150, b_shape, config)
    trace, out = capture(lambda: ttnn.add(a, b, memory_config=config), run_mode)
    assert graph.extract_calltrace(trace) == [
        "ttnn::add",
        "BinaryNgDeviceOperation",
        "tt::tt_metal::create_device_tensor",
    ]
    assert graph.extract_peak_L1_memory_usage(trace) == peak
    assert len(graph.extract_output_tensors(trace)) == 1
    assert graph.count_intermediate_and_output_tensors(trace) == (0, 1)
    usage = graph.extract_resource_usage_per_core(trace, 8 * 8)
    assert (usage.peak_cb, usage.peak_l1) == (cb_per_core, l1_per_core)
    assert graph.extract_output_info(trace) == [graph.TensorInfo(ttnn.Shape(a_shape), out_size, ttnn.BufferType.L1)]
    assert tuple(out.shape) == a_shape


def test_a_known_sequence_has_its_hand_derived_peak(n150):
    """a, b in L1 (3 tiles each); c = a + b; d = c + a; free c.  Peak: a + b + c + d + one op's 3 CBs."""
    a, b = zeros(n150, (1, 3, 32, 32)), zeros(n150, (1, 3, 32, 32))
    size, cbs = 3 * TILE_BF16, 3 * 2 * TILE_BF16

    def run():
        c = ttnn.add(a, b, memory_config=L1)
        d = ttnn.add(c, a, memory_config=L1)
        ttnn.deallocate(c)
        return d

    trace, _ = capture(run)
    assert graph.extract_peak_L1_memory_usage(trace) == 4 * size + cbs
    usage = graph.extract_resource_usage_per_core(trace, 64)
    assert usage == graph.PeakMemoryUsagePerCore(cbs, 2 * TILE_BF16, 2 * TILE_BF16 + cbs)
    assert (
        graph.extract_calltrace(trace)
        == ["ttnn::add", "BinaryNgDeviceOperation", "tt::tt_metal::create_device_tensor"] * 2
    )
    assert trace[-2]["node_type"] == "buffer_deallocate"  # the free of c, outside any op
    # without the free, the peak is the same: it was reached inside the second add
    assert graph.extract_peak_L1_memory_usage([*trace[:-2], dict(trace[-1], counter=len(trace) - 2)]) == 4 * size + cbs


def test_dram_outputs_count_no_l1(n150):
    a = zeros(n150, (64, 64), DRAM)
    trace, _ = capture(lambda: ttnn.exp(a))
    assert graph.extract_peak_L1_memory_usage(trace) == 3 * 0 + 2 * 2 * TILE_BF16  # only the op's 2 CBs
    info = graph.extract_output_info(trace)
    assert info == [graph.TensorInfo(ttnn.Shape([64, 64]), 4 * TILE_BF16, ttnn.BufferType.DRAM)]
    assert repr(info[0]) == "TensorInfo(shape=Shape([64, 64]), size=8192, type=DRAM)"


def node_of(trace, node_type, **params):
    found = [
        n for n in trace if n["node_type"] == node_type and all(n["params"].get(k) == v for k, v in params.items())
    ]
    assert len(found) == 1, (node_type, params, found)
    return found[0]


def test_node_kinds_fields_and_connections(n150):
    a, b = zeros(n150, (32, 64)), zeros(n150, (32, 64), DRAM)

    def run():
        c = ttnn.multiply(a, b, memory_config=L1)
        ttnn.deallocate(a)
        return c

    trace, c = capture(run)
    assert [n["counter"] for n in trace] == list(range(len(trace)))
    assert {n["node_type"] for n in trace} == {
        "capture_start", "function_start", "function_end", "tensor", "buffer", "buffer_allocate",
        "buffer_deallocate", "circular_buffer_deallocate_all", "circular_buffer_allocate", "capture_end",
    }  # fmt: skip
    assert all(isinstance(v, str) for n in trace for v in n["params"].values())
    top = node_of(trace, "function_start", name="ttnn::multiply")
    device = node_of(trace, "function_start", name="BinaryNgDeviceOperation")
    create = node_of(trace, "function_start", name="tt::tt_metal::create_device_tensor")
    assert trace[0]["connections"][0] == top["counter"]
    # the two tensors, then what the op was configured with (memory_config, dtype), in ttnn's text
    assert top["params"]["inputs"] == "4" and len(top["arguments"]) == 4 and "BufferType::L1" in top["arguments"][0]
    assert top["arguments"][2] == repr(L1) and top["arguments"][3] == "DataType::BFLOAT16"
    assert device["counter"] in top["connections"] and create["counter"] in device["connections"]
    assert create["arguments"] == [
        "Shape([32, 64])", "DataType::BFLOAT16", "Layout::TILE", "0", repr(L1)
    ]  # fmt: skip
    out = node_of(trace, "tensor", shape="Shape([32, 64])", tensor_id=str(graph_tensor_id(c)))
    allocate = node_of(trace, "buffer_allocate", address=str(c.buffer_address()))
    assert allocate["params"] == {
        "address": str(c.buffer_address()), "device_id": "0", "layout": "INTERLEAVED", "num_cores": "0",
        "page_size": str(TILE_BF16), "size": str(2 * TILE_BF16), "type": "L1",
    }  # fmt: skip
    out_buffer = trace[allocate["connections"][0]]
    assert out_buffer["node_type"] == "buffer" and out["counter"] in out_buffer["connections"]
    ends = [n for n in trace if n["node_type"] == "function_end"]
    assert [e["params"]["name"] for e in ends] == [
        "tt::tt_metal::create_device_tensor", "BinaryNgDeviceOperation", "ttnn::multiply"
    ]  # fmt: skip
    assert all(e["connections"][0] == out["counter"] for e in ends)
    free = node_of(trace, "buffer_deallocate")
    assert free["counter"] in trace[0]["connections"]  # a free outside any op hangs off capture_start
    assert trace[free["connections"][0]]["params"]["type"] == "L1"
    assert ends[-1]["connections"][-1] == trace[-1]["counter"] and trace[-1]["node_type"] == "capture_end"
    inputs = [n for n in trace if n["node_type"] == "tensor" and top["counter"] in n["connections"]]
    assert len(inputs) == 2  # the inputs enter ttnn::multiply
    dealloc_all = node_of(trace, "circular_buffer_deallocate_all")
    assert dealloc_all["connections"] == [device["counter"]] and dealloc_all["counter"] in device["connections"]
    cbs = [n for n in trace if n["node_type"] == "circular_buffer_allocate"]
    assert [n["params"]["size"] for n in cbs] == [str(2 * TILE_BF16)] * 3
    assert cbs[0]["params"]["core_range_set"] == "{[(x=0,y=0) - (x=7,y=7)]}"
    assert json.loads(json.dumps(trace)) == trace


def graph_tensor_id(tensor):
    from meshnn.capture.tensors import tensor_id

    return tensor_id(tensor)


def test_ops_in_sequence_chain_through_their_ends(n150):
    a = zeros(n150, (32, 32))
    trace, _ = capture(lambda: ttnn.relu(ttnn.exp(a)))
    starts = [n for n in trace if n["node_type"] == "function_start" and n["params"]["name"].startswith("ttnn::")]
    assert [s["params"]["name"] for s in starts] == ["ttnn::exp", "ttnn::relu"]
    first_end = node_of(trace, "function_end", name="ttnn::exp")
    assert starts[1]["counter"] in first_end["connections"]  # the last finished function leads to the next
    assert starts[1]["counter"] in trace[0]["connections"]  # and capture_start to every top-level op
    assert graph.count_intermediate_and_output_tensors(trace) == (0, 1)
    assert graph.extract_calltrace(trace)[3:] == [
        "ttnn::relu",
        "UnaryDeviceOperation",
        "tt::tt_metal::create_device_tensor",
    ]


def test_captures_nest_and_an_empty_one_is_two_nodes(n150):
    a = zeros(n150, (32, 32))
    graph.begin_graph_capture()
    ttnn.exp(a)
    assert graph.is_graph_capture_active()
    graph.begin_graph_capture()
    ttnn.relu(a)
    inner = graph.end_graph_capture()
    outer = graph.end_graph_capture()
    assert not graph.is_graph_capture_active()
    assert [n for n in graph.extract_calltrace(outer) if n.startswith("ttnn::")] == ["ttnn::exp", "ttnn::relu"]
    assert [n for n in graph.extract_calltrace(inner) if n.startswith("ttnn::")] == ["ttnn::relu"]
    graph.begin_graph_capture()
    empty = graph.end_graph_capture()
    assert [(n["node_type"], n["connections"]) for n in empty] == [("capture_start", [1]), ("capture_end", [])]
    with pytest.raises(ttnn.MeshnnValueError, match="no graph capture is active"):
        graph.end_graph_capture()


def test_an_op_that_runs_out_of_memory_stays_open_and_the_next_op_is_captured(n150):
    view = n150.get_memory_view(ttnn.BufferType.L1)
    pages = view.largest_contiguous_bytes_free_per_bank // 4096 * view.num_banks
    filler = ttnn.allocate_tensor_on_device(ttnn.Shape([pages * 32, 32]), ttnn.float32, ttnn.TILE_LAYOUT, n150, L1)
    assert n150.get_memory_view(ttnn.BufferType.L1).largest_contiguous_bytes_free_per_bank < 4096
    wide = ttnn.from_torch(torch.zeros(32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=n150)
    small = zeros(n150, (32, 32), DRAM)

    def run():
        with pytest.raises(ttnn.OutOfMemoryError):
            ttnn.exp(wide, memory_config=L1)  # a float32 tile: 4096 B, more than any L1 bank has left
        return ttnn.exp(small)

    trace, _ = capture(run)
    del filler
    names = graph.extract_calltrace(trace)
    assert names[:3] == ["ttnn::exp", "UnaryDeviceOperation", "ttnn::exp"]  # the failed op made no output
    ends = [n["params"]["name"] for n in trace if n["node_type"] == "function_end"]
    assert ends == ["tt::tt_metal::create_device_tensor", "UnaryDeviceOperation", "ttnn::exp"]  # only the second op's
    assert graph.extract_output_info(trace)[0].shape == ttnn.Shape([32, 32])


def test_no_dispatch_places_circular_buffers_at_address_zero(n150):
    a = zeros(n150, (32, 32))
    normal, _ = capture(lambda: ttnn.exp(a))
    dry, _ = capture(lambda: ttnn.exp(a), graph.RunMode.NO_DISPATCH)
    base = n150.allocator.device_info()["address_at_first_l1_cb_buffer"]
    cb = "circular_buffer_allocate"
    assert [n["params"]["address"] for n in normal if n["node_type"] == cb] == [str(base), str(base + 2 * TILE_BF16)]
    assert [n["params"]["address"] for n in dry if n["node_type"] == cb] == ["0", "0"]


def test_matmul_with_a_program_config_gets_block_circular_buffers(n150):
    a, b = zeros(n150, (64, 128), DRAM), zeros(n150, (128, 64), DRAM)
    out = ttnn.matmul(a, b)

    class Config:  # the fields of a MatmulMultiCoreReuseMultiCastProgramConfig the estimate reads
        compute_with_storage_grid_size = ttnn.CoreCoord(2, 2)
        in0_block_w, per_core_M, per_core_N = 4, 1, 1

    cbs = estimate("matmul", n150, [a, b], [out], {"program_config": Config()})
    assert [cb.size for cb in cbs] == [2 * 1 * 4 * TILE_BF16, 2 * 1 * 4 * TILE_BF16, 1 * 1 * TILE_BF16]
    assert {cb.core_range_set for cb in cbs} == {"{[(x=0,y=0) - (x=1,y=1)]}"}
    assert [cb.size for cb in estimate("matmul", n150, [a, b], [out], {})] == [2 * TILE_BF16] * 3  # streaming


def test_a_sharded_operand_gets_a_globally_allocated_cb_in_its_own_buffer(n150):
    a = zeros(n150, (3, 1, 1024, 1024), HEIGHT_SHARDED)
    cbs = estimate("exp", n150, [a], [], {})
    assert len(cbs) == 1 and cbs[0].globally_allocated
    assert (cbs[0].size, cbs[0].address) == (6 * 32 * TILE_BF16, a.buffer_address())  # one (192, 1024) shard
    assert cbs[0].core_range_set == "{[(x=0,y=0) - (x=3,y=3)]}"


def test_helpers_read_numeric_params_too_and_keep_ttnn_unsigned_arithmetic():
    build = GraphBuilder()
    trace = build.finish()
    assert graph.extract_peak_L1_memory_usage(trace) == 0
    freed_before = [
        {"counter": 0, "node_type": "capture_start", "params": {}, "arguments": [], "connections": [1, 2]},
        {
            "counter": 1,
            "node_type": "buffer",
            "params": {"size": 4096, "type": "L1"},
            "arguments": [],
            "connections": [],
        },
        {"counter": 2, "node_type": "buffer_deallocate", "params": {"size": 4096, "type": "L1"}, "connections": [1]},
        {"counter": 3, "node_type": "capture_end", "params": {}, "arguments": [], "connections": []},
    ]
    # a buffer allocated before the capture and freed in it: ttnn's uint32 total wraps around
    assert graph.extract_peak_L1_memory_usage(freed_before) == 2**32 - 4096


def test_helpers_refuse_what_is_not_a_trace():
    with pytest.raises(ttnn.MeshnnTypeError, match="trace"):
        graph.extract_peak_L1_memory_usage("not a trace")
    with pytest.raises(ttnn.MeshnnValueError, match=r"trace\[0\]"):
        graph.extract_calltrace([{"node_type": "tensor"}])
    with pytest.raises(ttnn.MeshnnValueError, match="interleaved_storage_cores"):
        graph.extract_resource_usage_per_core([], 0)
    with pytest.raises(ttnn.MeshnnValueError, match="no function_end"):
        graph.extract_output_info(GraphBuilder().finish())
    with pytest.raises(ttnn.MeshnnTypeError, match="run_mode"):
        graph.begin_graph_capture("NO_DISPATCH")
    assert not graph.is_graph_capture_active()


def test_ttnn_graph_and_config_through_the_ttnn_alias():
    import importlib

    from meshnn.compat import ttnn_alias

    installed = ttnn_alias.is_installed()
    ttnn_alias.install()
    try:
        alias = importlib.import_module("ttnn.graph")
        assert alias.begin_graph_capture is graph.begin_graph_capture and alias.RunMode is graph.RunMode
        assert importlib.import_module("ttnn").CONFIG is ttnn.CONFIG
        assert alias.visualize is graph.visualize  # ttnn's graphviz picture (DOT text; rendered by dot)
        with pytest.raises(ttnn.NotImplementedByMeshnn, match=r"graph\.track_function_start"):
            alias.track_function_start  # noqa: B018 - ttnn's Python-operation hooks: not provided
    finally:
        if not installed:
            ttnn_alias.uninstall()


def test_the_resident_input_scan_stops_at_a_dram_buffer_as_in_ttnn(n150):
    """At a top-level op the L1 inputs' buffer nodes count; ttnn's scan ends at the first node that
    is neither a tensor nor an L1 buffer, so an L1 input after a DRAM one is not counted."""
    x, w = zeros(n150, (32, 64)), zeros(n150, (32, 64), DRAM)
    l1_first, _ = capture(lambda: ttnn.add(x, w, memory_config=L1))
    dram_first, _ = capture(lambda: ttnn.add(w, x, memory_config=L1))
    two_tiles, cbs = 2 * TILE_BF16, 3 * 2 * TILE_BF16
    assert graph.extract_peak_L1_memory_usage(l1_first) == two_tiles + two_tiles + cbs
    assert graph.extract_peak_L1_memory_usage(dram_first) == two_tiles + cbs
