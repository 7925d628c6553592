"""``import meshnn`` stays light: ml_dtypes (about 0.9 s to import in version 0.7, most of what
``import meshnn`` took) is imported at the first bfloat16 or fp8 conversion, not with meshnn; torch
and mpi4py are never imported by it.  (The time itself is a figure in the README, not a test.)"""

from __future__ import annotations

import subprocess
import sys


def test_import_meshnn_imports_no_heavy_module():
    code = (
        "import sys, meshnn\n"
        "print(sorted(m for m in ('ml_dtypes', 'torch', 'mpi4py', 'matplotlib') if m in sys.modules))\n"
        "import numpy as np\n"
        "t = meshnn.from_torch(np.ones((2, 2), np.float32), dtype=meshnn.bfloat16)\n"
        "print(meshnn.to_numpy(t).dtype, 'ml_dtypes' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["[]", "bfloat16 True"], result.stdout


def test_the_binary_module_paths_model_code_names():
    """tt_transformers annotates with ``ttnn._ttnn.tensor.MemoryConfig`` at import and checks
    ``isinstance(device, ttnn._ttnn.multi_device.MeshDevice)``."""
    import meshnn

    assert meshnn._ttnn.tensor.MemoryConfig is meshnn.MemoryConfig
    assert meshnn._ttnn.tensor.Tensor is meshnn.Tensor and meshnn._ttnn.tensor.DataType is meshnn.DataType
    assert meshnn._ttnn.multi_device.MeshDevice is meshnn.MeshDevice
