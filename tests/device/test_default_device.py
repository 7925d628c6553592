"""ttnn's default device: ``SetDefaultDevice`` / ``GetDefaultDevice`` / ``ClearDefaultDevice``
(tt-metal's ``models/common`` helpers read it when no tensor is on a device)."""

from __future__ import annotations

import pytest

import meshnn as ttnn
from meshnn.compat import ttnn_device


def test_set_get_and_clear_the_default_device(open_mesh):
    mesh = open_mesh((1, 1))
    assert ttnn.GetDefaultDevice() is None
    try:
        ttnn.SetDefaultDevice(mesh)
        assert ttnn.GetDefaultDevice() is mesh and ttnn_device.GetDefaultDevice() is mesh
        ttnn.SetDefaultDevice(None)
        assert ttnn.GetDefaultDevice() is None
        ttnn.SetDefaultDevice(mesh)
        ttnn.ClearDefaultDevice()
        assert ttnn.GetDefaultDevice() is None
    finally:
        ttnn.ClearDefaultDevice()


def test_a_default_that_is_not_a_device_is_refused_and_nothing_changes(open_mesh):
    mesh = open_mesh((1, 1))
    try:
        ttnn.SetDefaultDevice(mesh)
        with pytest.raises(ttnn.MeshnnTypeError, match="device must be a ttnn"):
            ttnn.SetDefaultDevice(0)
        assert ttnn.GetDefaultDevice() is mesh
    finally:
        ttnn.ClearDefaultDevice()
