"""$TT_VISIBLE_DEVICES: the PCIe devices a process may use narrow its simulated system to the box of
chips they reach (meshnn.device.visible)."""

from __future__ import annotations

import pytest

import meshnn as ttnn


@pytest.mark.parametrize(
    ("system", "visible", "shape", "pcie"),
    [
        ("t3k", "0", (1, 2), 1),  # card 1: devices 0, 1
        ("t3k", "1", (1, 2), 1),  # card 3: devices 2, 3
        ("t3k", "0,2", (2, 2), 2),  # cards 1 and 2: columns 0-1 of both rows
        ("t3k", "1, 3", (2, 2), 2),
        ("t3k", "0,1", (1, 4), 2),  # cards 1 and 3: row 0
        ("t3k", "3,2,1,0", (2, 4), 4),
        ("galaxy", "0,16,4,20,8,24,12,28", (4, 2), 8),  # a 4x2 quarter of the Galaxy: rows 0-3, columns 0-1
        # tt-metal's dual_4x4_rank_bindings.yaml: rank 0 (rows 0-3), rank 1 (rows 4-7)
        ("galaxy", "0,16,19,3,4,20,23,7,8,24,27,11,12,28,31,15", (4, 4), 16),
        ("galaxy", "14,30,29,13,10,26,25,9,6,22,21,5,2,18,17,1", (4, 4), 16),
        # tt-metal's dual_8x2_rank_bindings.yaml: rank 1 (columns 2-3)
        ("galaxy", "19,3,23,7,27,11,31,15,29,13,25,9,21,5,17,1", (8, 2), 16),
        ("galaxy", "31", (1, 1), 1),
        ("n300", "0", (1, 2), 1),
        ("p300", "1", (1, 1), 1),
    ],
)
def test_visible_devices_make_a_smaller_system(monkeypatch, system, visible, shape, pcie):
    monkeypatch.setenv("MESHNN_SYSTEM", system)
    monkeypatch.setenv("TT_VISIBLE_DEVICES", visible)
    spec = ttnn.system_spec()
    assert spec.mesh_shape == shape and spec.name == system
    assert ttnn.get_num_devices() == shape[0] * shape[1] and ttnn.get_device_ids() == list(range(shape[0] * shape[1]))
    assert ttnn.get_pcie_device_ids() == list(range(pcie))
    mesh = ttnn.open_mesh_device()
    try:
        assert tuple(mesh.shape) == shape and mesh.get_device_ids() == list(range(shape[0] * shape[1]))
    finally:
        ttnn.close_mesh_device(mesh)
    if shape[0] * shape[1] < ttnn.SYSTEMS[system].num_devices:
        with pytest.raises(ValueError, match="needs"):
            ttnn.open_mesh_device(ttnn.MeshShape(*ttnn.SYSTEMS[system].mesh_shape))


@pytest.mark.parametrize(
    ("system", "visible", "match"),
    [
        ("t3k", "4", "PCIe device 4 is not one of t3k's 4 PCIe devices"),
        ("t3k", "0,3", "not a box"),  # cards 1 and 4: diagonal
        ("galaxy", "0,5", "not a box"),
        ("galaxy", "0,1", "not a box"),  # rows 0 and 7: neighbours only over the torus's wrap-around
        ("galaxy", "0,1,4,5,8,9,12,13", "not a box"),  # columns 0 and 3
        ("t3k", "0,0", "named twice"),
        ("t3k", "a,b", "PCIe device numbers"),
        ("t3k", ",", "names no PCIe device"),
        ("n150", "1", "not one of n150's 1 PCIe devices"),
    ],
)
def test_bad_visible_devices_are_named(monkeypatch, system, visible, match):
    monkeypatch.setenv("MESHNN_SYSTEM", system)
    monkeypatch.setenv("TT_VISIBLE_DEVICES", visible)
    with pytest.raises(ValueError, match=match) as caught:
        ttnn.open_mesh_device()
    assert "TT_VISIBLE_DEVICES" in str(caught.value) and isinstance(caught.value, ttnn.MeshnnError)


def test_unset_or_empty_is_the_whole_system(monkeypatch):
    monkeypatch.setenv("MESHNN_SYSTEM", "t3k")
    monkeypatch.setenv("TT_VISIBLE_DEVICES", "")
    assert ttnn.system_spec() is ttnn.SYSTEMS["t3k"]
    monkeypatch.delenv("TT_VISIBLE_DEVICES")
    assert ttnn.get_num_devices() == 8
