"""Launched by tt-run (tests/distributed/test_ttrun.py): each rank's binding sets TT_VISIBLE_DEVICES to
one of the T3000's PCIe devices, so each rank sees that N300 card only (two chips, ids 0 and 1) and
opens its 1x2 mesh there."""

import os

import meshnn as ttnn

rank = int(os.environ["TT_RUN_RANK"]) if "TT_RUN_RANK" in os.environ else -1
assert os.environ["TT_VISIBLE_DEVICES"] == str(rank), os.environ["TT_VISIBLE_DEVICES"]
assert ttnn.get_num_devices() == 2 and ttnn.get_device_ids() == [0, 1] and ttnn.get_pcie_device_ids() == [0]
mesh = ttnn.open_mesh_device()
assert tuple(mesh.shape) == (1, 2) and mesh.get_device_ids() == [0, 1]
print(f"OK rank {rank}: sees {ttnn.get_num_devices()} devices of PCIe device {os.environ['TT_VISIBLE_DEVICES']}")
ttnn.close_mesh_device(mesh)
