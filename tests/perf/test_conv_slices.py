"""meshnn.perf.conv_slices and ConvConfig.slice_windows: the DRAM slices tt-metal runs a conv2d in (op_slicing.cpp),
and a sliced conv timed as its slices' programs."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.device.arch import WORMHOLE_B0
from meshnn.device.buffer import TensorMemoryLayout as L
from meshnn.perf import MatmulConfig, OpDesc, OpFamily, TensorDesc, predict
from meshnn.perf.conv_desc import ConvConfig
from meshnn.perf.conv_slices import dram_slices, halo_bytes, slice_by_width

VAE = ConvConfig(1, (256, 256), (3, 3), (1, 1), 512, 512, 1, L.BLOCK_SHARDED, padding=(1, 1, 1, 1), act_block_h=256)
FREE = WORMHOLE_B0.l1_bank_size - 27 * 1024  # a Wormhole core's L1 with the VAE test's l1_small_size carved out


def test_slice_windows_cut_the_output_in_tiles_and_keep_the_padding_at_the_ends():
    three = replace(VAE, slices=3).slice_windows(32)  # 8 tile columns: 3, 3, 2
    assert [w.output for w in three] == [(256, 96), (256, 96), (256, 64)]
    assert [w.padding for w in three] == [(1, 1, 1, 0), (1, 1, 0, 0), (1, 1, 0, 1)]
    assert [w.input_extent(1) for w in three] == [97, 98, 65]  # each slice's columns and its neighbours' halo
    tall = replace(VAE, slices=2, slice_width=False).slice_windows()
    assert [(w.output, w.padding) for w in tall] == [((128, 256), (1, 0, 1, 1)), ((128, 256), (0, 1, 1, 1))]
    assert VAE.slice_windows(32) == [VAE]


def test_the_vae_conv_runs_in_two_width_slices():
    """Unsliced, a core's halo input and output shards of the 256x256 image (64 of its 512 channels) take 2.1 MB,
    over the 1.37 MB free; two width slices of 128 columns take 1.07 MB: tt-metal's count is 2."""
    assert halo_bytes(VAE, (8, 8), True, 2) > FREE
    sliced = dram_slices(VAE, (8, 8), free_l1=FREE, tiled_input=True, tiled_output=True)
    assert (sliced.slices, sliced.slice_width) == (2, True)
    assert all(halo_bytes(w, (8, 8), True, 2) <= FREE for w in sliced.slice_windows(32))
    roomy = dram_slices(VAE, (8, 8), free_l1=4 * FREE, tiled_input=True, tiled_output=True)
    assert roomy == VAE  # it fits unsliced: the L1 path, one program
    given = dram_slices(VAE, (8, 8), free_l1=FREE, tiled_input=True, tiled_output=True, given=(False, 4))
    assert (given.slices, given.slice_width) == (4, False)
    capped = dram_slices(VAE, (8, 8), free_l1=FREE, tiled_input=True, tiled_output=True, given=(True, 99))
    assert capped.slices == 8  # at most one tile of columns a slice


def test_the_slice_dimension_guess():
    assert slice_by_width((256, 256), True) and not slice_by_width((256, 199), True)  # narrow: by height
    assert not slice_by_width((512, 256), True)  # taller than wide
    assert slice_by_width((512, 256), False) and not slice_by_width((800, 256), False)  # row-major: 3x taller


def _desc(conv: ConvConfig) -> OpDesc:
    x = TensorDesc((1, 256, 256, 512))
    out = TensorDesc((1, 1, 65536, 512))
    weight, bias = TensorDesc((1, 1, 4608, 512), "BFLOAT8_B"), TensorDesc((1, 1, 32, 512), "BFLOAT8_B")
    config = MatmulConfig(packer_l1_acc=False, fp32_acc=False)
    return OpDesc(OpFamily.MATMUL, (x, weight, bias), (out,), op_code="Conv2dDeviceOperation", fidelity="LoFi",
                  matmul=config, conv=conv)  # fmt: skip


def test_a_sliced_conv_is_its_slices_programs_one_after_another():
    sliced = replace(VAE, slices=2)
    whole = predict(_desc(sliced), "n300", mesh_shape=(1, 1), traced=True)
    parts = [predict(_desc(w), "n300", mesh_shape=(1, 1), traced=True) for w in sliced.slice_windows(32)]
    assert whole.kernel_ns == pytest.approx(sum(p.kernel_ns for p in parts))
    assert whole.flops == pytest.approx(sum(p.flops for p in parts))
    assert any("of 2 DRAM slices" in note for note in whole.notes)


def _captured(slice_config, *, in_l1: bool = False) -> ConvConfig:
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), system="n150", execute=False, l1_small_size=27 * 1024)
    try:
        memory = ttnn.L1_MEMORY_CONFIG if in_l1 else ttnn.DRAM_MEMORY_CONFIG
        x = ttnn.empty((1, 1, 64 * 256, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh,
                       memory_config=memory)  # fmt: skip
        weight = ttnn.from_torch(np.ones((64, 64, 3, 3), np.float32), ttnn.float32)
        config = ttnn.Conv2dConfig(shard_layout=ttnn.TensorMemoryLayout.HEIGHT_SHARDED)
        with ttnn.perf_capture() as capture:
            ttnn.conv2d(input_tensor=x, weight_tensor=weight, in_channels=64, out_channels=64, device=mesh,
                        kernel_size=(3, 3), padding=(1, 1), batch_size=1, input_height=64, input_width=256,
                        conv_config=config, slice_config=slice_config)  # fmt: skip
        (record,) = [r for r in capture.recorder(mesh).records if r.desc.op_code == "Conv2dDeviceOperation"]
        assert record.prediction.kernel_ns > 0
        return record.desc.conv
    finally:
        mesh.close()


def test_a_captured_conv_records_the_slices_ttnn_runs_it_in():
    given = ttnn.Conv2dSliceConfig(slice_type=ttnn.Conv2dDRAMSliceWidth, num_slices=4)
    assert (_captured(given).slices, _captured(given).slice_width) == (4, True)
    assert _captured(None).slices == 1  # a small conv fits unsliced
    assert _captured(ttnn.Conv2dL1FullSliceConfig).slices == 1
    assert _captured(given, in_l1=True).slices == 4  # a DRAM slice config slices an L1 input too
