"""The op codes meshnn records (a profile's ``OP CODE``) are the device-operation names tt-metal
runs, and ``--calibrate`` knows every name of a modelled program, tt-metal 2025's and 2026's."""

from __future__ import annotations

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.ops import registry
from meshnn.perf import OpFamily
from meshnn.perf.op_code_names import OTHER_VERSIONS
from meshnn.perf.op_codes import canonical, family_of

SHARED = {
    "experimental.typecast": OpFamily.COPY,  # tt-metal runs it as a CopyDeviceOperation with an output dtype
    "fill_cache": OpFamily.KV_UPDATE,  # update_cache's program (UpdateKVCacheOperation), op type fill
    "kv_cache.fill_cache_for_user_": OpFamily.KV_UPDATE,
}
"""Modelled ops whose program tt-metal shares with an op of another family: a measured row of it
is timed as that op's family."""


def test_every_modelled_ops_op_code_has_its_family():
    """Walks the registry: a profile row with the op code meshnn records for a modelled op is
    timed by ``--calibrate`` as the family meshnn times the op as."""
    wrong = {}
    for entry in registry.entries():
        if not entry.modelled or entry.runs is not registry.DeviceWork.PROGRAM:
            continue
        expected = SHARED.get(entry.name, entry.family)
        got = family_of(entry.device_operation_name)
        if got is not expected:
            wrong[entry.name] = (entry.device_operation_name, got)
    assert wrong == {}


@pytest.mark.parametrize(
    ("op", "code"),
    [
        ("experimental.minimal_matmul", "MinimalMatmulDeviceOperation"),
        ("experimental.minimal_matmul_split", "MinimalMatmulSplitDeviceOperation"),
        ("experimental.strided_reduce_scatter_async", "StridedReduceScatterAsyncDeviceOperation"),
        ("experimental.llama_rs_matmul", "Matmul_RS"),
        ("update_cache", "UpdateKVCacheOperation"),
        ("fill_cache", "UpdateKVCacheOperation"),
        ("max_pool2d", "Pool2D"),
        ("adaptive_avg_pool2d", "Pool2D"),
        ("fold", "Fold"),
        ("tilize_with_zero_padding", "TilizeWithValPadding"),
        ("chunk", "SliceDeviceOperation"),
        ("squeeze", "ReshapeViewDeviceOperation"),
        ("unsqueeze", "ReshapeViewDeviceOperation"),
        ("unsqueeze_to_4D", "ReshapeViewDeviceOperation"),
        ("moreh.linear_backward", "MorehMatmulOperation"),
        ("prod", "ProdNcDeviceOperation"),
        ("experimental.send_direct_async", "SendDirectAsyncDeviceOperation"),
        ("experimental.recv_direct_async", "RecvDirectAsyncDeviceOperation"),
        ("ema", "EmaDeviceOperation"),
        ("moreh.cumsum", "AccumulationDeviceOperation"),  # moreh_cumsum.cpp runs ttnn::cumsum
        ("moreh.cumsum_backward", "AccumulationDeviceOperation"),
    ],
)
def test_recorded_op_code_is_tt_metals(op, code):
    """Each name below was one no tt-metal version used; it is now the struct tt-metal runs."""
    assert registry.lookup(op).device_operation_name == code


@pytest.mark.parametrize(
    ("code", "family"),
    [
        ("Matmul", OpFamily.MATMUL),  # tt-metal 2025's op structs
        ("Transpose", OpFamily.TRANSPOSE),
        ("Reduce", OpFamily.REDUCTION),
        ("Pad", OpFamily.PAD),
        ("Slice", OpFamily.SLICE),
        ("Tilize", OpFamily.TILIZE),
        ("Untilize", OpFamily.UNTILIZE),
        ("Typecast", OpFamily.TYPECAST),
        ("ArgMax", OpFamily.ARGMAX),
        ("UpdateCache", OpFamily.KV_UPDATE),
        ("ScaledDotProductAttention", OpFamily.SDPA),
        ("TilizeWithValPaddingDeviceOperation", OpFamily.TILIZE),  # tt-metal 2026's names
        ("UntilizeWithUnpaddingDeviceOperation", OpFamily.UNTILIZE),
        ("SdpaDecodeDeviceOperation", OpFamily.SDPA_DECODE),
        ("RMSAllGatherDeviceOperation", OpFamily.NORM),
        ("FusedRMSNormPreAllGatherDeviceOperation", OpFamily.NORM),
        ("GroupNormDeviceOperation", OpFamily.NORM),
        ("SendAsyncDeviceOperation", OpFamily.POINT_TO_POINT),
        ("AllBroadcastDeviceOperation", OpFamily.ALL_BROADCAST),
        ("Matmul_RS", OpFamily.REDUCE_SCATTER),
        ("ProdAllDeviceOperation", OpFamily.REDUCTION),
    ],
)
def test_other_versions_names_have_the_family(code, family):
    assert family_of(code) is family


def test_other_versions_names_resolve_to_recorded_names():
    """Every alias lands on a name the model knows (none dangles, none chains)."""
    for other, ours in OTHER_VERSIONS.items():
        assert family_of(ours) is not None, (other, ours)
        assert canonical(ours) == ours, (other, ours)


def _codes(run):
    with ttnn.perf_capture() as capture:
        run()
    (recorder,) = capture.recorders
    return [r.desc.op_code for r in recorder.records]


def _put(mesh, shape, **kw):
    values = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) / 1000
    return ttnn.from_torch(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, **kw)


@pytest.mark.parametrize(
    ("dims", "code"),
    [
        ((0, 1, 3, 2), "TransposeDeviceOperation"),
        ((0, 2, 1, 3), "TransposeDeviceOperation"),
        ((1, 0, 2, 3), "TransposeDeviceOperation"),
        ((0, 2, 3, 1), "PermuteDeviceOperation"),  # interleaved: tt-metal's permute program
        ((3, 2, 1, 0), "PermuteDeviceOperation"),
    ],
)
def test_permute_records_the_program_tt_metal_runs(open_mesh, dims, code):
    mesh = open_mesh((1, 1), system="n150")
    x = _put(mesh, (2, 3, 64, 96))
    assert _codes(lambda: ttnn.permute(x, dims)) == [code]


def test_permute_of_a_lower_rank_tensor_is_its_4d_order(open_mesh):
    mesh = open_mesh((1, 1), system="n150")
    x = _put(mesh, (64, 96))
    assert _codes(lambda: ttnn.permute(x, (1, 0))) == ["TransposeDeviceOperation"]


def test_prod_records_its_all_or_nc_program(open_mesh):
    mesh = open_mesh((1, 1), system="n150")
    x = _put(mesh, (2, 3, 32, 32))
    assert _codes(lambda: ttnn.prod(x)) == ["ProdAllDeviceOperation"]
    assert _codes(lambda: ttnn.prod(x, dim=0)) == ["ProdNcDeviceOperation"]


def test_graph_capture_names_permutes_transpose(open_mesh):
    """A graph capture's device-operation node names the program as the perf capture does."""
    from meshnn import graph

    mesh = open_mesh((1, 1), system="n150")
    x = _put(mesh, (2, 3, 64, 96))
    graph.begin_graph_capture()
    try:
        ttnn.permute(x, (0, 1, 3, 2))
        ttnn.permute(x, (0, 2, 3, 1))
    finally:
        trace = graph.end_graph_capture()
    names = [node["params"]["name"] for node in trace if node["node_type"] == "function_start"]
    assert "TransposeDeviceOperation" in names and "PermuteDeviceOperation" in names
    assert names.index("TransposeDeviceOperation") < names.index("PermuteDeviceOperation")
