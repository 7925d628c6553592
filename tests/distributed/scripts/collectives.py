"""Each collective on a mesh split across ranks, against numpy on the global input.

Every device (r, c) starts with its own block; after the collective every LOCAL device must hold
what numpy says.  float32 row-major and bfloat16 tile tensors, every cluster_axis."""

import sys

import numpy as np
import torch

import meshnn as ttnn

rows, cols = (int(v) for v in sys.argv[1].split("x"))
mesh = ttnn.open_mesh_device(ttnn.MeshShape(rows, cols), system="galaxy")
context = mesh.context
shape = (rows, cols)
block = (1, 32, 1024)  # per device: wide enough to split over a 32-device group in tiles
rng = np.random.default_rng(7)  # the same on every rank
x = rng.standard_normal((rows * block[0] * 1, block[1], cols * block[2])).astype(np.float32)
x = x.reshape(rows, block[1], cols * block[2])


def blocks(array):
    """(rows, cols, *block) view of the global input as every device's block."""
    return np.stack([np.stack(np.split(r, cols, axis=-1)) for r in np.split(array, rows, axis=0)])


def groups(axis):
    """Lists of device coordinates, one list per group, members in group order."""
    coords = [(r, c) for r in range(rows) for c in range(cols)]
    if axis is None:
        return [coords]
    if axis == 1:
        return [[(r, c) for c in range(cols)] for r in range(rows)]
    return [[(r, c) for r in range(rows)] for c in range(cols)]


def local_values(tensor):
    out = {}
    for shard in ttnn.get_device_tensors(tensor):
        coord = tuple(shard.storage.coords[0])
        if mesh.is_local(coord):
            out[coord] = ttnn.to_torch(shard).float().numpy()
    assert len(out) == len(mesh.local_coords())
    return out


checked = 0
for dtype, layout, atol in [(ttnn.float32, ttnn.ROW_MAJOR_LAYOUT, 1e-5), (ttnn.bfloat16, ttnn.TILE_LAYOUT, 0.0)]:
    mapper = ttnn.ShardTensor2dMesh(mesh, mesh_shape=shape, dims=(0, 2))
    t = ttnn.from_torch(torch.from_numpy(x), dtype=dtype, layout=layout, device=mesh, mesh_mapper=mapper)
    b = blocks(x)
    if dtype is ttnn.bfloat16:
        b = torch.from_numpy(b).bfloat16().float().numpy()
    for axis in (None, 0, 1):
        for coords in groups(axis):
            members = [b[r, c] for r, c in coords]
            n = len(members)
            summed = np.sum(np.stack(members), axis=0, dtype=np.float32)
            gathered = np.concatenate(members, axis=2)
            if dtype is ttnn.bfloat16:  # results are stored as bfloat16
                summed = torch.from_numpy(summed).bfloat16().float().numpy()
            expected = {
                "all_gather": {c: gathered for c in coords},
                "all_gather_dim0": {c: np.concatenate(members, axis=0) for c in coords},  # bytes end to end
                "all_reduce": {c: summed for c in coords},
                "reduce_scatter": {c: np.split(summed, n, axis=2)[m] for m, c in enumerate(coords)},
            }
            for op, want in expected.items():
                if op == "all_gather_dim0":
                    out = ttnn.all_gather(t, 0, cluster_axis=axis)
                elif op == "all_reduce":
                    out = ttnn.all_reduce(t, cluster_axis=axis)
                else:
                    out = getattr(ttnn, op)(t, 2, cluster_axis=axis)
                got = local_values(out)
                for coord, value in want.items():
                    if coord in got:
                        # bfloat16 sums may round differently when partials are added in another
                        # order: one bfloat16 ulp of the result
                        bound = atol if op.startswith("all_gather") else max(atol, 1e-5) + np.abs(value) * 2.0**-7
                        assert np.all(np.abs(got[coord] - value) <= bound), (op, axis, dtype, coord)
                        checked += 1
                ttnn.deallocate(out)
ttnn.synchronize_device(mesh)
print(f"OK rank {context.rank}: {checked} device results of all_gather/all_reduce/reduce_scatter on {rows}x{cols}")
mesh.close()
