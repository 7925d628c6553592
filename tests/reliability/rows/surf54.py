"""Bad calls of tt-metal 2026's device surface: the dispatch-mode switches (a non-device, or Fast
Dispatch mode), the allocator's base address (a buffer type it has no allocator for), the optimal
worker cores (a tensor not sharded or not on a device, a NOC that is an int), the system mesh
descriptor (a coordinate outside the system, or not a coordinate), ttnn.graph.record_python_operation
(keyword arguments that are no dict), the counter channel (a bad name, a float timeout), the
operation tracer's switch (a string), the config loaders (a config that is no dict, an unknown key,
a path that is no path), the overlapped tensors' files (views not a dict, a wrong extension),
the deformable attention (float32 inputs, a host value), the ViT / Boltz head splits (a ROW_MAJOR
input, not a pair representation), and moreh's ops under their
top-level names (a string for a tensor)."""

from __future__ import annotations

import inspect

import meshnn as ttnn

from ..cases import TYPE, VALUE, Case

ERROR = ttnn.MeshnnError


def rows() -> list[Case]:
    return [
        *moreh_rows(),
        Case(
            "enable_asynchronous_slow_dispatch",
            "device is a tensor",
            lambda e: ttnn.enable_asynchronous_slow_dispatch(e.a),
            TYPE,
            "device",
        ),
        Case(
            "enable_asynchronous_slow_dispatch",
            "in Fast Dispatch mode",
            lambda e: ttnn.enable_asynchronous_slow_dispatch(e.mesh),
            ERROR,
            "Fast Dispatch is disabled",
        ),
        Case(
            "disable_asynchronous_slow_dispatch",
            "device is None",
            lambda e: ttnn.disable_asynchronous_slow_dispatch(None),
            TYPE,
            "device",
        ),
        Case(
            "get_allocator_base_address",
            "system memory has no allocator",
            lambda e: ttnn.get_allocator_base_address(e.mesh, ttnn.BufferType.SYSTEM_MEMORY),
            VALUE,
            "buffer_type",
        ),
        Case(
            "get_allocator_base_address",
            "buffer type is a string",
            lambda e: ttnn.get_allocator_base_address(e.mesh, "L1"),
            TYPE,
            "buffer_type",
        ),
        Case(
            "get_optimal_worker_cores_for_sharded_tensor",
            "an interleaved tensor",
            lambda e: ttnn.get_optimal_worker_cores_for_sharded_tensor(e.a),
            VALUE,
            "sharded",
        ),
        Case(
            "get_optimal_worker_cores_for_sharded_tensor",
            "a host tensor",
            lambda e: ttnn.get_optimal_worker_cores_for_sharded_tensor(e.host),
            VALUE,
            "on device",
        ),
        Case(
            "get_optimal_worker_cores_for_sharded_tensor",
            "noc is an int",
            lambda e: ttnn.get_optimal_worker_cores_for_sharded_tensor(e.a, 0),
            TYPE,
            "noc",
        ),
        Case(
            "_ttnn.multi_device.SystemMeshDescriptor.get_device_id",
            "a coordinate outside the system",
            lambda e: ttnn._ttnn.multi_device.SystemMeshDescriptor().get_device_id(ttnn.MeshCoordinate(99, 0)),
            VALUE,
            "coord",
        ),
        Case(
            "_ttnn.multi_device.SystemMeshDescriptor.is_local",
            "coord is an int",
            lambda e: ttnn._ttnn.multi_device.SystemMeshDescriptor().is_local(3),
            TYPE,
            "coord",
        ),
        Case(
            "graph.record_python_operation",
            "kwargs is a list",
            lambda e: ttnn.graph.record_python_operation("ttnn.add", (), [("a", 1)]),
            TYPE,
            "function_kwargs",
        ),
        Case(
            "InterProcessCounterChannel",
            "a name without its leading slash",
            lambda e: ttnn.InterProcessCounterChannel("meshnn_no_slash"),
            VALUE,
            "shm_name",
        ),
        Case(
            "InterProcessCounterChannel.connect",
            "a timeout that is a float",
            lambda e: ttnn.InterProcessCounterChannel.connect("/meshnn_absent", connect_timeout_ms=1.5),
            TYPE,
            "connect_timeout_ms",
        ),
        Case(
            "operation_tracer.enable_tracing",
            "enable is a string",
            lambda e: ttnn.operation_tracer.enable_tracing("yes"),
            TYPE,
            "enable",
        ),
        Case(
            "_ttnn.tensor.dump_overlapped_tensors",
            "views is a list",
            lambda e: ttnn._ttnn.tensor.dump_overlapped_tensors(str(e.tmp / "w.overlappedtensorbin"), []),
            TYPE,
            "views",
        ),
        Case(
            "_ttnn.tensor.load_overlapped_tensors",
            "a .tensorbin name",
            lambda e: ttnn._ttnn.tensor.load_overlapped_tensors(str(e.tmp / "w.tensorbin")),
            ERROR,
            "extension",
        ),
        Case(
            "experimental.multi_scale_deformable_attn",
            "float32 inputs",
            lambda e: ttnn.experimental.multi_scale_deformable_attn(e.rm, e.rm, e.rm),
            TYPE,
            "BFLOAT16",
        ),
        Case(
            "experimental.multi_scale_deformable_attn",
            "a host value",
            lambda e: ttnn.experimental.multi_scale_deformable_attn(e.host, e.rm, e.rm),
            VALUE,
            "value",
        ),
        Case(
            "experimental.nlp_create_qkv_heads_vit",
            "a ROW_MAJOR input",
            lambda e: ttnn.experimental.nlp_create_qkv_heads_vit(e.rm),
            VALUE,
            "TILE",
        ),
        Case(
            "experimental.nlp_create_qkv_heads_boltz",
            "not a pair representation",
            lambda e: ttnn.experimental.nlp_create_qkv_heads_boltz(e.a, num_heads=1),
            VALUE,
            "pair representation",
        ),
        Case(
            "load_config_from_dictionary",
            "config is a list",
            lambda e: ttnn.load_config_from_dictionary([("enable_logging", True)]),
            TYPE,
            "config",
        ),
        Case(
            "load_config_from_dictionary",
            "unknown key",
            lambda e: ttnn.load_config_from_dictionary({"enable_loging": True}),
            VALUE,
            "Unknown configuration key: enable_loging",
        ),
        Case(
            "load_config_from_json_file",
            "path is an int",
            lambda e: ttnn.load_config_from_json_file(3),
            TYPE,
            "json_path",
        ),
    ]


MOREH_NAMED = {"arange": "start", "dot": "input", "nll_loss_backward": "reduction_mean", "sgd": "momentum_initialized"}
"""The argument a moreh op's refusal of a string first argument (the others None) names, where it is not
the first parameter."""


def moreh_rows() -> list[Case]:
    """``ttnn.moreh_<op>`` (each an alias of ``ttnn.operations.moreh.<op>``): a string where its first
    argument goes, the other required ones None."""
    from meshnn.ops.moreh_names import TOP_LEVEL

    cases = []
    for op in TOP_LEVEL:
        function = getattr(ttnn, f"moreh_{op}")
        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        required = [
            p.name for p in inspect.signature(function).parameters.values() if p.default is p.empty and p.kind in kinds
        ]
        args = ("bad", *[None] * (len(required) - 1))
        named = MOREH_NAMED[op] if op in MOREH_NAMED else required[0]
        cases.append(
            Case(f"moreh_{op}", "first argument is a string", lambda e, f=function, a=args: f(*a), TYPE, named)
        )
    return cases
