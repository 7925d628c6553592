"""The recorded ops of DeepSeek-V3 MLA's perf targets (:mod:`tests.perf.published_deepseek_mla`): what meshnn's
``ttnn.perf_capture`` records (traced, ``MESHNN_SYSTEM=galaxy``) running each mla/test_<file>.py of
tt-metal's models/demos/deepseek_v3/tests/fused_op_unit_tests unmodified, the target's op code, its most
frequent description.  ``COMPUTE``: matmuls, collectives, norms, rotary, attention, the cache update;
``MOVEMENT`` (:mod:`tests.perf.published_deepseek_mla_movement`): slices, reshards, permutes, concat, pad,
reshape, mesh partition.  Each row: (step, test file, perf target in us, the mesh or None for one chip, the op).
"""

from __future__ import annotations

from meshnn.perf import (
    AttentionConfig,
    BufferType,
    CollectiveConfig,
    Layout,
    MathFidelity,
    MatmulConfig,
    MemoryLayout,
    OpDesc,
    OpFamily,
    TensorDesc,
    Topology,
)

F = OpFamily
_MEM = {None: MemoryLayout.INTERLEAVED, "W": MemoryLayout.WIDTH_SHARDED, "H": MemoryLayout.HEIGHT_SHARDED}


def _tensor(buffer: BufferType, layout: Layout, default: str):
    def make(shape: tuple[int, ...], memory: str | None = None, *, dtype: str = default, logical=None) -> TensorDesc:
        return TensorDesc(shape, dtype, layout, buffer, _MEM[memory], logical_shape=logical or shape)

    return make


L, D = _tensor(BufferType.L1, Layout.TILE, "BFLOAT16"), _tensor(BufferType.DRAM, Layout.TILE, "BFLOAT16")
RD = _tensor(BufferType.DRAM, Layout.ROW_MAJOR, "INT32")
"""An L1 / DRAM tile tensor, a DRAM row-major one (``"W"`` / ``"H"``: width- / height-sharded)."""


def op(family: OpFamily, inputs: tuple, outputs: tuple, code: str, **config: object) -> OpDesc:
    return OpDesc(family, inputs, outputs, op_code=code, **config)  # type: ignore[arg-type]


COMPUTE = [
    (
        "wq_kv_a",
        "linear_deepseek",
        31.5,
        None,
        op(
            F.MATMUL,
            (L((1, 1, 32, 896), "W"), D((896, 2112))),
            (L((1, 1, 32, 2112), "W"),),
            "MatmulDeviceOperation",
            core_grid=(28, 1),
            matmul=MatmulConfig(),
        ),
    ),
    (
        "wq_b",
        "linear_deepseek",
        62.5,
        None,
        op(
            F.MATMUL,
            (L((1, 1, 32, 1536), "W"), D((1536, 3072))),
            (L((1, 1, 32, 3072)),),
            "MatmulDeviceOperation",
            core_grid=(16, 1),
            matmul=MatmulConfig(),
        ),
    ),
    (
        "wkv_b1",
        "linear_deepseek",
        39.3,
        None,
        op(
            F.MATMUL,
            (L((1, 16, 32, 128)), D((128, 512))),
            (L((1, 16, 32, 512)),),
            "MatmulDeviceOperation",
            matmul=MatmulConfig(),
        ),
    ),
    (
        "wkv_b2",
        "linear_deepseek",
        190.7,
        None,
        op(
            F.MATMUL,
            (L((1, 128, 32, 512), logical=(1, 128, 4, 512)), D((512, 128))),
            (L((1, 128, 32, 128), logical=(1, 128, 4, 128)),),
            "MatmulDeviceOperation",
            matmul=MatmulConfig(),
        ),
    ),
    (
        "wo",
        "linear_deepseek",
        259.56,
        None,
        op(
            F.MATMUL,
            (L((1, 1, 32, 16384)), D((16384, 896))),
            (L((1, 1, 32, 896), "W"),),
            "MatmulDeviceOperation",
            matmul=MatmulConfig(),
        ),
    ),
    (
        "mla_reduce_wq_kv_a",
        "reduce_deepseek",
        7.73,
        (8, 4),
        op(
            F.REDUCTION,
            (L((1, 8, 32, 2112)),),
            (L((1, 1, 32, 2112)),),
            "FastReduceNCDeviceOperation",
            fidelity=MathFidelity.HiFi4,
        ),
    ),
    (
        "wq_kv_a_ag_decode",
        "allgather_deepseek",
        47.91,
        (8, 4),
        op(
            F.ALL_GATHER,
            (L((1, 1, 32, 2112)),),
            (L((1, 8, 32, 2112)),),
            "AllGatherAsyncDeviceOperation",
            collective=CollectiveConfig(topology=Topology.RING, num_links=4, dim=1, devices=8),  # on 8 of the 32
        ),
    ),
    (
        "wo_ag_decode",
        "allgather_deepseek",
        50.19,
        (8, 4),
        op(
            F.ALL_GATHER,
            (L((1, 4, 128, 128)),),
            (L((1, 32, 128, 128)),),
            "AllGatherAsyncDeviceOperation",
            collective=CollectiveConfig(topology=Topology.RING, num_links=4, dim=1, devices=8),  # on 8 of the 32
        ),
    ),
    (
        "q_norm",
        "rmsnorm_deepseek",
        7.33,
        None,
        op(
            F.NORM,
            (L((1, 1, 32, 1536), "W"), RD((1, 1, 48, 32), dtype="BFLOAT16")),
            (L((1, 1, 32, 1536), "W"),),
            "LayerNormDeviceOperation",
            fidelity=MathFidelity.LoFi,
            core_grid=(2, 8),
        ),
    ),
    (
        "kv_norm",
        "rmsnorm_deepseek",
        6.68,
        None,
        op(
            F.NORM,
            (L((1, 1, 32, 512), "W"), RD((1, 1, 16, 32), dtype="BFLOAT16")),
            (L((1, 1, 32, 512), "W"),),
            "LayerNormDeviceOperation",
            fidelity=MathFidelity.LoFi,
            core_grid=(2, 8),
        ),
    ),
    (
        "kv_rope_decode",
        "rope_deepseek",
        4.18,
        None,
        op(
            F.BINARY,
            (
                L((1, 32, 32, 64), "H", logical=(1, 32, 1, 64)),
                L((1, 32, 32, 64), "H", logical=(1, 32, 1, 64)),
                L((1, 32, 32, 64), "H", logical=(1, 32, 1, 64)),
                L((1, 1, 1024, 32), "H"),
            ),
            (L((1, 32, 32, 64), "H", logical=(1, 32, 1, 64)),),
            "RotaryEmbeddingLlamaDeviceOperation",
            core_grid=(32, 1),
        ),
    ),
    (
        "q_rope_decode",
        "rope_deepseek",
        4.16,
        None,
        op(
            F.BINARY,
            (
                L((1, 32, 32, 64), "H", logical=(1, 32, 16, 64)),
                L((1, 32, 32, 64), "H", logical=(1, 32, 1, 64)),
                L((1, 32, 32, 64), "H", logical=(1, 32, 1, 64)),
                L((1, 1, 1024, 32), "H"),
            ),
            (L((1, 32, 32, 64), "H", logical=(1, 32, 16, 64)),),
            "RotaryEmbeddingLlamaDeviceOperation",
            core_grid=(32, 1),
        ),
    ),
    (
        "flash_mla_decode",
        "flash_mla_deepseek",
        110.05,
        None,
        op(
            F.SDPA_DECODE,
            (L((1, 4, 128, 576), "H"), D((128, 1, 32, 576)), D((128, 1, 32, 576)), RD((4, 32)), RD((4,))),
            (L((1, 4, 128, 512), "H"),),
            "ScaledDotProductAttentionDecode",
            fidelity=MathFidelity.HiFi4,
            core_grid=(7, 10),
            attention=AttentionConfig(k_chunk=128, causal=False),
        ),
    ),
]
