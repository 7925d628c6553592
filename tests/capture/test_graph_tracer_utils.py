"""``ttnn.graph_tracer_utils.GraphTracerUtils``: a captured graph's printed arguments read as
JSON-ready values, as ttnn's helper reads them (``import ttnn.graph_tracer_utils`` under the alias)."""

from __future__ import annotations

import importlib
import json

import pytest
import torch

import meshnn as ttnn
from meshnn.capture.graph_tracer_utils import GraphTracerUtils, read_argument
from meshnn.compat import ttnn_alias

MEMORY_CONFIG = (
    "MemoryConfig(memory_layout=TensorMemoryLayout::INTERLEAVED,buffer_type=BufferType::L1,shard_spec=std::nullopt)"
)


@pytest.mark.parametrize(
    "text, value",
    [
        ("Shape([1, 4, 2048, 128])", {"Shape": [1, 4, 2048, 128]}),
        ("DataType::BFLOAT16", "DataType::BFLOAT16"),
        ("0", 0),
        ("-2.5", -2.5),
        ("std::nullopt", "std::nullopt"),
        (
            MEMORY_CONFIG,
            {
                "MemoryConfig": {
                    "memory_layout": "TensorMemoryLayout::INTERLEAVED",
                    "buffer_type": "BufferType::L1",
                    "shard_spec": "std::nullopt",
                }
            },
        ),
        (  # inside a value a call's type name goes; one unnamed value is the value itself
            "Tensor(storage=DeviceStorage(), tensor_spec=TensorSpec(logical_shape=Shape([32, 64]), "
            f"memory_config={MEMORY_CONFIG}))",
            {
                "Tensor": {
                    "storage": {},
                    "tensor_spec": {
                        "logical_shape": [32, 64],
                        "memory_config": {
                            "memory_layout": "TensorMemoryLayout::INTERLEAVED",
                            "buffer_type": "BufferType::L1",
                            "shard_spec": "std::nullopt",
                        },
                    },
                }
            },
        ),
        (
            "Tile(tile_shape={32, 32}, face_shape={16,16})",
            {"Tile": {"tile_shape": "{32, 32}", "face_shape": "{16,16}"}},
        ),
        ("[<nullopt>]", "<nullopt>"),
        ("[unsupported type , std::reference_wrapper<Foo>]", {"unsupported type": "std::reference_wrapper<Foo>"}),
        ("[]", []),
        ("x(dtype=<DataType.BFLOAT16: 0>)", {"x": {"dtype": "<DataType.BFLOAT16: 0>"}}),
        ("\x00", "\x00"),
    ],
)
def test_a_printed_argument_reads_as_ttnns_helper_reads_it(text, value):
    assert read_argument(text) == value
    json.dumps(value)  # JSON-ready


@pytest.mark.parametrize("text", ["T(SmallVector([0, 2, 1, 3]), x=1)", "T(1, 2)", "Shape([1, 2)", "a(b=1) tail"])
def test_what_does_not_read_is_an_unparsed_element(text):
    with pytest.raises(ValueError):
        read_argument(text)
    (element,) = GraphTracerUtils.serialize_arguments_to_json("op", [text])["arguments"]
    assert element["UnparsedElement"]["element_info"] == text and str(element["UnparsedElement"]["error"])


def test_serialize_graph_gives_each_call_with_arguments(open_mesh):
    mesh = open_mesh((1, 1))
    x = ttnn.from_torch(torch.ones(1, 1, 32, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    ttnn.graph.begin_graph_capture(ttnn.graph.RunMode.NORMAL)
    ttnn.relu(x, memory_config=ttnn.L1_MEMORY_CONFIG)
    graph = ttnn.graph.end_graph_capture()
    content = GraphTracerUtils.serialize_graph(graph)["content"]
    assert len(content) == sum(1 for node in graph if node.get("arguments"))
    create = next(c for c in content if c["operation"] == "tt::tt_metal::create_device_tensor")
    assert create["arguments"][0] == {"arg0": {"Shape": [1, 1, 32, 64]}}
    assert create["arguments"][1] == {"arg1": "DataType::BFLOAT16"}
    assert create["arguments"][4]["arg4"]["MemoryConfig"]["buffer_type"] == "BufferType::L1"
    json.dumps(content, default=str)
    assert GraphTracerUtils.serialize_arguments_to_json("", ["1"]) is None
    assert GraphTracerUtils.replace_control_chars("a\x00b\x1f") == "a\\u0000b\\u001F"


def test_the_alias_imports_it():
    was = ttnn_alias.is_installed()
    ttnn_alias.install()
    try:
        module = importlib.import_module("ttnn.graph_tracer_utils")
        assert module.GraphTracerUtils is GraphTracerUtils
    finally:
        if not was:
            ttnn_alias.uninstall()
