"""DeepSeek-V3's fused-op modules' device-kernel targets on a Galaxy (TG) and the model's value for each: checks.

Source: tt-metal models/demos/deepseek_v3/tests/fused_op_unit_tests/<module>/test_ds_<module>.py (2026-06),
``DEVICE_PERF_TARGETS_US[(mode, seq)]["kernel"]``: the module's forward, profiled (tracy, between the run's
signposts; decode traced, prefill eager), as the sum over its op codes of each code's device kernel time
averaged over its rows (every device's): the module's kernel time on one device.  Asserted with a 100%
margin, so the figure is the measurement they were set from.  The mesh: TG, opened 4x8 (``MESH_DEVICE=TG``;
deepseek_v3's ``SYSTEM_NAME_TO_MESH_SHAPE["TG"]``): the recorded gathers agree (the norm's statistics from 8 devices on
``cluster_axis=1``, the embedding's rows from 4 on ``cluster_axis=0``); until stop 55 the model timed them on 8x4.

The ops are what meshnn records running each test unmodified (``ttnn.perf_capture``, ``MESHNN_SYSTEM=galaxy``,
random weights: the shapes are the real weights'), one description an op code; the model's value is the sum of
their traced kernel times.  Not here: the modules whose targets are 0 (mla, moe), the 1024-token rows (long
sequences, not run), lm_head and the mlp modules (ff1_3, ff2, mul, their collectives): their tests build the
full weights on the host (beyond 4 GB, not run here).
"""

from __future__ import annotations

from meshnn.perf import CollectiveConfig, MathFidelity, OpDesc, predict

from . import deepseek_checks
from .figure import Figure
from .published_deepseek_mla_ops import RD, D, F, L, op

SOURCE = "tt-metal models/demos/deepseek_v3/tests/fused_op_unit_tests/{} DEVICE_PERF_TARGETS_US (TG)"
GROUP = "deepseek ops"

ROWS = [
    (
        "rms_norm kv_lora_rank 512",
        "rms_norm/test_ds_rms_norm.py",
        "decode",
        11.448,
        (
            op(
                F.NORM,
                (D((1, 1, 32, 512)), RD((1, 1, 16, 32), dtype="BFLOAT16")),
                (D((1, 1, 32, 512)),),
                "LayerNormDeviceOperation",
                fidelity=MathFidelity.HiFi4,
            ),
        ),
    ),
    (
        "rms_norm q_lora_rank 1536",
        "rms_norm/test_ds_rms_norm.py",
        "decode",
        27.317,
        (
            op(
                F.NORM,
                (D((1, 1, 32, 1536)), RD((1, 1, 48, 32), dtype="BFLOAT16")),
                (D((1, 1, 32, 1536)),),
                "LayerNormDeviceOperation",
                fidelity=MathFidelity.HiFi4,
            ),
        ),
    ),
    (
        "rms_norm kv_lora_rank 512",
        "rms_norm/test_ds_rms_norm.py",
        "prefill 128",
        11.71,
        (
            op(
                F.NORM,
                (D((1, 1, 128, 512)), RD((1, 1, 16, 32), dtype="BFLOAT16")),
                (D((1, 1, 128, 512)),),
                "LayerNormDeviceOperation",
                fidelity=MathFidelity.HiFi4,
            ),
        ),
    ),
    (
        "rms_norm q_lora_rank 1536",
        "rms_norm/test_ds_rms_norm.py",
        "prefill 128",
        27.997,
        (
            op(
                F.NORM,
                (D((1, 1, 128, 1536)), RD((1, 1, 48, 32), dtype="BFLOAT16")),
                (D((1, 1, 128, 1536)),),
                "LayerNormDeviceOperation",
                fidelity=MathFidelity.HiFi4,
            ),
        ),
    ),
    (
        "distributed rms_norm 7168",
        "rms_norm/test_ds_distributed_norm.py",
        "decode",
        26.311,
        (
            op(
                F.NORM,
                (L((1, 1, 32, 896), "W"),),
                (L((1, 1, 32, 32), "W"),),
                "LayerNormPreAllGatherDeviceOperation",
                fidelity=MathFidelity.HiFi4,
                core_grid=(4, 7),
            ),
            op(
                F.ALL_GATHER,
                (L((1, 1, 32, 32), "W"),),
                (L((1, 1, 32, 256), "W"),),
                "AllGatherAsyncDeviceOperation",
                core_grid=(1, 1),
                collective=CollectiveConfig(cluster_axis=1, num_links=4, dim=3),
            ),
            op(
                F.NORM,
                (L((1, 1, 32, 896), "W"), L((1, 1, 32, 256), "W"), RD((1, 1, 28, 32), dtype="BFLOAT16")),
                (L((1, 1, 32, 896), "W"),),
                "LayerNormPostAllGatherDeviceOperation",
                fidelity=MathFidelity.HiFi4,
                core_grid=(4, 7),
            ),
        ),
    ),
    (
        "distributed rms_norm 7168",
        "rms_norm/test_ds_distributed_norm.py",
        "prefill 128",
        92.016,
        (
            op(
                F.NORM,
                (D((1, 1, 128, 896)),),
                (D((1, 1, 128, 32)),),
                "LayerNormPreAllGatherDeviceOperation",
                fidelity=MathFidelity.HiFi4,
            ),
            op(
                F.ALL_GATHER,
                (D((1, 1, 128, 32)),),
                (D((1, 1, 128, 256)),),
                "AllGatherAsyncDeviceOperation",
                collective=CollectiveConfig(cluster_axis=1, num_links=4, dim=3),
            ),
            op(
                F.NORM,
                (D((1, 1, 128, 896)), D((1, 1, 128, 256)), RD((1, 1, 28, 32), dtype="BFLOAT16")),
                (D((1, 1, 128, 896)),),
                "LayerNormPostAllGatherDeviceOperation",
                fidelity=MathFidelity.HiFi4,
            ),
        ),
    ),
    (
        "embedding",
        "embedding/test_ds_embedding.py",
        "decode",
        6.061,
        (
            op(F.PAD, (RD((1, 1, 1), dtype="UINT32"),), (RD((1, 1, 32), dtype="UINT32"),), "PadDeviceOperation"),
            op(
                F.EMBEDDING,
                (RD((1, 1, 32), dtype="UINT32"), RD((1, 1, 129280, 224), dtype="BFLOAT16")),
                (L((1, 32, 224)),),
                "EmbeddingsDeviceOperation",
            ),
        ),
    ),
    (
        "embedding",
        "embedding/test_ds_embedding.py",
        "prefill 128",
        5.577,
        (
            op(
                F.EMBEDDING,
                (RD((1, 1, 128), dtype="UINT32"), RD((1, 1, 129280, 224), dtype="BFLOAT16")),
                (D((1, 128, 224)),),
                "EmbeddingsDeviceOperation",
            ),
        ),
    ),
    (
        "all_gather of the embedding",
        "embedding/test_ds_all_gather_embedding.py",
        "decode",
        25.133,
        (
            op(
                F.ALL_GATHER,
                (L((1, 1, 32, 224), dtype="FLOAT32", logical=(1, 1, 1, 224)),),
                (L((1, 1, 32, 896), dtype="FLOAT32", logical=(1, 1, 1, 896)),),
                "AllGatherAsyncDeviceOperation",
                collective=CollectiveConfig(cluster_axis=0, num_links=4, dim=3),
            ),
        ),
    ),
    (
        "all_gather of the embedding",
        "embedding/test_ds_all_gather_embedding.py",
        "prefill 128",
        30.205,
        (
            op(
                F.ALL_GATHER,
                (D((1, 1, 128, 224)),),
                (D((1, 1, 128, 896)),),
                "AllGatherAsyncDeviceOperation",
                collective=CollectiveConfig(cluster_axis=0, num_links=4, dim=3),
            ),
        ),
    ),
]
"""(module, its test, mode, the kernel target in us, the ops of its forward)."""

WHY = {
    ("distributed rms_norm 7168", "prefill 128"): (
        "the pre- and post-all-gather norms on DRAM-interleaved [128, 896] a device (4 cores, a tile row each) and "
        "the 8-way all-gather of the statistics, measured 92.0 us in all (the decode module, L1 width-sharded: "
        "26.3 us); the model 67.9 (-26%): the two norms' readers wait on each of a row's 28 tiles alone "
        "(pre 17.7 us; post 30.6 with the stats and gamma's 28 rows: meshnn.perf.norm_reader), the all-gather of "
        "[128, 32] DRAM rows over the 8 devices of the mesh's axis 1 19.6 us; the rest (24 us) is not found: no "
        "per-op split of the module's time was published to say which op holds it (on the 8x4 mesh the module was "
        "once timed on, its gather ran over 4 devices: -35%)"
    ),
    ("all_gather of the embedding", "decode"): (
        "an all_gather_async of a device's [1, 224] float32 row (32 tokens, padded to a tile) from 4 devices into "
        "896 columns (the 4 devices of the 4x8 mesh's axis 0), measured 25.1 us, the model 12.4 (-50%): the "
        "collective's fixed cost is the model's generic one (issue 31's collectives), not tuned to this fabric "
        "all-gather; timed on an 8x4 mesh (as until stop 55) the same gather ran over 8 devices and came to -18%.  "
        "Checked for stop 55, the EDM's per-packet rate (tt-metal's 6U EDM golden: 328 ns a packet of one sender): "
        "the default program (all_gather_async_default_program_factory.cpp: 21 KiB a link, so 2 workers a "
        "direction a link; minimal_default_writer.cpp: one 4 KiB float32 tile a 4,352-B packet, each slice "
        "forwarded hop by hop) gives a worker about one packet a slice, 3 slices: about 1 us at that rate, not "
        "the 12.7 us missing"
    ),
    ("all_gather of the embedding", "prefill 128"): (
        "as the decode row, 128 DRAM rows a device: measured 30.2 us, the model 14.4 (-52%; -24% on the 8x4 mesh)"
    ),
}
for _key, _checked in deepseek_checks.MODULES.items():
    WHY[_key] = f"{WHY[_key]}.  {_checked}"  # what stop 56 checked


def us(ops: tuple[OpDesc, ...]) -> float:
    """The model's traced kernel time (us) of ``ops`` on a device of the Galaxy opened as the tests open it (4x8:
    tt-metal's ``SYSTEM_NAME_TO_MESH_SHAPE["TG"]``), summed."""
    return sum(predict(o, "galaxy", mesh_shape=(4, 8), traced=True).kernel_ns for o in ops) / 1e3


def figures() -> list[Figure]:
    """Every module target here, covered unless :data:`WHY` names why not."""
    out = []
    for module, test, mode, target, ops in ROWS:
        why = WHY.get((module, mode), "")
        out.append(
            Figure(f"DeepSeek {module} module, {mode} (TG)", SOURCE.format(test), target, target, "us",
                   lambda o=ops: us(o), covered=not why, why_not=why, group=GROUP)
        )  # fmt: skip
    return out


if __name__ == "__main__":
    for f in figures():
        print(f"{f.name:<60} {f.low:>8.2f} {f.value():>9.2f} {100 * f.error():+7.1f}%")
