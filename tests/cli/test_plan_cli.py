"""``meshnn plan``, ``meshnn memory --timeline`` and the ``--meshnn-plan`` pytest option, run as a
user runs them: in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

MODEL = """
import torch
import ttnn

mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 4))
x = ttnn.from_torch(torch.empty(1, 1, 128, 4096, device="meta"), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                    device=mesh)
for layer in range({layers}):
    w = ttnn.from_torch(torch.empty(4096, {width}, device="meta"), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                        device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=1))
    h = ttnn.matmul(x, w, memory_config=ttnn.L1_MEMORY_CONFIG)
    x = ttnn.all_gather(ttnn.gelu(h), dim=3)
print("done", tuple(x.shape))
"""


def run(*args: str, cwd=None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in ("MESHNN_SYSTEM", "MESHNN_AS_TTNN")}
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=300, env=environment, cwd=cwd
    )


def test_plan_prints_the_peaks_and_the_ops_that_set_them(tmp_path):
    script = tmp_path / "model.py"
    script.write_text(MODEL.format(layers=3, width=4096))
    picture = tmp_path / "timeline.png"
    result = run("-m", "meshnn", "plan", "--timeline", "--plot", str(picture), str(script))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "done (1, 1, 128, 4096)" in out  # the script ran to its end, on a planning mesh
    assert "mesh 2x4 on t3k (8 devices in lock-step" in out and "9 ops" in out
    # L1 at the third all_gather: the second's output and the third's (128 x 4096 bfloat16 per device:
    # 16 KiB per bank each), the third layer's matmul and gelu outputs (2 KiB per bank each) and the
    # gather's own 3 semaphores (32 B per bank each, made by its first call, held by the program cache)
    assert (
        "L1    peak   2.26 MiB per device (36.1 KiB per bank x 64 banks, 2.7% of a bank) at step 8: ttnn.all_gather"
        in out
    )
    assert "DRAM  peak" in out and "planned (nothing computed)" in out
    assert picture.read_bytes()[:4] == b"\x89PNG"


def test_plan_of_a_model_too_big_names_the_op_the_devices_and_the_sizes(tmp_path):
    script = tmp_path / "model.py"
    script.write_text(MODEL.format(layers=2, width=4096 * 320))  # gathered: 128 x 1310720 bfloat16 in L1
    result = run("-m", "meshnn", "plan", str(script))
    assert result.returncode == 1
    assert "OUT OF MEMORY" in result.stderr and f"In ttnn.all_gather (called at {script}:12)" in result.stderr
    assert "on every device of the 2x4 mesh at once" in result.stderr
    assert "each L1 bank needs 5.00 MiB of a 1.33 MiB bank with 80.66 KiB free" in result.stderr
    assert "the whole buffer is 320.00 MiB per device" in result.stderr
    assert "3 ops, ttnn.all_gather at step 3 FAILED" in result.stdout


def test_memory_timeline_prints_a_row_per_op():
    result = run("-m", "meshnn", "memory", "--timeline")
    assert result.returncode == 0, result.stderr
    rows = [line.split()[1] for line in result.stdout.splitlines() if line[:5].strip().isdigit()]
    assert rows.count("ttnn.matmul") == 2 and rows.count("ttnn.all_gather") == 2 and len(rows) == 11
    assert "L1 peak:" in result.stdout and "at step 7, ttnn.matmul" in result.stdout


def test_the_pytest_option_plans_a_suite(tmp_path):
    (tmp_path / "test_model.py").write_text(
        textwrap.dedent(
            """
            import pytest, torch, ttnn

            @pytest.mark.parametrize("mesh_device", [(2, 4)], indirect=True)
            def test_reads_values(mesh_device):
                x = ttnn.from_torch(torch.ones(64, 64), layout=ttnn.TILE_LAYOUT, device=mesh_device)
                assert mesh_device.executes is False
                ttnn.to_torch(ttnn.get_device_tensors(ttnn.gelu(x))[0])

            def test_too_big(mesh_device):
                ttnn.from_torch(torch.empty(32, 1 << 22, device="meta"), layout=ttnn.TILE_LAYOUT, device=mesh_device,
                                memory_config=ttnn.L1_MEMORY_CONFIG)
            """
        )
    )
    result = run("-m", "pytest", "-p", "meshnn.testing", "--meshnn-plan", "-p", "no:cacheprovider", cwd=tmp_path)
    assert "1 failed, 1 planned" in result.stdout, result.stdout
    assert "highest DRAM peak" in result.stdout and "OutOfMemoryError" in result.stdout
