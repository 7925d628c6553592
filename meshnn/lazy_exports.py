"""Where each of meshnn's lazily imported public names lives: ``ttnn.graph``, ``ttnn.CONFIG``, the tensor
files, memory plots, perf captures and the other names most runs never touch are imported at their
first use (``meshnn.__getattr__``), not when ``import meshnn`` runs.

This module holds module paths as strings only and imports nothing of meshnn, so the package root can
read it before any layer loads.  Invariant: every value is an importable module path; a name in
``OWN_MODULES`` is the module itself, any other is the attribute of that name in its module."""

from __future__ import annotations

_CAPTURE = "meshnn.capture."
_CONFIG_NAMES = ("Config", "manage_config", "CONFIG", "CONFIG_PATH", "CONFIG_OVERRIDES", "load_config_from_dictionary",
                 "load_config_from_json_file")  # fmt: skip
_PERF_CAPTURE = ("PerfCapture", "begin_perf_capture", "end_perf_capture", "perf_capture")
_SLOW_DISPATCH = ("enable_asynchronous_slow_dispatch", "disable_asynchronous_slow_dispatch")
_NORM_HELPERS = ("LayerNormType", "DistributedLayerNormStage", "create_layernorm_program_config",
                 "layernorm_default_compute_config", "rmsnorm_default_compute_config")  # fmt: skip

# Names that are modules of meshnn under ttnn's module names (``ttnn.graph`` ...).
OWN_MODULES: dict[str, str] = {
    "graph": _CAPTURE + "graph",
    "tracer": _CAPTURE + "tracer",
    "graph_report": _CAPTURE + "graph_report",  # report files into a database
    "graph_tracer_utils": _CAPTURE + "graph_tracer_utils",  # graph nodes as JSON
    "database": _CAPTURE + "database",  # a report database's rows as records
    "operation_tracer": _CAPTURE + "operation_tracer",  # ops' parameters to JSON
}

# Names that are attributes of a module: name -> the module that defines it.
ATTRIBUTES: dict[str, str] = {
    **dict.fromkeys(_CONFIG_NAMES, _CAPTURE + "config"),
    "plot_memory": "meshnn.mesh.memory_plot",
    "as_tensor": "meshnn.tensor.files.cache",
    "load_tensor": "meshnn.tensor.files.reader",
    "dump_tensor": "meshnn.tensor.files.writer",
    "DumpTensorMode": "meshnn.tensor.files.writer",
    "get_fallback_function": "meshnn.ops.fallback",
    **dict.fromkeys(_PERF_CAPTURE, "meshnn.ops.perf_capture"),
    "SlidingWindowParallelConfig": "meshnn.ops.conv.parallel_config",
    "IndexerScoreProgramConfig": "meshnn.ops.transformer.indexer_config",  # ttnn.experimental.indexer_score's
    "p2p_compute_intermediate_tensor_spec": "meshnn.ops.ccl.point_to_point",  # ttnn._ttnn...point_to_point's
    "get_conv_output_dim": "meshnn.ops.conv.ttnn_python",
    "pad_to_tile_shape": "meshnn.formats.layout",
    **dict.fromkeys(("H2DSocket", "D2HSocket"), "meshnn.mesh.hd_socket"),  # host <-> device sockets
    "OverlappedTensor": "meshnn.tensor.overlapped",  # a part of a fused device buffer (tt-metal 2026)
    **dict.fromkeys(_SLOW_DISPATCH, "meshnn.mesh.dispatch_mode"),  # tt-metal 2026
    **dict.fromkeys(("get_latest_programs_perf_data", "get_all_programs_perf_data"), "meshnn.ops.device_profiler"),
    "InterProcessCounterChannel": "meshnn.distributed.counter_channel",  # a shared-memory counter (tt-metal 2026)
    **dict.fromkeys(_NORM_HELPERS, "meshnn.ops.norm.norm_defaults"),
}

LAZY: dict[str, str] = {**OWN_MODULES, **ATTRIBUTES}
