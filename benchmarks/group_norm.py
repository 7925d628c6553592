"""group_norm at the sizes of tt-metal's nightly DRAM group-norm tests (Stable Diffusion's VAE:
``[1, 1, H*W, C]`` bfloat16 TILE in DRAM, 32 groups, weight and bias): meshnn's ``ttnn.group_norm``
beside torch's float32 ``group_norm`` of the same values on the same host, timed in the same run
(the limit: a device simulator's op should cost about what the host's own library does).  Prints a
table and one JSON line.
"""

from __future__ import annotations

import json
import time

import torch

import meshnn as ttnn

CASES = [(128, 512, 512), (256, 512, 512), (128, 1024, 1024)]
"""(C, H, W) of the nightly tests' cases (N = 1, 32 groups, an 8x8 core grid)."""


def best(fn, repeats: int = 2) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def case(mesh: ttnn.MeshDevice, channels: int, height: int, width: int) -> dict[str, float]:
    groups, grid = 32, ttnn.CoreGrid(y=8, x=8)
    x = torch.rand((1, channels, height, width), dtype=torch.bfloat16)
    weight, bias = torch.rand(channels, dtype=torch.bfloat16), torch.rand(channels, dtype=torch.bfloat16)
    rows = x.permute(0, 2, 3, 1).reshape(1, 1, height * width, channels)
    t = ttnn.from_torch(rows, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    [gamma, beta], mask = ttnn.dram_group_norm_params_from_torch(
        [weight, bias], channels, groups, mesh, core_grid=grid, return_mask=True
    )

    def run() -> None:
        dram, tile = ttnn.DRAM_MEMORY_CONFIG, ttnn.TILE_LAYOUT
        out = ttnn.group_norm(
            t, num_groups=groups, input_mask=mask, weight=gamma, bias=beta, core_grid=grid,
            memory_config=dram, output_layout=tile, inplace=False,
        )  # fmt: skip
        ttnn.synchronize_device(mesh)
        ttnn.deallocate(out)

    xf, wf, bf = x.float(), weight.float(), bias.float()
    seconds = best(run)
    limit = best(lambda: torch.nn.functional.group_norm(xf, groups, weight=wf, bias=bf, eps=1e-12))
    for tensor in (t, gamma, beta, mask):
        ttnn.deallocate(tensor)
    return {"meshnn_s": seconds, "torch_float32_s": limit}


def main() -> None:
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150")
    results = {}
    print(f"{'C x H x W':>16} {'meshnn s':>10} {'torch f32 s':>12} {'ratio':>7}")
    for channels, height, width in CASES:
        r = case(mesh, channels, height, width)
        key = f"{channels}x{height}x{width}"
        results[key] = r
        print(
            f"{key:>16} {r['meshnn_s']:10.3f} {r['torch_float32_s']:12.3f} {r['meshnn_s'] / r['torch_float32_s']:7.2f}"
        )
    mesh.close()
    print(json.dumps({"benchmark": "group_norm", "cases": results}))


if __name__ == "__main__":
    main()
