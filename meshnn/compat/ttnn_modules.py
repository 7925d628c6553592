"""ttnn's Python submodules that only re-export: ``ttnn.types``, ``ttnn.operations``, ``ttnn._ttnn``
(ttnn's compiled module: ``ttnn._ttnn.tensor.Tensor``, ``ttnn._ttnn.operations.core.X``...),
``ttnn.decorators``, ``ttnn.reflection`` and ``ttnn.core`` (ttnn's Python helpers: ``divup``,
``roundup``, ``has_storage_type_of`` and meshnn's names) and ``ttnn.kv_cache`` (an import path for
the registry's ``kv_cache.fill_cache_for_user_`` / ``update_cache_for_token_``).

In ttnn, ``ttnn._ttnn.<module>.<name>`` and ``ttnn.types.<name>`` are the very objects ttnn
exports as ``ttnn.<name>``; so here each is a *flat namespace*: an attribute is meshnn's public
name of the same spelling, one of ttnn's submodule names (:data:`SUBMODULE_NAMES`: ``tensor``,
``operations``, ``core``...) is a nested namespace, and anything else raises
``NotImplementedByMeshnn`` naming the whole dotted path.  ``ttnn.decorators`` and
``ttnn.reflection`` also hold the few helpers tt-metal's op modules call.

May import: the public root and :mod:`meshnn.errors`.
"""

from __future__ import annotations

import importlib
import inspect
import types
from collections.abc import Callable
from typing import Any

import meshnn
from meshnn.errors import NotImplementedByMeshnn


class FlatNamespace(types.ModuleType):
    """A ttnn module whose names are meshnn's top-level names (see the module's text)."""

    def __init__(self, path: str, **own: Any) -> None:
        super().__init__(f"ttnn.{path}", f"ttnn.{path}, answered by meshnn's public names")
        self._path = path
        self.__path__: list[str] = []
        for key, value in own.items():
            setattr(self, key, value)

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__") and attribute.endswith("__"):
            raise AttributeError(attribute)
        nested = _own_namespace(f"{self._path}.{attribute}")
        if nested is not None:
            setattr(self, attribute, nested)
            return nested
        value = None if self._path.endswith(_OWN_OPS) else getattr(meshnn, attribute, None)
        if value is not None and (not isinstance(value, types.ModuleType) or attribute in _TTNN_NAMESPACES):
            return value  # (meshnn's layer packages, meshnn.tensor / meshnn.ops..., are not ttnn's names)
        if attribute in SUBMODULE_NAMES and not self._path.endswith(_OWN_OPS):
            nested = FlatNamespace(f"{self._path}.{attribute}")
            setattr(self, attribute, nested)  # the same module object next time
            return nested
        raise NotImplementedByMeshnn(f"{self._path}.{attribute}")


class _ExperimentalNamespace(FlatNamespace):
    """``ttnn._ttnn.operations.experimental``: the experimental ops, and ttnn's submodules of it."""

    def __getattr__(self, attribute: str) -> Any:
        try:
            return getattr(meshnn.experimental, attribute)
        except NotImplementedByMeshnn:
            return super().__getattr__(attribute)


def _own_namespace(path: str) -> types.ModuleType | None:
    """The namespace at ``path`` when it has names of its own (:data:`PYTHON_MODULES`,
    :data:`OWN_NAMES`, the experimental ops), else None."""
    if path in PYTHON_MODULES:  # a Python module of ttnn's with names of its own (ttnn.operations.conv2d)
        return FlatNamespace(path, **importlib.import_module(PYTHON_MODULES[path]).TTNN_NAMES)
    if path in OWN_NAMES:
        return FlatNamespace(path, **{name: find() for name, find in OWN_NAMES[path].items()})
    if path == "_ttnn.operations.experimental":
        return _ExperimentalNamespace(path)
    if path.endswith(_OWN_OPS):  # moreh's ops: the registry's namespace of them (ttnn.operations.moreh.sum)
        return importlib.import_module("meshnn.ops.loading").moreh
    return None


SUBMODULE_NAMES = frozenset(
    [
        "activation",
        "cluster",
        "core",
        "deprecated",
        "device",
        "events",
        "fabric",
        "global_circular_buffer",
        "global_semaphore",
        "mesh_socket",
        "multi_device",
        "operations",
        "profiler",
        "program_descriptor",
        "tensor",
        "tensor_accessor_args",
        "types",
        "binary",
        "ccl",
        "conv",
        "data_movement",
        "debug",
        "embedding",
        "experimental",
        "loss",
        "matmul",
        "moreh",
        "normalization",
        "pool",
        "reduction",
        "sliding_window",
        "trace",
        "transformer",
        "unary",
        "ternary",
        "kv_cache",
        "creation",
        "point_to_point",
    ]
)
"""The submodules of ttnn's compiled module and of its ``operations`` (a nested namespace each)."""

_OWN_OPS = (".moreh",)
"""ttnn submodules whose ops are their own, not ttnn's top-level ops of the same name
(``ttnn.operations.moreh.mean`` is not ``ttnn.mean``): the registry's ``moreh.`` ops answer there."""

PYTHON_MODULES = {
    "operations.conv2d": "meshnn.ops.conv.ttnn_python",
    "operations.activations": "meshnn.ops.eltwise.activation_goldens",
    "operations.pool": "meshnn.ops.pool.goldens",
    "_ttnn.bfp_utils": "meshnn.tensor.bfp_utils",  # tt-metal 2026's block-float packing helpers
    "_ttnn.operations.normalization": "meshnn.ops.norm.group_norm_grid",  # the group norm grid bindings
}
"""ttnn's Python modules named like an op (``ttnn.operations.conv2d`` is not ``ttnn.conv2d``): the
meshnn module whose ``TTNN_NAMES`` they hold, besides meshnn's public names."""


def _global_semaphore() -> type:
    """meshnn's global semaphore class (what ``ttnn.create_global_semaphore`` returns)."""
    return inspect.signature(meshnn.create_global_semaphore, eval_str=True).return_annotation


def _ccl_enum(name: str) -> Callable[[], type]:
    """The MoE collectives' enum ``name`` (``ttnn.operations.ccl.MoEActivationFunction``...)."""
    return lambda: getattr(meshnn.experimental, name)


_CCL_ENUMS = {name: _ccl_enum(name) for name in ("MoEActivationFunction", "DispatchAlgorithm", "WorkerMode")}

OWN_NAMES = {
    # ttnn's argument type of one or several global semaphores: meshnn's GlobalSemaphore stands for it
    "_ttnn.operations.experimental.ccl_experimental": {"GlobalSemaphoreArg": _global_semaphore, **_CCL_ENUMS},
    "operations.ccl": dict(_CCL_ENUMS),  # ttnn's Python module re-exports the experimental enums
    "_ttnn.global_semaphore": {"global_semaphore": _global_semaphore},  # ttnn's class, under its C++ name
    "_ttnn.operations.conv": {
        "create_sharded_memory_config_from_parallel_config": lambda: (
            importlib.import_module("meshnn.ops.conv.parallel_config").create_sharded_memory_config_from_parallel_config
        )
    },
    "_ttnn.global_circular_buffer": {  # ttnn's class, under its C++ name
        "global_circular_buffer": lambda: meshnn.mesh.global_circular_buffer.GlobalCircularBuffer
    },
    "_ttnn.operations.point_to_point": {  # (also meshnn's top-level name: compat may not import the ops)
        "p2p_compute_intermediate_tensor_spec": lambda: meshnn.p2p_compute_intermediate_tensor_spec
    },
    "_ttnn.core": {  # tt-metal 2026's host packers (meshnn._ttnn.core's)
        "tilize_and_pack_bfp8_b": lambda: meshnn._ttnn.core.tilize_and_pack_bfp8_b,
        "tilize_and_pack_bfp4_b": lambda: meshnn._ttnn.core.tilize_and_pack_bfp4_b,
    },
    "_ttnn.multi_device": {"SystemMeshDescriptor": lambda: meshnn._ttnn.multi_device.SystemMeshDescriptor},
    "_ttnn.tensor": {  # the binary calls under ttnn.dump_tensor / load_tensor (meshnn._ttnn.tensor's)
        "dump_tensor_flatbuffer": lambda: meshnn._ttnn.tensor.dump_tensor_flatbuffer,
        "load_tensor_flatbuffer": lambda: meshnn._ttnn.tensor.load_tensor_flatbuffer,
        "dump_overlapped_tensors": lambda: meshnn._ttnn.tensor.dump_overlapped_tensors,
        "load_overlapped_tensors": lambda: meshnn._ttnn.tensor.load_overlapped_tensors,
    },
}
"""ttnn names in a submodule that meshnn answers with another object: how to find each."""

_TTNN_NAMESPACES = frozenset({"transformer", "experimental", "prim", "graph", "reports", "cluster"})
"""meshnn's module attributes that are ttnn's namespaces of the same name."""


def pop_argument(name: str, args: tuple | list, kwargs: dict[str, Any]) -> tuple[Any, list, dict[str, Any]]:
    """``ttnn.reflection.pop_argument``: the first positional argument (or the keyword ``name``),
    and the arguments left."""
    if args:
        first, *rest = args
        return first, rest, kwargs
    if name in kwargs:
        return kwargs[name], list(args), {k: v for k, v in kwargs.items() if k != name}
    raise meshnn.MeshnnValueError(f"Missing argument: {name}")


def _fallback() -> types.ModuleType:
    return importlib.import_module("meshnn.ops.fallback")


def divup(a: int, b: int) -> int:
    """``ttnn.core.divup``: ``a / b`` rounded up (ints)."""
    return (a + b - 1) // b


def roundup(a: int, b: int) -> int:
    """``ttnn.core.roundup``: ``a`` rounded up to a multiple of ``b`` (ints)."""
    return divup(a, b) * b


def has_storage_type_of(tensor: Any, storage_type: Any) -> bool:
    """``ttnn.core.has_storage_type_of``: whether ``tensor``'s storage is of ``storage_type``."""
    return bool(tensor.storage_type() == storage_type)


def make(name: str) -> types.ModuleType:
    """The module ``ttnn.<name>`` for the alias (``ttnn.core``: ttnn's Python helpers module, its
    own arithmetic helpers beside meshnn's public names)."""
    if name == "core":
        return FlatNamespace("core", divup=divup, roundup=roundup, has_storage_type_of=has_storage_type_of)
    if name == "kv_cache":  # ttnn's kv_cache module (an import path too): the registry's two cache writers
        ops = meshnn.kv_cache
        return FlatNamespace(
            "kv_cache",
            fill_cache_for_user_=ops.fill_cache_for_user_,
            update_cache_for_token_=ops.update_cache_for_token_,
        )
    if name == "reflection":
        return FlatNamespace("reflection", pop_argument=pop_argument)
    if name == "decorators":
        return FlatNamespace(
            "decorators",
            default_postprocess_golden_function_outputs=_fallback().default_postprocess_golden_function_outputs,
            default_preprocess_golden_function_inputs=_fallback().default_preprocess_golden_function_inputs,
            get_fallback_function=_fallback().get_fallback_function,
            register_python_operation=meshnn.register_python_operation,
            attach_golden_function=meshnn.attach_golden_function,
            get_golden_function=meshnn.get_golden_function,
            register_pre_operation_hook=meshnn.register_pre_operation_hook,
            register_post_operation_hook=meshnn.register_post_operation_hook,
        )
    return FlatNamespace(name)


NAMES = ("types", "operations", "_ttnn", "decorators", "reflection", "core", "kv_cache")
"""The ttnn submodules :func:`make` answers."""
