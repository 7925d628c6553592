"""meshnn settles torch's VML-backed math once it sees torch (meshnn.host.torch_math): at import
when torch came first, else at the first conversion from torch, before the program's next call."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import torch

from meshnn.host import torch_math


def _run(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_every_function_named_is_a_torch_function_of_one_float_value():
    for dtype in (torch.float32, torch.float64):
        one = torch.full((1,), 0.5, dtype=dtype)
        for name in torch_math.VML_FUNCTIONS:
            assert getattr(torch, name)(one).dtype == dtype, name


def test_torch_imported_first_is_settled_at_import_meshnn():
    assert _run(
        """
        import torch
        import meshnn
        from meshnn.host import torch_math
        print(torch_math._settled)
        """
    ) == ["True"]


def test_torch_imported_later_is_settled_by_the_first_from_torch():
    assert _run(
        """
        import meshnn as ttnn
        from meshnn.host import torch_math
        print(torch_math._settled)
        import torch
        print(torch_math._settled)
        ttnn.from_torch(torch.ones(2, 2))
        print(torch_math._settled)
        """
    ) == ["False", "False", "True"]
