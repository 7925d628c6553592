"""A guard for torch's CPU math against oneMKL's first-call race (pytorch/pytorch#188792).

torch computes its float32 and float64 element-wise functions (``cos``, ``exp``, ``tanh``, ...)
with oneMKL's VML, asking for its high-accuracy (HA) kernels.  oneMKL picks a function's kernel
at its first call; when that first call comes from two threads at once (torch splits a tensor of
more than 2,048 values over its OpenMP threads), one thread's part can run VML's low-accuracy
(EP) kernel instead: about 11 correct bits, and nothing raised.  Seen here (stop 51): a test's
``torch.cos`` of an 8,192-value table gave its first 4,096 values bit for bit as ``vmsCos`` in
EP mode (errors up to 1.5e-4) and the rest at full precision, in one full-suite run in two; the
same call later in the process was exact.  Rotary tables made with ``torch.cos`` / ``torch.sin``
and handed to ``from_torch`` are exactly what a TTNN model does, so one wrong table a process
would be a wrong model.

:func:`settle_vml` calls each such function once on a one-value tensor of each dtype, on the
calling thread alone (no OpenMP region: nothing to race), so every kernel is picked before any
call that torch splits.  meshnn does it once a process, as soon as it sees torch loaded: at
``import meshnn`` (when torch came first), else at its first conversion from or to torch or its
first kernel that uses torch.  It changes no value torch computes afterwards (those are the HA
kernels' either way) and costs about 2 ms, once.

Part of the ``host`` layer; imports nothing of meshnn (torch only when the program loaded it).
"""

from __future__ import annotations

import sys
import threading

VML_FUNCTIONS = (
    "abs", "acos", "asin", "atan", "cos", "cosh", "erf", "erfc", "erfinv", "exp", "expm1", "log",
    "log10", "log1p", "log2", "rsqrt", "sigmoid", "sin", "sinh", "sqrt", "tan", "tanh", "trunc",
)  # fmt: skip
"""torch's element-wise functions that oneMKL's VML may compute (those ``aten/src/ATen/cpu/vml.h``
maps onto VML, and their neighbours: calling one that does not use VML costs nothing more)."""

_settled = False
_lock = threading.Lock()


def settle_vml() -> bool:
    """Call every function of :data:`VML_FUNCTIONS` once on a one-value float32 and float64
    tensor, the first time this runs with torch loaded; False (nothing done) while torch is not
    loaded.  Safe from any thread; later calls return at once."""
    global _settled
    if _settled:
        return True
    torch = sys.modules.get("torch")
    if torch is None or not hasattr(torch, "full"):  # (absent, or still being imported)
        return False
    with _lock:
        if not _settled:
            for dtype in (torch.float32, torch.float64):
                one = torch.full((1,), 0.5, dtype=dtype)
                for name in VML_FUNCTIONS:
                    getattr(torch, name)(one)
            _settled = True
    return True
