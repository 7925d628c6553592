"""The op registry: every public op is declared once, and what lists ops derives from it.

- every public function of the ops layer (and the tensor layer's device operations) has an entry,
  and every entry is reachable as ``ttnn.<name>`` (namespaces included) as the same function;
- ``ttnn.get_golden_function`` returns the entry's torch reference, ``attach_golden_function``
  replaces it, ``register_python_operation`` declares a new op;
- the derived tables agree with the entries: the perf model's family and device-operation name
  (costs and graph captures alike), ``ttnn.UnaryOpType`` (every member ttnn has, each fusable
  member computing), the Tensor operators, the namespaces;
- signatures made from tables are ttnn's (names, order, defaults, keyword-only parameters).
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.capture.op_names import device_operation_name, op_family
from meshnn.ops import registry
from meshnn.ops.eltwise import binary_tables, unary_tables
from meshnn.ops.registry import OpKind
from meshnn.perf.desc import OpFamily
from meshnn.tensor import device_hooks

NOT_OPS = {  # public functions of the ops layer that launch no op, and why
    "init_device_compute_kernel_config": "makes a config",
    "begin_perf_capture": "starts a perf capture",
    "end_perf_capture": "ends a perf capture",
    "perf_capture": "a context manager over a perf capture",
    "get_golden_function": "the registry's own lookup",
    "attach_golden_function": "the registry's own setter",
    "register_python_operation": "declares an op",
    "register_pre_operation_hook": "runs code around top-level ops",
    "register_post_operation_hook": "runs code around top-level ops",
    "p2p_compute_intermediate_tensor_spec": "computes a spec",
    "create_layer_norm_reciprocals": "makes a host table and puts it on the device (from_torch)",
    "get_conv_output_dim": "a conv's output size: arithmetic",
}
HOST_HELPERS = {  # modules of the ops layer whose public functions are host helpers, and why
    "meshnn.ops.norm.group_norm_params": "group_norm's host helpers: they build host tensors and configs",
    "meshnn.ops.generic.cb_desc": "generic_op's descriptor helpers: they build plain-data circular-buffer descriptors",
    "meshnn.ops.generic.program_desc": "generic_op's descriptor helper: merging program descriptors (plain data)",
    "meshnn.ops.norm.norm_defaults": "the norms' host helpers: default compute and program configs (plain data)",
    "meshnn.ops.device_profiler": "the profiler's readbacks: the predicted times of programs already run",
    "meshnn.ops.fallback": "ttnn.get_fallback_function: an op's golden run on ttnn tensors (no device program)",
}


def _resolve(name: str):
    value = ttnn
    if name.startswith("moreh."):  # ttnn.operations.moreh.<op>: the namespace meshnn.ops.loading holds
        value, name = importlib.import_module("meshnn.ops.loading").moreh, name.removeprefix("moreh.")
    for part in name.split("."):
        value = getattr(value, part)
    return value


def test_every_entry_is_reachable_under_its_ttnn_name():
    entries = list(registry.entries())
    assert len(entries) >= 200
    for entry in entries:
        assert _resolve(entry.name) is entry.function, entry.name
        assert isinstance(entry.family, OpFamily) and isinstance(entry.kind, OpKind)


def test_every_public_function_of_the_ops_layer_is_an_entry():
    missing = []
    for name in dir(ttnn):
        value = getattr(ttnn, name)
        if name.startswith("_") or inspect.isclass(value) or not callable(value):
            continue
        module = getattr(value, "__module__", "") or ""
        if module.startswith("meshnn.ops") and registry.entry_of(value) is None and name not in NOT_OPS:
            if module in HOST_HELPERS:
                continue
            missing.append(name)
    assert not missing, f"public ops with no registry entry: {missing}"
    for namespace in ("transformer", "experimental", "prim"):
        module = getattr(ttnn, namespace)
        for name in dir(module):
            value = getattr(module, name)
            if not name.startswith("_") and callable(value) and not inspect.isclass(value):
                assert registry.entry_of(value) is not None, f"ttnn.{namespace}.{name}"


def test_tensor_layer_device_operations_are_entries():
    for name in ("reshape", "to_layout", "typecast", "to_dtype"):
        entry = registry.lookup(name)
        assert entry.function is getattr(ttnn, name)


def test_a_missing_namespace_op_is_named():
    with pytest.raises(ttnn.NotImplementedByMeshnn, match=r"experimental\.no_such_op"):
        ttnn.experimental.no_such_op  # noqa: B018


# ------------------------------------------------------------------------------ golden functions


def test_golden_functions_are_the_torch_references(rng):
    x = torch.from_numpy(rng.standard_normal((4, 32)).astype(np.float32))
    y = torch.from_numpy(rng.standard_normal((4, 32)).astype(np.float32))
    assert torch.equal(ttnn.get_golden_function(ttnn.add)(x, y), x + y)
    assert torch.equal(ttnn.get_golden_function(ttnn.exp)(x), torch.exp(x))
    assert torch.equal(
        ttnn.get_golden_function(ttnn.leaky_relu)(x, negative_slope=0.2), torch.nn.functional.leaky_relu(x, 0.2)
    )
    w = torch.ones(32)
    expected = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w
    assert torch.allclose(ttnn.get_golden_function(ttnn.rms_norm)(x, w, epsilon=1e-5), expected)
    assert torch.equal(ttnn.get_golden_function(ttnn.sum)(x, dim=1), x.sum(1))
    assert ttnn.get_golden_function(ttnn.add) is ttnn.add.golden_function


def test_every_entry_with_a_golden_has_a_callable_one():
    with_golden = [e for e in registry.entries() if e.golden is not None]
    assert len(with_golden) >= 150
    assert all(callable(e.golden) for e in with_golden)


def test_attach_replaces_and_register_declares():
    def op(x):
        return x

    published = ttnn.register_python_operation(name="ttnn.test_registry_identity", golden_function=lambda x: x * 2)(op)
    try:
        assert registry.lookup("test_registry_identity").function is published and published(5) == 5
        assert registry.entry_of(op) is registry.entry_of(published)  # the function itself finds it too
        assert ttnn.get_golden_function(published)(3) == 6
        ttnn.attach_golden_function(published, golden_function=lambda x: x * 3)
        assert ttnn.get_golden_function(published)(3) == 9
    finally:
        registry._OPS.by_name.pop("test_registry_identity")
        registry._OPS.by_function.pop(op)
        registry._OPS.by_function.pop(published)
        registry._OPS.by_short.pop("test_registry_identity")


# ----------------------------------------------------------------------------- derived tables


def test_perf_family_and_device_operation_come_from_the_entries():
    for entry in registry.entries():
        if entry.namespace == "prim":
            continue
        assert device_operation_name(entry.name) == entry.device_operation_name, entry.name
        assert op_family(entry.name) == (entry.family if entry.modelled else None), entry.name
    assert device_operation_name("argmax") == "ArgMaxDeviceOperation"  # graph and CSV agree


def test_unary_op_type_has_every_ttnn_member_and_each_definition_is_one():
    members = {m.name for m in ttnn.UnaryOpType}
    assert members == set(unary_tables.TTNN_MEMBERS)
    for defn in unary_tables.UNARY_DEFS:
        if defn.member:
            assert ttnn.UnaryOpType[defn.member].value == defn.name
    assert ttnn.UnaryOpType.MISH.value == "mish" and ttnn.UnaryOpType.RECIP.value == "reciprocal"


def test_a_fused_mish_runs(open_mesh, rng):
    mesh = open_mesh((1, 2))
    x = rng.standard_normal((2, 32, 32)).astype(np.float32)
    t = ttnn.from_torch(
        torch.from_numpy(x), layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0)
    )
    out = ttnn.add(t, t, activations=[ttnn.UnaryOpType.MISH])
    got = ttnn.to_torch(out, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)).numpy()
    expected = torch.nn.functional.mish(torch.from_numpy(2 * x)).numpy()
    assert np.allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_tensor_operators_are_the_registered_ops():
    for operator, function in registry.operators().items():
        assert device_hooks._HOOKS[operator] is function
    assert registry.operators()["add"] is ttnn.add and registry.operators()["matmul"] is ttnn.matmul


def test_every_binary_and_unary_definition_is_an_op_or_a_member():
    for defn in binary_tables.BINARY_DEFS:
        assert registry.lookup(defn.name).kind is OpKind.BINARY
        for alias in defn.aliases:  # "sub_" names the in-place form subtract_
            of = f"{defn.name}_" if alias.endswith("_") else defn.name
            assert registry.lookup(alias).function is registry.lookup(of).function
        if defn.inplace:
            assert registry.lookup(f"{defn.name}_").kind is OpKind.BINARY
    for defn in unary_tables.UNARY_DEFS:
        assert (defn.name in registry.public_ops()) == defn.public or defn.member is not None


# ------------------------------------------------------------------------------- signatures


def test_table_ops_have_ttnns_signatures():
    params = inspect.signature(ttnn.leaky_relu).parameters
    assert list(params)[:2] == ["input_tensor", "negative_slope"]
    assert params["memory_config"].kind is inspect.Parameter.KEYWORD_ONLY
    softplus = inspect.signature(ttnn.softplus).parameters
    assert softplus["beta"].default == 1.0 and softplus["beta"].kind is inspect.Parameter.KEYWORD_ONLY
    add = inspect.signature(ttnn.add).parameters
    assert list(add)[:2] == ["input_tensor_a", "input_tensor_b"] and "activations" in add
    assert "output_tensor" not in inspect.signature(ttnn.atan2).parameters
    assert "dtype" not in inspect.signature(ttnn.add_).parameters


def test_the_readmes_op_table_is_the_registrys():
    """README's "Every op, by kind" table is ``coverage_markdown()`` as it stands (regenerate it
    when an op is added: the table is derived, never written by hand)."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert registry.coverage_markdown() in readme
