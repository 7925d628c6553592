"""benchmarks/tt_llama.py's T3000 decode attention output as tt_transformers runs it: the fused all-gather +
matmul where model_config.py's USE_FUSED_ALL_GATHER_MATMUL holds (8 devices on a ring, dim / 32 / 8 a multiple of
8), else WO by rows and a reduce_scatter; one layer of each shape, on planning meshes."""

from __future__ import annotations

from collections import Counter

import pytest

import meshnn as ttnn

from .test_dispatch import load_tt_llama


def _decode_ops(shape_args: tuple, mesh_shape: tuple[int, int], system: str) -> Counter:
    tt_llama = load_tt_llama()
    shape = tt_llama.Shape("one layer", 1, *shape_args, vocab=32000)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*mesh_shape), system=system, execute=False)
    try:
        model = tt_llama.Llama(shape, mesh, max_seq=256)
        with ttnn.perf_capture() as capture:
            model.decode(100)
    finally:
        mesh.close()
    assert not capture.skipped
    return Counter(record.desc.name for record in capture.recorders[0].records)


@pytest.mark.parametrize(
    ("shape_args", "fused"),
    [
        ((4096, 32, 8, 128, 14336), True),  # Llama-3.1-8B's: 4096 / 32 / 8 = 16
        ((2048, 32, 8, 64, 8192), True),  # Llama-3.2-1B's: 8
        ((3072, 24, 8, 128, 8192), False),  # Llama-3.2-3B's: 12
        ((5120, 40, 8, 128, 27648), False),  # the 32B Qwens': 20
    ],
)
def test_t3000_attention_output(shape_args, fused):
    ops = _decode_ops(shape_args, (1, 8), "t3k")
    assert ops["ttnn.experimental.all_gather_matmul_async"] == (1 if fused else 0)
    assert ops["ttnn.reduce_scatter"] == (1 if fused else 2)  # the MLP's, and the attention's where not fused


def test_n300_never_fuses():
    ops = _decode_ops((4096, 32, 8, 128, 14336), (1, 2), "n300")
    assert ops["ttnn.experimental.all_gather_matmul_async"] == 0 and ops["ttnn.reduce_scatter"] == 2
