"""Bad calls of ttnn's top-level device queries: ``GetPCIeDeviceID`` given a chip the system lacks
or a bool, ``get_optimal_dram_bank_to_logical_worker_assignment`` given a tensor for its device."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import TYPE, Case


def rows() -> list[Case]:
    return [
        Case("GetPCIeDeviceID", "chip past the system", lambda e: ttnn.GetPCIeDeviceID(999), TYPE, "device_id"),
        Case("GetPCIeDeviceID", "a bool for the chip", lambda e: ttnn.GetPCIeDeviceID(True), TYPE, "device_id"),
        Case(
            "get_optimal_dram_bank_to_logical_worker_assignment",
            "a tensor for the device",
            lambda e: ttnn.get_optimal_dram_bank_to_logical_worker_assignment(e.a, ttnn.NOC.NOC_0),
            TYPE,
            "MeshDevice",
        ),
    ]
