"""ttnn's re-exporting submodules under the alias: ``ttnn._ttnn.<module>.<name>``, ``ttnn.types``,
``ttnn.operations`` give meshnn's public name of that spelling, import statements work, a name
meshnn lacks is named by its whole path, and ``ttnn.operations.moreh`` never answers with ttnn's
top-level op of the same name; ``ttnn.reflection`` / ``ttnn.decorators`` helpers work."""

from __future__ import annotations

import importlib

import pytest
import torch

import meshnn
from meshnn.compat import ttnn_alias


@pytest.fixture
def ttnn():
    was = ttnn_alias.is_installed()
    module = ttnn_alias.install()
    yield module
    if not was:
        ttnn_alias.uninstall()


def test_compiled_module_paths_are_meshnns_names(ttnn):
    assert ttnn._ttnn.tensor.Tensor is meshnn.Tensor
    assert ttnn._ttnn.tensor.MemoryConfig is meshnn.MemoryConfig  # (not meshnn's tensor layer package's names)
    point_to_point = ttnn._ttnn.operations.point_to_point  # reached by attributes, before any import statement
    assert point_to_point.p2p_compute_intermediate_tensor_spec is meshnn.p2p_compute_intermediate_tensor_spec
    assert ttnn.types.BufferType is meshnn.BufferType
    assert ttnn._ttnn.operations.core.unsqueeze_to_4D is meshnn.unsqueeze_to_4D
    assert ttnn.operations.binary is ttnn.operations.binary  # one module object per path
    core = importlib.import_module("ttnn._ttnn.operations.core")
    assert core.unsqueeze_to_4D is meshnn.unsqueeze_to_4D


def test_a_missing_name_is_named_by_its_path(ttnn):
    with pytest.raises(meshnn.NotImplementedByMeshnn, match=r"ttnn\._ttnn\.operations\.core\.no_such_thing"):
        ttnn._ttnn.operations.core.no_such_thing  # noqa: B018
    with pytest.raises(meshnn.NotImplementedByMeshnn, match=r"ttnn\.operations\.moreh\.no_such_op"):
        ttnn.operations.moreh.no_such_op  # noqa: B018
    with pytest.raises(meshnn.NotImplementedByMeshnn, match=r"ttnn\.operations\.moreh\.add\b"):
        ttnn.operations.moreh.add  # noqa: B018  (ttnn's top-level add is not moreh's)
    assert ttnn._ttnn.operations.moreh is ttnn.operations.moreh  # the registry's one namespace of moreh ops
    with pytest.raises(meshnn.NotImplementedByMeshnn, match=r"_ttnn\.tensr"):
        ttnn._ttnn.tensr  # noqa: B018


def test_reflection_and_decorators(ttnn, open_mesh):
    assert ttnn.reflection.pop_argument("x", (1, 2), {"a": 3}) == (1, [2], {"a": 3})
    assert ttnn.reflection.pop_argument("x", (), {"x": 1, "a": 3}) == (1, [], {"a": 3})
    with pytest.raises(ValueError, match="Missing argument: x"):
        ttnn.reflection.pop_argument("x", (), {})
    mesh = open_mesh((1, 1))
    t = meshnn.from_torch(torch.ones(32, 32), dtype=meshnn.bfloat16, layout=meshnn.TILE_LAYOUT, device=mesh)
    out = ttnn.decorators.default_postprocess_golden_function_outputs(torch.zeros(32, 32), (t,), {})
    assert out.dtype is meshnn.bfloat16 and out.layout is meshnn.TILE_LAYOUT and out.is_allocated()
    assert torch.equal(meshnn.to_torch(out).float(), torch.zeros(32, 32))


def test_operations_activations_gives_the_torch_function_of_an_activation(ttnn):
    activations = importlib.import_module("ttnn.operations.activations")
    golden = activations.get_golden_function_for_activation
    assert golden(None) is None
    assert golden(meshnn.UnaryOpType.RELU6) is torch.nn.functional.relu6
    assert golden(meshnn.UnaryWithParam(meshnn.UnaryOpType.SQRT)) is torch.sqrt
    x = torch.linspace(-3, 3, 13)
    assert torch.equal(golden("relu")(x), torch.relu(x))  # a name: the op's golden function
    assert torch.allclose(golden("gelu_approx")(x), meshnn.get_golden_function(meshnn.gelu)(x))
    with pytest.raises(meshnn.MeshnnError, match="is not supported as activation function"):
        golden(meshnn.UnaryOpType.EXP)  # (not in ttnn's map)
    with pytest.raises(meshnn.MeshnnError, match="Unsupported activation: no_such_op"):
        golden("no_such_op")


def test_dot_access_dicts(ttnn):
    """``ttnn.dot_access`` (tt-metal's BERT / ViT parameters): nested dicts become attribute dicts;
    a missing key is a KeyError, as ttnn's, and an AttributeError, so hasattr / getattr work."""
    from ttnn.dot_access import DotAccessDict, make_dot_access_dict

    made = make_dot_access_dict({"layer": {"weight": 1}, "bias": 2, "kept": {"x": 3}}, ignore_types=(list,))
    assert made.layer.weight == 1 and made.bias == 2 and isinstance(made.kept, DotAccessDict)
    assert make_dot_access_dict(made) is made
    assert make_dot_access_dict([1], ignore_types=(list,)) == [1]
    with pytest.raises(KeyError):
        made.missing  # noqa: B018
    assert not hasattr(made, "missing") and getattr(made, "missing", 7) == 7
    del made.bias
    assert "bias" not in made


def test_ttnn_core_has_its_python_helpers_and_meshnns_names(ttnn, open_mesh):
    """DeepSeek-V3's MLA and RMS norm size their shards with ``ttnn.core.roundup`` / ``divup``."""
    core = importlib.import_module("ttnn.core")
    assert core is ttnn.core
    assert [core.divup(a, 32) for a in (1, 32, 33)] == [1, 1, 2]
    assert [core.roundup(a, 32) for a in (1, 32, 33, 64)] == [32, 32, 64, 64]
    assert (
        core.is_sharded is meshnn.is_sharded
        and core.create_sharded_memory_config is meshnn.create_sharded_memory_config
    )
    t = meshnn.from_torch(torch.zeros(2, 2), device=open_mesh((1, 1)))
    assert core.has_storage_type_of(t, meshnn.StorageType.DEVICE)
    assert not core.has_storage_type_of(t.cpu(), meshnn.StorageType.DEVICE)
    with pytest.raises(meshnn.NotImplementedByMeshnn, match=r"ttnn\.core\.no_such_thing"):
        core.no_such_thing  # noqa: B018


def test_kv_cache_module_writes_the_cache_in_place(ttnn):
    """``ttnn.kv_cache.fill_cache_for_user_`` / ``update_cache_for_token_`` (DeepSeek-V3 prefill's
    MLA cache test reaches the first) are ``fill_cache`` / ``update_cache``: the cache written in
    place and returned."""
    from ttnn.kv_cache import fill_cache_for_user_, update_cache_for_token_

    mesh = meshnn.open_mesh_device(meshnn.MeshShape(1, 1))
    try:
        cache = ttnn.from_torch(torch.zeros(2, 1, 64, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
        x = torch.randn(1, 1, 32, 32).bfloat16()
        user = ttnn.from_torch(x, layout=ttnn.TILE_LAYOUT, device=mesh)
        assert fill_cache_for_user_(cache, user, 1, update_idx=32) is cache
        got = ttnn.to_torch(cache)
        assert torch.equal(got[1:, :, 32:], x) and not got[:, :, :32].any() and not got[0].any()
        token = ttnn.from_torch(torch.ones(1, 1, 32, 32).bfloat16(), layout=ttnn.TILE_LAYOUT, device=mesh)
        assert update_cache_for_token_(cache, token, 5) is cache
        assert torch.equal(ttnn.to_torch(cache)[:, 0, 5], torch.ones(2, 32).bfloat16())
    finally:
        meshnn.close_mesh_device(mesh)


def test_fabric_max_payload_follows_the_router_config():
    """``ttnn.get_tt_fabric_max_payload_size_bytes()``: 4352 bytes by default (Wormhole's fabric
    channel less its header), the router config's payload when ``set_fabric_config`` was given one."""
    try:
        meshnn.set_fabric_config(meshnn.FabricConfig.FABRIC_1D)
        assert meshnn.get_tt_fabric_max_payload_size_bytes() == 4352
        router = meshnn.FabricRouterConfig()
        router.max_packet_payload_size_bytes = 2048
        meshnn.set_fabric_config(meshnn.FabricConfig.FABRIC_2D, router_config=router)
        assert meshnn.get_tt_fabric_max_payload_size_bytes() == 2048
    finally:
        meshnn.set_fabric_config(meshnn.FabricConfig.DISABLED)


def test_fabric_packet_header_follows_the_routing_dimension():
    """``ttnn.get_tt_fabric_packet_header_size_bytes()``: tt-metal's fabric context sizes the header
    by routing: 1-D's low-latency header (48 B up to 16 hops: every system here), 2-D's hybrid-mesh
    header with its 35-byte route buffer (96 B), 16 B more in UDM mode; a slot is header + payload."""
    try:
        for config, size in [
            (meshnn.FabricConfig.FABRIC_1D, 48),
            (meshnn.FabricConfig.FABRIC_1D_RING, 48),
            (meshnn.FabricConfig.FABRIC_2D, 96),
            (meshnn.FabricConfig.FABRIC_2D_TORUS_XY, 96),
        ]:
            meshnn.set_fabric_config(config)
            assert meshnn.get_tt_fabric_packet_header_size_bytes() == size, config
        meshnn.set_fabric_config(meshnn.FabricConfig.FABRIC_2D, fabric_udm_mode=meshnn.FabricUDMMode.ENABLED)
        assert meshnn.get_tt_fabric_packet_header_size_bytes() == 112
    finally:
        meshnn.set_fabric_config(meshnn.FabricConfig.DISABLED)
