"""ttnn.operation_tracer: while tracing is on, each top-level op's call is one JSON file (its name,
arguments, return value; tensors as metadata, values only when asked; the sweep hash); nothing is
written while it is off, and reading a tensor's values back traces nothing."""

from __future__ import annotations

import json

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.capture import operation_tracer as tracer


@pytest.fixture
def traced(tmp_path, monkeypatch):
    monkeypatch.setenv("TTNN_OPERATION_TRACE_DIR", str(tmp_path))
    monkeypatch.setattr(tracer, "_OPERATION_COUNTER", 0)
    tracer.enable_tracing(True)
    yield tmp_path
    tracer.enable_tracing(False)
    tracer.enable_tensor_value_serialization(False)
    tracer.set_sweep_source_hash(None)


def files(folder):
    return sorted(folder.glob("*.json"), key=lambda p: int(p.name.split("_")[0]))


def test_each_top_level_op_is_a_file(open_mesh, traced):
    mesh = open_mesh((1, 1))
    x = ttnn.from_torch(np.full((32, 32), 2.0, np.float32), layout=ttnn.TILE_LAYOUT, device=mesh)
    tracer.set_sweep_source_hash("abc123")
    ttnn.add(x, 1.5, memory_config=ttnn.L1_MEMORY_CONFIG)
    (path,) = files(traced)
    assert path.name.startswith("1_ttnn_add_")
    data = json.loads(path.read_text())
    assert data["operation_id"] == 1 and data["operation_name"] == "ttnn.add"
    assert data["sweep_source_hash"] == "abc123"
    first = data["args"][0]["value"]
    assert first["type"] == "ttnn.Tensor" and first["shape"] == [32, 32] and "values" not in first
    assert data["args"][1] == {"position": 1, "value": 1.5}
    assert data["return_value"]["mesh_device"]["device_ids"] == mesh.get_device_ids()
    assert "memory_config" in data["kwargs"]


def test_values_when_asked_and_the_read_back_is_not_traced(open_mesh, traced):
    mesh = open_mesh((1, 1))
    x = ttnn.from_torch(np.full((2, 3), 2.0, np.float32), layout=ttnn.TILE_LAYOUT, device=mesh)
    tracer.enable_tensor_value_serialization(True)
    ttnn.exp(x)
    (path,) = files(traced)  # the values' read back (to_torch) wrote no file of its own
    data = json.loads(path.read_text())
    assert data["args"][0]["value"]["values"] == [[2.0] * 3] * 2
    np.testing.assert_allclose(data["return_value"]["values"], np.exp(2.0), rtol=2**-7)


def test_nothing_is_written_while_tracing_is_off_and_no_hook_is_left(open_mesh, traced):
    from meshnn.mesh.op_hooks import POST_OPERATION_HOOKS

    mesh = open_mesh((1, 1))
    assert tracer._operation_hook in POST_OPERATION_HOOKS
    tracer._ENABLE_TRACE = False  # ttnn's flag, as tests set it: the hook goes with it
    assert tracer._operation_hook not in POST_OPERATION_HOOKS and not tracer.is_tracing_enabled()
    x = ttnn.from_torch(np.ones((32, 32), np.float32), layout=ttnn.TILE_LAYOUT, device=mesh)
    ttnn.exp(x)
    assert files(traced) == []
    tracer._ENABLE_TRACE = True
    assert tracer._operation_hook in POST_OPERATION_HOOKS and tracer._ENABLE_TRACE is True


def test_a_wrapped_function_is_traced_under_its_name(traced):
    wrapped = tracer.wrap_function_for_tracing(lambda a, b=2: a * b, "ttnn.my_op")
    assert wrapped(3, b=4) == 12
    (path,) = files(traced)
    data = json.loads(path.read_text())
    assert data["operation_name"] == "ttnn.my_op" and data["kwargs"] == {"b": 4} and data["return_value"] == 12


def test_bad_switches_are_refused():
    with pytest.raises(TypeError, match="enable"):
        tracer.enable_tracing("yes")
    with pytest.raises(TypeError, match="hash_value"):
        tracer.set_sweep_source_hash(123)
