"""conv2d's device kernel times: tt-metal tests/ttnn/perf_tests/operations/conv/test_conv2d_device_perf.py
(2026-06; CONV_PERF_CONFIGS: four convolutions of SDXL's VAE, a UNet, SDXL and Segformer, each one
``ttnn.conv2d`` call measured by the device profiler, DEVICE KERNEL DURATION; targets in us for a
Wormhole 8x8 grid and a P150, +-5%), beside meshnn's conv2d run under a perf capture on a planning
mesh of the N150 and the P150 with the test's arguments (``Conv2dL1FullSliceConfig``, the test's
Conv2dConfig and compute config), timed by meshnn.perf.conv.  All checks: nothing here is fitted (the
conv model's rates are tt-metal's own, meshnn.perf.conv_rates, but for Blackhole's local-L1 reads, tt-npe's
transfer table; none set from these rows).
"""

from __future__ import annotations

import numpy as np

from .figure import Figure

SOURCE = "tt-metal: tests/ttnn/perf_tests/operations/conv/test_conv2d_device_perf.py"


CONFIGS = (
    # name, (batch, in ch, out ch, height, width), kernel, stride, padding, groups, weights dtype, output dtype,
    # fidelity, shard layout, (activation reuse, act double buffer, weights double buffer, fp32 accumulation),
    # (Wormhole us, P150 us)
    ("vae_sdxl_hs", (1, 4, 512, 128, 128), 3, 1, 1, 1, "bfloat8_b", "bfloat16", "LoFi", "HEIGHT_SHARDED",
     (False, False, False, False), (67.0, 28.0)),
    ("unet_hs", (1, 4, 16, 1056, 160), 3, 1, 1, 1, "bfloat8_b", "bfloat8_b", "LoFi", "HEIGHT_SHARDED",
     (True, True, False, False), (87.0, 32.0)),
    ("sdxl_bs", (1, 640, 640, 64, 64), 3, 2, 1, 1, "bfloat8_b", "bfloat16", "HiFi2", "BLOCK_SHARDED",
     (False, True, True, True), (115.0, 53.0)),
    ("segformer_ws", (1, 576, 576, 8, 8), 3, 1, 0, 576, "bfloat16", "bfloat16", "LoFi", "WIDTH_SHARDED",
     (False, False, False, False), (74.0, 37.0)),
)  # fmt: skip

BEFORE = {  # the model's figures (us, N150 / P150) while it timed conv2d as the matmul it computes
    "vae_sdxl_hs": (17.81, 10.35),
    "unet_hs": (58.36, 30.82),
    "sdxl_bs": (85.74, 36.72),
    "segformer_ws": (8.67, 8.29),
}
"""Before meshnn.perf.conv timed the program (stop 54): each conv2d was its implicit matmul on the matmul model
(M the output pixels, K the prepared weight's rows: meshnn's unpadded [9, 576] for the grouped conv), 1 of the
8 rows within 15% (unet_hs on the P150); segformer_ws on the N150 was outside (59.4 us, -20%) until the
width-sharded program's rounds were timed (stop 55: each block's multicast waits for the matmul that frees the
single-buffered activation buffer, and a semaphore handshake each way); before that (pop54's figures) a
matmul of the flat input by the prepared weight: 16.7 / 10.3, 122.9 / 30.8, 97.2 / 30.6 and
15.1 / 9.7 us, also 1 of 8."""

_MODEL = (
    "meshnn.perf.conv times it as tt-metal's sharded conv2d program runs (the busiest core's activation "
    "reads, tilize, im2col matmul and weight reads, block by block through their circular buffers, at the "
    "transfer rates and tilize costs of tt-metal's conv2d program factory); "
)
MISSES: dict[tuple[str, str], str] = {}
"""Rows the model misses, with why: none since stop 57.  unet_hs was outside on both archs (-35% on the N150, +35%
on the P150) while the model overlapped each tile row's matmul with the next row's reads; activation reuse
tilizes the core's whole block before its one matmul (conv_bmm_tilize.cpp: tilize_in_reuse_split_reader), which
met the N150 (87.0 us) and took the P150 to +84% (59.0 us) at tt-metal's Blackhole local-L1 line (57 cycles a
192 B read); at tt-npe's Blackhole transfer table (21 cycles: meshnn.perf.conv_rates) it is 33.7 us (+5.3%)."""
COVERED = {
    (config[0], system) for config in CONFIGS for system in ("n150", "p150") if (config[0], system) not in MISSES
}
"""Rows the model meets (checks)."""


def conv_us(system: str, config: tuple) -> float:
    """meshnn's predicted kernel time (us) of ``config``'s conv2d on one chip of ``system``."""
    import meshnn as ttnn

    _, (batch, ci, co, h, w), k, s, p, groups, wdt, odt, fidelity, layout, flags, _targets = config
    reuse, act_double, weights_double, fp32 = flags
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system=system, execute=False)
    try:
        x = ttnn.empty((1, 1, h * w * batch, ci), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
        host_dtype = ttnn.float32 if wdt == "bfloat8_b" else getattr(ttnn, wdt)
        weight = ttnn.from_torch(np.ones((co, ci // groups, k, k), np.float32), host_dtype)
        bias = ttnn.from_torch(np.ones((1, 1, 1, co), np.float32), host_dtype)
        conv_config = ttnn.Conv2dConfig(
            weights_dtype=getattr(ttnn, wdt),
            shard_layout=getattr(ttnn.TensorMemoryLayout, layout),
            deallocate_activation=False,
            reshard_if_not_optimal=False,
            enable_act_double_buffer=act_double,
            enable_weights_double_buffer=weights_double,
            enable_activation_reuse=reuse,
            config_tensors_in_dram=True,
        )
        compute = ttnn.init_device_compute_kernel_config(
            mesh.arch(),
            math_fidelity=getattr(ttnn.MathFidelity, fidelity),
            math_approx_mode=True,
            fp32_dest_acc_en=fp32,
            packer_l1_acc=False,
        )
        with ttnn.perf_capture() as capture:
            ttnn.conv2d(
                input_tensor=x,
                weight_tensor=weight,
                device=mesh,
                in_channels=ci,
                out_channels=co,
                bias_tensor=bias,
                kernel_size=(k, k),
                stride=(s, s),
                padding=(p, p),
                batch_size=batch,
                input_height=h,
                input_width=w,
                conv_config=conv_config,
                compute_config=compute,
                groups=groups,
                dtype=getattr(ttnn, odt),
                slice_config=ttnn.Conv2dL1FullSliceConfig,
            )
        (record,) = [r for r in capture.recorder(mesh).records if r.desc.op_code == "Conv2dDeviceOperation"]
        return record.prediction.kernel_ns / 1e3
    finally:
        mesh.close()


def figures() -> list[Figure]:
    """Each configuration on the N150 (Wormhole's 8x8 grid) and the P150."""
    out = []
    for config in CONFIGS:
        name, targets = config[0], config[-1]
        for system, us in zip(("n150", "p150"), targets, strict=True):
            covered = (name, system) in COVERED
            why = "" if covered else MISSES[(name, system)]

            def model(s=system, c=config) -> float:
                return conv_us(s, c)

            label = f"conv2d {name} on {system.upper()} (device kernel)"
            out.append(Figure(label, SOURCE, us, us, "us", model, covered, why, group="conv"))
    return out
